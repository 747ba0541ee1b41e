"""BiLSTM-CRF named-entity tagger (BIO tags), CRF forward algorithm and Viterbi written by hand."""
import time
from types import SimpleNamespace

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

args = SimpleNamespace(
    vocab_size=100_000,
    emb_dim=300,
    hidden=1024,
    num_layers=2,
    num_tags=17,
    dropout=0.3,
    batch_size=256,
    max_len=256,
    lr=1e-3,
    epochs=1,
    steps=12,
    pad_id=0,
)


class Sentences(Dataset):
    def __init__(self, n, max_len):
        self.tokens = torch.randint(1, args.vocab_size, (n, max_len))
        self.tags = torch.randint(0, args.num_tags, (n, max_len))
        self.lengths = torch.randint(max_len // 3, max_len + 1, (n,))
        self.lengths[0] = max_len
        for i, L in enumerate(self.lengths.tolist()):
            self.tokens[i, L:] = args.pad_id
            self.tags[i, L:] = 0

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, i):
        return self.tokens[i], self.tags[i], self.lengths[i]


def collate(batch):
    tokens, tags, lengths = map(torch.stack, zip(*batch))
    L = int(lengths.max())
    return tokens[:, :L], tags[:, :L], lengths


class CRF(nn.Module):
    def __init__(self, num_tags):
        super().__init__()
        self.start = nn.Parameter(torch.randn(num_tags) * 0.1)
        self.end = nn.Parameter(torch.randn(num_tags) * 0.1)
        self.trans = nn.Parameter(torch.randn(num_tags, num_tags) * 0.1)  # trans[i, j]: i -> j

    def log_partition(self, emissions, mask):
        # emissions: (B, T, K), mask: (B, T) bool
        score = self.start + emissions[:, 0]
        for t in range(1, emissions.size(1)):
            nxt = torch.logsumexp(score.unsqueeze(2) + self.trans + emissions[:, t].unsqueeze(1), dim=1)
            score = torch.where(mask[:, t].unsqueeze(1), nxt, score)
        return torch.logsumexp(score + self.end, dim=1)

    def gold_score(self, emissions, tags, mask):
        B, T, _ = emissions.shape
        m = mask.float()
        emit = emissions.gather(2, tags.unsqueeze(2)).squeeze(2)
        score = self.start[tags[:, 0]] + (emit * m).sum(1)
        trans = self.trans[tags[:, :-1], tags[:, 1:]]
        score = score + (trans * m[:, 1:]).sum(1)
        last = tags.gather(1, (mask.sum(1) - 1).unsqueeze(1)).squeeze(1)
        return score + self.end[last]

    def nll(self, emissions, tags, mask):
        return (self.log_partition(emissions, mask) - self.gold_score(emissions, tags, mask)).mean()

    @torch.no_grad()
    def viterbi(self, emissions, mask):
        score = self.start + emissions[:, 0]
        history = []
        for t in range(1, emissions.size(1)):
            best, idx = (score.unsqueeze(2) + self.trans).max(dim=1)
            nxt = best + emissions[:, t]
            score = torch.where(mask[:, t].unsqueeze(1), nxt, score)
            history.append(idx)
        score = score + self.end
        best_last = score.argmax(1)
        path = [best_last]
        for idx in reversed(history):
            best_last = idx.gather(1, best_last.unsqueeze(1)).squeeze(1)
            path.append(best_last)
        return torch.stack(path[::-1], dim=1)


class BiLSTMCRF(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.emb = nn.Embedding(a.vocab_size, a.emb_dim, padding_idx=a.pad_id)
        self.lstm = nn.LSTM(a.emb_dim, a.hidden, num_layers=a.num_layers, bidirectional=True,
                            batch_first=True, dropout=a.dropout)
        self.drop = nn.Dropout(a.dropout)
        self.proj = nn.Linear(2 * a.hidden, a.num_tags)
        self.crf = CRF(a.num_tags)

    def emissions(self, tokens):
        h, _ = self.lstm(self.drop(self.emb(tokens)))
        return self.proj(self.drop(h))

    def forward(self, tokens, tags):
        mask = tokens != args.pad_id
        return self.crf.nll(self.emissions(tokens), tags, mask)


def main():
    device = "cuda"
    model = BiLSTMCRF(args).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    loader = DataLoader(Sentences(args.batch_size * args.steps, args.max_len), batch_size=args.batch_size,
                        shuffle=True, collate_fn=collate)
    t0 = time.time()
    for epoch in range(args.epochs):
        model.train()
        for step, (tokens, tags, lengths) in enumerate(loader):
            tokens, tags = tokens.to(device), tags.to(device)
            loss = model(tokens, tags)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            print(f"step {step} len {tokens.size(1)} nll {loss.item():.3f}")
    model.eval()
    with torch.no_grad():
        em = model.emissions(tokens)
        pred = model.crf.viterbi(em, tokens != args.pad_id)
        acc = ((pred == tags) & (tokens != args.pad_id)).sum() / (tokens != args.pad_id).sum()
    print(f"token acc {acc.item():.3f}, {time.time() - t0:.1f}s, "
          f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
