"""Full fine-tune of Qwen2.5-0.5B with the HF Trainer (instruction data, prompt masked)."""
import os
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

MODEL_ID = "Qwen/Qwen2.5-0.5B"
MAX_LEN = 1024
IGNORE_INDEX = -100


class SyntheticSFT(Dataset):
    """prompt + answer pairs, right-padded to MAX_LEN; loss only on the answer."""

    def __init__(self, n, max_len=MAX_LEN, vocab=151000, pad_id=151643, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.items = []
        for _ in range(n):
            total = int(torch.randint(max_len // 2, max_len + 1, (1,), generator=g))
            prompt = int(torch.randint(16, total // 2, (1,), generator=g))
            ids = torch.full((max_len,), pad_id, dtype=torch.long)
            ids[:total] = torch.randint(0, vocab, (total,), generator=g)
            labels = ids.clone()
            labels[:prompt] = IGNORE_INDEX
            labels[total:] = IGNORE_INDEX
            mask = torch.zeros(max_len, dtype=torch.long)
            mask[:total] = 1
            self.items.append({"input_ids": ids, "attention_mask": mask, "labels": labels})

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def main():
    out_dir = os.environ.get("OUTPUT_DIR") or tempfile.mkdtemp(prefix="qwen_sft_")
    model = AutoModelForCausalLM.from_pretrained(MODEL_ID, torch_dtype="auto")
    model.config.use_cache = False

    args = TrainingArguments(
        output_dir=out_dir,
        per_device_train_batch_size=4,
        gradient_accumulation_steps=2,
        learning_rate=1e-5,
        lr_scheduler_type="cosine",
        warmup_steps=1,
        max_steps=3,
        bf16=True,
        gradient_checkpointing=True,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    train_ds = SyntheticSFT(args.per_device_train_batch_size * args.gradient_accumulation_steps * args.max_steps)
    trainer = Trainer(model=model, args=args, train_dataset=train_ds)
    result = trainer.train()
    print(result.metrics)


if __name__ == "__main__":
    main()
