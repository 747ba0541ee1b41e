"""Batch continuation of prompts with GPT-2 (greedy), fp16 weights, KV cache.

Prompts are pre-tokenized (random ids here); every prompt is PROMPT_LEN tokens, we add NEW_TOKENS.
"""
import time

import torch
from transformers import GPT2LMHeadModel

MODEL_ID = "gpt2"
BATCH = 64
PROMPT_LEN = 512
NEW_TOKENS = 256
N_BATCHES = 2


def batches(n, bs, length, vocab):
    for _ in range(n):
        ids = torch.randint(0, vocab, (bs, length))
        yield ids, torch.ones_like(ids)


def main():
    model = GPT2LMHeadModel.from_pretrained(MODEL_ID)
    model.half()
    model.cuda()
    model.eval()
    vocab = model.config.vocab_size
    outputs = []
    t0 = time.time()
    with torch.inference_mode():
        for input_ids, attn in batches(N_BATCHES, BATCH, PROMPT_LEN, vocab):
            out = model.generate(
                input_ids=input_ids.cuda(),
                attention_mask=attn.cuda(),
                max_new_tokens=NEW_TOKENS,
                min_new_tokens=NEW_TOKENS,
                do_sample=False,
                pad_token_id=model.config.eos_token_id,
            )
            outputs.append(out[:, PROMPT_LEN:].cpu())
    n_tok = sum(o.numel() for o in outputs)
    print(f"{n_tok} new tokens in {time.time() - t0:.1f}s, "
          f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
