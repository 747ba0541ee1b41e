"""Fine-tune torchvision's Swin V2-T on a 150-class food dataset (synthetic stand-in).

Everything lives in one dict at the top; the architecture is looked up by name with
torchvision.models.get_model so switching to swin_v2_s is a one-word change.
"""
import math
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset

config = dict(
    arch="swin_v2_t",
    num_classes=150,
    img_size=256,          # swin v2 was trained at 256
    batch_size=64,
    lr=5e-4,
    weight_decay=0.05,
    warmup_steps=2,
    total_steps=6,
    label_smoothing=0.1,
    amp_dtype="bfloat16",
    num_workers=2,
)


class FoodImages(Dataset):
    def __init__(self, n, img_size, num_classes):
        self.n = n
        self.pool = torch.randn(64, 3, img_size, img_size)
        self.labels = torch.randint(0, num_classes, (n,))

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.pool[i % 64], self.labels[i]


def lr_at(step):
    if step < config["warmup_steps"]:
        return config["lr"] * (step + 1) / config["warmup_steps"]
    progress = (step - config["warmup_steps"]) / max(1, config["total_steps"] - config["warmup_steps"])
    return config["lr"] * 0.5 * (1 + math.cos(math.pi * progress))


device = torch.device("cuda")
model = torchvision.models.get_model(config["arch"], weights=None, num_classes=config["num_classes"])
model = model.to(device)

decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if p.ndim <= 1 or "relative_position" in name or "logit_scale" in name else decay).append(p)
optimizer = torch.optim.AdamW(
    [{"params": decay, "weight_decay": config["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}],
    lr=config["lr"],
)
criterion = nn.CrossEntropyLoss(label_smoothing=config["label_smoothing"])
amp_dtype = getattr(torch, config["amp_dtype"])

loader = DataLoader(FoodImages(config["batch_size"] * config["total_steps"], config["img_size"], config["num_classes"]),
                    batch_size=config["batch_size"], shuffle=True, num_workers=config["num_workers"], drop_last=True)

model.train()
step = 0
t0 = time.time()
for images, labels in loader:
    images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
    for g in optimizer.param_groups:
        g["lr"] = lr_at(step)
    with torch.autocast(device_type="cuda", dtype=amp_dtype):
        logits = model(images)
        loss = criterion(logits, labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    optimizer.step()
    step += 1
    print(f"step {step} loss {loss.item():.4f} lr {lr_at(step - 1):.2e} {time.time() - t0:.1f}s")
    if step >= config["total_steps"]:
        break
print("max mem GiB", torch.cuda.max_memory_allocated() / 2**30)
