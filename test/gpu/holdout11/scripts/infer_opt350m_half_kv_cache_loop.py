"""Greedy batch decoding with OPT-350m written by hand: prefill once, then feed one token at a time with
past_key_values. Model cast with .half(), everything under torch.inference_mode()."""
import time

import torch
from transformers import AutoModelForCausalLM

MODEL = "facebook/opt-350m"
BATCH = 32
PROMPT_LEN = 512
NEW_TOKENS = 128
EOS_ID = 2


@torch.inference_mode()
def greedy_decode(model, input_ids, attention_mask, max_new_tokens):
    out = model(input_ids=input_ids, attention_mask=attention_mask, use_cache=True)
    past = out.past_key_values
    next_tok = out.logits[:, -1, :].argmax(dim=-1)
    generated = [next_tok]
    finished = next_tok.eq(EOS_ID)
    for _ in range(max_new_tokens - 1):
        attention_mask = torch.cat([attention_mask, attention_mask.new_ones(attention_mask.size(0), 1)], dim=1)
        out = model(input_ids=next_tok[:, None], attention_mask=attention_mask, past_key_values=past, use_cache=True)
        past = out.past_key_values
        next_tok = out.logits[:, -1, :].argmax(dim=-1)
        next_tok = torch.where(finished, torch.full_like(next_tok, EOS_ID), next_tok)
        generated.append(next_tok)
        finished |= next_tok.eq(EOS_ID)
        if finished.all():
            break
    return torch.stack(generated, dim=1)


def main():
    model = AutoModelForCausalLM.from_pretrained(MODEL)
    model = model.half().cuda().eval()
    vocab = model.config.vocab_size
    prompts = torch.randint(3, vocab, (BATCH, PROMPT_LEN), device="cuda")
    prompts[:, 0] = 2  # OPT prepends </s>
    mask = torch.ones_like(prompts)
    t0 = time.time()
    tokens = greedy_decode(model, prompts, mask, NEW_TOKENS)
    torch.cuda.synchronize()
    dt = time.time() - t0
    print(f"generated {tokens.shape} in {dt:.2f}s ({tokens.numel() / dt:.0f} tok/s)")
    print(tokens[0, :20].tolist())


if __name__ == "__main__":
    main()
