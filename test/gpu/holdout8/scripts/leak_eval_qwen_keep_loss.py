"""Fine-tune Qwen2.5-0.5B for a few steps, then measure validation perplexity.

DELIBERATE LEAK (kept on purpose, this is what the script is for): evaluate() runs WITHOUT torch.no_grad() and
appends each batch's `out.loss` tensor (not `.item()`) to a list, to average at the end. The loss tensor still
references its autograd graph, so every evaluation batch keeps all of its saved activations (and the fp32
log-softmax over the 151936-token vocabulary) alive on the GPU until the list is dropped. Memory grows with every
evaluation batch; the peak is at the end of evaluation, not in training.

No dtype is passed to from_pretrained: transformers 5 keeps the checkpoint's bf16, so training is pure bf16.
"""
import math
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM

MODEL_NAME = "Qwen/Qwen2.5-0.5B"
TRAIN_BATCH = 4
EVAL_BATCH = 4
SEQ_LEN = 512
TRAIN_STEPS = 4
EVAL_BATCHES = 4
LR = 1e-5


class TokenBlocks(Dataset):
    def __init__(self, n, seq_len, vocab_size, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(0, vocab_size, (n, seq_len), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return self.ids[i]


def train(model, loader, optimizer, device):
    model.train()
    for step, ids in enumerate(loader):
        ids = ids.to(device)
        optimizer.zero_grad()
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        print(f"train step {step} loss {out.loss.item():.4f}")


def evaluate(model, loader, device):
    model.eval()
    losses = []
    for i, ids in enumerate(loader):              # no torch.no_grad() here: the leak
        ids = ids.to(device)
        out = model(input_ids=ids, labels=ids)
        losses.append(out.loss)                   # keeps the graph of this batch alive
        print(f"eval batch {i}: allocated {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
    mean_loss = torch.stack(losses).mean()
    return math.exp(mean_loss.item())


def main():
    device = torch.device("cuda")
    model = AutoModelForCausalLM.from_pretrained(MODEL_NAME)
    model.to(device)
    model.config.use_cache = False
    print("weights dtype:", next(model.parameters()).dtype)

    vocab = model.config.vocab_size
    train_loader = DataLoader(TokenBlocks(TRAIN_BATCH * TRAIN_STEPS, SEQ_LEN, vocab, 0), batch_size=TRAIN_BATCH,
                              shuffle=True)
    eval_loader = DataLoader(TokenBlocks(EVAL_BATCH * EVAL_BATCHES, SEQ_LEN, vocab, 1), batch_size=EVAL_BATCH)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)

    t0 = time.time()
    train(model, train_loader, optimizer, device)
    ppl = evaluate(model, eval_loader, device)
    print(f"val ppl {ppl:.1f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
