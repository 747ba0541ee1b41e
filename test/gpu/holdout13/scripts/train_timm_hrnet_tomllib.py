#!/usr/bin/env python
# HRNet-W18 on a plant dataset; every knob lives in configs/hrnet_plants.toml
import tomllib
from pathlib import Path

import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

CFG_PATH = Path(__file__).resolve().parent / "configs" / "hrnet_plants.toml"
with open(CFG_PATH, "rb") as f:
    cfg = tomllib.load(f)

mcfg, dcfg, ocfg, tcfg = cfg["model"], cfg["data"], cfg["optim"], cfg["train"]
device = "cuda"
amp_dtype = getattr(torch, tcfg["amp_dtype"])

model = timm.create_model(mcfg["name"], pretrained=False, num_classes=mcfg["num_classes"],
                          drop_rate=mcfg["drop_rate"]).to(device)
print(f"{mcfg['name']}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params")

n = dcfg["batch_size"] * tcfg["max_steps"]
size = dcfg["image_size"]
images = torch.randn(n, 3, size, size)
labels = torch.randint(0, mcfg["num_classes"], (n,))
loader = DataLoader(TensorDataset(images, labels), batch_size=dcfg["batch_size"], shuffle=True,
                    num_workers=dcfg["num_workers"], drop_last=True)

optimizer = torch.optim.AdamW(model.parameters(), lr=ocfg["lr"], weight_decay=ocfg["weight_decay"],
                              betas=tuple(ocfg["betas"]))

step = 0
model.train()
while step < tcfg["max_steps"]:
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=amp_dtype):
            out = model(x)
            loss = F.cross_entropy(out, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        optimizer.zero_grad()
        if step % tcfg["log_every"] == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}")
        step += 1
        if step >= tcfg["max_steps"]:
            break

print("peak", torch.cuda.max_memory_allocated() / 2**30)
