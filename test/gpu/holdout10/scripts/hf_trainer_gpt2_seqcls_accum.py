# Intent classification with GPT-2 and the HF Trainer (fp16, gradient accumulation).
import dataclasses
import os

import torch
from torch.utils.data import Dataset
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments


@dataclasses.dataclass
class RunConfig:
    model_name: str = "gpt2"
    num_labels: int = 4
    max_length: int = 512
    train_batch_size: int = 8
    grad_accum: int = 4
    lr: float = 3e-5
    max_steps: int = 5
    n_train: int = 2000


DEFAULTS = RunConfig()
# the launcher of our cluster passes overrides this way
cfg = dataclasses.replace(DEFAULTS, train_batch_size=16, max_steps=int(os.environ.get("MAX_STEPS", "5")))


class FakeIntents(Dataset):
    def __init__(self, n, seq_len, num_labels, vocab=50257):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, seq_len), generator=g)
        self.lengths = torch.randint(seq_len // 2, seq_len + 1, (n,), generator=g)
        self.labels = torch.randint(0, num_labels, (n,), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        L = int(self.lengths[i])
        mask = torch.zeros_like(self.ids[i])
        mask[:L] = 1
        ids = self.ids[i].clone()
        ids[L:] = 50256  # pad with eos
        return {"input_ids": ids, "attention_mask": mask, "labels": self.labels[i]}


def main():
    model = AutoModelForSequenceClassification.from_pretrained(cfg.model_name, num_labels=cfg.num_labels)
    model.config.pad_token_id = model.config.eos_token_id  # GPT-2 has no pad token

    args = TrainingArguments(
        output_dir="/tmp/gpt2-intents",
        per_device_train_batch_size=cfg.train_batch_size,
        gradient_accumulation_steps=cfg.grad_accum,
        learning_rate=cfg.lr,
        max_steps=cfg.max_steps,
        warmup_steps=1,
        weight_decay=0.01,
        fp16=True,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        dataloader_num_workers=0,
        seed=42,
    )
    trainer = Trainer(model=model, args=args,
                      train_dataset=FakeIntents(cfg.n_train, cfg.max_length, cfg.num_labels))
    out = trainer.train()
    print(out.metrics)
    print("max alloc GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
