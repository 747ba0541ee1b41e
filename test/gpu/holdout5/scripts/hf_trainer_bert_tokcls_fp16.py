"""Token classification (POS tagging) with the HF Trainer on bert-base-uncased."""
import numpy as np
import torch
from torch.utils.data import Dataset
from transformers import (AutoModelForTokenClassification, DataCollatorForTokenClassification, Trainer,
                          TrainingArguments)

model_checkpoint = "bert-base-uncased"
label_list = ["ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "NOUN", "NUM", "PRON", "PROPN", "PUNCT", "VERB", "X"]
max_length = 256


class FakeTaggedSentences(Dataset):
    def __init__(self, n, seed=0):
        rng = np.random.default_rng(seed)
        self.examples = []
        for _ in range(n):
            length = int(rng.integers(max_length // 2, max_length + 1))
            ids = rng.integers(1000, 30000, size=length).tolist()
            ids[0], ids[-1] = 101, 102
            labels = rng.integers(0, len(label_list), size=length).tolist()
            labels[0] = labels[-1] = -100
            self.examples.append({"input_ids": ids, "attention_mask": [1] * length, "labels": labels})

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        return self.examples[i]


class PadCollator:
    """Pads input_ids / attention_mask with 0 and labels with -100 (what DataCollatorForTokenClassification does
    with a tokenizer; we have none here)."""

    def __call__(self, features):
        L = max(len(f["input_ids"]) for f in features)
        batch = {"input_ids": [], "attention_mask": [], "labels": []}
        for f in features:
            pad = L - len(f["input_ids"])
            batch["input_ids"].append(f["input_ids"] + [0] * pad)
            batch["attention_mask"].append(f["attention_mask"] + [0] * pad)
            batch["labels"].append(f["labels"] + [-100] * pad)
        return {k: torch.tensor(v, dtype=torch.long) for k, v in batch.items()}


model = AutoModelForTokenClassification.from_pretrained(
    model_checkpoint,
    num_labels=len(label_list),
    id2label=dict(enumerate(label_list)),
    label2id={l: i for i, l in enumerate(label_list)},
)

args = TrainingArguments(
    output_dir="/tmp/bert-pos-tagger",
    per_device_train_batch_size=32,
    gradient_accumulation_steps=2,
    learning_rate=5e-5,
    weight_decay=0.01,
    warmup_steps=1,
    max_steps=4,
    fp16=True,
    optim="adamw_torch",
    logging_steps=1,
    save_strategy="no",
    report_to="none",
    dataloader_num_workers=0,
    disable_tqdm=True,
)

trainer = Trainer(
    model=model,
    args=args,
    train_dataset=FakeTaggedSentences(32 * 2 * 4),
    data_collator=PadCollator(),
)
trainer.train()
print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
