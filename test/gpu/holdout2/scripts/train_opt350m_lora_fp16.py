# LoRA on OPT-350m for a domain-adaptation experiment.
# The checkpoint is stored in fp16; we keep it like that and only train the adapters.
import math
import time

import torch
from torch.utils.data import DataLoader, Dataset
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

CFG = {
    "model": "facebook/opt-350m",
    "lora": {"r": 16, "lora_alpha": 32, "lora_dropout": 0.05, "target_modules": ["q_proj", "v_proj"]},
    "batch_size": 8,
    "block_size": 1024,
    "grad_accum": 2,
    "max_steps": 3,
    "lr": 2e-4,
    "warmup": 1,
    "log_every": 1,
}


class Blocks(Dataset):
    def __init__(self, n, block_size, vocab=50272):
        self.data = torch.randint(4, vocab, (n, block_size))

    def __len__(self):
        return self.data.size(0)

    def __getitem__(self, i):
        x = self.data[i]
        return x, x.clone()


def lr_lambda(step):
    if step < CFG["warmup"]:
        return (step + 1) / CFG["warmup"]
    progress = (step - CFG["warmup"]) / max(1, CFG["max_steps"] - CFG["warmup"])
    return 0.5 * (1 + math.cos(math.pi * progress))


base = AutoModelForCausalLM.from_pretrained(CFG["model"])
lcfg = LoraConfig(task_type="CAUSAL_LM", bias="none", **CFG["lora"])
model = get_peft_model(base, lcfg)
model.print_trainable_parameters()
model = model.cuda()
model.train()

ds = Blocks(CFG["batch_size"] * CFG["grad_accum"] * CFG["max_steps"], CFG["block_size"])
dl = DataLoader(ds, batch_size=CFG["batch_size"], shuffle=True)

trainable = [p for p in model.parameters() if p.requires_grad]
opt = torch.optim.AdamW(trainable, lr=CFG["lr"], weight_decay=0.0)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
scaler = torch.amp.GradScaler("cuda", init_scale=2.0 ** 12)

step = 0
t0 = time.time()
for i, (input_ids, labels) in enumerate(dl):
    input_ids, labels = input_ids.cuda(), labels.cuda()
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        out = model(input_ids=input_ids, labels=labels)
        loss = out.loss / CFG["grad_accum"]
    scaler.scale(loss).backward()

    if (i + 1) % CFG["grad_accum"] == 0:
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        sched.step()
        step += 1
        if step % CFG["log_every"] == 0:
            print(f"step {step} loss {loss.item() * CFG['grad_accum']:.3f} scale {scaler.get_scale():.0f} "
                  f"{time.time() - t0:.1f}s")
    if step == CFG["max_steps"]:
        break
