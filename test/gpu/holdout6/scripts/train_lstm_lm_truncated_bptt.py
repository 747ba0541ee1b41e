"""Word-level LSTM language model with truncated BPTT: the hidden state is carried across chunks and detached."""
import argparse

import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.3):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.proj = nn.Linear(nhid, ninp)
        self.decoder = nn.Linear(ninp, ntoken)
        self.decoder.weight = self.encoder.weight   # tied
        self.nlayers, self.nhid = nlayers, nhid

    def forward(self, inp, hidden):
        emb = self.drop(self.encoder(inp))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(self.proj(output))
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        w = next(self.parameters())
        return (w.new_zeros(self.nlayers, bsz, self.nhid), w.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def batchify(data, bsz, device):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous().to(device)


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


parser = argparse.ArgumentParser()
parser.add_argument("--ntokens", type=int, default=50000)
parser.add_argument("--emsize", type=int, default=512)
parser.add_argument("--nhid", type=int, default=2048)
parser.add_argument("--nlayers", type=int, default=2)
parser.add_argument("--batch_size", type=int, default=128)
parser.add_argument("--bptt", type=int, default=140)
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--clip", type=float, default=0.25)
parser.add_argument("--max_chunks", type=int, default=10)
args = parser.parse_args()

device = torch.device("cuda")
corpus = torch.randint(0, args.ntokens, (args.batch_size * args.bptt * (args.max_chunks + 1),))
train_data = batchify(corpus, args.batch_size, device)
model = RNNModel(args.ntokens, args.emsize, args.nhid, args.nlayers).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

model.train()
hidden = model.init_hidden(args.batch_size)
for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
    data, targets = get_batch(train_data, i, args.bptt)
    hidden = repackage_hidden(hidden)
    optimizer.zero_grad()
    output, hidden = model(data, hidden)
    loss = criterion(output.view(-1, args.ntokens), targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
    optimizer.step()
    print(f"| chunk {batch:3d} | loss {loss.item():5.2f}")
    if batch + 1 >= args.max_chunks:
        break
