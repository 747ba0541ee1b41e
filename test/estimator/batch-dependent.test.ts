// A traced net whose forward does not all grow with the batch: a mixture of experts whose (experts, capacity,
// width) buffers are sized by a capacity the script computes once from its configured batch. Tracing one sample and
// multiplying by the batch counts those buffers once per sample; forward is traced for the batch it is estimated at.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { layerNetAt } from '../../server/src/estimator/model';
import type { LayerNetSpec } from '../../server/src/estimator/types';
import { estimateFixture, estimateText } from './helpers';

const MOE = 'batch-dependent/top1_experts_capacity.py';
// The fixture's sizes.
const [VOCAB, WIDTH, HIDDEN, EXPERTS, SEQ, BATCH] = [4096, 256, 1024, 8, 128, 16];
const CAPACITY = Math.ceil(1.5 * BATCH * SEQ / EXPERTS);

test('expert buffers sized by a capacity from the configured batch are kept once a step, not once a sample', async () => {
  const r = await estimateFixture(MOE);
  assert.equal(r.config.batchSize, BATCH);
  const at = (batch: number): LayerNetSpec => r.config.rebuildAt!(SEQ, batch);
  const total = (batch: number): number => at(batch).savedElementsPerSample * batch;
  assert.ok(at(1).batchDependent);
  const perSample = total(2) - total(1);
  // What forward keeps is affine in the batch: the expert side (the gathered input and the output, the hidden
  // layer before and after its GELU) once, the tokens' side (dispatch and combine, per token) per sample; and the
  // balancing loss's `.pow(2)` keeps its base, the router probabilities' mean over tokens (EXPERTS values), once.
  assert.equal(total(1) - perSample, 2 * EXPERTS * CAPACITY * (WIDTH + HIDDEN) + EXPERTS);
  assert.equal(total(BATCH), total(1) + (BATCH - 1) * perSample);
  // The estimate is the net traced for the script's batch.
  const net = layerNetAt(r.config.model as LayerNetSpec, r.config);
  assert.deepEqual(net.batchDependent, { batch: BATCH });
  assert.equal(net.savedElementsPerSample, total(BATCH) / BATCH);
});

test('a forward that returns its loss (and an auxiliary one) instead of the logits: the loss is sized by the logits it reads', async () => {
  const r = await estimateFixture(MOE);
  const net = layerNetAt(r.config.model as LayerNetSpec, r.config);
  assert.equal(net.outputElementsPerSample, SEQ * VOCAB);
  // What forward returns is two scalars a batch (`x.new_zeros(())`-like losses), not a logits-sized tensor.
  assert.ok(net.returnedOutputElementsPerSample !== undefined && net.returnedOutputElementsPerSample <= 1);
  // The largest batch is searched with the figures traced at the script's batch: it exists and grows with the GPU.
  const largest = (gpu: string): number | null | undefined => r.fits.find((fit) => fit.gpu === gpu)?.maxBatchSize;
  assert.ok((largest('RTX 4090') ?? 0) > 0);
  assert.ok((largest('H200') ?? 0) > (largest('RTX 4090') ?? 0));
});

/** A word-level LSTM language model fed time-first (T, B) token ids, with a recurrent state carried across steps. */
const timeFirstLstm = `import torch
import torch.nn as nn
import torch.nn.functional as F

class LM(nn.Module):
    def __init__(self, vocab, width, layers):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.rnn = nn.LSTM(width, width, layers)
        self.attn = nn.MultiheadAttention(width, 4)
        self.out = nn.Linear(width, vocab)

    def forward(self, ids, state):
        x = self.embed(ids)
        y, state = self.rnn(x, state)
        y = y + self.attn(y, y, y)[0]
        return self.out(y), state

model = LM(10000, 512, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
state = (torch.zeros(2, 32, 512).cuda(), torch.zeros(2, 32, 512).cuda())
for step in range(10):
    ids = torch.randint(0, 10000, (70, 32)).cuda()
    targets = torch.randint(0, 10000, (70, 32)).cuda()
    logits, state = model(ids, state)
    state = tuple(s.detach() for s in state)
    loss = F.cross_entropy(logits.view(-1, 10000), targets.view(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
`;

test('nets whose every tensor grows with the batch are traced once a sample: recurrent, attention and library parts', async () => {
  for (const fixture of ['custom_lstm.py', 'custom_encoder.py', 'custom_cnn.py', 'library-parts/resnet50_children_head.py', 'library-parts/timm_features_only_seg.py']) {
    const r = await estimateFixture(fixture);
    assert.equal(r.config.model.kind, 'layers', fixture);
    assert.equal((r.config.model as LayerNetSpec).batchDependent, undefined, fixture);
  }
  const lstm = await estimateText(timeFirstLstm, '/tmp/time_first_lstm.py');
  const spec = lstm.config.model as LayerNetSpec;
  assert.equal(spec.batchDependent, undefined);
  // Traced for two samples on the batch axis of (T, B) ids it keeps twice what it keeps for one: a rebuild for another
  // batch is the net traced once.
  assert.equal(lstm.config.rebuildAt!(spec.input.kind === 'tokens' ? spec.input.seqLen : 0, 2), spec);
});
