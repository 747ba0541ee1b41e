"""Pre-train a small Qwen2-architecture LM from scratch with the HF Trainer.

The architecture comes from a config class with @classmethod presets (`ModelCfg.small()`), turned into a
transformers Qwen2Config. bf16 mixed precision, gradient checkpointing, gradient accumulation 2.
"""
from dataclasses import asdict, dataclass

import torch
from torch.utils.data import Dataset
from transformers import Qwen2Config, Qwen2ForCausalLM, Trainer, TrainingArguments


@dataclass
class ModelCfg:
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    ffn_mult: float = 5.43
    vocab: int = 151936
    max_pos: int = 32768

    @classmethod
    def tiny(cls):
        return cls(hidden=512, layers=8, heads=8, kv_heads=2)

    @classmethod
    def small(cls):
        return cls(hidden=896, layers=12, heads=14, kv_heads=2)

    @classmethod
    def medium(cls):
        return cls(hidden=1536, layers=20, heads=12, kv_heads=2)

    def to_hf(self):
        return Qwen2Config(
            vocab_size=self.vocab,
            hidden_size=self.hidden,
            intermediate_size=int(self.hidden * self.ffn_mult),
            num_hidden_layers=self.layers,
            num_attention_heads=self.heads,
            num_key_value_heads=self.kv_heads,
            max_position_embeddings=self.max_pos,
            tie_word_embeddings=True,
            use_cache=False,
        )


SEQ_LEN = 1024


class RandomTokens(Dataset):
    def __init__(self, n, seq_len, vocab):
        self.n, self.seq_len, self.vocab = n, seq_len, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(0, self.vocab, (self.seq_len,))
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}


def main():
    mcfg = ModelCfg.small()
    print(asdict(mcfg))
    model = Qwen2ForCausalLM(mcfg.to_hf())
    print(f"{model.num_parameters() / 1e6:.1f}M parameters")

    args = TrainingArguments(
        output_dir="/tmp/qwen2_small_scratch",
        per_device_train_batch_size=4,
        gradient_accumulation_steps=2,
        max_steps=4,
        learning_rate=3e-4,
        warmup_steps=1,
        lr_scheduler_type="cosine",
        weight_decay=0.1,
        bf16=True,
        gradient_checkpointing=True,
        gradient_checkpointing_kwargs={"use_reentrant": False},
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        dataloader_num_workers=2,
        disable_tqdm=True,
    )
    trainer = Trainer(model=model, args=args, train_dataset=RandomTokens(64, SEQ_LEN, mcfg.vocab))
    trainer.train()
    print("peak GiB", torch.cuda.max_memory_allocated() / 2 ** 30)


if __name__ == "__main__":
    main()
