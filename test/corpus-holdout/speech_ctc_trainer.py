"""Conformer-lite CTC acoustic model on LibriSpeech-100h.

A small in-house trainer: callbacks, SpecAugment, gradient accumulation, AMP, greedy CTC decoding and WER.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
from dataclasses import dataclass, field

import editdistance
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio
from torch.nn import DataParallel as DP
from torch.utils.data import DataLoader

VOCAB = ["<blank>", " ", "'"] + [chr(c) for c in range(ord("a"), ord("z") + 1)]
CHAR2ID = {c: i for i, c in enumerate(VOCAB)}


# ----------------------------------------------------------------------------- data
class LibriCTC(torch.utils.data.Dataset):
    def __init__(self, root, split, train):
        self.ds = torchaudio.datasets.LIBRISPEECH(root, url=split, download=True)
        self.fbank = torchaudio.transforms.MelSpectrogram(16000, n_fft=400, hop_length=160, n_mels=80)
        self.specaug = nn.Sequential(torchaudio.transforms.FrequencyMasking(27),
                                     torchaudio.transforms.TimeMasking(100, p=0.05)) if train else None

    def __len__(self):
        return len(self.ds)

    def __getitem__(self, i):
        wav, sr, text, *_ = self.ds[i]
        feats = (self.fbank(wav)[0] + 1e-6).log().T  # (T, 80)
        if self.specaug is not None:
            feats = self.specaug(feats.T).T
        target = torch.tensor([CHAR2ID[c] for c in text.lower() if c in CHAR2ID])
        return feats, target


def collate(batch):
    feats, targets = zip(*batch)
    flen = torch.tensor([f.shape[0] for f in feats])
    tlen = torch.tensor([t.shape[0] for t in targets])
    return (nn.utils.rnn.pad_sequence(feats, batch_first=True), flen,
            torch.cat(targets), tlen)


# ----------------------------------------------------------------------------- model
class ConvSubsample(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, d, 3, 2), nn.ReLU(), nn.Conv2d(d, d, 3, 2), nn.ReLU())
        self.proj = nn.Linear(d * 19, d)

    def forward(self, x, lens):
        x = self.conv(x.unsqueeze(1))
        b, c, t, f = x.shape
        return self.proj(x.transpose(1, 2).reshape(b, t, c * f)), ((lens - 1) // 2 - 1) // 2


class ConformerLite(nn.Module):
    def __init__(self, d=256, layers=12, heads=4, vocab=len(VOCAB)):
        super().__init__()
        self.sub = ConvSubsample(d)
        self.enc = torchaudio.models.Conformer(input_dim=d, num_heads=heads, ffn_dim=4 * d, num_layers=layers,
                                               depthwise_conv_kernel_size=31, dropout=0.1)
        self.out = nn.Linear(d, vocab)

    def forward(self, feats, lens):
        x, lens = self.sub(feats, lens)
        x, lens = self.enc(x, lens)
        return self.out(x).log_softmax(-1), lens


# ----------------------------------------------------------------------------- decoding / metrics
def greedy_decode(log_probs, lens):
    hyps = []
    for row, n in zip(log_probs.argmax(-1).tolist(), lens.tolist()):
        out, prev = [], 0
        for t in row[:n]:
            if t != prev and t != 0:
                out.append(VOCAB[t])
            prev = t
        hyps.append("".join(out))
    return hyps


def refs_from_targets(targets, tlen):
    refs, i = [], 0
    for n in tlen.tolist():
        refs.append("".join(VOCAB[t] for t in targets[i:i + n].tolist()))
        i += n
    return refs


def word_errors(hyps, refs):
    errs = sum(editdistance.eval(h.split(), r.split()) for h, r in zip(hyps, refs))
    return errs, sum(len(r.split()) for r in refs)


# ----------------------------------------------------------------------------- callbacks
class Callback:
    def on_epoch_end(self, trainer, epoch, logs):
        pass


class JsonLogger(Callback):
    def __init__(self, path):
        self.path = path

    def on_epoch_end(self, trainer, epoch, logs):
        with open(self.path, "a") as f:
            f.write(json.dumps({"epoch": epoch, **logs}) + "\n")


class EarlyStop(Callback):
    def __init__(self, patience=5):
        self.best, self.bad, self.patience = math.inf, 0, patience

    def on_epoch_end(self, trainer, epoch, logs):
        if logs["val_wer"] < self.best:
            self.best, self.bad = logs["val_wer"], 0
            trainer.save("best.pt")
        else:
            self.bad += 1
            trainer.stop = self.bad >= self.patience


# ----------------------------------------------------------------------------- trainer
@dataclass
class TrainConfig:
    lr: float = 1e-3
    warmup: int = 10000
    epochs: int = 100
    accum: int = 4
    clip: float = 5.0
    empty_cache_every: int = 100
    log_every: int = 50
    out: str = "out/ctc"
    callbacks: list = field(default_factory=list)


class CTCTrainer:
    def __init__(self, model, cfg: TrainConfig):
        self.cfg = cfg
        self.device = torch.device("cuda")
        self.model = model.to(self.device)
        if torch.cuda.device_count() > 1:
            self.model = DP(self.model)  # expect: OOM108
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr, betas=(0.9, 0.98), weight_decay=1e-3)
        self.sched = torch.optim.lr_scheduler.LambdaLR(
            self.opt, lambda s: min((s + 1) / cfg.warmup, (cfg.warmup / (s + 1)) ** 0.5))
        self.scaler = torch.amp.GradScaler("cuda")
        self.ctc = nn.CTCLoss(blank=0, zero_infinity=True)
        self.stop = False
        self.step = 0
        os.makedirs(cfg.out, exist_ok=True)

    def save(self, name):
        m = self.model.module if isinstance(self.model, DP) else self.model
        torch.save(m.state_dict(), os.path.join(self.cfg.out, name))

    def _loss(self, batch):
        feats, flen, targets, tlen = (t.to(self.device) for t in batch)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            log_probs, olen = self.model(feats, flen)
        return self.ctc(log_probs.float().transpose(0, 1), targets, olen, tlen), log_probs, olen

    def train_epoch(self, loader):
        self.model.train()
        t0, run = time.time(), 0.0
        self.opt.zero_grad(set_to_none=True)
        for i, batch in enumerate(loader):
            loss, _, _ = self._loss(batch)
            self.scaler.scale(loss / self.cfg.accum).backward()
            if (i + 1) % self.cfg.accum == 0:
                self.scaler.unscale_(self.opt)
                nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.clip)
                self.scaler.step(self.opt)
                self.scaler.update()
                self.opt.zero_grad(set_to_none=True)
                self.sched.step()
                self.step += 1
            run += loss.item()
            if i % self.cfg.log_every == 0:
                print(f"step {self.step} loss {run / (i + 1):.3f} lr {self.sched.get_last_lr()[0]:.2e} "
                      f"{(time.time() - t0) / (i + 1):.2f}s/it")
            if i % self.cfg.empty_cache_every == 0:
                torch.cuda.empty_cache()  # expect: OOM106
        return run / max(1, len(loader))

    @torch.inference_mode()
    def validate(self, loader):
        self.model.eval()
        errs = words = 0
        loss_sum = 0.0
        for batch in loader:
            loss, log_probs, olen = self._loss(batch)
            loss_sum += loss.item()
            e, w = word_errors(greedy_decode(log_probs, olen), refs_from_targets(batch[2], batch[3]))
            errs, words = errs + e, words + w
        return loss_sum / len(loader), errs / max(words, 1)

    def test(self, loader):
        """Final WER on test-clean / test-other with the best checkpoint."""
        self.model.eval()
        errs = words = 0
        for feats, flen, targets, tlen in loader:
            log_probs, olen = self.model(feats.to(self.device), flen.to(self.device))  # expect: OOM104
            e, w = word_errors(greedy_decode(log_probs, olen), refs_from_targets(targets, tlen))
            errs, words = errs + e, words + w
        return errs / max(words, 1)

    def fit(self, train_loader, val_loader):
        for epoch in range(self.cfg.epochs):
            tr = self.train_epoch(train_loader)
            vl, wer = self.validate(val_loader)
            logs = {"train_loss": tr, "val_loss": vl, "val_wer": wer, "step": self.step}
            print(f"epoch {epoch}: {logs}")
            for cb in self.cfg.callbacks:
                cb.on_epoch_end(self, epoch, logs)
            if self.stop:
                print("early stopping")
                break


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/librispeech")
    ap.add_argument("--bs", type=int, default=16)
    args = ap.parse_args()
    mk = lambda split, train, bs: DataLoader(LibriCTC(args.root, split, train), batch_size=bs, shuffle=train,
                                             num_workers=8, collate_fn=collate, pin_memory=True)
    cfg = TrainConfig()
    cfg.callbacks = [JsonLogger(os.path.join(cfg.out, "log.jsonl")), EarlyStop(patience=8)]
    trainer = CTCTrainer(ConformerLite(), cfg)
    trainer.fit(mk("train-clean-100", True, args.bs), mk("dev-clean", False, 32))
    state = torch.load(os.path.join(cfg.out, "best.pt"), map_location="cuda")
    (trainer.model.module if isinstance(trainer.model, DP) else trainer.model).load_state_dict(state)
    for split in ("test-clean", "test-other"):
        print(split, "WER", trainer.test(mk(split, False, 32)))


if __name__ == "__main__":
    main()
