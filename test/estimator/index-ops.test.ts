// Picking tokens by an index tensor: a forward that keeps a random quarter of its tokens (argsort of noise, then
// gather) runs the layers after it on that quarter, not on all of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const script = (pick: string) => `import torch
import torch.nn as nn

class Encoder(nn.Module):
    def __init__(self, dim=384, depth=6, tokens=256):
        super().__init__()
        self.embed = nn.Linear(48, dim)
        self.pos = nn.Parameter(torch.zeros(1, tokens, dim))
        self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(dim, 6, 4 * dim, batch_first=True) for _ in range(depth)])
        self.head = nn.Linear(dim, 48)

    def keep_some(self, x, ratio):
        n, length, d = x.shape
        keep = int(length * (1 - ratio))
${pick}

    def forward(self, patches):
        x = self.embed(patches) + self.pos
        x = self.keep_some(x, 0.75)
        for block in self.blocks:
            x = block(x)
        return self.head(x)

model = Encoder().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(5):
    patches = torch.randn(128, 256, 48, device="cuda")
    loss = model(patches).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('gather by the first quarter of an argsort keeps a quarter of the tokens for the layers after it', async () => {
  const gathered = await estimateText(script(`        order = torch.argsort(torch.rand(n, length, device=x.device), dim=1)
        ids = order[:, :keep]
        return torch.gather(x, 1, ids.unsqueeze(-1).repeat(1, 1, d))`), 'gather.py');
  const all = await estimateText(script('        return x'), 'all.py');
  const sliced = await estimateText(script('        return x[:, :keep]'), 'slice.py');
  // The gathered tokens cost what a plain slice of the same length costs, and far less than all of them.
  const ratio = gathered.breakdown.activations / sliced.breakdown.activations;
  assert.ok(ratio > 0.9 && ratio < 1.15, `gathered / sliced ${ratio}`);
  assert.ok(gathered.breakdown.activations < 0.5 * all.breakdown.activations, `${gathered.breakdown.activations} vs ${all.breakdown.activations}`);
});
