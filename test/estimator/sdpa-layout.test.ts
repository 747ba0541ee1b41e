// scaled_dot_product_attention's fused kernels write their output as batch x tokens x heads x head_dim and return it
// transposed to batch x heads x tokens x head_dim: transposing it back gives a contiguous tensor, and
// `.contiguous()` copies nothing (measured on the H200, test/gpu/estimator/results/compile_saved.json: a GPT block
// keeps 16 token-wide tensors, the attention output once).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const gpt = (merge: string) => `import torch
import torch.nn as nn
import torch.nn.functional as F

D, H, T, LAYERS, BATCH = 256, 4, 512, 4, 8

class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D, bias=False)
        self.proj = nn.Linear(D, D, bias=False)
    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)
        q = q.view(B, T, H, C // H).transpose(1, 2)
        k = k.view(B, T, H, C // H).transpose(1, 2)
        v = v.view(B, T, H, C // H).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(${merge})

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.attn = Attention()
    def forward(self, x):
        return x + self.attn(self.ln(x))

class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(1000, D)
        self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
        self.head = nn.Linear(D, 1000)
    def forward(self, idx):
        return self.head(self.blocks(self.tok(idx)))

model = LM().cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(5):
    idx = torch.randint(0, 1000, (BATCH, T), device="cuda")
    loss = F.cross_entropy(model(idx).view(-1, 1000), idx.view(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('the attention output transposed back is contiguous: .contiguous() keeps no copy of it, a clone does', async () => {
  const merged = await estimateText(gpt('y.transpose(1, 2).contiguous().view(B, T, C)'), 'merged.py');
  const cloned = await estimateText(gpt('y.transpose(1, 2).contiguous().view(B, T, C).clone()'), 'cloned.py');
  // The clone is one more token-wide tensor per block, kept by the projection beside the attention's own output.
  const perBlock = 8 * 512 * 256 * 4;
  const extra = cloned.breakdown.activations - merged.breakdown.activations;
  assert.ok(Math.abs(extra - 4 * perBlock) < 0.25 * 4 * perBlock, `${extra} vs ${4 * perBlock}`);
});
