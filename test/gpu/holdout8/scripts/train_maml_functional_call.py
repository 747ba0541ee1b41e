"""Second-order MAML (Finn et al. 2017) on 5-way 5-shot mini-ImageNet-style tasks, written with
torch.func.functional_call instead of a meta-learning library.

For each task of the meta-batch the inner loop takes `inner_steps` SGD steps on the support set with
create_graph=True; the query losses of all tasks are summed and backpropagated once through every inner loop.
"""
import argparse
import time
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call


def conv_block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1),
        nn.BatchNorm2d(cout, track_running_stats=False),     # transductive BN, as in the MAML code
        nn.ReLU(),
        nn.MaxPool2d(2),
    )


class Conv4(nn.Module):
    def __init__(self, n_way, hidden=64, image_size=84):
        super().__init__()
        self.features = nn.Sequential(conv_block(3, hidden), conv_block(hidden, hidden),
                                      conv_block(hidden, hidden), conv_block(hidden, hidden))
        feat = hidden * (image_size // 16) ** 2
        self.classifier = nn.Linear(feat, n_way)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def sample_task(args, device):
    """One N-way K-shot episode; labels 0..N-1."""
    n_s, n_q = args.n_way * args.k_shot, args.n_way * args.k_query
    xs = torch.randn(n_s, 3, args.image_size, args.image_size, device=device)
    ys = torch.arange(args.n_way, device=device).repeat_interleave(args.k_shot)
    xq = torch.randn(n_q, 3, args.image_size, args.image_size, device=device)
    yq = torch.arange(args.n_way, device=device).repeat_interleave(args.k_query)
    return xs, ys, xq, yq


def inner_adapt(model, params, xs, ys, inner_lr, steps, first_order=False):
    fast = OrderedDict(params)
    for _ in range(steps):
        logits = functional_call(model, fast, (xs,))
        loss = F.cross_entropy(logits, ys)
        grads = torch.autograd.grad(loss, list(fast.values()), create_graph=not first_order)
        fast = OrderedDict((name, w - inner_lr * g) for (name, w), g in zip(fast.items(), grads))
    return fast


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n-way", type=int, default=5, dest="n_way")
    parser.add_argument("--k-shot", type=int, default=5, dest="k_shot")
    parser.add_argument("--k-query", type=int, default=15, dest="k_query")
    parser.add_argument("--meta-batch", type=int, default=4, dest="meta_batch")
    parser.add_argument("--inner-steps", type=int, default=5, dest="inner_steps")
    parser.add_argument("--inner-lr", type=float, default=0.01, dest="inner_lr")
    parser.add_argument("--meta-lr", type=float, default=1e-3, dest="meta_lr")
    parser.add_argument("--image-size", type=int, default=84, dest="image_size")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--first-order", action="store_true", dest="first_order")
    args = parser.parse_args()

    device = torch.device("cuda")
    model = Conv4(args.n_way, image_size=args.image_size).to(device)
    meta_opt = torch.optim.Adam(model.parameters(), lr=args.meta_lr)

    t0 = time.time()
    for it in range(args.iterations):
        meta_opt.zero_grad()
        params = dict(model.named_parameters())
        meta_loss = 0.0
        accs = []
        for _ in range(args.meta_batch):
            xs, ys, xq, yq = sample_task(args, device)
            fast = inner_adapt(model, params, xs, ys, args.inner_lr, args.inner_steps, args.first_order)
            q_logits = functional_call(model, fast, (xq,))
            meta_loss = meta_loss + F.cross_entropy(q_logits, yq)
            accs.append((q_logits.argmax(1) == yq).float().mean().item())
        meta_loss = meta_loss / args.meta_batch
        meta_loss.backward()
        meta_opt.step()
        print(f"iter {it} meta-loss {meta_loss.item():.4f} query acc {sum(accs) / len(accs):.3f} "
              f"({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
