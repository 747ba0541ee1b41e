"""Embed a document collection with BERT (mean pooling) for a FAISS index.

The model is cast to bf16 to halve its footprint.
"""
import os
import time

import torch
from transformers import BertModel

MODEL = os.environ.get("EMBED_MODEL", "bert-base-uncased")
BATCH = int(os.environ.get("EMBED_BS", "64"))
MAX_LENGTH = 256
N_DOCS = BATCH * 6


def fake_tokenize(texts, max_length=MAX_LENGTH, vocab=30522):
    """Stand-in for tokenizer(texts, padding='max_length', truncation=True, max_length=...)."""
    ids = torch.zeros(len(texts), max_length, dtype=torch.long)
    mask = torch.zeros(len(texts), max_length, dtype=torch.long)
    for i, t in enumerate(texts):
        n = min(max_length, 2 + len(t) // 4)
        ids[i, 0], ids[i, n - 1] = 101, 102
        ids[i, 1:n - 1] = torch.randint(1000, vocab, (n - 2,))
        mask[i, :n] = 1
    return {"input_ids": ids, "attention_mask": mask}


def load_docs(n):
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(200, 3000, (n,), generator=g).tolist()
    return ["x" * L for L in lengths]


model = BertModel.from_pretrained(MODEL)
model = model.to(torch.bfloat16).to("cuda")
model.eval()


def embed(batch_texts):
    enc = fake_tokenize(batch_texts)
    enc = {k: v.cuda() for k, v in enc.items()}
    hidden = model(**enc).last_hidden_state                # (B, L, 768)
    m = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1)
    pooled = torch.nn.functional.normalize(pooled.float(), dim=-1)
    return pooled.detach().cpu()


docs = load_docs(N_DOCS)
t0 = time.time()
vectors = []
for start in range(0, len(docs), BATCH):
    vectors.append(embed(docs[start:start + BATCH]))
vectors = torch.cat(vectors)
print(f"embedded {vectors.shape[0]} docs -> {tuple(vectors.shape)} in {time.time() - t0:.1f}s")
