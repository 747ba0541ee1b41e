# Ticket-routing classifier: OPT-350m + classification head, HF Trainer, fp16 mixed precision.
import os

import torch
from torch.utils.data import Dataset
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

BASE = {
    "model_name": "facebook/opt-350m",
    "num_labels": 4,
    "max_length": 128,
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "learning_rate": 3e-5,
    "max_steps": 100,
}
# what we actually ran for the v2 experiment
OVERRIDE = {
    "max_length": 256,
    "per_device_train_batch_size": 16,
    "gradient_accumulation_steps": 2,
    "max_steps": 4,
}
cfg = {**BASE, **OVERRIDE}


class TicketDataset(Dataset):
    def __init__(self, n, max_length, num_labels, vocab_size=50000):
        g = torch.Generator().manual_seed(1234)
        self.input_ids = torch.randint(3, vocab_size, (n, max_length), generator=g)
        self.labels = torch.randint(0, num_labels, (n,), generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {
            "input_ids": self.input_ids[i],
            "attention_mask": torch.ones_like(self.input_ids[i]),
            "labels": self.labels[i],
        }


model = AutoModelForSequenceClassification.from_pretrained(
    cfg["model_name"], num_labels=cfg["num_labels"], dtype=torch.float32
)

n_examples = cfg["per_device_train_batch_size"] * cfg["gradient_accumulation_steps"] * cfg["max_steps"]
train_ds = TicketDataset(n_examples, cfg["max_length"], cfg["num_labels"])

args = TrainingArguments(
    output_dir=os.path.join("/tmp", "opt350m-tickets"),
    per_device_train_batch_size=cfg["per_device_train_batch_size"],
    gradient_accumulation_steps=cfg["gradient_accumulation_steps"],
    learning_rate=cfg["learning_rate"],
    max_steps=cfg["max_steps"],
    warmup_steps=1,
    weight_decay=0.01,
    fp16=True,
    logging_steps=1,
    save_strategy="no",
    report_to="none",
    dataloader_num_workers=2,
)

trainer = Trainer(model=model, args=args, train_dataset=train_ds)
trainer.train()
print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)
