"""Summarization fine-tune of a T5-base-sized model with Adafactor and bf16 autocast."""
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import T5Config, T5ForConditionalGeneration
from transformers.optimization import Adafactor

SOURCE_LEN = 512
TARGET_LEN = 128
BATCH_SIZE = 16
MAX_STEPS = 5


class SummDataset(Dataset):
    def __init__(self, n, vocab=32128):
        self.src = torch.randint(3, vocab, (n, SOURCE_LEN))
        self.tgt = torch.randint(3, vocab, (n, TARGET_LEN))
        self.tgt[:, -10:] = 0   # padding in the summaries

    def __len__(self):
        return len(self.src)

    def __getitem__(self, i):
        labels = self.tgt[i].clone()
        labels[labels == 0] = -100
        return {"input_ids": self.src[i], "attention_mask": torch.ones(SOURCE_LEN, dtype=torch.long),
                "labels": labels}


def train(max_steps=MAX_STEPS, lr=1e-3):
    device = "cuda"
    config = T5Config(
        vocab_size=32128,
        d_model=768,
        d_kv=64,
        d_ff=3072,
        num_layers=12,
        num_decoder_layers=12,
        num_heads=12,
        feed_forward_proj="relu",
        dropout_rate=0.1,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    model = T5ForConditionalGeneration(config).to(device)
    optimizer = Adafactor(model.parameters(), lr=lr, scale_parameter=False, relative_step=False,
                          warmup_init=False)

    loader = DataLoader(SummDataset(BATCH_SIZE * max_steps), batch_size=BATCH_SIZE, shuffle=True)
    model.train()
    step = 0
    t0 = time.time()
    while True:
        for batch in loader:
            batch = {k: v.to(device) for k, v in batch.items()}
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            print(f"step {step} loss {loss.item():.3f} {time.time() - t0:.1f}s")
            if step >= max_steps:
                return model


if __name__ == "__main__":
    train()
