"""Iterative magnitude pruning of a ResNet-50 followed by fine-tuning (fp16 autocast + GradScaler).

torch.nn.utils.prune keeps `weight_orig` (the parameter) plus a `weight_mask` buffer for every pruned layer and
recomputes `weight = weight_orig * weight_mask` in a forward pre-hook. At the end the masks are made permanent
with prune.remove().
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.utils.prune as prune
from torch.utils.data import DataLoader, TensorDataset
from torchvision import models

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="resnet50")
parser.add_argument("--num-classes", type=int, default=200, dest="num_classes")
parser.add_argument("--bs", type=int, default=128)
parser.add_argument("--img", type=int, default=224)
parser.add_argument("--rounds", type=int, default=2)
parser.add_argument("--amount", type=float, default=0.3, help="fraction pruned per round")
parser.add_argument("--steps-per-round", type=int, default=3, dest="steps_per_round")
parser.add_argument("--lr", type=float, default=0.01)
args = parser.parse_args()

device = "cuda"
model = models.__dict__[args.arch](weights=None, num_classes=args.num_classes).to(device)

to_prune = [(m, "weight") for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]

n = args.bs * args.steps_per_round
data = TensorDataset(torch.randn(n, 3, args.img, args.img), torch.randint(0, args.num_classes, (n,)))
loader = DataLoader(data, batch_size=args.bs, shuffle=True, drop_last=True)

criterion = nn.CrossEntropyLoss()
scaler = torch.amp.GradScaler("cuda")


def sparsity(model):
    zeros = total = 0
    for m, name in to_prune:
        w = getattr(m, name)
        zeros += (w == 0).sum().item()
        total += w.numel()
    return zeros / total


for r in range(args.rounds):
    prune.global_unstructured(to_prune, pruning_method=prune.L1Unstructured, amount=args.amount)
    print(f"round {r}: sparsity {sparsity(model):.3f}")
    # a fresh optimizer each round (the parameters are now the weight_orig tensors)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-5)
    model.train()
    for i, (x, y) in enumerate(loader):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            out = model(x)
            loss = criterion(out, y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        print(f"  step {i}: loss {loss.item():.3f}")

for m, name in to_prune:
    prune.remove(m, name)
print(f"final sparsity {sparsity(model):.3f}")
print("peak memory: %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))
