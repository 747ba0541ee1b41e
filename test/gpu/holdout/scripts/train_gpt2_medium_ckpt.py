# GPT-2 medium (355M) from a config object, fp32, activation checkpointing, fused AdamW
import time

import torch
from transformers import AutoModelForCausalLM, GPT2Config

MICRO_BATCH = 8
SEQ_LEN = 1024
MAX_STEPS = 5
LR = 1.5e-4

config = GPT2Config(
    n_layer=24,
    n_head=16,
    n_embd=1024,
    n_positions=1024,
    vocab_size=50257,
    resid_pdrop=0.1,
    embd_pdrop=0.1,
    attn_pdrop=0.1,
    use_cache=False,
)
model = AutoModelForCausalLM.from_config(config)
model.gradient_checkpointing_enable()
model.cuda()

optimizer = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=0.1, fused=True)


def batches():
    while True:
        x = torch.randint(0, config.vocab_size, (MICRO_BATCH, SEQ_LEN))
        yield x.cuda(non_blocking=True)


data = batches()
model.train()
step = 0
t0 = time.time()
while step < MAX_STEPS:
    input_ids = next(data)
    loss = model(input_ids=input_ids, labels=input_ids).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    step += 1
    if step % 1 == 0:
        print(f"step {step}/{MAX_STEPS} loss {loss.item():.3f} elapsed {time.time() - t0:.1f}s")
