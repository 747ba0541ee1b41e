"""DistributedDataParallel training script, run here as a single process (world_size=1).

Written for torchrun on a node, but it also runs directly: without RANK/WORLD_SIZE in the environment it
sets up a one-process group on a local file store. Gradient accumulation skips the all-reduce on the
micro-batches before the last one with model.no_sync().
"""
import os
import tempfile
from contextlib import nullcontext

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from torchvision.models import convnext_small

MICRO_BATCH = int(os.getenv("MICRO_BATCH", "64"))
ACCUM_STEPS = int(os.getenv("ACCUM_STEPS", "4"))
IMG_SIZE = int(os.getenv("IMG_SIZE", "224"))
NUM_CLASSES = int(os.getenv("NUM_CLASSES", "200"))
OPT_STEPS = int(os.getenv("OPT_STEPS", "3"))
BASE_LR = float(os.getenv("BASE_LR", "4e-3"))


def setup():
    rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if "MASTER_ADDR" in os.environ:
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
    else:
        store = os.path.join(tempfile.gettempdir(), f"ddp_store_{os.getpid()}")
        dist.init_process_group("nccl", init_method=f"file://{store}", rank=rank, world_size=world_size)
    torch.cuda.set_device(local_rank)
    return rank, world_size, local_rank


class RandomImages(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, IMG_SIZE, IMG_SIZE), torch.randint(0, NUM_CLASSES, ()).item()


def main():
    rank, world_size, local_rank = setup()
    device = torch.device("cuda", local_rank)

    model = convnext_small(weights=None, num_classes=NUM_CLASSES, stochastic_depth_prob=0.4).to(device)
    model = DDP(model, device_ids=[local_rank])

    ds = RandomImages(MICRO_BATCH * ACCUM_STEPS * OPT_STEPS * world_size)
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(ds, batch_size=MICRO_BATCH, sampler=sampler, num_workers=6, pin_memory=True, drop_last=True)

    lr = BASE_LR * MICRO_BATCH * ACCUM_STEPS * world_size / 4096
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05, fused=True)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    model.train()
    sampler.set_epoch(0)
    for i, (images, targets) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        last_micro = (i + 1) % ACCUM_STEPS == 0
        ctx = nullcontext() if last_micro else model.no_sync()
        with ctx:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = criterion(model(images), targets) / ACCUM_STEPS
            loss.backward()
        if last_micro:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if rank == 0:
                print(f"opt step {(i + 1) // ACCUM_STEPS}: loss {loss.item() * ACCUM_STEPS:.4f}")

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
