"""Continue pre-training a GPT-2 medium-sized model (config built in code) on packed 1024-token blocks.

Gradient checkpointing is switched on through the HF API; bf16 autocast over fp32 weights; fused AdamW.
"""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import GPT2Config, GPT2LMHeadModel, get_cosine_schedule_with_warmup

BLOCK = 1024
BATCH = 16
STEPS = 5

config = GPT2Config(
    vocab_size=50257,
    n_positions=1024,
    n_embd=1024,
    n_layer=24,
    n_head=16,
    resid_pdrop=0.0,
    embd_pdrop=0.0,
    attn_pdrop=0.0,
    use_cache=False,
)
model = GPT2LMHeadModel(config)
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
model.to("cuda")
model.train()
print(f"{model.num_parameters() / 1e6:.1f}M parameters")


class PackedTokens(Dataset):
    def __init__(self, n_blocks):
        self.data = torch.randint(0, config.vocab_size, (n_blocks, BLOCK))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return {"input_ids": self.data[i], "labels": self.data[i]}


loader = DataLoader(PackedTokens(BATCH * STEPS), batch_size=BATCH, shuffle=True, drop_last=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=1, num_training_steps=STEPS)

for step, batch in enumerate(loader):
    batch = {k: v.cuda() for k, v in batch.items()}
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(**batch).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step} loss {loss.item():.3f} lr {scheduler.get_last_lr()[0]:.2e}")
