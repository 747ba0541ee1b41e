"""Masked-LM pre-training with torch's built-in nn.TransformerEncoder (tied input/output embeddings)."""
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

VOCAB_SIZE = 32000
D_MODEL = 512
N_HEAD = 8
FFN_DIM = 4 * D_MODEL
N_LAYERS = 6
DROPOUT = 0.1
MAX_LEN = 4096        # size of the positional table (room for long documents later)
SEQ_LEN = 256         # what we actually train on for now
BATCH_SIZE = 64
MASK_PROB = 0.15
MASK_ID = 4
LR = 5e-4
NUM_STEPS = 5


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(1, max_len, d_model)
        pe[0, :, 0::2] = torch.sin(position * div_term)
        pe[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[:, : x.size(1)]
        return self.dropout(x)


class MaskedLM(nn.Module):
    def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.5, max_len=5000):
        super().__init__()
        self.d_model = d_model
        self.embedding = nn.Embedding(ntoken, d_model)
        self.pos_encoder = PositionalEncoding(d_model, dropout, max_len=max_len)
        encoder_layer = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout, batch_first=True)
        self.transformer_encoder = nn.TransformerEncoder(encoder_layer, num_layers=nlayers,
                                                         enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.decoder = nn.Linear(d_model, ntoken)
        self.decoder.weight = self.embedding.weight  # tie

    def forward(self, src, pad_mask=None):
        x = self.embedding(src) * math.sqrt(self.d_model)
        x = self.pos_encoder(x)
        x = self.transformer_encoder(x, src_key_padding_mask=pad_mask)
        return self.decoder(self.norm(x))


class RandomCorpus(Dataset):
    def __init__(self, n):
        self.tokens = torch.randint(5, VOCAB_SIZE, (n, SEQ_LEN))

    def __len__(self):
        return self.tokens.size(0)

    def __getitem__(self, i):
        ids = self.tokens[i].clone()
        labels = ids.clone()
        masked = torch.rand(SEQ_LEN) < MASK_PROB
        labels[~masked] = -100
        ids[masked] = MASK_ID
        return ids, labels


device = torch.device("cuda")
model = MaskedLM(VOCAB_SIZE, D_MODEL, N_HEAD, FFN_DIM, N_LAYERS, DROPOUT, max_len=MAX_LEN).to(device)
criterion = nn.CrossEntropyLoss(ignore_index=-100)
optimizer = torch.optim.Adam(model.parameters(), lr=LR, betas=(0.9, 0.98), eps=1e-9)
loader = DataLoader(RandomCorpus(BATCH_SIZE * NUM_STEPS), batch_size=BATCH_SIZE, shuffle=True)

model.train()
for step, (ids, labels) in enumerate(loader):
    ids, labels = ids.to(device), labels.to(device)
    logits = model(ids)
    loss = criterion(logits.view(-1, VOCAB_SIZE), labels.view(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    print(f"| step {step:3d} | loss {loss.item():5.2f} | ppl {math.exp(min(loss.item(), 20)):8.2f}")
