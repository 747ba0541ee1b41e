"""Fine-tune only the top of bert-base-uncased for 5-way topic classification.

Embeddings and the lower 8 encoder layers are frozen (the usual trick when the labelled set is small).
"""
import random

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForSequenceClassification, get_linear_schedule_with_warmup

MODEL_NAME = "bert-base-uncased"
NUM_LABELS = 5
MAX_LEN = 384
TRAIN_BATCH = 32
FREEZE_LAYERS = 8
EPOCHS = 2
STEPS_PER_EPOCH = 3
LR = 3e-5
WEIGHT_DECAY = 0.01


class ReviewDataset(Dataset):
    def __init__(self, n, max_len, vocab=30522):
        self.n, self.max_len, self.vocab = n, max_len, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        length = random.randint(self.max_len // 2, self.max_len)
        ids = torch.zeros(self.max_len, dtype=torch.long)
        ids[0], ids[length - 1] = 101, 102
        ids[1:length - 1] = torch.randint(1000, self.vocab, (length - 2,))
        mask = torch.zeros(self.max_len, dtype=torch.long)
        mask[:length] = 1
        return {"input_ids": ids, "attention_mask": mask, "labels": torch.tensor(random.randrange(NUM_LABELS))}


def freeze_bottom(model, n_layers):
    for p in model.bert.embeddings.parameters():
        p.requires_grad = False
    for layer in model.bert.encoder.layer[:n_layers]:
        for p in layer.parameters():
            p.requires_grad = False


device = torch.device("cuda")
model = AutoModelForSequenceClassification.from_pretrained(MODEL_NAME, num_labels=NUM_LABELS)
freeze_bottom(model, FREEZE_LAYERS)
model.to(device)

no_decay = ["bias", "LayerNorm.weight"]
grouped = [
    {"params": [p for n, p in model.named_parameters() if p.requires_grad and not any(nd in n for nd in no_decay)],
     "weight_decay": WEIGHT_DECAY},
    {"params": [p for n, p in model.named_parameters() if p.requires_grad and any(nd in n for nd in no_decay)],
     "weight_decay": 0.0},
]
optimizer = torch.optim.AdamW(grouped, lr=LR)
n_trainable = sum(p.numel() for g in grouped for p in g["params"])
print(f"trainable {n_trainable / 1e6:.1f}M of {model.num_parameters() / 1e6:.1f}M")

train_dl = DataLoader(ReviewDataset(TRAIN_BATCH * STEPS_PER_EPOCH, MAX_LEN), batch_size=TRAIN_BATCH, shuffle=True)
scheduler = get_linear_schedule_with_warmup(optimizer, 1, EPOCHS * len(train_dl))

for epoch in range(EPOCHS):
    model.train()
    for batch in train_dl:
        batch = {k: v.to(device) for k, v in batch.items()}
        outputs = model(**batch)
        outputs.loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=False)   # keep the grad buffers allocated between steps
        print(f"epoch {epoch} loss {outputs.loss.item():.4f}")

print("peak GiB:", round(torch.cuda.max_memory_allocated() / 2 ** 30, 3))
