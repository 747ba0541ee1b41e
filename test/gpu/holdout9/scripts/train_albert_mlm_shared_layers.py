"""Masked-LM pre-training of ALBERT-base (one transformer layer shared by all 12 positions in the stack,
factorised 128-d embeddings). Config from configs/albert_base_v2.json (opened relative to the working
directory), fp16 autocast + GradScaler, AdamW with linear warmup/decay.
"""
import json
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AlbertConfig, AlbertForMaskedLM, get_linear_schedule_with_warmup

CONFIG_FILE = "configs/albert_base_v2.json"
BATCH_SIZE = 32
SEQ_LEN = 512
MLM_PROB = 0.15
MASK_ID, CLS_ID, SEP_ID = 4, 2, 3
LR = 1e-4
TOTAL_STEPS = 10
WARMUP = 2


class MLMBlocks(Dataset):
    def __init__(self, n, seq_len, vocab_size):
        self.ids = torch.randint(5, vocab_size, (n, seq_len))
        self.ids[:, 0] = CLS_ID
        self.ids[:, -1] = SEP_ID

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        ids = self.ids[i].clone()
        labels = ids.clone()
        prob = torch.full(ids.shape, MLM_PROB)
        prob[0] = prob[-1] = 0.0
        masked = torch.bernoulli(prob).bool()
        labels[~masked] = -100
        replace = torch.bernoulli(torch.full(ids.shape, 0.8)).bool() & masked
        ids[replace] = MASK_ID
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids),
                "token_type_ids": torch.zeros_like(ids), "labels": labels}


def main():
    with open(CONFIG_FILE) as fh:
        config = AlbertConfig(**json.load(fh))
    model = AlbertForMaskedLM(config).cuda()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"ALBERT: {config.num_hidden_layers} layers sharing {config.num_hidden_groups} group(s), "
          f"{n_params / 1e6:.1f}M params")

    no_decay = ["bias", "LayerNorm.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(grouped, lr=LR, eps=1e-6)
    scheduler = get_linear_schedule_with_warmup(optimizer, WARMUP, TOTAL_STEPS)
    scaler = torch.amp.GradScaler("cuda")
    loader = DataLoader(MLMBlocks(BATCH_SIZE * TOTAL_STEPS, SEQ_LEN, config.vocab_size), batch_size=BATCH_SIZE,
                        shuffle=True, num_workers=4)

    model.train()
    t0 = time.time()
    for step, batch in enumerate(loader):
        batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        print(f"step {step} mlm loss {loss.item():.3f} scale {scaler.get_scale():.0f}")
    print(f"{time.time() - t0:.1f}s, peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
