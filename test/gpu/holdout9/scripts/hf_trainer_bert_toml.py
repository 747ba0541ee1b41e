"""BERT topic classifier with the HF Trainer; every knob lives in configs/bert_topics.toml."""
import tomllib
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import Dataset
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

CONFIG_PATH = Path(__file__).resolve().parent / "configs" / "bert_topics.toml"


class FakeTopics(Dataset):
    """Pretend-tokenized news snippets: padded to max_length like tokenizer(..., padding="max_length")."""

    def __init__(self, n, max_length, num_labels, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(1000, 30000, (n, max_length), generator=g)
        lengths = torch.randint(max_length // 2, max_length + 1, (n,), generator=g)
        self.mask = (torch.arange(max_length)[None, :] < lengths[:, None]).long()
        self.ids[:, 0] = 101
        self.ids = self.ids * self.mask
        self.labels = torch.randint(0, num_labels, (n,), generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": self.mask[i], "labels": self.labels[i]}


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    return {"accuracy": float((np.argmax(logits, axis=-1) == labels).mean())}


def main():
    with open(CONFIG_PATH, "rb") as fh:
        cfg = tomllib.load(fh)
    mcfg, dcfg = cfg["model"], cfg["data"]

    model = AutoModelForSequenceClassification.from_pretrained(
        mcfg["name"], num_labels=mcfg["num_labels"], classifier_dropout=mcfg["classifier_dropout"])

    train_ds = FakeTopics(dcfg["num_train"], dcfg["max_length"], mcfg["num_labels"], seed=1)
    eval_ds = FakeTopics(dcfg["num_eval"], dcfg["max_length"], mcfg["num_labels"], seed=2)

    args = TrainingArguments(**cfg["training"])
    trainer = Trainer(model=model, args=args, train_dataset=train_ds, eval_dataset=eval_ds,
                      compute_metrics=compute_metrics)
    trainer.train()
    metrics = trainer.evaluate()
    print(metrics)
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
