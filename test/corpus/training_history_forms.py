"""Text-CNN sentiment classifier with an EMA teacher and (too much) bookkeeping.

The bookkeeping was added piecemeal while debugging loss spikes.
"""
import copy
import json

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


class TextCNN(nn.Module):
    def __init__(self, vocab, emb=300, n_filters=100, sizes=(3, 4, 5), n_classes=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=0)
        self.convs = nn.ModuleList([nn.Conv1d(emb, n_filters, k) for k in sizes])
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(n_filters * len(sizes), n_classes)

    def forward(self, x):
        e = self.emb(x).transpose(1, 2)
        pooled = []
        for conv in self.convs:
            pooled.append(F.relu(conv(e)).max(dim=2).values)
        return self.fc(self.drop(torch.cat(pooled, dim=1)))


@torch.no_grad()
def ema_update(ema, model, decay=0.999):
    for pe, pm in zip(ema.parameters(), model.parameters()):
        pe.mul_(decay).add_(pm, alpha=1 - decay)


def train(model, loader, epochs=10, lr=1e-3, device="cuda"):
    model.to(device)
    ema = copy.deepcopy(model).eval()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    # ----- bookkeeping -----
    recent_logits = []
    loss_by_step = {}
    spikes = []
    last_batch_loss = []
    loss_floats = []
    detached_losses = []
    correct_masks = []
    pred_ids = []
    ema_logits = []
    global_step = 0

    for epoch in range(epochs):
        model.train()
        epoch_total = 0.0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            logits = model(x)
            per_sample = F.cross_entropy(logits, y, reduction="none")
            loss = per_sample.mean()
            loss.backward()
            optimizer.step()
            ema_update(ema, model)

            recent_logits += [logits[:4].clone()]  # expect: OOM101
            loss_by_step[global_step] = loss  # expect: OOM101
            if loss.item() > 5.0:
                spikes.extend([loss, per_sample.max()])  # expect: OOM101
            epoch_total = epoch_total + loss  # expect: OOM102

            # these are fine
            loss_floats.append(float(loss))
            d = loss.detach()
            detached_losses.append(d)
            correct_masks.append(logits.argmax(dim=1) == y)
            pred_ids.append(logits.argmax(dim=1).long())
            with torch.no_grad():
                teacher = ema(x)
            ema_logits.append(teacher[:4])
            global_step += 1

        last_batch_loss.insert(0, per_sample.mean())  # expect: OOM101
        recent_logits = recent_logits[-64:]
        print(f"epoch {epoch}: mean loss {epoch_total.item() / len(loader):.4f}, spikes so far {len(spikes) // 2}")

    with open("loss_log.json", "w") as f:
        json.dump({"loss": loss_floats, "spikes": [s.item() for s in spikes]}, f)
    return model, ema


if __name__ == "__main__":
    data = torch.load("sst2_ids.pt")
    dl = DataLoader(list(zip(data["x"], data["y"])), batch_size=64, shuffle=True)
    train(TextCNN(vocab=data["vocab_size"]), dl)
