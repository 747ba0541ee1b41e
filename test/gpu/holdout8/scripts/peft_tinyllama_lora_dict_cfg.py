"""Instruction-tune TinyLlama with LoRA on every linear layer (peft), long 2k-token samples.

bf16 base weights, fp32 adapters, bf16 autocast, HF gradient checkpointing, gradient accumulation by hand.
"""
import math
import time

import torch
from torch.utils.data import DataLoader, Dataset
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, get_cosine_schedule_with_warmup

cfg = {
    "model_id": "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
    "seq_len": 2048,
    "micro_batch_size": 2,
    "grad_accum": 4,
    "max_updates": 3,
    "lr": 2e-4,
    "lora": {"r": 16, "alpha": 32, "dropout": 0.05,
             "targets": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]},
    "prompt_frac": 0.3,
}


class SFTSamples(Dataset):
    def __init__(self, n, seq_len, vocab=32000, prompt_frac=0.3):
        self.ids = torch.randint(3, vocab, (n, seq_len))
        self.prompt_len = int(seq_len * prompt_frac)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        ids = self.ids[i]
        labels = ids.clone()
        labels[: self.prompt_len] = -100          # no loss on the prompt
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}


def main():
    device = "cuda"
    model = AutoModelForCausalLM.from_pretrained(cfg["model_id"], dtype=torch.bfloat16, device_map="cuda")
    model.config.use_cache = False
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})

    lcfg = cfg["lora"]
    peft_config = LoraConfig(r=lcfg["r"], lora_alpha=lcfg["alpha"], lora_dropout=lcfg["dropout"],
                             target_modules=lcfg["targets"], bias="none", task_type="CAUSAL_LM")
    model = get_peft_model(model, peft_config)
    model.print_trainable_parameters()
    model.train()

    n_samples = cfg["micro_batch_size"] * cfg["grad_accum"] * cfg["max_updates"]
    loader = DataLoader(SFTSamples(n_samples, cfg["seq_len"], prompt_frac=cfg["prompt_frac"]),
                        batch_size=cfg["micro_batch_size"], shuffle=True)

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg["lr"], weight_decay=0.0)
    scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=1,
                                                num_training_steps=cfg["max_updates"])

    updates = 0
    t0 = time.time()
    optimizer.zero_grad()
    for micro_step, batch in enumerate(loader):
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(**batch).loss
        (loss / cfg["grad_accum"]).backward()
        if (micro_step + 1) % cfg["grad_accum"] == 0:
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            updates += 1
            print(f"update {updates} loss {loss.item():.3f} ppl {math.exp(min(loss.item(), 20)):.1f} "
                  f"{time.time() - t0:.1f}s")
        if updates >= cfg["max_updates"]:
            break

    print(f"max_memory_allocated {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
