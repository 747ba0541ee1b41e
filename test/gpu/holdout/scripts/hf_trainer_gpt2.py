"""Continue pre-training GPT-2 on domain text with the Hugging Face Trainer."""
import torch
from torch.utils.data import Dataset
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments, default_data_collator

MODEL_NAME = "gpt2"
BLOCK_SIZE = 1024


class GroupedTexts(Dataset):
    """Texts already tokenized and grouped into BLOCK_SIZE chunks (the usual run_clm.py recipe)."""

    def __init__(self, n_blocks, block_size, vocab_size=50257):
        self.blocks = torch.randint(0, vocab_size, (n_blocks, block_size))

    def __len__(self):
        return len(self.blocks)

    def __getitem__(self, i):
        ids = self.blocks[i]
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}


def main():
    model = AutoModelForCausalLM.from_pretrained(MODEL_NAME)
    model.config.use_cache = False

    train_dataset = GroupedTexts(n_blocks=8 * 4 * 5, block_size=BLOCK_SIZE)

    training_args = TrainingArguments(
        output_dir="/tmp/holdout-gpt2-clm",
        per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
        learning_rate=5e-5,
        weight_decay=0.01,
        warmup_steps=1,
        max_steps=5,
        bf16=True,
        gradient_checkpointing=True,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        dataloader_num_workers=0,
        seed=42,
    )

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        data_collator=default_data_collator,
    )
    result = trainer.train()
    print(result.metrics)


if __name__ == "__main__":
    main()
