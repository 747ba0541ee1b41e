# Word-level LSTM language model (Zaremba et al. "large" config), truncated BPTT.
# Adapted from the classic word_language_model example.
import math
import time

import torch
import torch.nn as nn

NTOKENS = 33278          # wikitext-2 vocab
EMSIZE = 1500
NHID = 1500
NLAYERS = 2
DROPOUT = 0.65
TIED = True
BATCH_SIZE = 64
EVAL_BATCH_SIZE = 16
BPTT = 200
LR = 20.0
CLIP = 0.25
MAX_BATCHES = 5
SEED = 1111

torch.manual_seed(SEED)
device = torch.device("cuda")


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous().to(device)   # (seq, batch)


train_stream = torch.randint(0, NTOKENS, (BATCH_SIZE * BPTT * MAX_BATCHES + BATCH_SIZE,))
valid_stream = torch.randint(0, NTOKENS, (EVAL_BATCH_SIZE * BPTT * 2 + EVAL_BATCH_SIZE,))
train_data = batchify(train_stream, BATCH_SIZE)
val_data = batchify(valid_stream, EVAL_BATCH_SIZE)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            assert nhid == ninp
            self.decoder.weight = self.encoder.weight
        self.nhid, self.nlayers = nhid, nlayers
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.decoder.out_features)
        return torch.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(BPTT, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


model = RNNModel(NTOKENS, EMSIZE, NHID, NLAYERS, DROPOUT, TIED).to(device)
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=LR)


def train():
    model.train()
    total_loss = 0.0
    start = time.time()
    hidden = model.init_hidden(BATCH_SIZE)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, BPTT)):
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        optimizer.step()
        total_loss += loss.item()
        print(f"| batch {batch:3d} | loss {loss.item():5.2f} | ppl {math.exp(min(loss.item(), 20)):8.1f} | "
              f"{(time.time() - start) * 1000 / (batch + 1):5.0f} ms/batch")
        if batch + 1 >= MAX_BATCHES:
            break


def evaluate(source):
    model.eval()
    total = 0.0
    hidden = model.init_hidden(EVAL_BATCH_SIZE)
    with torch.no_grad():
        for i in range(0, source.size(0) - 1, BPTT):
            data, targets = get_batch(source, i)
            output, hidden = model(data, hidden)
            total += len(data) * criterion(output, targets).item()
    return total / (len(source) - 1)


train()
val_loss = evaluate(val_data)
print(f"| valid loss {val_loss:5.2f} | valid ppl {math.exp(min(val_loss, 20)):8.2f}")
