"""Fine-tune a ViT-B/16 at 384px, the recipe of the ViT paper (SGD momentum 0.9, no weight decay,
grad-clip 1), with activation checkpointing and fp16 AMP so that it fits a consumer card."""
import argparse
import time

import timm
import torch
import torch.nn as nn
from timm.data import resolve_data_config
from torch.utils.data import DataLoader, Dataset
from torchvision.transforms import v2

p = argparse.ArgumentParser()
p.add_argument("--model", default="vit_base_patch16_384")
p.add_argument("--num-classes", type=int, default=102)
p.add_argument("--batch-size", type=int, default=64)
p.add_argument("--lr", type=float, default=0.03)
p.add_argument("--steps", type=int, default=4)
p.add_argument("--grad-ckpt", action=argparse.BooleanOptionalAction, default=True)
args = p.parse_args()

model = timm.create_model(args.model, pretrained=False, num_classes=args.num_classes)
if args.grad_ckpt:
    model.set_grad_checkpointing(True)

data_cfg = resolve_data_config({}, model=model)
_, H, W = data_cfg["input_size"]            # (3, 384, 384) for this model
print("data config:", data_cfg)

transform = v2.Compose([
    v2.RandomResizedCrop((H, W), scale=(0.5, 1.0), antialias=True),
    v2.RandomHorizontalFlip(),
    v2.ToDtype(torch.float32, scale=True),
    v2.Normalize(mean=data_cfg["mean"], std=data_cfg["std"]),
])


class Flowers(Dataset):
    def __init__(self, n, k):
        self.n, self.k = n, k

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return transform(torch.randint(0, 256, (3, 500, 500), dtype=torch.uint8)), i % self.k


loader = DataLoader(Flowers(args.batch_size * args.steps, args.num_classes), batch_size=args.batch_size,
                    shuffle=True, num_workers=8, drop_last=True)

model = model.cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=0.0)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)
scaler = torch.amp.GradScaler("cuda")
criterion = nn.CrossEntropyLoss()

model.train()
t0 = time.time()
for it, (x, y) in enumerate(loader):
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    scheduler.step()
    print(f"it {it}: loss {loss.item():.4f} scale {scaler.get_scale():.0f} ({time.time() - t0:.1f}s)")
