"""Continue pre-training GPT-2 on domain text with the HF Trainer.

Block size 1024, per-device batch 8, gradient accumulation 4, bf16 mixed precision and gradient checkpointing.
Token ids are random here (the real run reads a tokenized corpus from disk).
"""
import torch
from torch.utils.data import Dataset
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments, default_data_collator

MODEL_NAME = "gpt2"
BLOCK_SIZE = 1024
VOCAB_SIZE = 50257


class PackedBlocks(Dataset):
    """Fixed-length blocks of a concatenated corpus (what group_texts() produces in run_clm.py)."""

    def __init__(self, n_blocks, block_size, vocab_size, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.data = torch.randint(0, vocab_size, (n_blocks, block_size), generator=g)

    def __len__(self):
        return self.data.size(0)

    def __getitem__(self, i):
        ids = self.data[i]
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}


def main():
    model = AutoModelForCausalLM.from_pretrained(MODEL_NAME)
    model.config.use_cache = False

    train_ds = PackedBlocks(n_blocks=160, block_size=BLOCK_SIZE, vocab_size=VOCAB_SIZE)

    args = TrainingArguments(
        output_dir="/tmp/gpt2-domain-clm",
        per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
        learning_rate=5e-5,
        weight_decay=0.01,
        warmup_steps=1,
        max_steps=3,
        lr_scheduler_type="cosine",
        bf16=True,
        gradient_checkpointing=True,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        dataloader_num_workers=2,
        seed=42,
    )

    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=train_ds,
        data_collator=default_data_collator,
    )
    result = trainer.train()
    print(result.metrics)
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
