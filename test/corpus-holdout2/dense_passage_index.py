"""Build a dense passage index with a bi-encoder and run exact top-k search on the GPU."""
import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from transformers import AutoModel, AutoTokenizer

DIM = 768


class BiEncoder(nn.Module):
    def __init__(self, name):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(name)

    def forward(self, input_ids, attention_mask):
        h = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        m = attention_mask.unsqueeze(-1).float()
        return (h * m).sum(1) / m.sum(1)


def make_loader(texts, ids, tok, batch_size, max_len):
    def collate(batch):
        enc = tok([t for t, _ in batch], padding=True, truncation=True, max_length=max_len, return_tensors="pt")
        enc["id"] = torch.tensor([i for _, i in batch])
        return enc
    return DataLoader(list(zip(texts, ids)), batch_size=batch_size, collate_fn=collate, num_workers=4)


@torch.no_grad()
def encode_corpus(model, loader, device):
    model.eval()
    embeddings = torch.empty(0, DIM, device=device)
    ids = torch.empty(0, dtype=torch.long, device=device)
    for batch in loader:
        emb = model(batch["input_ids"].to(device), batch["attention_mask"].to(device))
        emb = F.normalize(emb, dim=-1)
        embeddings = torch.cat((embeddings, emb), 0)  # expect: OOM117
        ids = torch.cat((ids, batch["id"].to(device)), 0)  # expect: OOM117
    return embeddings, ids


@torch.no_grad()
def encode_queries(model, loader, device):
    model.eval()
    q_all = torch.empty(0, DIM)
    for batch in loader:
        q = model(batch["input_ids"].to(device), batch["attention_mask"].to(device))
        q_all = torch.cat([q_all, F.normalize(q, dim=-1).cpu()])
    return q_all


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="facebook/contriever-msmarco")
    ap.add_argument("--passages", default="data/passages.jsonl")
    ap.add_argument("--queries", default="data/queries.jsonl")
    ap.add_argument("--k", type=int, default=100)
    args = ap.parse_args()
    device = torch.device("cuda")

    tok = AutoTokenizer.from_pretrained(args.model)
    model = BiEncoder(args.model).to(device).half()

    passages = [json.loads(l) for l in open(args.passages)]
    queries = [json.loads(l) for l in open(args.queries)]
    p_loader = make_loader([p["text"] for p in passages], [p["pid"] for p in passages], tok, 512, 256)
    q_loader = make_loader([q["text"] for q in queries], [q["qid"] for q in queries], tok, 256, 64)

    p_emb, p_ids = encode_corpus(model, p_loader, device)
    q_emb = encode_queries(model, q_loader, device).to(device).half()

    results = {}
    for start in range(0, q_emb.size(0), 1024):
        scores = q_emb[start:start + 1024] @ p_emb.T
        top = scores.topk(args.k, dim=1)
        for row, qi in enumerate(range(start, min(start + 1024, len(queries)))):
            results[queries[qi]["qid"]] = p_ids[top.indices[row]].tolist()
    json.dump(results, open("run.json", "w"))


if __name__ == "__main__":
    main()
