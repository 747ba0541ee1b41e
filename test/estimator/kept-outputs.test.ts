// Outputs a batch loop keeps without a graph: predictions appended under no_grad (or detached) to a list on the GPU
// for a metric after the loop. No rule reports them, yet they are memory that grows with the batches; where the
// script fixes how many batches the loop runs, the estimate says what the loop holds at its end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runEstimate } from '../../server/src/cli/estimate';
import { keptOutputLeaks } from '../../server/src/estimator/growth';
import { estimateText } from './helpers';

const CLASSES = 21;
const SIZE = 64;
const EVAL_BS = 16;
/** One eval batch's softmax map: 16 x 21 x 64 x 64 fp32. */
const MAP_BYTES = EVAL_BS * CLASSES * SIZE * SIZE * 4;

const segmentation = (evaluate: string, datasetLength = 'EVAL_BS * 10') => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

NUM_CLASSES = ${CLASSES}
CROP = ${SIZE}
EVAL_BS = ${EVAL_BS}
EVAL_BATCHES = 6

class Crops(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, CROP, CROP), torch.randint(0, NUM_CLASSES, (CROP, CROP))

model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, NUM_CLASSES, 1)).cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
train_loader = DataLoader(Crops(64), batch_size=8, shuffle=True)
val_loader = DataLoader(Crops(${datasetLength}), batch_size=EVAL_BS)
for img, mask in train_loader:
    loss = nn.functional.cross_entropy(model(img.cuda()), mask.cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()

${evaluate}

evaluate(model, val_loader, EVAL_BATCHES)
`;

const keepsProbs = `@torch.no_grad()
def evaluate(model, loader, max_batches):
    kept = []
    for i, (img, mask) in enumerate(loader):
        if i == max_batches:
            break
        probs = model(img.cuda()).softmax(dim=1)
        kept.append(probs)
    probs = torch.cat(kept)
    return probs.argmax(1)`;

test('predictions appended under no_grad are kept per batch: the loop breaks at a count, and the list is concatenated after it', async () => {
  const r = await estimateText(segmentation(keepsProbs), 'eval_keep.py');
  assert.deepEqual(r.config.keptOutputs, [{ line: 36, batchSize: EVAL_BS, batches: 6, concatenated: true }]);
  // The eval loader's own batch (16, not the training loader's 8), at the detected image size.
  assert.deepEqual(keptOutputLeaks(r.config), [{ line: 36, bytes: MAP_BYTES, batches: 6, copies: 2 }]);
});

test('without a break the loop runs the dataset: its __len__ over the batch size, rounded up', async () => {
  const r = await estimateText(segmentation(keepsProbs.replace(/        if i == max_batches:\n            break\n/, ''), 'EVAL_BS * 4 + 3'), 'eval_all.py');
  assert.equal(r.config.keptOutputs?.[0]?.batches, 5);
});

test('the break and the dataset both fix it: the smaller count wins', async () => {
  const r = await estimateText(segmentation(keepsProbs, 'EVAL_BS * 3'), 'eval_short.py');
  assert.equal(r.config.keptOutputs?.[0]?.batches, 3);
});

test('a detached output outside no_grad is kept as well (no rule reports it: it holds no graph)', async () => {
  const detached = keepsProbs.replace('@torch.no_grad()\n', '').replace('model(img.cuda()).softmax(dim=1)', 'model(img.cuda()).detach()');
  const r = await estimateText(segmentation(detached), 'eval_detached.py');
  assert.equal(r.config.keptOutputs?.length, 1);
});

test('what leaves the GPU, changes size, is rebuilt every batch or still holds a graph is not kept here', async () => {
  const variants: Record<string, string> = {
    cpu: keepsProbs.replace('kept.append(probs)', 'kept.append(probs.cpu())'),
    argmax: keepsProbs.replace('kept.append(probs)', 'kept.append(probs.argmax(1))'),
    rebound: keepsProbs.replace('        kept.append(probs)', '        kept = []\n        kept.append(probs)'),
    // With a graph it is OOM101's (and OOM104's) leak, sized by the rules.
    graph: keepsProbs.replace('@torch.no_grad()\n', ''),
  };
  for (const [name, evaluate] of Object.entries(variants)) {
    const r = await estimateText(segmentation(evaluate), `eval_${name}.py`);
    assert.equal(r.config.keptOutputs, undefined, name);
  }
});

test('oomguard estimate --json: growth carries the batches the script fixes and what the loop holds at its end', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-kept-'));
  const script = path.join(dir, 'eval_keep.py');
  fs.writeFileSync(script, segmentation(keepsProbs));
  let stdout = '';
  const code = await runEstimate([script, '--gpu', 'RTX 4090', '--json'], { stdout: (s) => { stdout += s; }, stderr: () => undefined });
  assert.equal(code, 0);
  const json = JSON.parse(stdout) as { growth?: { bytesPerBatch: number; line: number; batchesUntilFull: number; batches?: number; keptAfterBatches?: number } };
  assert.ok(json.growth, 'no growth');
  assert.equal(json.growth.line, 37);
  assert.equal(json.growth.bytesPerBatch, MAP_BYTES);
  assert.equal(json.growth.batches, 6);
  // Six maps, and the concatenated copy of them beside the list.
  assert.equal(json.growth.keptAfterBatches, 2 * 6 * MAP_BYTES);
  let text = '';
  await runEstimate([script, '--gpu', 'RTX 4090'], { stdout: (s) => { text += s; }, stderr: () => undefined });
  assert.match(text, /The loop runs 6 batches: at its end it holds 0\.06 GiB/);
});
