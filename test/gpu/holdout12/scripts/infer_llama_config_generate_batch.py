"""Batch sampling from a randomly initialised ~1B Llama built from LlamaConfig (sizes in a dataclass),
bf16 weights, generate() under torch.no_grad()."""
import time
from dataclasses import dataclass

import torch
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM


@dataclass
class Arch:
    dim: int = 2048
    n_layers: int = 16
    n_heads: int = 16
    n_kv_heads: int = 4
    vocab: int = 32000
    max_seq: int = 4096


@dataclass
class Gen:
    batch_size: int = 48
    prompt_len: int = 512
    max_new_tokens: int = 128
    temperature: float = 0.8
    top_p: float = 0.95


def build(arch: Arch):
    cfg = LlamaConfig(
        vocab_size=arch.vocab,
        hidden_size=arch.dim,
        intermediate_size=arch.dim * 4,
        num_hidden_layers=arch.n_layers,
        num_attention_heads=arch.n_heads,
        num_key_value_heads=arch.n_kv_heads,
        max_position_embeddings=arch.max_seq,
        rms_norm_eps=1e-5,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg)
    return model.to(torch.bfloat16).eval()


def main(arch=Arch(), gen=Gen()):
    model = build(arch)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e9:.2f}B params")
    prompts = torch.randint(3, arch.vocab, (gen.batch_size, gen.prompt_len), device="cuda")
    attention_mask = torch.ones_like(prompts)
    # left padding for a few shorter prompts, as a tokenizer with padding_side="left" would give
    for i in range(0, gen.batch_size, 4):
        pad = 32 * (i % 8)
        prompts[i, :pad] = 0
        attention_mask[i, :pad] = 0
    gcfg = GenerationConfig(do_sample=True, temperature=gen.temperature, top_p=gen.top_p,
                            max_new_tokens=gen.max_new_tokens, pad_token_id=0, eos_token_id=2)
    t0 = time.time()
    with torch.no_grad():
        out = model.generate(input_ids=prompts, attention_mask=attention_mask, generation_config=gcfg)
    new_tokens = out[:, gen.prompt_len:]
    print(f"generated {new_tokens.shape} in {time.time() - t0:.1f}s")
    print("peak GiB", torch.cuda.max_memory_allocated() / 2 ** 30)


if __name__ == "__main__":
    main()
