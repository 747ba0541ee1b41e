"""Layer-pruning experiment: keep only the first 12 of Qwen2.5-0.5B's 24 decoder layers and heal the model by
continued training. The (tied) embedding matrix is frozen; everything else trains.

Weights are loaded in fp32 on purpose (dtype=torch.float32) and trained under fp16 autocast with a GradScaler
(conservative initial scale).
"""
import argparse
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="Qwen/Qwen2.5-0.5B")
    p.add_argument("--keep-layers", type=int, default=12, dest="keep_layers")
    p.add_argument("--batch-size", type=int, default=4, dest="batch_size")
    p.add_argument("--seq-len", type=int, default=1024, dest="seq_len")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--lr", type=float, default=5e-5)
    return p.parse_args()


class Corpus(Dataset):
    def __init__(self, n, seq_len, vocab):
        self.x = torch.randint(0, vocab, (n, seq_len))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"input_ids": self.x[i], "labels": self.x[i]}


def main():
    args = get_args()
    device = torch.device("cuda")
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)

    # drop the upper half of the decoder stack
    model.model.layers = model.model.layers[: args.keep_layers]
    model.config.num_hidden_layers = args.keep_layers
    model.config.use_cache = False

    model.get_input_embeddings().weight.requires_grad_(False)   # also the LM head: the weights are tied
    model.to(device)
    model.train()

    n_total = sum(p.numel() for p in model.parameters())
    trainable = [p for p in model.parameters() if p.requires_grad]
    print(f"{len(model.model.layers)} layers, {n_total / 1e6:.1f}M params, "
          f"{sum(p.numel() for p in trainable) / 1e6:.1f}M trainable")

    loader = DataLoader(Corpus(args.batch_size * args.steps, args.seq_len, model.config.vocab_size),
                        batch_size=args.batch_size, shuffle=True)
    optimizer = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)
    scaler = torch.amp.GradScaler("cuda", init_scale=2.0 ** 10)

    t0 = time.time()
    for step, batch in enumerate(loader):
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        print(f"step {step} loss {loss.item():.3f} scale {scaler.get_scale():.0f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
