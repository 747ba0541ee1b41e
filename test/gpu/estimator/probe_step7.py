"""Per-sample gradients with torch.func (vmap over grad): what one DP-SGD step holds, phase by phase.

For a few nets (conv + GroupNorm, conv + ReLU, MLPs) and batch sizes: memory before the vmap'd grad, its peak, what
stays after it (the per-sample gradients), the peak of the per-sample norms and of the clip-and-sum loop, and, for
comparison, a plain forward + backward at the same batch (what forward keeps, and backward's peak).
Writes $OUT/step7_per_sample.json.
"""
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

dev = "cuda"
OUT = os.environ.get("OUT", ".")


def gn_cnn(c1, c2, c3, hidden, act=nn.Tanh, norm=True):
    def block(cin, cout):
        layers = [nn.Conv2d(cin, cout, 3, padding=1)]
        if norm:
            layers.append(nn.GroupNorm(8, cout))
        layers.append(act())
        return layers
    return lambda: nn.Sequential(*block(3, c1), *block(c1, c1), nn.AvgPool2d(2), *block(c1, c2), *block(c2, c2), nn.AvgPool2d(2),
                                 *block(c2, c3), *block(c3, c3), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(c3 * 16, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 10))


def mlp(widths):
    def build():
        layers = []
        for a, b in zip(widths[:-1], widths[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        return nn.Sequential(*layers[:-1])
    return build


def measure(name, build, batch, shape):
    torch.cuda.empty_cache()
    model = build().to(dev)
    P = sum(p.numel() for p in model.parameters())
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss_one(p, b, x, y):
        return F.cross_entropy(functional_call(model, (p, b), (x.unsqueeze(0),)), y.unsqueeze(0))

    psg = vmap(grad(loss_one), in_dims=(None, None, 0, 0))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(batch, *shape, device=dev)
    y = torch.randint(0, 10, (batch,), device=dev)
    rec = {"name": name, "batch": batch, "params": P, "per_sample_bytes": batch * P * 4,
           "largest_param": max(p.numel() for p in model.parameters())}
    for _ in range(2):
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        grads = psg(params, buffers, x, y)
        torch.cuda.synchronize()
        rec["base"] = base
        rec["vmap_peak"] = torch.cuda.max_memory_allocated() - base
        rec["after_vmap"] = torch.cuda.memory_allocated() - base
        torch.cuda.reset_peak_memory_stats()
        norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()], dim=1).norm(dim=1)
        rec["norm_peak"] = torch.cuda.max_memory_allocated() - base
        factor = (1.0 / (norms + 1e-6)).clamp(max=1.0)
        torch.cuda.reset_peak_memory_stats()
        for n, p in model.named_parameters():
            g = grads[n]
            clipped = (g * factor.view(-1, *([1] * (g.dim() - 1)))).sum(0)
            p.grad = (clipped + torch.randn_like(clipped)) / batch
        rec["clip_peak"] = torch.cuda.max_memory_allocated() - base
        opt.step()
        opt.zero_grad(set_to_none=True)
        del grads, norms, factor
    # A plain step at the same batch: what forward keeps, and backward's peak over the start.
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    loss = F.cross_entropy(model(x), y)
    rec["plain_forward_kept"] = torch.cuda.memory_allocated() - base
    loss.backward()
    rec["plain_peak"] = torch.cuda.max_memory_allocated() - base
    opt.zero_grad(set_to_none=True)
    del loss
    rec = {k: (round(v / 2**20, 1) if isinstance(v, int) and k not in ("batch", "params", "largest_param") else v) for k, v in rec.items()}
    print(json.dumps(rec), flush=True)
    del model, params, buffers, opt, x, y
    return rec


results = []
cases = [
    ("gn_cnn_64_128_256_tanh", gn_cnn(64, 128, 256, 256), 512, (3, 32, 32)),
    ("gn_cnn_64_128_256_tanh", gn_cnn(64, 128, 256, 256), 256, (3, 32, 32)),
    ("gn_cnn_32_64_128_tanh", gn_cnn(32, 64, 128, 512), 512, (3, 32, 32)),
    ("cnn_32_64_128_relu_nonorm", gn_cnn(32, 64, 128, 256, act=nn.ReLU, norm=False), 512, (3, 32, 32)),
    ("mlp_784_1024_1024_10", mlp([784, 1024, 1024, 10]), 512, (784,)),
    ("mlp_784_1024_1024_10", mlp([784, 1024, 1024, 10]), 1024, (784,)),
    ("mlp_4096_2048_10", mlp([4096, 2048, 10]), 256, (4096,)),
]
for case in cases:
    try:
        results.append(measure(*case))
    except Exception as e:  # noqa: BLE001 - recorded, the next case runs
        results.append({"name": case[0], "batch": case[2], "error": repr(e)[:300]})
        print("error", case[0], repr(e)[:300], flush=True)
# A model made on the meta device, materialised on the GPU in fp32 (to_empty), then cast to bf16: does the cast
# hold the fp32 and the bf16 weights at once, or free each fp32 tensor as its copy is made?
cast = {}
with torch.device("meta"):
    big = nn.Sequential(*[nn.Linear(4096, 4096, bias=False) for _ in range(32)])
torch.cuda.synchronize()
torch.cuda.empty_cache()
before = torch.cuda.memory_allocated()
big = big.to_empty(device=dev)
cast["fp32_weights_mib"] = round((torch.cuda.memory_allocated() - before) / 2**20, 1)
torch.cuda.reset_peak_memory_stats()
big = big.to(torch.bfloat16)
cast["cast_peak_mib"] = round((torch.cuda.max_memory_allocated() - before) / 2**20, 1)
cast["after_cast_mib"] = round((torch.cuda.memory_allocated() - before) / 2**20, 1)
del big
torch.cuda.empty_cache()
before = torch.cuda.memory_allocated()
torch.cuda.reset_peak_memory_stats()
small = nn.Sequential(*[nn.Linear(4096, 4096, bias=False) for _ in range(32)]).cuda().half()
cast["cuda_then_half_peak_mib"] = round((torch.cuda.max_memory_allocated() - before) / 2**20, 1)
del small
print(json.dumps(cast), flush=True)
results.append({"name": "cast", **cast})
meta = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "unit": "MiB above the memory allocated before the step"}
with open(os.path.join(OUT, "step7_per_sample.json"), "w") as f:
    json.dump({"meta": meta, "results": results}, f, indent=1)
