"""Character-level LSTM on tiny-shakespeare, stateful training over chunks, and a gradient-norm penalty.

The penalty term needs d(loss)/d(params) with create_graph=True, taken through
torch.autograd.grad; the final update is a single backward of loss + penalty.
"""
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

os.environ.update(CUBLAS_WORKSPACE_CONFIG=":4096:8")
os.environ.update({"CUDA_VISIBLE_DEVICES": "0"})  # expect: OOM105

SEQ = 128
CHUNK = 32
BATCH = 64
HIDDEN = 512
EPOCHS = 20
PENALTY = 1e-3
device = torch.device("cuda")

text = open("input.txt", encoding="utf-8").read()
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]


class CharLSTM(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        h, state = self.lstm(self.emb(x), state)
        return self.head(h), state


def batches(split):
    d = train_data if split == "train" else val_data
    n_steps = (len(d) - 1) // (BATCH * SEQ)
    for _ in range(n_steps):
        ix = torch.randint(len(d) - SEQ - 1, (BATCH,))
        x = torch.stack([d[i:i + SEQ] for i in ix]).to(device)
        y = torch.stack([d[i + 1:i + 1 + SEQ] for i in ix]).to(device)
        yield x, y


def stream_chunks():
    """Contiguous chunks of one long stream per batch row (stateful training)."""
    stream_len = (len(train_data) - 1) // BATCH
    d = train_data[:stream_len * BATCH + 1]
    xs = d[:-1].view(BATCH, stream_len)
    ys = d[1:].view(BATCH, stream_len)
    for c in range(0, stream_len - CHUNK, CHUNK):
        yield xs[:, c:c + CHUNK].to(device), ys[:, c:c + CHUNK].to(device)


model = CharLSTM(len(chars), HIDDEN).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
params = [p for p in model.parameters() if p.requires_grad]


def grad_penalty(loss):
    grads = torch.autograd.grad(loss, params, create_graph=True, retain_graph=True)
    return sum(g.pow(2).sum() for g in grads)


for epoch in range(EPOCHS):
    t0 = time.time()
    model.train()
    total = 0.0
    state = None
    for step, (xc, yc) in enumerate(stream_chunks()):
        logits, state = model(xc, state)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), yc.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        # state from the previous chunk is not detached, so the old graph is still needed
        loss.backward(retain_graph=True)  # expect: OOM107
        optimizer.step()
        total += loss.item()

    # one fine-tuning pass with the gradient-norm penalty (single backward per step)
    for k, (x, y) in enumerate(batches("train")):
        if k >= 50:
            break
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        loss = loss + PENALTY * grad_penalty(loss)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    model.eval()
    with torch.no_grad():
        val_losses = []
        for x, y in batches("val"):
            logits, _ = model(x)
            val_losses.append(F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)))
        val = torch.stack(val_losses).mean().item()
    print(f"epoch {epoch}: train {total:.1f} val {val:.3f} ({time.time() - t0:.0f}s)")
