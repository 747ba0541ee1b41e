"""Review-rating classifier: BiLSTM over word embeddings, batches bucketed by length.

A BucketBatchSampler groups reviews of similar length; collate pads each batch to its longest review and
the LSTM runs on a PackedSequence.
"""
import random

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset, Sampler


class Config:
    vocab_size = 100_000
    embed_dim = 300
    hidden = 1024
    layers = 2
    num_classes = 5
    batch_size = 64
    min_len, max_len = 50, 400
    n_reviews = 64 * 12
    epochs = 1
    lr = 1e-3
    pad_idx = 0


class Reviews(Dataset):
    def __init__(self, cfg):
        rng = random.Random(7)
        self.lengths = [rng.randint(cfg.min_len, cfg.max_len) for _ in range(cfg.n_reviews)]
        self.cfg = cfg

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        toks = torch.randint(1, self.cfg.vocab_size, (self.lengths[i],))
        return toks, i % self.cfg.num_classes


class BucketBatchSampler(Sampler):
    def __init__(self, lengths, batch_size, shuffle=True, seed=0):
        self.lengths, self.batch_size, self.shuffle, self.seed = lengths, batch_size, shuffle, seed

    def __iter__(self):
        order = sorted(range(len(self.lengths)), key=lambda i: self.lengths[i])
        batches = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        if self.shuffle:
            random.Random(self.seed).shuffle(batches)
        yield from batches

    def __len__(self):
        return (len(self.lengths) + self.batch_size - 1) // self.batch_size


def collate(batch):
    toks, labels = zip(*batch)
    lengths = torch.tensor([len(t) for t in toks])
    padded = pad_sequence(toks, batch_first=True, padding_value=Config.pad_idx)
    return padded, lengths, torch.tensor(labels)


class BiLSTMClassifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.embed_dim, padding_idx=cfg.pad_idx)
        self.lstm = nn.LSTM(cfg.embed_dim, cfg.hidden, num_layers=cfg.layers, bidirectional=True,
                            batch_first=True, dropout=0.3)
        self.head = nn.Sequential(nn.Dropout(0.3), nn.Linear(4 * cfg.hidden, cfg.num_classes))

    def forward(self, tokens, lengths):
        emb = self.embed(tokens)
        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, padding_value=float("-inf"))
        max_pool = out.max(dim=1).values
        out = out.masked_fill(torch.isinf(out), 0.0)
        mean_pool = out.sum(1) / lengths.to(out.device).unsqueeze(1)
        return self.head(torch.cat([max_pool, mean_pool], dim=-1))


def main():
    cfg = Config()
    ds = Reviews(cfg)
    loader = DataLoader(ds, batch_sampler=BucketBatchSampler(ds.lengths, cfg.batch_size), collate_fn=collate,
                        num_workers=2)
    model = BiLSTMClassifier(cfg).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(cfg.epochs):
        model.train()
        for step, (tokens, lengths, labels) in enumerate(loader):
            tokens, labels = tokens.cuda(), labels.cuda()
            logits = model(tokens, lengths)
            loss = loss_fn(logits, labels)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            print(f"epoch {epoch} step {step} max_len {tokens.shape[1]} loss {loss.item():.4f}")
    print("peak (GiB):", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
