"""Full fine-tune of Qwen2.5-0.5B with bf16 weights and a hand-kept fp32 master copy.

The model stays in bf16 (its stored dtype; no autocast). AdamW updates fp32 master tensors; after each step the
master values are copied back into the bf16 parameters. This is the "mixed precision without autocast" recipe.
"""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM

model_id = "Qwen/Qwen2.5-0.5B"
batch_size = 6
seq_len = 1024
num_steps = 4
lr = 1e-5

model = AutoModelForCausalLM.from_pretrained(model_id)
model.to("cuda")
model.train()
model.config.use_cache = False
print("weights:", next(model.parameters()).dtype)

params = [p for p in model.parameters() if p.requires_grad]
master = [p.detach().clone().float().requires_grad_(True) for p in params]
optimizer = torch.optim.AdamW(master, lr=lr, weight_decay=0.0)


class Chat(Dataset):
    def __init__(self, n, vocab):
        self.x = torch.randint(0, vocab, (n, seq_len))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i]


loader = DataLoader(Chat(batch_size * num_steps, model.config.vocab_size), batch_size=batch_size, shuffle=True)

for step, ids in enumerate(loader):
    ids = ids.cuda()
    out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    # move bf16 grads into the fp32 master and step there
    for p, m in zip(params, master):
        m.grad = p.grad.float()
        p.grad = None
    torch.nn.utils.clip_grad_norm_(master, 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    with torch.no_grad():
        for p, m in zip(params, master):
            p.copy_(m)
    print(f"step {step} loss {out.loss.item():.4f}")
