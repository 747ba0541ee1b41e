"""Instruction-tune Qwen2.5-0.5B with LoRA on every linear layer (peft), hand-written gradient accumulation."""
import math
import random

import torch
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM, get_linear_schedule_with_warmup

MODEL_NAME = "Qwen/Qwen2.5-0.5B"
MAX_LEN = 1024
MICRO_BATCH = 4
ACCUM_STEPS = 4
EFFECTIVE_BATCH = MICRO_BATCH * ACCUM_STEPS
OPT_STEPS = 3
LR = 2e-4
LORA_R = 16
LORA_ALPHA = 2 * LORA_R
VOCAB = 151_643


class SyntheticInstructions(Dataset):
    """Prompt + response token ids; the prompt part of the labels is masked with -100."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(0, VOCAB, (MAX_LEN,))
        labels = ids.clone()
        prompt_len = random.randint(64, 512)
        labels[:prompt_len] = -100
        return {"input_ids": ids, "attention_mask": torch.ones(MAX_LEN, dtype=torch.long), "labels": labels}


def main():
    model = AutoModelForCausalLM.from_pretrained(MODEL_NAME, dtype=torch.bfloat16, device_map="cuda")
    lora = LoraConfig(r=LORA_R, lora_alpha=LORA_ALPHA, lora_dropout=0.05, target_modules="all-linear",
                      task_type="CAUSAL_LM")
    model = get_peft_model(model, lora)
    model.print_trainable_parameters()

    loader = DataLoader(SyntheticInstructions(EFFECTIVE_BATCH * OPT_STEPS), batch_size=MICRO_BATCH, shuffle=True)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=LR, weight_decay=0.0)
    scheduler = get_linear_schedule_with_warmup(optimizer, 1, OPT_STEPS)

    model.train()
    optimizer.zero_grad()
    for i, batch in enumerate(loader):
        batch = {k: v.to("cuda") for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(**batch).loss / ACCUM_STEPS
        loss.backward()
        if (i + 1) % ACCUM_STEPS == 0:
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            print(f"opt step {(i + 1) // ACCUM_STEPS}: loss {loss.item() * ACCUM_STEPS:.3f}")
    print("peak %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
