// torch.compile(model) is the model for the program model (its calls trace its forward), and where forward computes
// the cross-entropy itself, inductor fuses the loss with its backward: no logits-sized gradients beside what forward
// kept (measured on the H200, test/gpu/estimator/results/compile_saved.json: eager and compiled with the loss outside
// forward, backward peaks 2 x the logits over what forward kept; compiled with the loss inside, 0.1 x).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const lm = (compile: boolean, lossInside: boolean) => `import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, D, T, BATCH = 16384, 256, 512, 16

class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))
        self.head = nn.Linear(D, VOCAB, bias=False)
    def forward(self, idx, targets=None):
        logits = self.head(self.mlp(self.tok(idx)))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))
        return logits, loss

model = LM().cuda()
opt = torch.optim.AdamW(model.parameters())
${compile ? 'model = torch.compile(model)' : ''}
for step in range(5):
    x = torch.randint(0, VOCAB, (BATCH, T), device="cuda")
    y = torch.randint(0, VOCAB, (BATCH, T), device="cuda")
    ${lossInside ? '_, loss = model(x, y)' : 'logits, _ = model(x)\n    loss = F.cross_entropy(logits.view(-1, VOCAB), y.view(-1))'}
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
`;

test("a compiled model whose forward computes the loss peaks without the loss's logits-sized gradients; with the loss outside forward, as eager", async () => {
  const logits = 16 * 512 * 16384 * 4;
  const eager = await estimateText(lm(false, true), 'eager.py');
  const compiled = await estimateText(lm(true, true), 'compiled.py');
  const outside = await estimateText(lm(true, false), 'outside.py');
  const eagerOutside = await estimateText(lm(false, false), 'eager_outside.py');
  assert.equal(compiled.config.compiled, true);
  // The compiled model's call reaches its forward with the targets, as the eager one's does.
  assert.equal(compiled.detected.parameters, eager.detected.parameters);
  const saved = eager.peakAllocated - compiled.peakAllocated;
  assert.ok(saved > 0.9 * logits && saved < 2.1 * logits, `${saved} vs logits ${logits}`);
  assert.equal(outside.peakAllocated, eagerOutside.peakAllocated, `${outside.peakAllocated} vs ${eagerOutside.peakAllocated}`);
});
