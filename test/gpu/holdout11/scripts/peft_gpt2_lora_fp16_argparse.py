"""LoRA fine-tuning of GPT-2 on instruction data with peft, hand-written loop, fp16 AMP + GradScaler.

    python peft_gpt2_lora_fp16_argparse.py --target-modules c_attn c_proj c_fc --rank 16
"""
import argparse

import torch
from peft import LoraConfig, TaskType, get_peft_model
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM

p = argparse.ArgumentParser()
p.add_argument("--model-name", default="gpt2")
p.add_argument("--target-modules", nargs="+", default=["c_attn", "c_proj", "c_fc"])
p.add_argument("--rank", type=int, default=16)
p.add_argument("--alpha", type=int, default=32)
p.add_argument("--batch-size", type=int, default=16)
p.add_argument("--max-len", type=int, default=1024)
p.add_argument("--prompt-len", type=int, default=256)
p.add_argument("--steps", type=int, default=6)
p.add_argument("--lr", type=float, default=3e-4)
args = p.parse_args()


class InstructionData(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(0, 50257, (args.max_len,))
        labels = ids.clone()
        labels[: args.prompt_len] = -100  # no loss on the prompt
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}


model = AutoModelForCausalLM.from_pretrained(args.model_name)
lora_cfg = LoraConfig(task_type=TaskType.CAUSAL_LM, r=args.rank, lora_alpha=args.alpha, lora_dropout=0.05,
                      target_modules=args.target_modules, fan_in_fan_out=True)
model = get_peft_model(model, lora_cfg)
model.print_trainable_parameters()
model.cuda()

loader = DataLoader(InstructionData(args.batch_size * args.steps), batch_size=args.batch_size, shuffle=True)
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr, weight_decay=0.0)
scaler = torch.amp.GradScaler("cuda")

model.train()
for step, batch in enumerate(loader):
    batch = {k: v.cuda() for k, v in batch.items()}
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(**batch).loss
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step}: loss {loss.item():.4f}")
