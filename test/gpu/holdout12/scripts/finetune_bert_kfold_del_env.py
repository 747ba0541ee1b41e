"""K-fold fine-tuning of bert-base-uncased for sentence-pair classification.

Each fold loads a fresh model with from_pretrained; after the fold the model and optimizer are deleted and the
CUDA cache is emptied (the usual recipe after an OOM between folds). Settings from environment variables.
"""
import gc
import os

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForSequenceClassification, get_cosine_schedule_with_warmup

MODEL = os.environ.get("MODEL_NAME", "bert-base-uncased")
N_FOLDS = int(os.environ.get("N_FOLDS", "3"))
MAX_LEN = int(os.environ.get("MAX_LEN", "256"))
BS = int(os.environ.get("BATCH_SIZE", "32"))
LR = float(os.environ.get("LR", "3e-5"))
STEPS_PER_FOLD = int(os.environ.get("STEPS_PER_FOLD", "3"))
NUM_LABELS = 3
N_EXAMPLES = 600


class PairDataset(Dataset):
    def __init__(self, idx):
        self.idx = idx

    def __len__(self):
        return len(self.idx)

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(int(self.idx[i]))
        ids = torch.randint(1000, 30000, (MAX_LEN,), generator=g)
        ids[0], ids[MAX_LEN // 2], ids[-1] = 101, 102, 102
        token_type = torch.zeros(MAX_LEN, dtype=torch.long)
        token_type[MAX_LEN // 2 + 1:] = 1
        return {"input_ids": ids, "token_type_ids": token_type, "attention_mask": torch.ones(MAX_LEN, dtype=torch.long),
                "labels": torch.tensor(int(self.idx[i]) % NUM_LABELS)}


def run_fold(fold, train_idx, val_idx):
    model = AutoModelForSequenceClassification.from_pretrained(MODEL, num_labels=NUM_LABELS).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    scheduler = get_cosine_schedule_with_warmup(optimizer, 1, STEPS_PER_FOLD)
    loader = DataLoader(PairDataset(train_idx), batch_size=BS, shuffle=True)
    model.train()
    for step, batch in enumerate(loader):
        batch = {k: v.cuda() for k, v in batch.items()}
        out = model(**batch)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        print(f"fold {fold} step {step} loss {out.loss.item():.4f}")
        if step + 1 == STEPS_PER_FOLD:
            break

    model.eval()
    preds = []
    with torch.no_grad():
        for batch in DataLoader(PairDataset(val_idx[:128]), batch_size=BS * 2):
            batch = {k: v.cuda() for k, v in batch.items()}
            preds.append(model(**batch).logits.argmax(-1).cpu())
    acc = (torch.cat(preds).numpy() == val_idx[:128] % NUM_LABELS).mean()
    del model, optimizer, scheduler
    gc.collect()
    torch.cuda.empty_cache()
    return acc


def main():
    idx = np.arange(N_EXAMPLES)
    folds = np.array_split(idx, N_FOLDS)
    accs = []
    for k in range(N_FOLDS):
        train_idx = np.concatenate([f for j, f in enumerate(folds) if j != k])
        accs.append(run_fold(k, train_idx, folds[k]))
        print(f"fold {k}: acc {accs[-1]:.3f}; allocated after cleanup "
              f"{torch.cuda.memory_allocated() / 2 ** 20:.0f} MiB")
    print("mean acc", float(np.mean(accs)))
    print("peak GiB", torch.cuda.max_memory_allocated() / 2 ** 30)


if __name__ == "__main__":
    main()
