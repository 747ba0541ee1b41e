"""Train a timm model chosen from a table of presets (fp16 autocast + GradScaler, AdamW, warmup + cosine)."""
import argparse
import math

import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

PRESETS = {
    "tiny": {"model": "resnet26d", "img_size": 192, "batch_size": 128, "lr": 2e-3, "drop_path": 0.0},
    "small": {"model": "resnet50d", "img_size": 224, "batch_size": 96, "lr": 1e-3, "drop_path": 0.05},
    "base": {"model": "resnet101d", "img_size": 256, "batch_size": 64, "lr": 8e-4, "drop_path": 0.1},
}

parser = argparse.ArgumentParser()
parser.add_argument("--size", choices=sorted(PRESETS), default="small")
parser.add_argument("--num-classes", type=int, default=1000)
parser.add_argument("--steps", type=int, default=8)
parser.add_argument("--warmup", type=int, default=2)
args = parser.parse_args()
P = PRESETS[args.size]

model = timm.create_model(P["model"], pretrained=False, num_classes=args.num_classes,
                          drop_path_rate=P["drop_path"]).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=P["lr"], weight_decay=0.05)
scaler = torch.amp.GradScaler()


def lr_lambda(step):
    if step < args.warmup:
        return (step + 1) / args.warmup
    return 0.5 * (1 + math.cos(math.pi * (step - args.warmup) / max(1, args.steps - args.warmup)))


scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
n = P["batch_size"] * args.steps
ds = TensorDataset(torch.randn(n, 3, P["img_size"], P["img_size"]), torch.randint(0, args.num_classes, (n,)))
loader = DataLoader(ds, batch_size=P["batch_size"], shuffle=True, num_workers=2, pin_memory=True)

model.train()
for step, (x, y) in enumerate(loader):
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    scheduler.step()
    if step % 2 == 0:
        print(f"[{args.size}/{P['model']}] step {step} loss {loss.item():.3f} lr {scheduler.get_last_lr()[0]:.2e}")

print("peak memory %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))
