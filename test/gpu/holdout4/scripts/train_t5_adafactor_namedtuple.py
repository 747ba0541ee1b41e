# Summarisation-style fine-tuning of a T5 (base-sized, v1.1 "gated-gelu" layout) built from a config in code.
# Inputs are truncated to 512 tokens, summaries to 128; Adafactor as in the T5 paper (torch.optim.Adafactor).
from typing import NamedTuple

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import T5Config, T5ForConditionalGeneration


class HParams(NamedTuple):
    vocab_size: int = 32128
    d_model: int = 768
    d_ff: int = 2048
    num_layers: int = 12
    num_heads: int = 12
    max_source_length: int = 512
    max_target_length: int = 128
    train_batch_size: int = 16
    learning_rate: float = 1e-3
    num_train_steps: int = 4
    pad_id: int = 0


hp = HParams()


class FakeSummaries(Dataset):
    def __init__(self, n, hp):
        self.src = torch.randint(1, hp.vocab_size, (n, hp.max_source_length))
        tgt = torch.randint(1, hp.vocab_size, (n, hp.max_target_length))
        # variable-length targets, padded with -100 so the loss ignores them
        lens = torch.randint(hp.max_target_length // 2, hp.max_target_length + 1, (n,))
        mask = torch.arange(hp.max_target_length)[None, :] >= lens[:, None]
        tgt[mask] = -100
        self.tgt = tgt

    def __len__(self):
        return len(self.src)

    def __getitem__(self, i):
        return self.src[i], self.tgt[i]


def collate(batch):
    src = torch.stack([b[0] for b in batch])
    tgt = torch.stack([b[1] for b in batch])
    return {"input_ids": src, "attention_mask": torch.ones_like(src), "labels": tgt}


config = T5Config(
    vocab_size=hp.vocab_size,
    d_model=hp.d_model,
    d_kv=hp.d_model // hp.num_heads,
    d_ff=hp.d_ff,
    num_layers=hp.num_layers,
    num_decoder_layers=hp.num_layers,
    num_heads=hp.num_heads,
    feed_forward_proj="gated-gelu",
    tie_word_embeddings=False,
    decoder_start_token_id=hp.pad_id,
    pad_token_id=hp.pad_id,
)
model = T5ForConditionalGeneration(config).cuda()
model.train()
print("parameters:", sum(p.numel() for p in model.parameters()))

optimizer = torch.optim.Adafactor(model.parameters(), lr=hp.learning_rate, weight_decay=0.0)
loader = DataLoader(FakeSummaries(hp.train_batch_size * hp.num_train_steps, hp),
                    batch_size=hp.train_batch_size, shuffle=True, collate_fn=collate)

for step, batch in enumerate(loader):
    batch = {k: v.cuda() for k, v in batch.items()}
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step}: loss={loss.item():.4f}")
    if step + 1 >= hp.num_train_steps:
        break

print("max allocated %.2f GiB" % (torch.cuda.max_memory_allocated() / 1024**3))
