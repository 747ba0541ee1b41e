"""Conformer-style acoustic encoder, frame-level phone classification.

Whole model cast to bfloat16 (no autocast, no fp32 master weights), blocks checkpointed.
Module tree: SpeechEncoder -> ConformerBlock (x16) -> {FeedForwardModule, MHSAModule, ConvModule}.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as cp
from torch.utils.data import DataLoader, Dataset

MODEL_CFG = dict(
    n_mels=80,
    d_model=512,
    n_heads=8,
    n_blocks=16,
    ff_expansion=4,
    conv_kernel=31,
    dropout=0.1,
    n_classes=5000,
    use_checkpoint=True,
)
BATCH_SIZE = 48
N_FRAMES = 1500      # 15 s of 10 ms frames
LR = 1e-4
STEPS = 5


class FeedForwardModule(nn.Module):
    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        self.net = nn.Sequential(
            nn.LayerNorm(d_model),
            nn.Linear(d_model, d_model * expansion),
            nn.SiLU(),
            nn.Dropout(dropout),
            nn.Linear(d_model * expansion, d_model),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        return self.net(x)


class MHSAModule(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        y = self.norm(x)
        y, _ = self.attn(y, y, y, need_weights=False)
        return self.drop(y)


class ConvModule(nn.Module):
    def __init__(self, d_model, kernel_size=31, dropout=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.pointwise1 = nn.Conv1d(d_model, 2 * d_model, kernel_size=1)
        self.glu = nn.GLU(dim=1)
        self.depthwise = nn.Conv1d(d_model, d_model, kernel_size, padding=kernel_size // 2, groups=d_model)
        self.bn = nn.BatchNorm1d(d_model)
        self.act = nn.SiLU()
        self.pointwise2 = nn.Conv1d(d_model, d_model, kernel_size=1)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):                       # x: (B, T, C)
        y = self.norm(x).transpose(1, 2)        # (B, C, T)
        y = self.glu(self.pointwise1(y))
        y = self.act(self.bn(self.depthwise(y)))
        y = self.pointwise2(y)
        return self.drop(y.transpose(1, 2))


class ConformerBlock(nn.Module):
    def __init__(self, d_model, n_heads, ff_expansion, conv_kernel, dropout):
        super().__init__()
        self.ff1 = FeedForwardModule(d_model, ff_expansion, dropout)
        self.mhsa = MHSAModule(d_model, n_heads, dropout)
        self.conv = ConvModule(d_model, conv_kernel, dropout)
        self.ff2 = FeedForwardModule(d_model, ff_expansion, dropout)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        x = x + self.mhsa(x)
        x = x + self.conv(x)
        x = x + 0.5 * self.ff2(x)
        return self.norm(x)


class ConvSubsampling(nn.Module):
    """4x time reduction with two stride-2 convolutions."""

    def __init__(self, n_mels, d_model):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, d_model, 3, stride=2), nn.ReLU(),
            nn.Conv2d(d_model, d_model, 3, stride=2), nn.ReLU(),
        )
        f = ((n_mels - 3) // 2 + 1 - 3) // 2 + 1
        self.out = nn.Linear(d_model * f, d_model)

    def forward(self, x):                        # (B, T, n_mels)
        x = self.conv(x.unsqueeze(1))            # (B, C, T', F')
        b, c, t, f = x.shape
        return self.out(x.permute(0, 2, 1, 3).reshape(b, t, c * f))


class SpeechEncoder(nn.Module):
    def __init__(self, n_mels, d_model, n_heads, n_blocks, ff_expansion, conv_kernel, dropout, n_classes,
                 use_checkpoint=False):
        super().__init__()
        self.subsample = ConvSubsampling(n_mels, d_model)
        self.blocks = nn.ModuleList()
        for _ in range(n_blocks):
            self.blocks.append(ConformerBlock(d_model, n_heads, ff_expansion, conv_kernel, dropout))
        self.classifier = nn.Linear(d_model, n_classes)
        self.use_checkpoint = use_checkpoint

    def forward(self, feats):
        x = self.subsample(feats)
        for blk in self.blocks:
            if self.use_checkpoint and self.training:
                x = cp.checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return self.classifier(x)


def frames_after_subsampling(t):
    return ((t - 3) // 2 + 1 - 3) // 2 + 1


class FbankDataset(Dataset):
    def __init__(self, n, n_frames, n_mels, n_classes):
        self.n, self.n_frames, self.n_mels, self.n_classes = n, n_frames, n_mels, n_classes
        self.t_out = frames_after_subsampling(n_frames)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        feats = torch.randn(self.n_frames, self.n_mels)
        labels = torch.randint(0, self.n_classes, (self.t_out,))
        labels[-20:] = -100     # padded frames
        return feats, labels


def main():
    device = torch.device("cuda")
    model = SpeechEncoder(**MODEL_CFG)
    model = model.to(device).to(torch.bfloat16)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR, betas=(0.9, 0.98), eps=1e-6)
    loader = DataLoader(FbankDataset(BATCH_SIZE * STEPS, N_FRAMES, MODEL_CFG["n_mels"], MODEL_CFG["n_classes"]),
                        batch_size=BATCH_SIZE, shuffle=True)

    model.train()
    for step, (feats, labels) in enumerate(loader):
        feats = feats.to(device, dtype=torch.bfloat16)
        labels = labels.to(device)
        logits = model(feats)
        labels = labels[:, : logits.size(1)]
        loss = F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        print(f"step {step} loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
