"""Unsupervised SimCSE, but pooling the mean of the last four hidden layers instead of [CLS]."""
import argparse
import json
from collections import defaultdict

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from transformers import AutoModel, AutoTokenizer


def mean_pool(h, mask):
    mask = mask.unsqueeze(-1).to(h.dtype)
    return (h * mask).sum(1) / mask.sum(1).clamp(min=1e-6)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model_name_or_path", default="bert-base-uncased")
    ap.add_argument("--train_file", default="data/wiki1m_for_simcse.txt")
    ap.add_argument("--batch_size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--temp", type=float, default=0.05)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--max_len", type=int, default=32)
    args = ap.parse_args()

    device = torch.device("cuda")
    tok = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModel.from_pretrained(args.model_name_or_path)
    model.config.output_hidden_states = True  # expect: OOM115
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    with open(args.train_file) as f:
        sentences = [line.strip() for line in f if line.strip()]

    def collate(batch):
        return tok(batch, padding=True, truncation=True, max_length=args.max_len, return_tensors="pt")

    loader = DataLoader(sentences, batch_size=args.batch_size, shuffle=True, collate_fn=collate, drop_last=True)

    history = defaultdict(list)
    step = 0
    for epoch in range(args.epochs):
        model.train()
        for batch in loader:
            input_ids = batch["input_ids"].to(device).repeat(2, 1)
            attention_mask = batch["attention_mask"].to(device).repeat(2, 1)
            out = model(input_ids=input_ids, attention_mask=attention_mask)
            h = torch.stack(out.hidden_states[-4:]).mean(0)
            emb = mean_pool(h, attention_mask)
            z1, z2 = emb.chunk(2)
            sim = F.cosine_similarity(z1.unsqueeze(1), z2.unsqueeze(0), dim=-1) / args.temp
            loss = F.cross_entropy(sim, torch.arange(sim.size(0), device=device))

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            history["loss"].append(loss)  # expect: OOM101
            history["step"].append(step)
            if step % 250 == 0:
                print(f"step {step}: loss {loss.item():.4f}")
            step += 1

    with open("simcse_history.json", "w") as f:
        json.dump({"loss": [l.item() for l in history["loss"]], "step": history["step"]}, f)
    model.save_pretrained("simcse-last4")


if __name__ == "__main__":
    main()
