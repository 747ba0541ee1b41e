// A forward that gives checkpoint() only some of the blocks the plan would cut: an encoder's blocks checkpointed, a
// decoder of blocks of its own beside them run normally (a UNETR-like net: transformer encoder, conv decoder). The
// decoder's blocks keep what they save; only the encoder's keep no more than their inputs.
// Figures are worked by hand from the fixture's layers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const script = (useCheckpoint: boolean) => `import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


class Up(nn.Module):
    def __init__(self, dim, width):
        super().__init__()
        self.fc = nn.Linear(dim, width)
        self.act = nn.Tanh()

    def forward(self, x):
        return self.act(self.fc(x))


class EncoderDecoder(nn.Module):
    def __init__(self, dim=64, depth=4, use_ckpt=True):
        super().__init__()
        self.use_ckpt = use_ckpt
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.up1 = Up(dim, 1024)
        self.up2 = Up(1024, 2048)
        self.head = nn.Linear(2048, 10)

    def forward(self, x):
        for blk in self.blocks:
            if self.use_ckpt and self.training:
                x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return self.head(self.up2(self.up1(x)))


model = EncoderDecoder(use_ckpt=${useCheckpoint ? 'True' : 'False'}).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(256, 64, device="cuda")
    loss = nn.functional.cross_entropy(model(x), torch.randint(0, 10, (256,), device="cuda"))
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('checkpointing only some blocks: the blocks forward gives checkpoint() are cut, the others keep what they save', async () => {
  const r = await estimateText(script(true), 'ckpt_subset.py');
  assert.equal(r.detected.checkpointing, true);
  const spec = r.config.rebuildAt!(1) as LayerNetSpec;
  // Only the four encoder blocks are cut, each keeping its 64-wide input; fc1's input (64, but the first block's is
  // the step's own input) and ReLU's output (256) are what each saves.
  assert.deepEqual(spec.blockInputElements, [64, 64, 64, 64]);
  assert.deepEqual(spec.blockSavedElements, [256, 320, 320, 320]);
  // The decoder is no block: up1 keeps its Linear's input (64) and tanh's output (1024), up2 its input (1024, the
  // same tensor) and tanh's output (2048), which the head keeps too.
  const outside = spec.savedElementsPerSample - spec.blockSavedElements.reduce((x, y) => x + y, 0);
  assert.ok(outside >= 64 + 1024 + 2048, `outside the blocks: ${outside}`);
});

test('checkpointing only some blocks: the decoder\'s activations count in full, as without checkpointing', async () => {
  const cut = await estimateText(script(true), 'ckpt_subset.py');
  const plain = await estimateText(script(false), 'ckpt_plain.py');
  // The decoder's 256 x (64 + 1024 + 2048) fp32 elements (3.2 MB) stay kept, checkpointed or not.
  assert.ok(cut.breakdown.activations >= 256 * (64 + 1024 + 2048) * 4, `activations ${cut.breakdown.activations}`);
  // What the encoder's blocks save (256 rows x 1216 elements x 4 bytes) is all that checkpointing can drop.
  assert.ok(plain.breakdown.activations - cut.breakdown.activations <= 256 * 1216 * 4,
    `activations ${cut.breakdown.activations} checkpointed, ${plain.breakdown.activations} without`);
});
