"""Train a timm model described in an INI file (configparser), the way our older pipelines did.

    python train_ini_config_timm.py --config configs/seresnext_birds.ini
The config path defaults to the file next to this script.
"""
import argparse
import configparser
import os

import timm
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

HERE = os.path.dirname(os.path.abspath(__file__))

parser = argparse.ArgumentParser()
parser.add_argument("--config", default=os.path.join(HERE, "configs", "seresnext_birds.ini"))
args = parser.parse_args()

cp = configparser.ConfigParser()
cp.read(args.config)
mcfg, dcfg, ocfg, rcfg = cp["model"], cp["data"], cp["optim"], cp["run"]


class Birds(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), i % self.num_classes


model = timm.create_model(
    mcfg.get("name"),
    pretrained=False,
    num_classes=mcfg.getint("num_classes"),
    drop_rate=mcfg.getfloat("drop_rate"),
    drop_path_rate=mcfg.getfloat("drop_path_rate"),
).cuda()

use_fp16 = ocfg.getboolean("fp16")
optimizer = torch.optim.SGD(model.parameters(), lr=ocfg.getfloat("lr"), momentum=ocfg.getfloat("momentum"),
                            weight_decay=ocfg.getfloat("weight_decay"))
scaler = torch.amp.GradScaler("cuda", enabled=use_fp16)
criterion = nn.CrossEntropyLoss()

bs = dcfg.getint("batch_size")
steps = rcfg.getint("max_steps")
loader = DataLoader(Birds(bs * steps, dcfg.getint("image_size"), mcfg.getint("num_classes")), batch_size=bs,
                    shuffle=True, num_workers=dcfg.getint("workers"), drop_last=True)

model.train()
for step, (x, y) in enumerate(loader):
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.float16, enabled=use_fp16):
        loss = criterion(model(x), y)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    if step % rcfg.getint("log_every") == 0:
        print(f"step {step} loss {loss.item():.4f} scale {scaler.get_scale():.0f}")
