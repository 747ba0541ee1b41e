"""ASR from raw waveforms: a wav2vec2-style convolutional feature encoder written by hand,
a conv positional embedding, a Transformer encoder and a CTC head.

16 kHz audio, 16 s clips (256000 samples) -> 7 conv layers (strides 5,2,2,2,2,2,2 = 320x) -> 799 frames.
fp16 autocast with GradScaler, AdamW, grad clipping.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

p = argparse.ArgumentParser()
p.add_argument("--batch_size", type=int, default=16)
p.add_argument("--seconds", type=float, default=16.0)
p.add_argument("--d_model", type=int, default=768)
p.add_argument("--layers", type=int, default=12)
p.add_argument("--heads", type=int, default=12)
p.add_argument("--vocab", type=int, default=32)
p.add_argument("--steps", type=int, default=5)
p.add_argument("--lr", type=float, default=5e-5)
args = p.parse_args()

SR = 16000
CONV_LAYERS = [(512, 10, 5)] + [(512, 3, 2)] * 4 + [(512, 2, 2)] * 2   # (channels, kernel, stride)


class FeatureEncoder(nn.Module):
    def __init__(self, conv_layers):
        super().__init__()
        blocks = []
        c_in = 1
        for i, (c, k, s) in enumerate(conv_layers):
            layer = [nn.Conv1d(c_in, c, k, stride=s, bias=False)]
            if i == 0:
                layer.append(nn.GroupNorm(c, c))   # per-channel norm on the first layer only
            layer.append(nn.GELU())
            blocks.append(nn.Sequential(*layer))
            c_in = c
        self.blocks = nn.ModuleList(blocks)

    def forward(self, wav):
        x = wav.unsqueeze(1)
        for b in self.blocks:
            x = b(x)
        return x.transpose(1, 2)   # (B, T, 512)


class ConvPositional(nn.Module):
    def __init__(self, d, k=128, groups=16):
        super().__init__()
        self.conv = nn.utils.parametrizations.weight_norm(nn.Conv1d(d, d, k, padding=k // 2, groups=groups), dim=2)
        self.k = k

    def forward(self, x):
        h = self.conv(x.transpose(1, 2))
        h = h[:, :, :-1] if self.k % 2 == 0 else h
        return x + F.gelu(h).transpose(1, 2)


class CTCModel(nn.Module):
    def __init__(self, d_model, layers, heads, vocab):
        super().__init__()
        self.features = FeatureEncoder(CONV_LAYERS)
        self.feat_norm = nn.LayerNorm(512)
        self.proj = nn.Linear(512, d_model)
        self.pos = ConvPositional(d_model)
        enc_layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.1, activation="gelu",
                                               batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(enc_layer, layers)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, wav):
        x = self.proj(self.feat_norm(self.features(wav)))
        x = self.encoder(self.pos(x))
        return self.head(x)


class Utterances(Dataset):
    def __init__(self, n, samples, vocab):
        self.n, self.samples, self.vocab = n, samples, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        wav = torch.randn(self.samples) * 0.1
        tgt_len = torch.randint(80, 200, ()).item()
        return wav, torch.randint(1, self.vocab, (tgt_len,))


def collate(batch):
    wavs = torch.stack([b[0] for b in batch])
    targets = [b[1] for b in batch]
    lens = torch.tensor([len(t) for t in targets])
    return wavs, torch.cat(targets), lens


def main():
    dev = "cuda"
    model = CTCModel(args.d_model, args.layers, args.heads, args.vocab).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.01)
    scaler = torch.amp.GradScaler()
    samples = int(args.seconds * SR)
    loader = DataLoader(Utterances(args.batch_size * args.steps, samples, args.vocab), batch_size=args.batch_size,
                        collate_fn=collate, num_workers=2)
    model.train()
    for step, (wav, targets, tgt_lens) in enumerate(loader):
        wav = wav.to(dev)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(wav)
        log_probs = logits.float().log_softmax(-1).transpose(0, 1)   # (T, B, V)
        in_lens = torch.full((wav.shape[0],), log_probs.shape[0], dtype=torch.long)
        loss = F.ctc_loss(log_probs, targets.to(dev), in_lens, tgt_lens, blank=0, zero_infinity=True)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        scaler.step(opt)
        scaler.update()
        print(f"step {step} frames {log_probs.shape[0]} ctc {loss.item():.3f}")


if __name__ == "__main__":
    main()
