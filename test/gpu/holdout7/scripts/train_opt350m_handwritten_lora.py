"""Instruction-tune facebook/opt-350m with LoRA adapters written by hand (no peft).

The checkpoint loads in its stored fp16; every q_proj / v_proj Linear is swapped (setattr) for a
LoRALinear that keeps the frozen base layer and adds two small fp32 matrices A (r x in) and B (out x r).
Training runs under fp16 autocast with a GradScaler; only the adapters reach the optimizer.
"""
import math
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM

MODEL_NAME = os.environ.get("MODEL_NAME", "facebook/opt-350m")
LORA_R = 16
LORA_ALPHA = 32
LORA_DROPOUT = 0.05
TARGETS = ("q_proj", "v_proj")
BATCH_SIZE = 24
MAX_LEN = 512
STEPS = 6


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: int, dropout: float):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, device=base.weight.device))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, device=base.weight.device))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.scaling = alpha / r
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.base(x) + (self.dropout(x) @ self.lora_A.t() @ self.lora_B.t()) * self.scaling


def inject_lora(model, targets, **kw):
    replaced = 0
    for name, module in list(model.named_modules()):
        for t in targets:
            child = getattr(module, t, None)
            if isinstance(child, nn.Linear):
                setattr(module, t, LoRALinear(child, **kw))
                replaced += 1
    return replaced


class SFTData(Dataset):
    def __init__(self, n, vocab):
        self.ids = torch.randint(3, vocab, (n, MAX_LEN))
        self.prompt_len = torch.randint(32, 200, (n,))

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        ids = self.ids[i]
        labels = ids.clone()
        labels[: self.prompt_len[i]] = -100   # no loss on the prompt
        return ids, torch.ones_like(ids), labels


model = AutoModelForCausalLM.from_pretrained(MODEL_NAME)
for p in model.parameters():
    p.requires_grad_(False)
n = inject_lora(model, TARGETS, r=LORA_R, alpha=LORA_ALPHA, dropout=LORA_DROPOUT)
model.cuda()
model.config.use_cache = False
trainable = [p for p in model.parameters() if p.requires_grad]
print(f"replaced {n} linears, trainable {sum(p.numel() for p in trainable):,} / {sum(p.numel() for p in model.parameters()):,}")
print("base dtype", next(model.parameters()).dtype)

optimizer = torch.optim.AdamW(trainable, lr=2e-4, weight_decay=0.0)
scaler = torch.amp.GradScaler("cuda")
loader = DataLoader(SFTData(BATCH_SIZE * STEPS, model.config.vocab_size), batch_size=BATCH_SIZE, shuffle=True)

model.train()
for step, (ids, mask, labels) in enumerate(loader):
    ids, mask, labels = ids.cuda(), mask.cuda(), labels.cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        out = model(input_ids=ids, attention_mask=mask, labels=labels)
    scaler.scale(out.loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(trainable, 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step}: loss {out.loss.item():.4f}")
