// A hub model held by a module of the script (a sentence encoder around AutoModel) and run several times before one
// backward: a triplet's three calls of the wrapper, or a pair encoded inside one call of it. Every run's graph is
// alive when backward starts, so the step keeps that many batches' activations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

/** A pooled sentence encoder around a hub model; its forward runs `body`, the step runs `step`. */
function encoderScript(body: string[], step: string[]): string {
  return [
    'import torch',
    'import torch.nn as nn',
    'import torch.nn.functional as F',
    'from transformers import AutoModel',
    'class Encoder(nn.Module):',
    '    def __init__(self, name):',
    '        super().__init__()',
    '        self.backbone = AutoModel.from_pretrained(name)',
    '    def embed(self, ids):',
    '        return self.backbone(input_ids=ids).last_hidden_state.mean(1)',
    '    def forward(self, a, b=None):',
    ...body.map((line) => `        ${line}`),
    'encoder = Encoder("bert-base-uncased").cuda()',
    'optimizer = torch.optim.AdamW(encoder.parameters(), lr=2e-5)',
    'for step in range(5):',
    '    a = torch.randint(1000, 30000, (24, 160)).cuda()',
    '    p = torch.randint(1000, 30000, (24, 160)).cuda()',
    '    n = torch.randint(1000, 30000, (24, 160)).cuda()',
    ...step.map((line) => `    ${line}`),
    '    optimizer.zero_grad()',
    '    loss.backward()',
    '    optimizer.step()',
  ].join('\n');
}

const ONE_RUN = ['h = self.backbone(input_ids=a).last_hidden_state', 'return h.mean(1)'];

test('A wrapper around a hub model called on anchor, positive and negative before one backward keeps three graphs', async () => {
  const once = await estimateText(encoderScript(ONE_RUN, ['loss = encoder(a).pow(2).mean()']), '/tmp/wrapped_once.py');
  const triplet = await estimateText(encoderScript(ONE_RUN, [
    'za, zp, zn = encoder(a), encoder(p), encoder(n)',
    'loss = F.triplet_margin_loss(za, zp, zn)',
  ]), '/tmp/wrapped_triplet.py');
  assert.equal(once.config.forwardsPerBackward, undefined);
  assert.equal(triplet.config.forwardsPerBackward, 3);
  assert.equal(triplet.detected.parameters, once.detected.parameters);
  // The activations are three batches' (one graph per call), not one.
  const ratio = triplet.breakdown.activations / once.breakdown.activations;
  assert.ok(ratio > 2.9 && ratio < 3.1, `activations x${ratio.toFixed(2)}`);
});

test('A wrapper whose forward runs the hub model twice (a pair), called once before backward, keeps two graphs', async () => {
  const pair = await estimateText(encoderScript([
    'ha = self.backbone(input_ids=a).last_hidden_state.mean(1)',
    'hb = self.backbone(input_ids=b).last_hidden_state.mean(1)',
    'return ha, hb',
  ], ['za, zp = encoder(a, p)', 'loss = (1 - F.cosine_similarity(za, zp)).mean()']), '/tmp/wrapped_pair.py');
  assert.equal(pair.config.forwardsPerBackward, 2);
  // Under no_grad the wrapper's calls build no graph: one forward's activations, whatever the count.
  const frozen = await estimateText(encoderScript(ONE_RUN, [
    'with torch.no_grad():',
    '    zp, zn = encoder(p), encoder(n)',
    'loss = F.triplet_margin_loss(encoder(a), zp, zn)',
  ]), '/tmp/wrapped_no_grad.py');
  assert.equal(frozen.config.forwardsPerBackward, undefined);
});
