"""Pre-train a small GPT-NeoX (Pythia-style) from a config with Accelerate.

bf16 mixed precision, gradient accumulation through `accelerator.accumulate`, HF gradient checkpointing.
"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset
from transformers import GPTNeoXConfig, GPTNeoXForCausalLM, get_linear_schedule_with_warmup


def width(mult):
    """Model widths are multiples of the head size."""
    return int(64 * mult)


HEAD_DIM = width(1)
HIDDEN = width(16)                  # 1024
N_HEADS = HIDDEN // HEAD_DIM        # 16
N_LAYERS = 16
FFN = 4 * HIDDEN
VOCAB = 50304
CONTEXT = 1024

MICRO_BATCH = 8
GRAD_ACCUM = 4
OPT_STEPS = 3


class PackedTokens(Dataset):
    def __init__(self, n_seqs, seq_len):
        self.data = torch.randint(0, VOCAB, (n_seqs, seq_len))

    def __len__(self):
        return self.data.size(0)

    def __getitem__(self, i):
        x = self.data[i]
        return {"input_ids": x, "labels": x}


def main():
    accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=GRAD_ACCUM)

    config = GPTNeoXConfig(
        vocab_size=VOCAB,
        hidden_size=HIDDEN,
        num_hidden_layers=N_LAYERS,
        num_attention_heads=N_HEADS,
        intermediate_size=FFN,
        max_position_embeddings=2048,
        tie_word_embeddings=False,
    )
    model = GPTNeoXForCausalLM(config)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.config.use_cache = False
    accelerator.print(f"params: {model.num_parameters() / 1e6:.1f}M")

    ds = PackedTokens(MICRO_BATCH * GRAD_ACCUM * OPT_STEPS, CONTEXT)
    loader = DataLoader(ds, batch_size=MICRO_BATCH, shuffle=True, num_workers=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)
    scheduler = get_linear_schedule_with_warmup(optimizer, 1, OPT_STEPS)

    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)

    model.train()
    for step, batch in enumerate(loader):
        with accelerator.accumulate(model):
            loss = model(**batch).loss
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        if accelerator.sync_gradients:
            accelerator.print(f"micro {step} loss {loss.item():.3f}")

    accelerator.print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
