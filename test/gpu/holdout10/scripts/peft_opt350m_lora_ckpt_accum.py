"""LoRA instruction tuning of OPT-350m in bf16 with gradient checkpointing and gradient accumulation.

Sizes come from the environment (our sbatch file sets them), with defaults for a single GPU.
"""
import math
import os

import torch
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM, get_cosine_schedule_with_warmup

MODEL_ID = os.environ.get("MODEL_ID", "facebook/opt-350m")
MICRO_BS = int(os.environ.get("MICRO_BS", "8"))
SEQ_LEN = int(os.environ.get("SEQ_LEN", "1024"))
ACCUM = int(os.environ.get("GRAD_ACCUM", "4"))
OPT_STEPS = int(os.environ.get("OPT_STEPS", "3"))
LORA_R = int(os.environ.get("LORA_R", "32"))
LR = float(os.environ.get("LR", "2e-4"))


class InstructionData(Dataset):
    """Prompt + response; prompt tokens are masked out of the loss."""

    def __init__(self, n, seq_len, vocab=50272):
        self.n, self.seq_len, self.vocab = n, seq_len, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(4, self.vocab, (self.seq_len,))
        prompt_len = torch.randint(64, self.seq_len // 2, ()).item()
        labels = ids.clone()
        labels[:prompt_len] = -100
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}


def main():
    device = "cuda"
    model = AutoModelForCausalLM.from_pretrained(MODEL_ID, dtype=torch.bfloat16)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.enable_input_require_grads()
    model.config.use_cache = False

    lora = LoraConfig(r=LORA_R, lora_alpha=2 * LORA_R, lora_dropout=0.05, bias="none", task_type="CAUSAL_LM",
                      target_modules=["q_proj", "k_proj", "v_proj", "out_proj", "fc1", "fc2"])
    model = get_peft_model(model, lora)
    model.print_trainable_parameters()
    model.to(device)

    loader = DataLoader(InstructionData(MICRO_BS * ACCUM * OPT_STEPS, SEQ_LEN), batch_size=MICRO_BS, shuffle=True)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=LR, weight_decay=0.0)
    sched = get_cosine_schedule_with_warmup(opt, num_warmup_steps=1, num_training_steps=OPT_STEPS)

    model.train()
    opt.zero_grad(set_to_none=True)
    running = 0.0
    for i, batch in enumerate(loader):
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(**batch).loss / ACCUM
        loss.backward()
        running += loss.item()
        if (i + 1) % ACCUM == 0:
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            print(f"update {(i + 1) // ACCUM}: loss {running:.4f} ppl {math.exp(min(running, 20)):.1f}")
            running = 0.0
    print("peak GiB:", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
