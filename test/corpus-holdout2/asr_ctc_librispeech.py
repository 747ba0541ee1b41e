"""Small conformer-free CTC model on LibriSpeech train-clean-100 (BiLSTM over log-mels)."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio
from torch.utils.data import DataLoader

CHARS = " 'abcdefghijklmnopqrstuvwxyz"
char2idx = {c: i + 1 for i, c in enumerate(CHARS)}
mel = torchaudio.transforms.MelSpectrogram(sample_rate=16000, n_fft=400, hop_length=160, n_mels=80)


def collate_fn(batch):
    specs, targets = [], []
    for wav, sr, transcript, *_ in batch:
        specs.append(mel(wav[0]).clamp(min=1e-10).log().t())
        targets.append(torch.tensor([char2idx[c] for c in transcript.lower() if c in char2idx]))
    max_t = max(s.size(0) for s in specs)
    padded = torch.zeros(len(specs), max_t, 80, device="cuda")  # expect: OOM112
    for i, s in enumerate(specs):
        padded[i, :s.size(0)] = s.cuda()
    input_lengths = torch.tensor([s.size(0) for s in specs])
    target_lengths = torch.tensor([len(t) for t in targets])
    return padded, torch.cat(targets), input_lengths, target_lengths


class CTCModel(nn.Module):
    def __init__(self, n_mels=80, hidden=512, n_layers=4, n_classes=len(CHARS) + 1):
        super().__init__()
        self.subsample = nn.Conv1d(n_mels, hidden, kernel_size=3, stride=2, padding=1)
        self.rnn = nn.LSTM(hidden, hidden, num_layers=n_layers, bidirectional=True, batch_first=True, dropout=0.1)
        self.out = nn.Linear(2 * hidden, n_classes)

    def forward(self, x):
        x = F.gelu(self.subsample(x.transpose(1, 2))).transpose(1, 2)
        x, _ = self.rnn(x)
        return self.out(x).log_softmax(-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch_size", type=int, default=32)
    args = ap.parse_args()

    ds = torchaudio.datasets.LIBRISPEECH(args.root, url="train-clean-100", download=True)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, collate_fn=collate_fn, num_workers=4)

    model = CTCModel().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    for epoch in range(args.epochs):
        model.train()
        for step, (x, targets, in_lens, tgt_lens) in enumerate(loader):
            log_probs = model(x)
            out_lens = (in_lens + 1) // 2
            loss = ctc(log_probs.transpose(0, 1), targets, out_lens, tgt_lens)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            if step % 100 == 0:
                print(f"epoch {epoch} step {step}: ctc {loss.item():.3f}")
        torch.save(model.state_dict(), f"ctc_epoch{epoch}.pt")


if __name__ == "__main__":
    main()
