"""Keyword spotting on Speech Commands v2.

Mel spectrograms are computed on the GPU inside the workers (faster than on the CPU),
which needs the 'spawn' start method.
"""
import glob
import os

import numpy as np
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torchaudio
from torch.utils.data import DataLoader, Dataset

SR = 16000
NUM_WORKERS = 6
BATCH_SIZE = 256
EPOCHS = 30
ROOT = "data/SpeechCommands/speech_commands_v0.02"
LABELS = sorted(d for d in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, d)) and not d.startswith("_"))

_mel = None


def worker_init_fn(worker_id):
    global _mel
    np.random.seed((torch.initial_seed() + worker_id) % 2 ** 32)
    _mel = torchaudio.transforms.MelSpectrogram(sample_rate=SR, n_fft=1024, hop_length=160, n_mels=64).cuda()  # expect: OOM112


class SpeechCommands(Dataset):
    def __init__(self, files):
        self.files = files
        self.labels = [LABELS.index(os.path.basename(os.path.dirname(f))) for f in files]

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        wav, sr = torchaudio.load(self.files[idx])
        wav = wav.mean(0)
        wav = F.pad(wav, (0, max(0, SR - wav.numel())))[:SR]
        wav = wav.pin_memory()  # expect: OOM112
        spec = _mel(wav.cuda(non_blocking=True)).clamp(min=1e-5).log().cpu()
        return spec.unsqueeze(0), self.labels[idx]


class KWSNet(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        chans = [1, 32, 64, 128, 128]
        blocks = []
        for c_in, c_out in zip(chans[:-1], chans[1:]):
            blocks += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(), nn.MaxPool2d(2)]
        self.features = nn.Sequential(*blocks)
        self.head = nn.Linear(128, n_classes)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


def main():
    mp.set_start_method("spawn", force=True)
    files = sorted(glob.glob(os.path.join(ROOT, "*", "*.wav")))
    files = [f for f in files if not os.path.basename(os.path.dirname(f)).startswith("_")]
    loader = DataLoader(SpeechCommands(files), batch_size=BATCH_SIZE, shuffle=True,
                        num_workers=NUM_WORKERS, worker_init_fn=worker_init_fn, persistent_workers=True)

    model = KWSNet(len(LABELS)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
    for epoch in range(EPOCHS):
        model.train()
        seen = correct = 0
        for spec, y in loader:
            spec, y = spec.cuda(non_blocking=True), y.cuda(non_blocking=True)
            logits = model(spec)
            loss = F.cross_entropy(logits, y, label_smoothing=0.1)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            correct += (logits.argmax(1) == y).sum().item()
            seen += y.numel()
        print(f"epoch {epoch}: train acc {correct / seen:.3f}")
    torch.save(model.state_dict(), "kws.pt")


if __name__ == "__main__":
    main()
