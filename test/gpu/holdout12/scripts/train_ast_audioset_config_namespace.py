"""Audio Spectrogram Transformer (transformers ASTConfig, base size, random init) for AudioSet-style
multi-label tagging on random log-mel inputs; bf16 autocast, AdamW, multi-label BCE."""
from types import SimpleNamespace

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from transformers import ASTConfig, ASTForAudioClassification

args = SimpleNamespace(
    num_mel_bins=128,
    max_length=1024,        # frames (10.24 s at 10 ms hop)
    num_labels=527,
    batch_size=16,
    lr=5e-5,
    epochs=1,
    steps=6,
    hidden_size=768,
    layers=12,
    heads=12,
)


class RandomFbank(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        fbank = torch.randn(args.max_length, args.num_mel_bins) * 4.3 - 4.2
        target = (torch.rand(args.num_labels) < 0.01).float()
        return fbank, target


config = ASTConfig(
    hidden_size=args.hidden_size,
    num_hidden_layers=args.layers,
    num_attention_heads=args.heads,
    intermediate_size=4 * args.hidden_size,
    max_length=args.max_length,
    num_mel_bins=args.num_mel_bins,
    frequency_stride=10,
    time_stride=10,
    patch_size=16,
    num_labels=args.num_labels,
)
model = ASTForAudioClassification(config).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=5e-7, betas=(0.95, 0.999))
loss_fn = nn.BCEWithLogitsLoss()
loader = DataLoader(RandomFbank(args.batch_size * args.steps), batch_size=args.batch_size, shuffle=True,
                    num_workers=4)

for epoch in range(args.epochs):
    model.train()
    for step, (fbank, target) in enumerate(loader):
        fbank, target = fbank.cuda(), target.cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_values=fbank).logits
        loss = loss_fn(logits.float(), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"epoch {epoch} step {step} bce {loss.item():.4f}")

print("peak allocated GiB:", round(torch.cuda.max_memory_allocated() / 2 ** 30, 2))
