"""Multi-GPU options for the audio tagging model.

--mode ddp        : DistributedDataParallel (torchrun), the default
--mode functional : nn.parallel.data_parallel(model, x, device_ids) per call, for quick single-process tests
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from audioset import AudioSetMel  # local dataset


class CNN14(nn.Module):
    def __init__(self, n_classes=527):
        super().__init__()

        def block(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
                                 nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
                                 nn.AvgPool2d(2))

        self.blocks = nn.Sequential(block(1, 64), block(64, 128), block(128, 256), block(256, 512))
        self.fc = nn.Linear(512, n_classes)

    def forward(self, x):
        h = self.blocks(x.unsqueeze(1))
        h = h.mean(dim=3)
        h = h.max(dim=2).values + h.mean(dim=2)
        return self.fc(h)


def unwrap(model):
    return model.module if isinstance(model, (nn.DataParallel, DDP)) else model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["ddp", "functional"], default="ddp")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--bs", type=int, default=32)
    args = ap.parse_args()

    if args.mode == "ddp":
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cuda:0")
        print("functional data_parallel over", torch.cuda.device_count(), "GPUs (not nn.DataParallel)")

    ds = AudioSetMel("data/audioset_balanced")
    sampler = DistributedSampler(ds) if args.mode == "ddp" else None
    loader = DataLoader(ds, batch_size=args.bs, shuffle=sampler is None, sampler=sampler, num_workers=8)

    model = CNN14().to(device)
    # We used to wrap the model in nn.DataParallel(model) here; that put the whole gather
    # on GPU 0, which ran out of memory first. Keep it out.
    if args.mode == "ddp":
        model = DDP(model, device_ids=[device.index])
    device_ids = list(range(torch.cuda.device_count()))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        for mel, target in loader:
            mel, target = mel.to(device), target.to(device)
            if args.mode == "functional":
                logits = nn.parallel.data_parallel(model, mel, device_ids=device_ids)
            else:
                logits = model(mel)
            loss = F.binary_cross_entropy_with_logits(logits, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if args.mode == "functional" or dist.get_rank() == 0:
            torch.save(unwrap(model).state_dict(), "cnn14.pt")
            print(f"epoch {epoch}: last loss {loss.item():.4f}")

    if args.mode == "ddp":
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
