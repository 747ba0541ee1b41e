"""Pre-train a ~300M Llama-style LM from scratch with the HF Trainer (bf16, gradient checkpointing, accumulation)."""
from dataclasses import dataclass

import torch
from torch.utils.data import Dataset
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments


@dataclass
class ModelArgs:
    vocab_size: int = 32000
    hidden_size: int = 1024
    intermediate_size: int = 2816
    num_hidden_layers: int = 20
    num_attention_heads: int = 16
    num_key_value_heads: int = 8
    max_position_embeddings: int = 4096


@dataclass
class DataArgs:
    block_size: int = 1024
    num_train_blocks: int = 8 * 4 * 3


class RandomBlocks(Dataset):
    def __init__(self, n, block_size, vocab_size):
        self.data = torch.randint(0, vocab_size, (n, block_size))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        x = self.data[i]
        return {"input_ids": x, "labels": x.clone()}


def main():
    margs, dargs = ModelArgs(), DataArgs()
    config = LlamaConfig(
        vocab_size=margs.vocab_size,
        hidden_size=margs.hidden_size,
        intermediate_size=margs.intermediate_size,
        num_hidden_layers=margs.num_hidden_layers,
        num_attention_heads=margs.num_attention_heads,
        num_key_value_heads=margs.num_key_value_heads,
        max_position_embeddings=margs.max_position_embeddings,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters")

    training_args = TrainingArguments(
        output_dir="/tmp/llama-scratch",
        per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
        gradient_checkpointing=True,
        bf16=True,
        learning_rate=3e-4,
        lr_scheduler_type="cosine",
        warmup_steps=1,
        weight_decay=0.1,
        adam_beta2=0.95,
        max_grad_norm=1.0,
        max_steps=3,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
    )
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=RandomBlocks(dargs.num_train_blocks, dargs.block_size, margs.vocab_size),
    )
    trainer.train()


if __name__ == "__main__":
    main()
