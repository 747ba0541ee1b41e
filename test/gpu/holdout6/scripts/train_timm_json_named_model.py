"""Fine-grained classifier; the timm model, its sizes and the optimizer are all named in a JSON file
(configs/dogs_effnet.json, opened relative to the working directory). An EMA copy of the weights is kept
with torch.optim.swa_utils.AveragedModel."""
import json
import sys

import timm
import torch
import torch.nn as nn
from timm.optim import create_optimizer_v2
from timm.scheduler import CosineLRScheduler
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from torch.utils.data import DataLoader, Dataset

cfg_path = sys.argv[1] if len(sys.argv) > 1 else "configs/dogs_effnet.json"
with open(cfg_path) as f:
    cfg = json.load(f)


class Dogs(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), i % self.num_classes


model = timm.create_model(**cfg["model"]).cuda()
ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(cfg.get("ema_decay", 0.9998)), use_buffers=True)
data_cfg = cfg["data"]
sched_cfg = cfg["schedule"]
train_ds = Dogs(data_cfg["batch_size"] * sched_cfg["steps_per_epoch"], data_cfg["img_size"], cfg["model"]["num_classes"])
loader = DataLoader(train_ds, batch_size=data_cfg["batch_size"], shuffle=True, num_workers=data_cfg["workers"],
                    drop_last=True)
optimizer = create_optimizer_v2(model, **cfg["optimizer"])
total = sched_cfg["epochs"] * sched_cfg["steps_per_epoch"]
scheduler = CosineLRScheduler(optimizer, t_initial=total, warmup_t=sched_cfg["warmup_steps"], warmup_lr_init=1e-5)
scaler = torch.amp.GradScaler("cuda", enabled=cfg["amp"])
loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)

print(f"{cfg['run_name']}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params")
num_updates = 0
for epoch in range(sched_cfg["epochs"]):
    model.train()
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        with torch.autocast("cuda", dtype=torch.float16, enabled=cfg["amp"]):
            loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        ema.update_parameters(model)
        num_updates += 1
        scheduler.step_update(num_updates)
        print(f"ep {epoch} upd {num_updates} loss {loss.item():.3f}")
    scheduler.step(epoch + 1)
