#!/usr/bin/env python
# coding: utf-8
# MNLI-style sentence-pair classification, bert-base-uncased, HF Trainer with fp16.
import numpy as np
import torch
from torch.utils.data import Dataset
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

model_checkpoint = "bert-base-uncased"
num_labels = 3
MAX_LENGTH = 256   # tokenizer(premise, hypothesis, truncation=True, max_length=MAX_LENGTH, padding="max_length")
batch_size = 32


def fake_tokenize(n, max_length, vocab_size=30522):
    """Shape-compatible replacement for tokenizer(..., padding='max_length')."""
    input_ids = torch.randint(1000, vocab_size, (n, max_length))
    input_ids[:, 0] = 101
    token_type_ids = torch.zeros(n, max_length, dtype=torch.long)
    token_type_ids[:, max_length // 2:] = 1
    attention_mask = torch.ones(n, max_length, dtype=torch.long)
    return {"input_ids": input_ids, "token_type_ids": token_type_ids, "attention_mask": attention_mask}


class PairDataset(Dataset):
    def __init__(self, n):
        self.enc = fake_tokenize(n, MAX_LENGTH)
        self.labels = torch.randint(0, num_labels, (n,))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        item = {k: v[idx] for k, v in self.enc.items()}
        item["labels"] = self.labels[idx]
        return item


def preprocess_logits_for_metrics(logits, labels):
    return logits.argmax(dim=-1)


def compute_metrics(eval_pred):
    preds, labels = eval_pred
    return {"accuracy": float((np.asarray(preds) == np.asarray(labels)).mean())}


model = AutoModelForSequenceClassification.from_pretrained(model_checkpoint, num_labels=num_labels)

args = TrainingArguments(
    output_dir="/tmp/holdout-bert-mnli",
    per_device_train_batch_size=batch_size,
    per_device_eval_batch_size=64,
    learning_rate=2e-5,
    num_train_epochs=1,
    max_steps=6,
    weight_decay=0.01,
    fp16=True,
    logging_steps=2,
    save_strategy="no",
    eval_strategy="no",
    report_to="none",
)

trainer = Trainer(
    model=model,
    args=args,
    train_dataset=PairDataset(batch_size * 6),
    eval_dataset=PairDataset(128),
    compute_metrics=compute_metrics,
    preprocess_logits_for_metrics=preprocess_logits_for_metrics,
)

trainer.train()
print(trainer.evaluate())
