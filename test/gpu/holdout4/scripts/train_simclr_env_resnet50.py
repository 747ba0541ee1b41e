"""SimCLR pre-training: ResNet-50 encoder + 2-layer projection head, NT-Xent loss on two views per image.

Settings come from the environment (as on our cluster launcher):
    BATCH_SIZE=256 IMG_SIZE=128 TEMPERATURE=0.2 python train_simclr_env_resnet50.py
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, Dataset

BATCH_SIZE = int(os.environ.get("BATCH_SIZE", "256"))
IMG_SIZE = int(os.environ.get("IMG_SIZE", "128"))
PROJ_DIM = int(os.environ.get("PROJ_DIM", "128"))
TEMPERATURE = float(os.environ.get("TEMPERATURE", "0.2"))
LR = float(os.environ.get("LR", "0.3")) * BATCH_SIZE / 256
MAX_STEPS = int(os.environ.get("MAX_STEPS", "4"))


class TwoViews(Dataset):
    """Stand-in for an unlabeled image folder: returns two 'augmented' crops of the same image."""

    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        base = torch.rand(3, self.size + 16, self.size + 16)
        i, j = torch.randint(0, 16, (2,)).tolist()
        v1 = base[:, i:i + self.size, j:j + self.size]
        v2 = torch.flip(base[:, j:j + self.size, i:i + self.size], dims=[2])
        return v1.contiguous(), v2.contiguous()


class SimCLR(nn.Module):
    def __init__(self, proj_dim):
        super().__init__()
        self.encoder = torchvision.models.resnet50(weights=None)
        feat_dim = self.encoder.fc.in_features
        self.encoder.fc = nn.Identity()
        self.projector = nn.Sequential(
            nn.Linear(feat_dim, feat_dim, bias=False), nn.BatchNorm1d(feat_dim), nn.ReLU(inplace=True),
            nn.Linear(feat_dim, proj_dim, bias=False), nn.BatchNorm1d(proj_dim, affine=False),
        )

    def forward(self, x):
        return self.projector(self.encoder(x))


def nt_xent(z1, z2, temperature):
    z = F.normalize(torch.cat([z1, z2]), dim=1).float()
    n = z1.size(0)
    sim = z @ z.t() / temperature
    sim.fill_diagonal_(float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return F.cross_entropy(sim, targets)


def main():
    device = torch.device("cuda")
    model = SimCLR(PROJ_DIM).to(device)
    # LARS is not in torch; SGD + nesterov with a large LR and cosine decay is the usual substitute
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9, nesterov=True, weight_decay=1e-6)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=MAX_STEPS)
    loader = DataLoader(TwoViews(BATCH_SIZE * MAX_STEPS, IMG_SIZE), batch_size=BATCH_SIZE, shuffle=True,
                        num_workers=4, drop_last=True)
    model.train()
    for step, (x1, x2) in enumerate(loader):
        x1, x2 = x1.to(device, non_blocking=True), x2.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            z1 = model(x1)
            z2 = model(x2)
        loss = nt_xent(z1, z2, TEMPERATURE)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        print(f"step {step} nt-xent {loss.item():.4f}")
    print(f"peak memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
