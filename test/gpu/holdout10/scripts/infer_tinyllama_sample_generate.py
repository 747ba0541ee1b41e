"""Sample several completions per prompt from TinyLlama-1.1B-Chat (fp16, nucleus sampling)."""
import time

import torch
from transformers import AutoModelForCausalLM, GenerationConfig

MODEL_NAME = "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
N_PROMPTS = 16
PROMPT_LEN = 512
NUM_RETURN = 4
gen_cfg = GenerationConfig(
    max_new_tokens=256,
    min_new_tokens=256,
    do_sample=True,
    top_p=0.9,
    top_k=50,
    temperature=0.8,
    num_return_sequences=NUM_RETURN,
    pad_token_id=2,
    eos_token_id=2,
)


def fake_prompts(n, length, vocab=32000):
    """Left-padded batch, as a tokenizer with padding_side='left' would give."""
    ids = torch.randint(3, vocab, (n, length))
    mask = torch.ones_like(ids)
    pad = torch.randint(0, length // 4, (n,))
    for i, p in enumerate(pad.tolist()):
        ids[i, :p] = 2
        mask[i, :p] = 0
    ids[:, -1] = 29901
    return ids, mask


def main():
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(MODEL_NAME, dtype=torch.float16, device_map="cuda")
    model.eval()
    input_ids, attention_mask = fake_prompts(N_PROMPTS, PROMPT_LEN)
    input_ids, attention_mask = input_ids.to(model.device), attention_mask.to(model.device)
    t0 = time.time()
    with torch.inference_mode():
        out = model.generate(input_ids=input_ids, attention_mask=attention_mask, generation_config=gen_cfg)
    new_tokens = out[:, PROMPT_LEN:]
    print(f"generated {tuple(new_tokens.shape)} in {time.time() - t0:.1f}s")
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
