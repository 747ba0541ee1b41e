"""ColBERT-style late-interaction retriever fine-tuned from bert-base-uncased.

Queries (32 tokens) and passages (180 tokens) are encoded by the same BERT, projected to 128-d per token and
L2-normalised; score(q, d) = sum over query tokens of the max similarity over passage tokens (MaxSim).
In-batch negatives: every query is scored against every passage of the batch. bf16 autocast, gradient
accumulation 2.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModel

MODEL_NAME = "bert-base-uncased"
QUERY_LEN = 32
DOC_LEN = 180
DIM = 128
BATCH = 64
ACCUM = 2
OPT_STEPS = 4
LR = 3e-5
Q_MARKER, D_MARKER = 1, 2      # [unused0] / [unused1] in the BERT vocab


class ColBERT(nn.Module):
    def __init__(self, name, dim):
        super().__init__()
        self.bert = AutoModel.from_pretrained(name)
        self.proj = nn.Linear(self.bert.config.hidden_size, dim, bias=False)

    def encode(self, ids, mask):
        h = self.bert(input_ids=ids, attention_mask=mask).last_hidden_state
        return F.normalize(self.proj(h), dim=-1) * mask.unsqueeze(-1)

    def forward(self, q_ids, q_mask, d_ids, d_mask):
        Q = self.encode(q_ids, q_mask)                        # (Bq, Lq, dim)
        D = self.encode(d_ids, d_mask)                        # (Bd, Ld, dim)
        sim = torch.einsum("qid,pjd->qpij", Q, D)            # (Bq, Bd, Lq, Ld)
        sim = sim.masked_fill(~d_mask.bool()[None, :, None, :], -1e4)
        return sim.max(dim=-1).values.sum(dim=-1)             # (Bq, Bd)


class Triples(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.q = torch.randint(1000, 30000, (n, QUERY_LEN), generator=g)
        self.d = torch.randint(1000, 30000, (n, DOC_LEN), generator=g)
        self.d_len = torch.randint(DOC_LEN // 2, DOC_LEN + 1, (n,), generator=g)

    def __len__(self):
        return self.q.shape[0]

    def __getitem__(self, i):
        q = self.q[i].clone()
        q[0], q[1] = 101, Q_MARKER
        d = self.d[i].clone()
        d[0], d[1] = 101, D_MARKER
        d_mask = (torch.arange(DOC_LEN) < self.d_len[i]).long()
        return q, torch.ones(QUERY_LEN, dtype=torch.long), d * d_mask, d_mask


def main():
    model = ColBERT(MODEL_NAME, DIM).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    loader = DataLoader(Triples(BATCH * ACCUM * OPT_STEPS), batch_size=BATCH, shuffle=True, num_workers=2)
    model.train()
    for i, (q, qm, d, dm) in enumerate(loader):
        q, qm, d, dm = q.cuda(), qm.cuda(), d.cuda(), dm.cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            scores = model(q, qm, d, dm)
        labels = torch.arange(scores.shape[0], device=scores.device)
        loss = F.cross_entropy(scores.float(), labels) / ACCUM
        loss.backward()
        if (i + 1) % ACCUM == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            print(f"update {(i + 1) // ACCUM} loss {loss.item() * ACCUM:.4f}")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
