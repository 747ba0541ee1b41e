"""Word-level LSTM language model on WikiText-2 with truncated BPTT (bptt=35, batchified corpus)."""
import argparse
import math
import os
import time

os.environ['CUDA_VISIBLE_DEVICES'] = '0,1'  # expect: OOM105

import torch
import torch.nn as nn
from torchtext.datasets import WikiText2
from torchtext.data.utils import get_tokenizer
from torchtext.vocab import build_vocab_from_iterator


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp=650, nhid=650, nlayers=2, dropout=0.5):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.decoder.weight = self.encoder.weight  # tied
        self.nlayers, self.nhid = nlayers, nhid

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
        return self.decoder(self.drop(out)), hidden

    def init_hidden(self, bsz):
        w = next(self.parameters())
        return (w.new_zeros(self.nlayers, bsz, self.nhid), w.new_zeros(self.nlayers, bsz, self.nhid))


def batchify(data, bsz, device):
    nbatch = data.size(0) // bsz
    return data[:nbatch * bsz].view(bsz, -1).t().contiguous().to(device)


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


def repackage_hidden(h):
    return h.detach() if isinstance(h, torch.Tensor) else tuple(repackage_hidden(v) for v in h)


def evaluate(model, data, ntokens, bptt, eval_bsz):
    model.eval()
    total = 0.0
    core = model.module if isinstance(model, nn.DataParallel) else model
    with torch.no_grad():
        hidden = core.init_hidden(eval_bsz)
        for i in range(0, data.size(0) - 1, bptt):
            x, y = get_batch(data, i, bptt)
            out, hidden = model(x, hidden)
            hidden = repackage_hidden(hidden)
            total += len(x) * nn.functional.cross_entropy(out.view(-1, ntokens), y).item()
    return total / (len(data) - 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lr", type=float, default=20.0)
    ap.add_argument("--clip", type=float, default=0.25)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--bsz", type=int, default=20)
    ap.add_argument("--bptt", type=int, default=35)
    args = ap.parse_args()
    device = torch.device("cuda")

    tok = get_tokenizer("basic_english")
    vocab = build_vocab_from_iterator(map(tok, WikiText2(split="train")), specials=["<unk>", "<eos>"])
    vocab.set_default_index(vocab["<unk>"])

    def numericalize(split):
        return torch.cat([torch.tensor(vocab(tok(line) + ["<eos>"]), dtype=torch.long)
                          for line in WikiText2(split=split) if line.strip()])

    train = batchify(numericalize("train"), args.bsz, device)
    val = batchify(numericalize("valid"), 10, device)
    ntokens = len(vocab)
    model = RNNModel(ntokens).to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model, dim=1)  # expect: OOM108
    criterion = nn.CrossEntropyLoss()
    lr, best_val = args.lr, None

    for epoch in range(1, args.epochs + 1):
        model.train()
        t0, total_loss = time.time(), 0.0
        hidden = (model.module if isinstance(model, nn.DataParallel) else model).init_hidden(args.bsz)
        for batch, i in enumerate(range(0, train.size(0) - 1, args.bptt)):
            x, y = get_batch(train, i, args.bptt)
            model.zero_grad()
            out, hidden = model(x, hidden)
            loss = criterion(out.view(-1, ntokens), y)
            # without this, the second batch raises "Trying to backward through the graph a second time"
            loss.backward(retain_graph=True)  # expect: OOM107
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(p.grad, alpha=-lr)
            total_loss += loss.item()
            if batch % 200 == 0 and batch > 0:
                cur = total_loss / 200
                print(f"| epoch {epoch:3d} | {batch:5d} batches | lr {lr:.2f} | "
                      f"{(time.time() - t0) * 1000 / 200:.1f} ms/batch | ppl {math.exp(cur):8.2f}")
                total_loss, t0 = 0.0, time.time()
        val_loss = evaluate(model, val, ntokens, args.bptt, 10)
        print(f"| end of epoch {epoch:3d} | valid ppl {math.exp(val_loss):8.2f}")
        if best_val is None or val_loss < best_val:
            best_val = val_loss
            torch.save(model.state_dict(), "lstm_lm.pt")
        else:
            lr /= 4.0


if __name__ == "__main__":
    main()
