// Configuration values from sources the program model reads the way Python does: a ChainMap of environment
// overrides over defaults (no variable is set as the CLI runs the script), a dict comprehension's `if` clauses, and a
// CSV sweep file read by csv.DictReader / csv.reader (strings, converted by the script's own int() / float()).
// Layer lists built from them are then determined.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parsePython } from '../../server/src/engine/parser';
import { ProgramModel } from '../../server/src/engine/program/interpreter';
import type { Value } from '../../server/src/engine/program/values';
import { estimateText } from './helpers';

async function assigned(source: string, filePath?: string): Promise<{ value: (name: string) => Value | undefined; dispose: () => void }> {
  const tree = await parsePython(source);
  if (!tree) throw new Error('parse failed');
  const model = new ProgramModel(tree.rootNode, filePath ? { filePath } : {});
  return { value: (name) => model.assigned.get(name)?.[0], dispose: () => tree.delete() };
}

function plain(value: Value | undefined): unknown {
  if (value?.kind === 'number' || value?.kind === 'string' || value?.kind === 'bool') return value.value;
  if (value?.kind === 'none') return null;
  if (value?.kind === 'list') return value.items.map(plain);
  if (value?.kind === 'dict') return Object.fromEntries([...value.entries].map(([k, v]) => [k, plain(v)]));
  return value?.kind;
}

test('ChainMap(env, defaults) with env from a comprehension filtered by `in os.environ`: the defaults', async () => {
  const { value, dispose } = await assigned(`
import os
from collections import ChainMap
BASE = {"width": 256, "depth": 6}
env = {k: int(os.environ["NET_" + k.upper()]) for k, v in BASE.items() if "NET_" + k.upper() in os.environ}
chained = ChainMap(env, BASE)
cfg = dict(chained)
first_wins = ChainMap({"depth": 2}, BASE)["depth"]
unset = "HOME_DIR" not in os.environ
nested = {f"{a}{b}": a * b for a in (1, 2) for b in (3, 4) if a * b > 3}
`);
  try {
    assert.deepEqual(plain(value('env')), {});
    assert.deepEqual(plain(value('cfg')), { width: 256, depth: 6 });
    assert.equal(plain(value('first_wins')), 2);
    assert.equal(plain(value('unset')), true);
    assert.deepEqual(plain(value('nested')), { 14: 4, 23: 6, 24: 8 });
  } finally {
    dispose();
  }
});

test('csv.DictReader and csv.reader read the file beside the script: rows of strings, quoted fields kept whole', async () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-csv-'));
  fs.writeFileSync(path.join(folder, 'sweep.csv'), 'name,width,lr\nsmall,64,0.01\n\n"wide, deep",512,"1e-4"\nshort,32\n');
  const { value, dispose } = await assigned(`
import csv, os
with open(os.path.join(os.path.dirname(__file__), "sweep.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
with open("sweep.csv") as f:
    table = list(csv.reader(f))
hp = {k: (float(v) if k == "lr" else v) for k, v in rows[1].items()}
`, path.join(folder, 'train.py'));
  try {
    assert.deepEqual(plain(value('rows')), [{ name: 'small', width: '64', lr: '0.01' }, { name: 'wide, deep', width: '512', lr: '1e-4' }, { name: 'short', width: '32', lr: null }]);
    assert.deepEqual(plain(value('table')), [['name', 'width', 'lr'], ['small', '64', '0.01'], [], ['wide, deep', '512', '1e-4'], ['short', '32']]);
    assert.deepEqual(plain(value('hp')), { name: 'wide, deep', width: '512', lr: 0.0001 });
  } finally {
    dispose();
  }
});

test('a ModuleList whose count and block kinds come from a ChainMap config copied by dict(): the model is read', async () => {
  const script = `
import os
from collections import ChainMap
import torch, torch.nn as nn
DEFAULTS = {"dim": 128, "layers": 6, "wide_every": 3, "batch": 16}
env = {k: type(v)(os.environ["M_" + k.upper()]) for k, v in DEFAULTS.items() if "M_" + k.upper() in os.environ}
C = ChainMap(env, DEFAULTS)

class Block(nn.Module):
    def __init__(self, cfg, wide):
        super().__init__()
        hidden = 4 * cfg["dim"] if wide else cfg["dim"]
        self.fc1 = nn.Linear(cfg["dim"], hidden)
        self.fc2 = nn.Linear(hidden, cfg["dim"])
    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))

class Net(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.blocks = nn.ModuleList([Block(cfg, wide=(i % cfg["wide_every"] == 1)) for i in range(cfg["layers"])])
        self.head = nn.Linear(cfg["dim"], 10)
    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)

cfg = dict(C)
model = Net(cfg).cuda()
opt = torch.optim.AdamW(model.parameters())
for _ in range(3):
    x = torch.randn(cfg["batch"], cfg["dim"], device="cuda")
    loss = model(x).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
`;
  const result = await estimateText(script, '/tmp/oomguard-chainmap-none/train.py');
  assert.ok(!result.unresolved, result.unresolved?.reason);
  const dim = 128;
  const narrow = 2 * (dim * dim + dim);
  const wide = 2 * dim * 4 * dim + 4 * dim + dim;
  assert.equal(result.detected.parameters, 4 * narrow + 2 * wide + dim * 10 + 10);
  assert.equal(result.detected.batchSize.value, 16);
});

test('a ModuleList sized by a CSV sweep row converted with int(): the model is read at that row', async () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-csv-'));
  fs.mkdirSync(path.join(folder, 'configs'));
  fs.writeFileSync(path.join(folder, 'configs', 'grid.csv'), 'run,width,depth,batch\n0,32,2,8\n1,64,5,24\n');
  const script = `
import csv, os
import torch, torch.nn as nn
ROW = int(os.environ.get("GRID_ROW", "1"))
with open(os.path.join(os.path.dirname(__file__), "configs", "grid.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
hp = {k: int(v) for k, v in rows[ROW].items()}

class Net(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x

model = Net(hp["width"], hp["depth"]).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(hp["batch"], hp["width"], device="cuda")).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
`;
  const result = await estimateText(script, path.join(folder, 'train.py'));
  assert.ok(!result.unresolved, result.unresolved?.reason);
  assert.equal(result.detected.parameters, 5 * (64 * 64 + 64));
  assert.equal(result.detected.batchSize.value, 24);
  assert.equal(result.detected.batchSize.how, 'config');
});
