"""12-lead ECG multi-label classification (PTB-XL style, 10 s at 500 Hz) with a 1-D ResNet.

The model is a small class hierarchy: `SignalModel` builds the backbone and calls `self.build_head()`,
which `ECGMultiLabelNet` overrides with an attention-pooling head. An EMA copy of the model (deepcopy,
updated in a @torch.no_grad() helper) is evaluated at the end.
"""
import copy
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class ECGConfig:
    leads: int = 12
    sampling_rate: int = 500
    seconds: int = 10
    num_labels: int = 71
    widths: tuple = (64, 128, 256, 512)
    blocks_per_stage: int = 2
    kernel_size: int = 15
    batch_size: int = 128
    lr: float = 1e-3
    steps: int = 10
    ema_decay: float = 0.999

    @property
    def n_samples(self) -> int:
        return self.sampling_rate * self.seconds

    @property
    def feat_dim(self) -> int:
        return self.widths[-1]


class ResBlock1d(nn.Module):
    def __init__(self, c_in, c_out, k, stride):
        super().__init__()
        self.conv1 = nn.Conv1d(c_in, c_out, k, stride, k // 2, bias=False)
        self.bn1 = nn.BatchNorm1d(c_out)
        self.conv2 = nn.Conv1d(c_out, c_out, k, 1, k // 2, bias=False)
        self.bn2 = nn.BatchNorm1d(c_out)
        self.short = (nn.Sequential(nn.Conv1d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm1d(c_out))
                      if stride != 1 or c_in != c_out else nn.Identity())

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + self.short(x))


class SignalModel(nn.Module):
    def __init__(self, cfg: ECGConfig):
        super().__init__()
        self.cfg = cfg
        self.stem = nn.Sequential(nn.Conv1d(cfg.leads, cfg.widths[0], cfg.kernel_size, 2, cfg.kernel_size // 2,
                                            bias=False),
                                  nn.BatchNorm1d(cfg.widths[0]), nn.ReLU(inplace=True))
        stages, c = [], cfg.widths[0]
        for i, w in enumerate(cfg.widths):
            for b in range(cfg.blocks_per_stage):
                stages.append(ResBlock1d(c, w, cfg.kernel_size, 2 if (b == 0 and i > 0) else 1))
                c = w
        self.backbone = nn.Sequential(*stages)
        self.head = self.build_head()

    def build_head(self):
        return nn.Sequential(nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(self.cfg.feat_dim, self.cfg.num_labels))

    def forward(self, x):
        return self.head(self.backbone(self.stem(x)))


class AttentionPoolHead(nn.Module):
    def __init__(self, dim, num_labels, hidden=256):
        super().__init__()
        self.score = nn.Sequential(nn.Conv1d(dim, hidden, 1), nn.Tanh(), nn.Conv1d(hidden, 1, 1))
        self.fc = nn.Sequential(nn.Linear(2 * dim, hidden), nn.ReLU(), nn.Dropout(0.3), nn.Linear(hidden, num_labels))

    def forward(self, h):                       # h: (B, C, T)
        a = torch.softmax(self.score(h), dim=-1)
        pooled = torch.cat([(h * a).sum(-1), h.amax(-1)], dim=1)
        return self.fc(pooled)


class ECGMultiLabelNet(SignalModel):
    def build_head(self):
        return AttentionPoolHead(self.cfg.feat_dim, self.cfg.num_labels)


class ECGRecords(Dataset):
    def __init__(self, n, cfg):
        self.n, self.cfg = n, cfg

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.randn(self.cfg.leads, self.cfg.n_samples) * 0.1
        y = (torch.rand(self.cfg.num_labels) < 0.05).float()
        return x, y


@torch.no_grad()
def update_ema(ema, model, decay):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
    for e, b in zip(ema.buffers(), model.buffers()):
        e.copy_(b)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    scores, targets = [], []
    for x, y in loader:
        scores.append(torch.sigmoid(model(x.to(device))))
        targets.append(y.to(device))
    scores, targets = torch.cat(scores), torch.cat(targets)
    return ((scores > 0.5).float() == targets).float().mean().item()


def main():
    cfg = ECGConfig()
    device = torch.device("cuda")
    model = ECGMultiLabelNet(cfg).to(device)
    ema = copy.deepcopy(model).eval()
    for p in ema.parameters():
        p.requires_grad_(False)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=1e-5)
    train_loader = DataLoader(ECGRecords(cfg.batch_size * cfg.steps, cfg), batch_size=cfg.batch_size, shuffle=True,
                              num_workers=4, drop_last=True)
    criterion = nn.BCEWithLogitsLoss()
    model.train()
    for step, (x, y) in enumerate(train_loader):
        x, y = x.to(device), y.to(device)
        loss = criterion(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        update_ema(ema, model, cfg.ema_decay)
        print(f"step {step} bce {loss.item():.4f}")
    val_loader = DataLoader(ECGRecords(256, cfg), batch_size=256)
    print(f"EMA label accuracy {evaluate(ema, val_loader, device):.3f}")
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
