"""Small Conformer-CTC ASR model on LibriSpeech train-clean-100 (torchaudio)."""
import argparse
import os

import torch
import torch.nn as nn
import torchaudio
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

CHARS = "_ abcdefghijklmnopqrstuvwxyz'"
char2idx = {c: i for i, c in enumerate(CHARS)}


def text_to_ids(text):
    return torch.tensor([char2idx[c] for c in text.lower() if c in char2idx], dtype=torch.long)


class Collate:
    def __init__(self):
        self.mel = torchaudio.transforms.MelSpectrogram(sample_rate=16000, n_fft=400, hop_length=160, n_mels=80)

    @torch.no_grad()
    def __call__(self, batch):
        feats, targets, feat_lens, tgt_lens = [], [], [], []
        for wav, sr, transcript, *_ in batch:
            f = self.mel(wav).squeeze(0).clamp(min=1e-10).log().t()
            t = text_to_ids(transcript)
            feats.append(f)
            targets.append(t)
            feat_lens.append(f.size(0))
            tgt_lens.append(t.size(0))
        return (pad_sequence(feats, batch_first=True), pad_sequence(targets, batch_first=True),
                torch.tensor(feat_lens), torch.tensor(tgt_lens))


class ConformerCTC(nn.Module):
    def __init__(self, n_mels=80, d_model=256, n_layers=8, vocab=len(CHARS)):
        super().__init__()
        self.subsample = nn.Sequential(nn.Conv1d(n_mels, d_model, 3, stride=2, padding=1), nn.GELU(),
                                       nn.Conv1d(d_model, d_model, 3, stride=2, padding=1), nn.GELU())
        self.conformer = torchaudio.models.Conformer(input_dim=d_model, num_heads=4, ffn_dim=1024,
                                                     num_layers=n_layers, depthwise_conv_kernel_size=31)
        self.out = nn.Linear(d_model, vocab)

    def forward(self, feats, lens):
        x = self.subsample(feats.transpose(1, 2)).transpose(1, 2)
        lens = ((lens - 1) // 2) // 2 + 1
        lens = lens.clamp(max=x.size(1))
        x, lens = self.conformer(x, lens)
        return self.out(x).log_softmax(-1), lens


def greedy_decode(log_probs, lens):
    ids = log_probs.argmax(-1)
    out = []
    for seq, n in zip(ids, lens):
        prev, chars = -1, []
        for i in seq[:n].tolist():
            if i != prev and i != 0:
                chars.append(CHARS[i])
            prev = i
        out.append("".join(chars))
    return out


def train(model, loader, optimizer, ctc, device, epoch):
    model.train()
    model.zero_grad()
    for step, (feats, targets, feat_lens, tgt_lens) in enumerate(loader):
        feats, targets = feats.to(device), targets.to(device)
        log_probs, out_lens = model(feats, feat_lens.to(device))
        loss = ctc(log_probs.transpose(0, 1), targets, out_lens, tgt_lens.to(device))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()  # expect: OOM103
        if step % 50 == 0:
            print(f"epoch {epoch} step {step}: ctc {loss.item():.3f}")


def validate(model, loader, ctc, device):
    model.eval()
    val_loss = 0.0
    errors, words = 0, 0
    for feats, targets, feat_lens, tgt_lens in loader:
        feats, targets = feats.to(device), targets.to(device)
        log_probs, out_lens = model(feats, feat_lens.to(device))  # expect: OOM104
        loss = ctc(log_probs.transpose(0, 1), targets, out_lens, tgt_lens.to(device))
        val_loss += loss  # expect: OOM102
        hyps = greedy_decode(log_probs, out_lens)
        for h, t, n in zip(hyps, targets, tgt_lens):
            ref = "".join(CHARS[i] for i in t[:n].tolist()).split()
            errors += torchaudio.functional.edit_distance(ref, h.split())
            words += len(ref)
    return val_loss.item() / len(loader), errors / max(1, words)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/librispeech")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--bs", type=int, default=32)
    args = ap.parse_args()

    device = torch.device("cuda")
    train_set = torchaudio.datasets.LIBRISPEECH(args.root, url="train-clean-100", download=False)
    dev_set = torchaudio.datasets.LIBRISPEECH(args.root, url="dev-clean", download=False)
    collate = Collate()
    train_dl = DataLoader(train_set, batch_size=args.bs, shuffle=True, num_workers=8, collate_fn=collate)
    dev_dl = DataLoader(dev_set, batch_size=args.bs, num_workers=8, collate_fn=collate)

    model = ConformerCTC().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-3)
    sched = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-3, total_steps=args.epochs * len(train_dl))
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    for epoch in range(args.epochs):
        train(model, train_dl, optimizer, ctc, device, epoch)
        sched.step()
        vl, wer = validate(model, dev_dl, ctc, device)
        print(f"epoch {epoch}: dev loss {vl:.3f} WER {wer:.3%}")
        torch.save(model.state_dict(), "conformer_ctc.pt")


if __name__ == "__main__":
    main()
