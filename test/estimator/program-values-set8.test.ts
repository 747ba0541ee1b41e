// Where the numbers of a model live in a script: keywords given to a config's from_pretrained, layers dropped from a
// loaded model, constructor options of library models, and values computed from the environment or a class.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { estimateFixture, estimateText } from './helpers';
import { parsePython } from '../../server/src/engine/parser';
import { ProgramModel } from '../../server/src/engine/program/interpreter';

/** A language-model training loop over random token ids, the model built by `build`. */
function lmScript(imports: string, build: string[]): string {
  return [
    'import torch',
    imports,
    ...build,
    'model = model.cuda()',
    'optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)',
    'for step in range(4):',
    '    ids = torch.randint(0, 1000, (4, 256)).cuda()',
    '    loss = model(input_ids=ids, labels=ids).loss',
    '    loss.backward()',
    '    optimizer.step()',
    '    optimizer.zero_grad()',
  ].join('\n');
}

const GPT2_LAYER = 7_087_872;
const GPT2_TOTAL = 124_439_808;

test('AutoConfig.from_pretrained(id, n_layer=..., n_positions=...): the keywords override the checkpoint\'s fields', async () => {
  const given = await estimateText(lmScript('from transformers import AutoConfig, AutoModelForCausalLM', [
    'config = AutoConfig.from_pretrained("gpt2", n_layer=4, n_positions=2048)',
    'model = AutoModelForCausalLM.from_config(config)',
  ]), '/tmp/gpt2_config_keywords.py');
  assert.equal(given.detected.model.source, 'from-config');
  assert.equal(given.detected.parameters, GPT2_TOTAL - 8 * GPT2_LAYER + 1024 * 768);
  // An attribute set afterwards wins over the keyword, as in Python.
  const later = await estimateText(lmScript('from transformers import AutoConfig, AutoModelForCausalLM', [
    'config = AutoConfig.from_pretrained("gpt2", n_layer=4)',
    'config.n_layer = 6',
    'model = AutoModelForCausalLM.from_config(config)',
  ]), '/tmp/gpt2_config_keywords_later.py');
  assert.equal(later.detected.parameters, GPT2_TOTAL - 6 * GPT2_LAYER);
});

/** An image classifier trained on random batches, `build` making `model`. */
function visionScript(build: string[], size = 160): string {
  return [
    'import torch',
    'import torch.nn as nn',
    'from torchvision import models',
    ...build,
    'model = model.cuda()',
    'optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)',
    'for step in range(4):',
    `    x = torch.randn(32, 3, ${size}, ${size}).cuda()`,
    '    y = torch.randint(0, 10, (32,)).cuda()',
    '    loss = nn.functional.cross_entropy(model(x), y)',
    '    optimizer.zero_grad()',
    '    loss.backward()',
    '    optimizer.step()',
  ].join('\n');
}

test('torchvision mobilenet_v2(width_mult=...): channels scaled and rounded to multiples of 8, the last conv widened above 1', async () => {
  const plain = await estimateText(visionScript(['model = models.mobilenet_v2(num_classes=1000)']), '/tmp/mnv2.py');
  assert.equal(plain.detected.parameters, 3_504_872);
  // Module constants computed from one another, as the builder's keywords (torchvision's count for 1.4 and 102 classes).
  const wide = await estimateText(visionScript(['CLASSES = 100 + 2', 'WIDTH = 0.7 * 2', 'model = models.mobilenet_v2(weights=None, num_classes=CLASSES, width_mult=WIDTH)']), '/tmp/mnv2_wide.py');
  assert.equal(wide.detected.parameters, 4_498_662);
  assert.ok(wide.peakAllocated! > plain.peakAllocated!);
  // Narrower than 1: the last conv keeps its 1280 channels.
  const narrow = await estimateText(visionScript(['model = models.mobilenet_v2(num_classes=1000, width_mult=0.5)']), '/tmp/mnv2_narrow.py');
  assert.equal(narrow.detected.parameters, 1_968_680);
});

test('A hub model whose block list is cut down after loading keeps only those blocks; get_input_embeddings() freezes the token table', async () => {
  const build = (cut: string, freeze: string[] = []): string => lmScript('from transformers import AutoModelForCausalLM', [
    'KEEP = 6',
    'model = AutoModelForCausalLM.from_pretrained("gpt2")',
    cut,
    'model.config.n_layer = KEEP',
    ...freeze,
  ]);
  const kept = GPT2_TOTAL - 6 * GPT2_LAYER;
  const sliced = await estimateText(build('model.transformer.h = model.transformer.h[:KEEP]'), '/tmp/gpt2_sliced.py');
  assert.equal(sliced.detected.parameters, kept);
  const wrapped = await estimateText(build('model.transformer.h = torch.nn.ModuleList(model.transformer.h[2:2 + KEEP])'), '/tmp/gpt2_wrapped.py');
  assert.equal(wrapped.detected.parameters, kept);
  // Not a slice of its own blocks (a list the script does not determine): the checkpoint as published.
  const other = await estimateText(build('model.transformer.h = make_blocks()'), '/tmp/gpt2_other.py');
  assert.equal(other.detected.parameters, GPT2_TOTAL);
  // The token table frozen through get_input_embeddings() (tied to the LM head): exactly its share is frozen.
  const frozen = await estimateText(build('model.transformer.h = model.transformer.h[:KEEP]', ['model.get_input_embeddings().weight.requires_grad_(False)']), '/tmp/gpt2_frozen_table.py');
  assert.equal(frozen.detected.parameters, kept);
  assert.equal(frozen.detected.trainableParameters, kept - 50257 * 768);
  assert.ok(frozen.peakAllocated! < sliced.peakAllocated!);
});

test('A long loop that builds a dataset\'s examples and no module stops early, its lists at full length; the rest of the script runs', async () => {
  // 400 examples, each trimmed by a while loop: run in full, they spent the program's whole step budget, and the
  // model, built after them from a class's attributes (`def main(cfg=Settings())`), was never read.
  const result = await estimateFixture('program-values/long_data_loop_class_defaults.py');
  assert.equal(result.detected.model.name, 'bert-base-uncased');
  assert.equal(result.detected.parameters, 109_483_778);
  const tree = await parsePython([
    'import torch',
    'import torch.nn as nn',
    'rows = []',
    'for i in range(300):',
    '    ids = [5] * 200',
    '    while len(ids) > 20:',
    '        ids.pop()',
    '        ids = ids + []',
    '    rows.append({"ids": torch.tensor(ids), "label": i % 2})',
    'n = len(rows)',
    'blocks = []',
    'for i in range(40):',
    '    blocks.append(nn.Linear(8 + i, 8 + i))',
    'widths = len(blocks)',
  ].join('\n'));
  assert.ok(tree);
  try {
    const program = new ProgramModel(tree.rootNode);
    assert.equal(program.incomplete, false);
    const number = (name: string): number | undefined => {
      const value = program.assigned.get(name)?.[0];
      return value?.kind === 'number' ? value.value : undefined;
    };
    assert.equal(number('n'), 300);
    // A loop that makes modules runs every pass.
    assert.equal(number('widths'), 40);
  } finally {
    tree.delete();
  }
});

test('Sizes from the environment: a default built with str.join, split and read back by a comprehension keeps every value', async () => {
  const tree = await parsePython([
    'import os',
    'WIDTH = int(os.environ.get("WIDTH", "192"))',
    'FACTOR = float(os.environ.get("FACTOR", "1.5"))',
    'CARDS = [int(c) for c in os.environ.get("CARDS", ",".join(["1000"] * 10 + ["50"] * 16)).split(",")]',
    'total = sum(CARDS)',
    'offsets = [0] + CARDS[:-1]',
    'hidden = int(WIDTH * FACTOR)',
    'draws = [i * 2 for i in range(100)]',
  ].join('\n'));
  assert.ok(tree);
  try {
    const program = new ProgramModel(tree.rootNode);
    const value = (name: string) => program.assigned.get(name)?.[0];
    assert.deepEqual(value('total')?.kind === 'number' ? value('total') : undefined, { kind: 'number', value: 10 * 1000 + 16 * 50, origin: { line: 4, how: 'literal' } });
    const offsets = value('offsets');
    assert.ok(offsets?.kind === 'list' && offsets.items.length === 26 && offsets.items.every((item) => item.kind === 'number'));
    assert.equal(value('hidden')?.kind === 'number' ? (value('hidden') as { value: number }).value : undefined, 288);
    // A long comprehension (past a config's length) still keeps only its length.
    const draws = value('draws');
    assert.ok(draws?.kind === 'list' && draws.items.length === 100 && draws.items[99]!.kind === 'unknown');
  } finally {
    tree.delete();
  }
});

test('A numpy Generator\'s arrays and np.stack / torch.stack of made arrays give a Dataset\'s sample its sizes', async () => {
  const script = (made: string[]): string => [
    'import numpy as np',
    'import torch',
    'import torch.nn as nn',
    'import torch.nn.functional as F',
    'from torch.utils.data import DataLoader, Dataset',
    'CARDS = [1000] * 4 + [50] * 20',
    'class Rows(Dataset):',
    '    def __init__(self, n):',
    ...made.map((line) => `        ${line}`),
    '    def __len__(self):',
    '        return len(self.y)',
    '    def __getitem__(self, i):',
    '        return torch.from_numpy(self.x_num[i]), torch.from_numpy(self.x_cat[i]).long(), torch.tensor(self.y[i]).long()',
    'class Net(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.emb = nn.Embedding(sum(CARDS), 64)',
    '        self.num = nn.Linear(40, 64)',
    '        self.mix = nn.Linear(64, 64)',
    '        self.head = nn.Linear(64, 3)',
    '    def forward(self, x_num, x_cat):',
    '        tokens = torch.relu(self.mix(self.emb(x_cat)))',
    '        return self.head(tokens.mean(1) + self.num(x_num))',
    'model = Net().cuda()',
    'optimizer = torch.optim.AdamW(model.parameters())',
    'for x_num, x_cat, y in DataLoader(Rows(4096), batch_size=1024):',
    '    loss = F.cross_entropy(model(x_num.cuda(), x_cat.cuda()), y.cuda())',
    '    optimizer.zero_grad()',
    '    loss.backward()',
    '    optimizer.step()',
  ].join('\n');
  const withTorch = await estimateText(script([
    'self.x_num = torch.randn(n, 40)',
    'self.x_cat = torch.randint(0, 50, (n, len(CARDS)))',
    'self.y = torch.randint(0, 3, (n,))',
  ]), '/tmp/rows_torch.py');
  const withNumpy = await estimateText(script([
    'rng = np.random.default_rng(0)',
    'self.x_num = rng.standard_normal((n, 40)).astype(np.float32)',
    'self.x_cat = np.stack([rng.integers(0, c, n) for c in CARDS], axis=1)',
    'self.y = rng.integers(0, 3, n)',
  ]), '/tmp/rows_numpy.py');
  const withStack = await estimateText(script([
    'self.x_num = torch.randn(n, 40)',
    'self.x_cat = torch.stack([torch.randint(0, c, (n,)) for c in CARDS], dim=1)',
    'self.y = torch.randint(0, 3, (n,))',
  ]), '/tmp/rows_stack.py');
  assert.ok(withTorch.peakAllocated! > 0);
  assert.equal(withNumpy.peakAllocated, withTorch.peakAllocated);
  assert.equal(withStack.peakAllocated, withTorch.peakAllocated);
});

test('str() of a pathlib path beside the script names the JSON config it reads: the layers follow its sizes', async () => {
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-str-path-'));
  fs.mkdirSync(path.join(dir, 'configs'));
  fs.writeFileSync(path.join(dir, 'configs', 'net.json'), JSON.stringify({ model: { width: 96, depth: 3, activation: 'GELU' } }));
  const file = path.join(dir, 'train.py');
  const text = [
    'import json',
    'from functools import partial',
    'from pathlib import Path',
    'import torch',
    'import torch.nn as nn',
    'HERE = Path(__file__).resolve().parent',
    'with open(str(HERE / "configs" / "net.json")) as f:',
    '    cfg = json.load(f)["model"]',
    'norm = partial(nn.LayerNorm, eps=1e-6)',
    'act = getattr(nn, cfg["activation"])',
    'class Net(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(cfg["width"], cfg["width"]), act(), norm(cfg["width"])) for _ in range(cfg["depth"])])',
    '    def forward(self, x):',
    '        for block in self.blocks:',
    '            x = block(x)',
    '        return x',
    'model = Net().cuda()',
    'optimizer = torch.optim.Adam(model.parameters())',
    'for step in range(3):',
    '    loss = model(torch.randn(16, 96).cuda()).sum()',
    '    loss.backward()',
    '    optimizer.step()',
    '    optimizer.zero_grad()',
  ].join('\n');
  fs.writeFileSync(file, text);
  try {
    const result = await estimateText(text, file);
    assert.equal(result.detected.model.name, 'Net');
    assert.equal(result.detected.parameters, 3 * (96 * 96 + 96 + 2 * 96));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('A traced nn.MultiheadAttention with dropout keeps the dropped weights and their mask beside the weights', async () => {
  const script = (dropout: number): string => [
    'import torch',
    'import torch.nn as nn',
    'class Block(nn.Module):',
    '    def __init__(self, d, heads):',
    '        super().__init__()',
    '        self.norm = nn.LayerNorm(d)',
    `        self.attn = nn.MultiheadAttention(d, heads, dropout=${dropout}, batch_first=True)`,
    '    def forward(self, x):',
    '        h = self.norm(x)',
    '        return x + self.attn(h, h, h)[0]',
    'class Net(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.blocks = nn.ModuleList([Block(64, 8) for _ in range(2)])',
    '        self.head = nn.Linear(64, 5)',
    '    def forward(self, x):',
    '        for block in self.blocks:',
    '            x = block(x)',
    '        return self.head(x[:, 0])',
    'model = Net().cuda()',
    'optimizer = torch.optim.AdamW(model.parameters())',
    'for step in range(3):',
    '    x = torch.randn(256, 100, 64).cuda()',
    '    y = torch.randint(0, 5, (256,)).cuda()',
    '    loss = nn.functional.cross_entropy(model(x), y)',
    '    optimizer.zero_grad()',
    '    loss.backward()',
    '    optimizer.step()',
  ].join('\n');
  const plain = await estimateText(script(0), '/tmp/mha_plain.py');
  const dropped = await estimateText(script(0.2), '/tmp/mha_dropout.py');
  // Per block: 8 heads x 100 x 100 fp32 weights dropped, and their bool mask (1.25 of the weights' size).
  const extra = dropped.breakdown.activations - plain.breakdown.activations;
  assert.equal(extra, 2 * 256 * 8 * 100 * 100 * 4 * 1.25);
});

test('dataclasses.replace(defaults, batch_size=256) is a copy of the instance with the change, read through its attributes', async () => {
  const result = await estimateFixture(path.join('program-values', 'dataclass_replace_batch.py'));
  assert.equal(result.detected.batchSize?.value, 256);
  // Linear 1024 -> 1024 and 1024 -> 10, with biases: the width read from the copy.
  assert.equal(result.detected.parameters, 1024 * 1024 + 1024 + 1024 * 10 + 10);
});
