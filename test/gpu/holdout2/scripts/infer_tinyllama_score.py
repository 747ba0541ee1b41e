#!/usr/bin/env python3
# Score candidate continuations with TinyLlama (log-likelihood per sequence), e.g. to rank
# retrieved passages. Pure inference: nothing is trained here.
import argparse
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForCausalLM


def get_args():
    p = argparse.ArgumentParser(description="sequence log-likelihood scoring")
    p.add_argument("--model_id", default="TinyLlama/TinyLlama-1.1B-Chat-v1.0")
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--max_length", type=int, default=2048, help="sequences are padded/truncated to this")
    p.add_argument("--num_batches", type=int, default=4)
    p.add_argument("--pad_id", type=int, default=0)
    return p.parse_args()


def make_corpus(n, max_length, vocab=32000, pad_id=0, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, vocab, (n, max_length), generator=g)
    lengths = torch.randint(max_length // 2, max_length + 1, (n,), generator=g)
    mask = (torch.arange(max_length)[None, :] < lengths[:, None]).long()
    ids = ids.masked_fill(mask == 0, pad_id)
    ids[:, 0] = 1  # <s>
    return TensorDataset(ids, mask)


def main():
    args = get_args()
    model = AutoModelForCausalLM.from_pretrained(args.model_id, device_map="cuda")
    model.eval()
    print("loaded", args.model_id, next(model.parameters()).dtype)

    ds = make_corpus(args.batch_size * args.num_batches, args.max_length, pad_id=args.pad_id)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=False)

    scores = []
    t0 = time.time()
    with torch.no_grad():
        for input_ids, attention_mask in loader:
            input_ids = input_ids.to("cuda")
            attention_mask = attention_mask.to("cuda")
            logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
            # next-token log-likelihood, computed in fp32
            shift_logits = logits[:, :-1, :].float()
            shift_labels = input_ids[:, 1:]
            nll = F.cross_entropy(shift_logits.reshape(-1, shift_logits.size(-1)),
                                  shift_labels.reshape(-1), reduction="none").view(shift_labels.shape)
            nll = nll * attention_mask[:, 1:]
            seq_ll = -(nll.sum(dim=1) / attention_mask[:, 1:].sum(dim=1))
            scores.extend(seq_ll.cpu().tolist())
    print(f"scored {len(scores)} sequences in {time.time() - t0:.1f}s; best={max(scores):.3f} worst={min(scores):.3f}")


if __name__ == "__main__":
    main()
