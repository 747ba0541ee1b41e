// The program-model mechanisms the held-out sets pointed at (test/gpu/holdout, test/gpu/refactor-holdout): frozen
// layers, autocast's fp32 operations, autocast's weight cache in inference, checkpointing plans, and traces that
// cannot be sized. Each test states a figure that follows from the script, computed by hand in the comment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const mlp = (freeze: string) => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(1024, 1024), nn.ReLU()) for _ in range(4)])
        self.head = nn.Linear(1024, 10)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)

model = Net().cuda()
${freeze}
optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-3)
loader = DataLoader(TensorDataset(torch.randn(4096, 1024), torch.randint(0, 10, (4096,))), batch_size=256)
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
`;

test('frozen layers: requires_grad_(False) on a slice of a ModuleList is counted, and frozen layers keep no activations', async () => {
  // A large batch, so that backward (where activations count) is the peak phase.
  const frozen = await estimateText(mlp('for block in model.blocks[:2]:\n    block.requires_grad_(False)'), 'frozen.py', { batchSize: 16384 });
  const whole = await estimateText(mlp(''), 'whole.py', { batchSize: 16384 });
  // Each block: 1024 x 1024 + 1024 = 1,049,600 parameters; the head 10,250. Two blocks frozen.
  assert.equal(frozen.detected.parameters, 4 * 1_049_600 + 10_250);
  assert.equal(frozen.detected.trainableParameters, 2 * 1_049_600 + 10_250);
  assert.ok(!frozen.assumptions.some((a) => /assumed \d+% of them frozen/.test(a)), 'the frozen share is counted, not assumed');
  // The frozen blocks see the data, which has no history: they record nothing, so fewer activations are kept.
  assert.ok(frozen.breakdown!.activations < whole.breakdown!.activations, `${frozen.breakdown!.activations} < ${whole.breakdown!.activations}`);
});

test('freezing through parameters(): p.requires_grad = False freezes that module', async () => {
  const r = await estimateText(mlp('for p in model.blocks[0].parameters():\n    p.requires_grad = False'), 'frozen2.py');
  assert.equal(r.detected.trainableParameters, 3 * 1_049_600 + 10_250);
});

const convNet = (norm: string) => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), ${norm}, nn.SiLU(),
            nn.Conv2d(64, 64, 3, padding=1), ${norm}, nn.SiLU(),
        )
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))

model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(1024, 3, 64, 64), torch.randint(0, 10, (1024,))), batch_size=64)
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
`;

test('autocast: GroupNorm runs in fp32 (keeping an fp32 copy of its input), BatchNorm in half precision', async () => {
  const group = await estimateText(convNet('nn.GroupNorm(8, 64)'), 'gn.py');
  const batch = await estimateText(convNet('nn.BatchNorm2d(64)'), 'bn.py');
  const groupFp32 = await estimateText(convNet('nn.GroupNorm(8, 64)'), 'gn.py', { precision: 'fp32' });
  const batchFp32 = await estimateText(convNet('nn.BatchNorm2d(64)'), 'bn.py', { precision: 'fp32' });
  // The same layers in fp32 keep the same elements; under autocast GroupNorm keeps fp32 copies and fp32 outputs.
  assert.equal(groupFp32.breakdown!.activations, batchFp32.breakdown!.activations);
  assert.ok(group.breakdown!.activations > batch.breakdown!.activations * 1.3, `${group.breakdown!.activations} vs ${batch.breakdown!.activations}`);
  assert.ok(group.breakdown!.activations < groupFp32.breakdown!.activations);
});

test('autocast in no-grad inference keeps a half copy of the weights that still require grad', async () => {
  const script = (extra: string) => `import torch
import torchvision
model = torchvision.models.vit_b_16().cuda().eval()
${extra}
with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
    for _ in range(4):
        logits = model(torch.randn(64, 3, 224, 224, device="cuda"))
`;
  const cached = await estimateText(script(''), 'infer.py');
  const plain = await estimateText(script(''), 'infer.py', { precision: 'fp32' });
  assert.equal(cached.detected.mode.value, 'infer-no-grad');
  // ViT-B/16 casts its linear and convolution weights: at least 2 bytes x 85M of its 86.6M parameters.
  assert.ok(cached.breakdown!.weights - plain.breakdown!.weights >= 2 * 85e6, `${cached.breakdown!.weights - plain.breakdown!.weights}`);
});

test('a model whose sizes cannot be computed gives a number or says it is unresolved, never NaN', async () => {
  const r = await estimateText(`import torch
import torch.nn as nn
class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.n_head = config.n_head
    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        return q.view(B, T, self.n_head, C // self.n_head)
model = Attention(cfg).cuda()
with torch.no_grad():
    for x in data:
        out = model(x)
`, 'nan.py');
  assert.ok(r.detected.model === null || r.peakAllocated === null || Number.isFinite(r.peakAllocated), String(r.peakAllocated));
});
