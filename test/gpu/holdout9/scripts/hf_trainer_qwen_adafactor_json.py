"""Continued pre-training of Qwen2.5-0.5B with the HF Trainer (Adafactor, bf16, gradient checkpointing).

Usage: python hf_trainer_qwen_adafactor_json.py [path/to/config.json]
"""
import json
import os
import sys

import torch
from torch.utils.data import Dataset
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", "qwen_clm_adafactor.json")


class Blocks(Dataset):
    def __init__(self, n, block_size, vocab_size):
        self.data = torch.randint(0, vocab_size, (n, block_size))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return {"input_ids": self.data[i], "labels": self.data[i].clone()}


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_CONFIG
    with open(path) as fh:
        cfg = json.load(fh)

    model = AutoModelForCausalLM.from_pretrained(cfg["model_name_or_path"],
                                                 dtype=getattr(torch, cfg["torch_dtype"]))
    model.config.use_cache = False
    train_ds = Blocks(cfg["num_train_blocks"], cfg["block_size"], model.config.vocab_size)

    args = TrainingArguments(**cfg["training_args"])
    trainer = Trainer(model=model, args=args, train_dataset=train_ds)
    result = trainer.train()
    print(result.metrics)
    print(f"optimizer: {type(trainer.optimizer).__name__}")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
