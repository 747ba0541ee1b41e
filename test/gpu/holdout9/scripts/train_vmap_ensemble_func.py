"""Deep ensemble trained in one go: N copies of an MLP stacked with torch.func.stack_module_state and run with
vmap(functional_call(...)). Each member sees its own bootstrap minibatch.

    N_MODELS=16 BATCH=4096 python train_vmap_ensemble_func.py
"""
import copy
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap

N_MODELS = int(os.getenv("N_MODELS", "16"))
BATCH = int(os.getenv("BATCH", "4096"))
STEPS = int(os.getenv("STEPS", "15"))


def make_mlp(in_dim=784, hidden=2048, depth=3, n_classes=10, p_drop=0.1):
    layers, d = [], in_dim
    for _ in range(depth):
        layers += [nn.Linear(d, hidden), nn.LayerNorm(hidden), nn.GELU(), nn.Dropout(p_drop)]
        d = hidden
    layers.append(nn.Linear(d, n_classes))
    return nn.Sequential(*layers)


def bootstrap_batches(x, y, n_models, batch):
    idx = torch.randint(0, x.size(0), (n_models, batch), device=x.device)
    return x[idx], y[idx]                       # (N, B, 784), (N, B)


def main(lr=1e-3, n_train=60000):
    device = "cuda"
    torch.manual_seed(0)
    models = [make_mlp().to(device) for _ in range(N_MODELS)]
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def fmodel(p, b, x):
        return functional_call(base, (p, b), (x,))

    ensemble_forward = vmap(fmodel, randomness="different")
    opt = torch.optim.Adam(params.values(), lr=lr)
    n_params = sum(v.numel() for v in params.values())
    print(f"{N_MODELS} members, {n_params / 1e6:.1f}M stacked params")

    x_all = torch.randn(n_train, 784, device=device)
    y_all = torch.randint(0, 10, (n_train,), device=device)

    t0 = time.time()
    for step in range(STEPS):
        xb, yb = bootstrap_batches(x_all, y_all, N_MODELS, BATCH)
        logits = ensemble_forward(params, buffers, xb)           # (N, B, 10)
        loss = F.cross_entropy(logits.reshape(-1, 10), yb.reshape(-1)) * N_MODELS
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 5 == 0:
            print(f"step {step} mean member loss {loss.item() / N_MODELS:.4f}")

    # ensemble evaluation: every member on the same held-out batch, average the probabilities
    with torch.no_grad():
        x_val = torch.randn(8192, 784, device=device)
        y_val = torch.randint(0, 10, (8192,), device=device)
        eval_forward = vmap(fmodel, in_dims=(0, 0, None), randomness="same")
        for m in models:
            m.eval()
        base.eval()
        probs = eval_forward(params, buffers, x_val).softmax(-1)   # (N, 8192, 10)
        acc = (probs.mean(0).argmax(-1) == y_val).float().mean().item()
    print(f"ensemble acc {acc:.3f} ({time.time() - t0:.1f}s), peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
