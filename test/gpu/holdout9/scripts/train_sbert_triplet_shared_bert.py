"""Sentence-embedding fine-tune (SBERT style): one BERT encoder shared by anchor, positive and negative,
mean pooling, triplet loss on cosine distance. fp16 autocast + GradScaler.

    python train_sbert_triplet_shared_bert.py --batch_size 48 --max_seq_length 128
"""
import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModel, get_linear_schedule_with_warmup


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default=os.environ.get("SBERT_BASE", "bert-base-uncased"))
    parser.add_argument("--batch_size", type=int, default=48)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--margin", type=float, default=0.3)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--num_steps", type=int, default=10)
    parser.add_argument("--warmup_ratio", type=float, default=0.1)
    args, _ = parser.parse_known_args()   # ignore launcher flags
    return args


class TripletTexts(Dataset):
    def __init__(self, n, max_len, vocab=30522):
        self.n, self.max_len, self.vocab = n, max_len, vocab

    def __len__(self):
        return self.n

    def _sentence(self):
        L = int(torch.randint(self.max_len // 4, self.max_len + 1, ()))
        ids = torch.zeros(self.max_len, dtype=torch.long)
        ids[:L] = torch.randint(1000, self.vocab, (L,))
        ids[0], ids[L - 1] = 101, 102
        return ids, (ids != 0).long()

    def __getitem__(self, i):
        return [t for _ in range(3) for t in self._sentence()]


class SentenceEncoder(nn.Module):
    def __init__(self, name):
        super().__init__()
        self.bert = AutoModel.from_pretrained(name)

    def forward(self, input_ids, attention_mask):
        h = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        return (h * m).sum(1) / m.sum(1).clamp(min=1e-9)


def main():
    args = parse_args()
    device = "cuda"
    encoder = SentenceEncoder(args.model_name).to(device)
    encoder.train()
    criterion = nn.TripletMarginWithDistanceLoss(
        distance_function=lambda a, b: 1.0 - F.cosine_similarity(a, b), margin=args.margin)
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=args.lr, weight_decay=0.01)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(args.warmup_ratio * args.num_steps), args.num_steps)
    scaler = torch.amp.GradScaler("cuda")
    loader = DataLoader(TripletTexts(args.batch_size * args.num_steps, args.max_seq_length),
                        batch_size=args.batch_size, shuffle=True, num_workers=2)

    t0 = time.time()
    for step, (a_ids, a_mask, p_ids, p_mask, n_ids, n_mask) in enumerate(loader):
        a_ids, a_mask, p_ids, p_mask, n_ids, n_mask = (t.to(device) for t in
                                                       (a_ids, a_mask, p_ids, p_mask, n_ids, n_mask))
        with torch.autocast("cuda", dtype=torch.float16):
            anchor = encoder(a_ids, a_mask)
            positive = encoder(p_ids, p_mask)
            negative = encoder(n_ids, n_mask)
            loss = criterion(anchor.float(), positive.float(), negative.float())
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(encoder.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        print(f"step {step} loss {loss.item():.4f} scale {scaler.get_scale():.0f}")

    # quick retrieval check: does each anchor find its own positive?
    encoder.eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
        ea = F.normalize(encoder(a_ids, a_mask).float(), dim=-1)
        ep = F.normalize(encoder(p_ids, p_mask).float(), dim=-1)
        r1 = ((ea @ ep.T).argmax(1) == torch.arange(len(ea), device=device)).float().mean().item()
    print(f"recall@1 {r1:.3f} ({time.time() - t0:.1f}s), peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
