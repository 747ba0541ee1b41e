import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

torch.set_float32_matmul_precision("high")   # TF32 matmuls; weights and activations stay fp32

vocab_size = 32000
block_size = 1024
n_layer = 8
n_head = 12
n_embd = 768
dropout = 0.0
batch_size = 12
learning_rate = 6e-4
max_iters = 8
warmup_iters = 2
compile_model = True


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.c_proj = nn.Linear(n_embd, n_embd, bias=False)
        self.n_head = n_head
        self.dropout = dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd, bias=False)
        self.c_proj = nn.Linear(4 * n_embd, n_embd, bias=False)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd, bias=False)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln_2 = nn.LayerNorm(n_embd, bias=False)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_layer, n_head, n_embd, dropout):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd, bias=False)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)   # untied
        self.apply(self._init)

    def _init(self, m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, idx, targets=None):
        t = idx.size(1)
        pos = torch.arange(t, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.h:
            x = blk(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


class TokenStream(Dataset):
    def __init__(self, n_tokens, block_size):
        self.data = torch.randint(0, vocab_size, (n_tokens,))
        self.block_size = block_size

    def __len__(self):
        return len(self.data) // (self.block_size + 1)

    def __getitem__(self, i):
        chunk = self.data[i * (self.block_size + 1):(i + 1) * (self.block_size + 1)]
        return chunk[:-1], chunk[1:]


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / warmup_iters
    return learning_rate * 0.5 * (1 + math.cos(math.pi * (it - warmup_iters) / (max_iters - warmup_iters)))


model = GPT(vocab_size, block_size, n_layer, n_head, n_embd, dropout).cuda()
print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters")
decay = [p for p in model.parameters() if p.dim() >= 2]
no_decay = [p for p in model.parameters() if p.dim() < 2]
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                              lr=learning_rate, betas=(0.9, 0.95), fused=True)
if compile_model:
    print("compiling...")
    model = torch.compile(model)

loader = DataLoader(TokenStream((max_iters + 1) * batch_size * (block_size + 1), block_size),
                    batch_size=batch_size, shuffle=True, drop_last=True)
it = 0
t0 = time.time()
for X, Y in loader:
    if it >= max_iters:
        break
    X, Y = X.cuda(non_blocking=True), Y.cuda(non_blocking=True)
    for g in optimizer.param_groups:
        g["lr"] = get_lr(it)
    _, loss = model(X, Y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    print(f"iter {it}: loss {loss.item():.4f}, {(time.time() - t0) * 1000:.0f}ms")
    t0 = time.time()
    it += 1

print(f"peak memory {torch.cuda.max_memory_allocated() / 1e9:.2f} GB")
