"""Speaker-ID x-vector training (work in progress - file saved mid-edit)."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio
from torch.utils.data import DataLoader

os.environ["CUDA_VISIBLE_DEVICES"] = "0"  # expect: OOM105


class TDNN(nn.Module):
    def __init__(self, n_mels=40, n_speakers=1211):
        super().__init__()
        self.frame = nn.Sequential(
            nn.Conv1d(n_mels, 512, 5, dilation=1), nn.ReLU(), nn.BatchNorm1d(512),
            nn.Conv1d(512, 512, 3, dilation=2), nn.ReLU(), nn.BatchNorm1d(512),
            nn.Conv1d(512, 512, 3, dilation=3), nn.ReLU(), nn.BatchNorm1d(512),
            nn.Conv1d(512, 1500, 1), nn.ReLU(), nn.BatchNorm1d(1500),
        )
        self.segment = nn.Sequential(nn.Linear(3000, 512), nn.ReLU(), nn.Linear(512, 512))
        self.classifier = nn.Linear(512, n_speakers)

    def forward(self, x):
        h = self.frame(x)
        stats = torch.cat([h.mean(-1), h.std(-1)], dim=1)
        emb = self.segment(stats)
        return self.classifier(F.relu(emb)), emb


def train_epoch(model, loader, optimizer, device, history):
    model.train()
    for feats, spk in loader:
        feats, spk = feats.to(device), spk.to(device)
        logits, emb = model(feats)
        loss = F.cross_entropy(logits, spk)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(loss)  # expect: OOM101


def equal_error_rate(scores, labels):
    # TODO: finish this, currently computing FAR / FRR by hand
    order = torch.argsort(scores, descending=True)
    labels = labels[order]
    far = torch.cumsum(1 - labels, 0) / (1 - labels).sum()
    frr = 1 - torch.cumsum(labels, 0) / labels.sum()
    idx = torch.argmin((far - frr).abs())
    eer = (far[idx] + frr[idx]) /
    return eer


def validate(model, loader, device):
    model.eval()
    embs, ids = [], []
    for feats, spk in loader:
        logits, emb = model(feats.to(device))  # expect: OOM104
        embs.append(F.normalize(emb, dim=1).detach().cpu())
        ids.append(spk)
    embs = torch.cat(embs)
    ids = torch.cat(ids)
    scores = embs @ embs.t()
    same = (ids[:, None] == ids[None, :]).float()
    return equal_error_rate(scores.flatten(), same.flatten())


def main():
    device = torch.device("cuda")
    mel = torchaudio.transforms.MelSpectrogram(sample_rate=16000, n_mels=40)
    train_dl = DataLoader(torch.load("vox1_train_feats.pt"), batch_size=128, shuffle=True)
    val_dl = DataLoader(torch.load("vox1_val_feats.pt"), batch_size=128)
    model = TDNN().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    history = []
    for epoch in range(30):
        train_epoch(model, train_dl, optimizer, device, history)
        print(epoch, validate(model, val_dl, device))


if __name__ == "__main__":
    main()
