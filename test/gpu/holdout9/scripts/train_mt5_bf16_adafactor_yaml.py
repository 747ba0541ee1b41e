"""Multilingual summarization with an mT5-small-shaped model built from MT5Config, trained the T5 way:
whole model in bf16 (no autocast) with transformers' Adafactor at a fixed learning rate.
"""
import os
import time

import torch
import yaml
from torch.utils.data import DataLoader, Dataset
from transformers import MT5Config, MT5ForConditionalGeneration
from transformers.optimization import Adafactor

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "configs", "mt5_summarize.yaml")) as f:
    CFG = yaml.safe_load(f)


class Articles(Dataset):
    def __init__(self, n, src_len, tgt_len, vocab):
        self.src = torch.randint(5, vocab, (n, src_len))
        self.tgt = torch.randint(5, vocab, (n, tgt_len))
        tl = torch.randint(tgt_len // 2, tgt_len + 1, (n,))
        self.tgt[torch.arange(tgt_len)[None] >= tl[:, None]] = 0
        self.tgt[torch.arange(n), tl - 1] = 1              # </s>

    def __len__(self):
        return len(self.src)

    def __getitem__(self, i):
        labels = self.tgt[i].clone()
        labels[labels == 0] = -100
        return {"input_ids": self.src[i], "attention_mask": torch.ones_like(self.src[i]), "labels": labels}


def main():
    mcfg, dcfg, ocfg, tcfg = CFG["model"], CFG["data"], CFG["optim"], CFG["train"]
    config = MT5Config(**mcfg)
    model = MT5ForConditionalGeneration(config)
    model.to("cuda", dtype=getattr(torch, tcfg["dtype"]))
    model.train()
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params, dtype {next(model.parameters()).dtype}")

    optimizer = Adafactor(model.parameters(), lr=ocfg["lr"], scale_parameter=ocfg["scale_parameter"],
                          relative_step=ocfg["relative_step"], warmup_init=ocfg["warmup_init"],
                          clip_threshold=ocfg["clip_threshold"])
    loader = DataLoader(Articles(dcfg["batch_size"] * tcfg["max_steps"], dcfg["source_len"], dcfg["target_len"],
                                 mcfg["vocab_size"]),
                        batch_size=dcfg["batch_size"], shuffle=True, num_workers=2)
    t0 = time.time()
    for step, batch in enumerate(loader):
        batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % tcfg["log_every"] == 0:
            print(f"step {step} loss {loss.item():.3f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
