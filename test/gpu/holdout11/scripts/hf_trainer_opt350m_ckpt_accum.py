"""Continued pre-training of OPT-350m on a domain corpus with the HF Trainer (random tokens here).

bf16 mixed precision over fp32 weights, gradient checkpointing and accumulation, all via TrainingArguments.
"""
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

MODEL_NAME = "facebook/opt-350m"
BLOCK_SIZE = 1024


class PackedBlocks(Dataset):
    def __init__(self, n_blocks, block_size, vocab_size):
        self.data = torch.randint(4, vocab_size, (n_blocks, block_size))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        ids = self.data[i]
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}


def main():
    model = AutoModelForCausalLM.from_pretrained(MODEL_NAME, dtype=torch.float32)
    model.config.use_cache = False
    train_ds = PackedBlocks(256, BLOCK_SIZE, model.config.vocab_size)

    args = TrainingArguments(
        output_dir=tempfile.mkdtemp(prefix="opt350m_"),
        per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
        gradient_checkpointing=True,
        bf16=True,
        learning_rate=5e-5,
        lr_scheduler_type="cosine",
        warmup_steps=1,
        weight_decay=0.1,
        max_steps=3,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        dataloader_num_workers=2,
    )
    trainer = Trainer(model=model, args=args, train_dataset=train_ds)
    result = trainer.train()
    print(result.metrics)


if __name__ == "__main__":
    main()
