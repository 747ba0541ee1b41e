"""Video Swin-T (torchvision swin3d_t) on Kinetics-400-like clips, bf16 autocast, config from an INI file."""
import configparser
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision.models import video as video_models

HERE = os.path.dirname(os.path.abspath(__file__))
cp = configparser.ConfigParser()
cp.read(os.path.join(HERE, "configs", "swin3d_kinetics.ini"))

CLIP_LEN = cp.getint("data", "clip_len")
CROP = cp.getint("data", "crop_size")
BATCH = cp.getint("data", "batch_size")
WORKERS = cp.getint("data", "num_workers")
ARCH = cp.get("model", "arch")
NUM_CLASSES = cp.getint("model", "num_classes")
LR = cp.getfloat("optim", "lr")
WD = cp.getfloat("optim", "weight_decay")
WARMUP = cp.getint("optim", "warmup_steps")
MAX_STEPS = cp.getint("optim", "max_steps")


class KineticsClips(Dataset):
    def __len__(self):
        return BATCH * MAX_STEPS

    def __getitem__(self, i):
        # (C, T, H, W) as the torchvision video models expect
        return torch.randn(3, CLIP_LEN, CROP, CROP), i % NUM_CLASSES


def main():
    model = getattr(video_models, ARCH)(weights=None, num_classes=NUM_CLASSES).cuda()
    print(f"{ARCH}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params")
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (no_decay if p.ndim <= 1 or "relative_position_bias_table" in n else decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WD}, {"params": no_decay, "weight_decay": 0.0}], lr=LR)
    sched = torch.optim.lr_scheduler.SequentialLR(
        opt,
        [torch.optim.lr_scheduler.LinearLR(opt, 0.01, total_iters=WARMUP),
         torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=MAX_STEPS - WARMUP)],
        milestones=[WARMUP])
    crit = nn.CrossEntropyLoss(label_smoothing=0.1)
    loader = DataLoader(KineticsClips(), batch_size=BATCH, shuffle=True, num_workers=WORKERS, drop_last=True)

    model.train()
    for step, (clips, labels) in enumerate(loader):
        clips, labels = clips.cuda(non_blocking=True), labels.cuda(non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = crit(model(clips), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        print(f"step {step} loss {loss.item():.3f} lr {sched.get_last_lr()[0]:.2e}")
    print("peak alloc GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
