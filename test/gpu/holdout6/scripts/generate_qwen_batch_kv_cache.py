"""Batch generation with Qwen2.5-0.5B (bf16) and the KV cache: 64 prompts of 1024 tokens, 192 new tokens each."""
import argparse
import time

import torch
from transformers import AutoModelForCausalLM


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name", default="Qwen/Qwen2.5-0.5B")
    p.add_argument("--batch_size", type=int, default=64)
    p.add_argument("--prompt_len", type=int, default=1024)
    p.add_argument("--max_new_tokens", type=int, default=192)
    return p.parse_args()


def main():
    args = parse_args()
    model = AutoModelForCausalLM.from_pretrained(args.model_name, dtype=torch.bfloat16, device_map="cuda")
    model.eval()
    vocab = model.config.vocab_size
    # tokenised prompts would come from the tokenizer; left padding is what generate() wants
    input_ids = torch.randint(0, vocab - 1000, (args.batch_size, args.prompt_len), device="cuda")
    attention_mask = torch.ones_like(input_ids)
    attention_mask[: args.batch_size // 4, :128] = 0          # a quarter of the prompts are shorter
    t0 = time.time()
    with torch.no_grad():
        out = model.generate(
            input_ids=input_ids,
            attention_mask=attention_mask,
            max_new_tokens=args.max_new_tokens,
            min_new_tokens=args.max_new_tokens,
            do_sample=True,
            temperature=0.7,
            top_p=0.9,
            use_cache=True,
            pad_token_id=model.config.eos_token_id,
        )
    new_tokens = out[:, args.prompt_len:]
    print("generated", tuple(new_tokens.shape), f"in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
