"""LoRA instruction tuning of Pythia-410M.

The checkpoint is stored in fp16 and is loaded as such (no dtype argument); LoRA adapters train under fp16
autocast with a GradScaler. Gradient accumulation: ACCUM micro-batches per update.
"""
import argparse
import math

import torch
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="EleutherAI/pythia-410m")
parser.add_argument("--seq-len", type=int, default=1024)
parser.add_argument("--micro-bs", type=int, default=8)
parser.add_argument("--accum", type=int, default=2)
parser.add_argument("--updates", type=int, default=3)
parser.add_argument("--lora-r", type=int, default=16)
parser.add_argument("--lr", type=float, default=2e-4)
args, _ = parser.parse_known_args()

ACCUM = args.accum


class SyntheticInstructions(Dataset):
    def __init__(self, n, seq_len, vocab=50277):
        self.n, self.seq_len, self.vocab = n, seq_len, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(0, self.vocab, (self.seq_len,))
        labels = ids.clone()
        labels[: self.seq_len // 4] = -100          # no loss on the prompt part
        return ids, labels


model = AutoModelForCausalLM.from_pretrained(args.model)
lora_cfg = LoraConfig(r=args.lora_r, lora_alpha=2 * args.lora_r, lora_dropout=0.05,
                      target_modules=["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
                      task_type="CAUSAL_LM")
model = get_peft_model(model, lora_cfg)
model.print_trainable_parameters()
model.cuda()

params = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
scheduler = torch.optim.lr_scheduler.LambdaLR(
    optimizer, lambda u: 0.5 * (1.0 + math.cos(math.pi * u / args.updates)))
scaler = torch.amp.GradScaler("cuda")

loader = DataLoader(SyntheticInstructions(args.micro_bs * ACCUM * args.updates, args.seq_len),
                    batch_size=args.micro_bs, shuffle=True)

model.train()
micro = 0
for input_ids, labels in loader:
    input_ids, labels = input_ids.cuda(), labels.cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(input_ids=input_ids, labels=labels).loss / ACCUM
    scaler.scale(loss).backward()
    micro += 1
    if micro % ACCUM:
        continue
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    scaler.step(optimizer)
    scaler.update()
    scheduler.step()
    optimizer.zero_grad()
    print(f"update {micro // ACCUM}: loss {loss.item() * ACCUM:.4f} scale {scaler.get_scale():.0f}")

print("max_memory_allocated: %.2f GiB" % (torch.cuda.max_memory_allocated() / 2**30))
