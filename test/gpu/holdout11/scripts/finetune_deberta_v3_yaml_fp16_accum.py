"""MNLI-style fine-tuning of a DeBERTa-v3-base shaped model (built from DebertaV2Config, random init),
fp16 autocast with GradScaler, gradient accumulation by hand. Settings in configs/deberta_v3_nli.yaml."""
import math
import os

import torch
import yaml
from torch.utils.data import DataLoader, Dataset
from transformers import DebertaV2Config, DebertaV2ForSequenceClassification, get_linear_schedule_with_warmup

CFG_PATH = os.path.join(os.path.dirname(__file__), "configs", "deberta_v3_nli.yaml")
with open(CFG_PATH) as f:
    cfg = yaml.safe_load(f)


class PairDataset(Dataset):
    """premise/hypothesis pairs already tokenized and padded to max_length"""

    def __init__(self, n, max_length, vocab_size, num_labels):
        self.n, self.L, self.V, self.k = n, max_length, vocab_size, num_labels

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        n_real = torch.randint(self.L // 2, self.L + 1, ()).item()
        ids = torch.zeros(self.L, dtype=torch.long)
        ids[:n_real] = torch.randint(5, self.V, (n_real,))
        ids[0], ids[n_real - 1] = 1, 2
        mask = (ids != 0).long()
        return {"input_ids": ids, "attention_mask": mask, "labels": torch.tensor(i % self.k)}


def main():
    tc = cfg["train"]
    device = torch.device("cuda")
    config = DebertaV2Config(**cfg["model"])
    model = DebertaV2ForSequenceClassification(config).to(device)

    ds = PairDataset(tc["batch_size"] * tc["grad_accum"] * tc["max_updates"], tc["max_length"],
                     config.vocab_size, config.num_labels)
    loader = DataLoader(ds, batch_size=tc["batch_size"], shuffle=True, num_workers=2)

    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=tc["lr"])
    total = tc["max_updates"]
    scheduler = get_linear_schedule_with_warmup(optimizer, math.ceil(total * tc["warmup_ratio"]), total)
    scaler = torch.amp.GradScaler("cuda")

    model.train()
    updates = 0
    for i, batch in enumerate(loader):
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.float16):
            out = model(**batch)
            loss = out.loss / tc["grad_accum"]
        scaler.scale(loss).backward()
        if (i + 1) % tc["grad_accum"] == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            optimizer.zero_grad()
            updates += 1
            print(f"update {updates}: loss {loss.item() * tc['grad_accum']:.4f} scale {scaler.get_scale():.0f}")

    model.eval()
    correct = 0
    with torch.no_grad():
        for batch in loader:
            batch = {k: v.to(device) for k, v in batch.items()}
            with torch.autocast("cuda", dtype=torch.float16):
                logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
            correct += (logits.argmax(-1) == batch["labels"]).sum().item()
    print(f"acc {correct / len(ds):.3f}")


if __name__ == "__main__":
    main()
