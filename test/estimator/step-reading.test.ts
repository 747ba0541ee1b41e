// What one step does, read from the script: several forwards before one backward, a library model frozen block by
// block, gradients zeroed in place, generate() with its KV cache. Each test builds its own small script.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { findCatalogModel } from '../../server/src/estimator/catalog/models';
import { countTransformerParameters } from '../../server/src/estimator/transformer';

const siamese = (step: string) => `import torch
import torch.nn as nn
import torch.nn.functional as F

class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc = nn.Linear(64, 32)

    def forward(self, x):
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        return self.fc(x.mean((2, 3)))

tower = Tower().cuda()
opt = torch.optim.SGD(tower.parameters(), lr=0.01)
for it in range(10):
    left = torch.randn(64, 3, 96, 96, device="cuda")
    right = torch.randn(64, 3, 96, 96, device="cuda")
${step}
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('two forwards of one model before one backward keep both graphs: twice the activations of one', async () => {
  const twice = await estimateText(siamese('    za = tower(left)\n    zb = tower(right)\n    loss = (za - zb).pow(2).mean()'), 'siamese.py');
  const once = await estimateText(siamese('    za = tower(left)\n    loss = za.pow(2).mean()'), 'single.py');
  assert.equal(twice.config.forwardsPerBackward, 2);
  assert.equal(once.config.forwardsPerBackward, undefined);
  assert.equal(twice.detected.batchSize.value, 64, 'the batch is still the one each call gets');
  // Activations scale with the samples the graphs hold: 2 x 64 against 64 (what the loss keeps is tiny here).
  const ratio = twice.breakdown.activations / once.breakdown.activations;
  assert.ok(ratio > 1.9 && ratio < 2.1, `ratio ${ratio}`);
});

test('a forward under no_grad before the backward (a target network) builds no graph and is not counted', async () => {
  const r = await estimateText(siamese('    with torch.no_grad():\n        zb = tower(right)\n    za = tower(left)\n    loss = (za - zb).pow(2).mean()'), 'target.py');
  assert.equal(r.config.forwardsPerBackward, undefined);
});

const frozenBert = (freeze: string, zero = 'opt.zero_grad()') => `import torch
from transformers import AutoModelForSequenceClassification

model = AutoModelForSequenceClassification.from_pretrained("roberta-base", num_labels=3).cuda()
${freeze}
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-5)
for step in range(10):
    ids = torch.randint(0, 50000, (16, 256), device="cuda")
    out = model(input_ids=ids, labels=torch.zeros(16, dtype=torch.long, device="cuda"))
    out.loss.backward()
    opt.step()
    ${zero}
`;

test('a Hub model frozen by submodule path: embeddings plus the first blocks are counted, and those blocks keep nothing', async () => {
  const spec = findCatalogModel('roberta-base')!.spec;
  const count = countTransformerParameters({ ...spec, task: 'seq-cls', numLabels: 3 });
  const frozen = await estimateText(frozenBert([
    'for p in model.roberta.embeddings.parameters():',
    '    p.requires_grad = False',
    'for block in model.roberta.encoder.layer[:6]:',
    '    block.requires_grad_(False)',
  ].join('\n')), 'frozen-hub.py');
  const whole = await estimateText(frozenBert(''), 'whole-hub.py');
  assert.ok(!frozen.assumptions.some((a) => /assumed \d+% of them frozen/.test(a)), 'the frozen share is counted, not assumed');
  // Embeddings: the tables plus their LayerNorm (2 x hidden); six blocks of perLayer each.
  const expected = count.total - (count.embedding + 2 * spec.hidden) - 6 * count.perLayer;
  assert.ok(Math.abs(frozen.detected.trainableParameters - expected) <= 1, `${frozen.detected.trainableParameters} vs ${expected}`);
  assert.equal(frozen.config.frozenLowerLayers, 6);
  // Six of twelve blocks record nothing: about half the activations of the whole model (the head's are small).
  const ratio = frozen.breakdown.activations / whole.breakdown.activations;
  assert.ok(ratio > 0.45 && ratio < 0.55, `ratio ${ratio}`);
});

test('blocks frozen while the embeddings train still see inputs with history: not counted as keeping nothing', async () => {
  const r = await estimateText(frozenBert('for block in model.roberta.encoder.layer[:4]:\n    block.requires_grad_(False)'), 'frozen-mid.py');
  assert.equal(r.config.frozenLowerLayers, undefined);
  assert.ok(r.config.frozenFraction! > 0 && r.config.frozenFraction! < 0.5);
});

test('zero_grad(set_to_none=False) keeps the gradients allocated through the next forward', async () => {
  const kept = await estimateText(frozenBert('', 'opt.zero_grad(set_to_none=False)'), 'kept.py');
  const freed = await estimateText(frozenBert(''), 'freed.py');
  assert.equal(kept.config.gradsKeptAcrossSteps, true);
  assert.equal(freed.config.gradsKeptAcrossSteps, false);
});

const generation = (call: string) => `import torch
from transformers import AutoModelForCausalLM

lm = AutoModelForCausalLM.from_pretrained("gpt2", dtype=torch.float16).cuda().eval()
with torch.no_grad():
    for round in range(3):
        prompts = torch.randint(0, 50000, (32, 256), device="cuda")
        tokens = ${call}
        print(tokens.shape)
`;

test('generate(): the KV cache grows to the prompt plus the new tokens, and only the last position has logits', async () => {
  const r = await estimateText(generation('lm.generate(prompts, max_new_tokens=129, do_sample=False)'), 'gen.py');
  assert.equal(r.config.generateNewTokens, 129);
  assert.equal(r.detected.mode.value, 'infer-no-grad');
  // GPT-2: 12 layers, 12 heads of 64. Keys and values in fp16 for 32 prompts of 256 + 128 fed positions: 12 layers
  // plus one layer being concatenated anew, and the last position's logits (fp16 and their fp32 copy).
  const kv = 13 * 2 * 32 * 384 * 12 * 64 * 2;
  const logits = 32 * 50257 * (2 + 4);
  assert.ok(r.breakdown.activations >= kv + logits, `${r.breakdown.activations} >= ${kv + logits}`);
  // Not the logits of every position of the prompt (32 x 256 x 50257 x 2 bytes = 823 MB alone).
  assert.ok(r.breakdown.activations < kv + logits + 600e6, `${r.breakdown.activations}`);
  const longer = await estimateText(generation('lm.generate(prompts, max_length=512)'), 'gen2.py');
  assert.equal(longer.config.generateNewTokens, 256, 'max_length counts the prompt');
  assert.ok(longer.breakdown.activations > r.breakdown.activations);
});
