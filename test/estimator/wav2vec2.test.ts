// Wav2Vec2 / HuBERT (speech.ts): the feature encoder's frames and parameters, a config from code or config.json,
// the waveform's length from the Dataset, and the frozen feature encoder's forward peak, against the H200
// (test/gpu/holdout4/results/h200.json: wav2vec2-base CTC, 16 x 12 s, fp16 autocast, checkpointing, 4,485 MiB).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { estimateText, MIB, repoRoot } from './helpers';
import { findCatalogModel } from '../../server/src/estimator/catalog/models';
import { countTransformerParameters } from '../../server/src/estimator/transformer';
import { audioFrames, featureEncoderParameters, WAV2VEC2_FEATURE_ENCODER } from '../../server/src/estimator/speech';
import { stepTensors } from '../../server/src/explain/script';

const ctcScript = (configArgs: string, extra: string[] = []): string => [
  'import torch',
  'from torch.utils.data import DataLoader, Dataset',
  'from transformers import Wav2Vec2Config, Wav2Vec2ForCTC',
  'SAMPLES = 16000 * 12',
  'class Speech(Dataset):',
  '    def __len__(self):',
  '        return 64',
  '    def __getitem__(self, i):',
  '        return torch.randn(SAMPLES), torch.randint(1, 32, (160,))',
  `config = Wav2Vec2Config(${configArgs})`,
  'model = Wav2Vec2ForCTC(config)',
  ...extra,
  'model.cuda().train()',
  'opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)',
  'scaler = torch.amp.GradScaler("cuda")',
  'for audio, labels in DataLoader(Speech(), batch_size=16):',
  '    audio, labels = audio.cuda(), labels.cuda()',
  '    with torch.autocast("cuda", dtype=torch.float16):',
  '        loss = model(input_values=audio, labels=labels).loss',
  '    opt.zero_grad()',
  '    scaler.scale(loss).backward()',
  '    scaler.step(opt)',
  '    scaler.update()',
].join('\n');

test('the feature encoder: 320 samples a frame, 4.2M parameters in wav2vec2-base', () => {
  assert.equal(audioFrames(WAV2VEC2_FEATURE_ENCODER, 192_000), 599);
  assert.equal(audioFrames(WAV2VEC2_FEATURE_ENCODER, 16_000), 49);
  // Measured: 94,396,320 parameters, 90,195,872 trainable with the feature encoder frozen.
  assert.equal(featureEncoderParameters(WAV2VEC2_FEATURE_ENCODER), 94_396_320 - 90_195_872);
  assert.equal(countTransformerParameters(findCatalogModel('facebook/wav2vec2-base-960h')!.spec).total, 94_396_320);
});

test('Wav2Vec2ForCTC from a config, frozen feature encoder, 12 s utterances: the waveform sets the frames, within 5% of the H200', async () => {
  const result = await estimateText(ctcScript('vocab_size=32, mask_time_prob=0.05, pad_token_id=0', ['model.freeze_feature_encoder()', 'model.gradient_checkpointing_enable()']), '/tmp/w2v.py');
  assert.equal(result.unresolved, undefined);
  assert.equal(result.detected.parameters, 94_396_320);
  assert.equal(result.detected.trainableParameters, 90_195_872);
  assert.equal(result.config.seqLen, 192_000);
  assert.ok(result.assumptions.some((a) => /feature encoder is frozen/.test(a)), result.assumptions.join('\n'));
  const measured = 4_703_139_840;
  assert.ok(Math.abs(result.peakAllocated / measured - 1) < 0.05, `${result.peakAllocated / MIB} MiB`);
  assert.equal(result.peakPhase, 'forward');
  // `oomguard explain` lists the feature encoder's first output, the step's largest tensor (16 x 512 x 38,399 in fp16).
  const largest = stepTensors(result.config).reduce((a, b) => (b.bytes > a.bytes ? b : a));
  assert.equal(largest.bytes, 16 * 512 * 38_399 * 2);
});

test('a trained feature encoder keeps its convolutions\' tensors; a stable-layer-norm config counts a LayerNorm per convolution', async () => {
  const frozen = await estimateText(ctcScript('vocab_size=32', ['model.freeze_feature_encoder()']), '/tmp/w2v_frozen.py');
  const trained = await estimateText(ctcScript('vocab_size=32'), '/tmp/w2v_trained.py');
  assert.ok(trained.peakAllocated > 1.5 * frozen.peakAllocated, `${trained.peakAllocated / MIB} vs ${frozen.peakAllocated / MIB} MiB`);
  const stable = await estimateText(ctcScript('vocab_size=32, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096, feat_extract_norm="layer", do_stable_layer_norm=True, conv_bias=True'), '/tmp/w2v_large.py');
  assert.equal(stable.detected.parameters, countTransformerParameters(findCatalogModel('facebook/wav2vec2-large-960h-lv60-self')!.spec).total);
});

test('a waveform model whose input length the script does not give says what it assumed', async () => {
  const text = [
    'import torch',
    'from transformers import Wav2Vec2ForCTC',
    'model = Wav2Vec2ForCTC.from_pretrained("facebook/wav2vec2-base-960h").cuda()',
    'opt = torch.optim.AdamW(model.parameters(), lr=1e-4)',
    'for batch in loader:',
    '    loss = model(input_values=batch["input_values"].cuda(), labels=batch["labels"].cuda()).loss',
    '    loss.backward()',
    '    opt.step()',
    '    opt.zero_grad()',
  ].join('\n');
  const result = await estimateText(text, '/tmp/w2v_hub.py');
  assert.equal(result.unresolved, undefined);
  assert.equal(result.config.seqLen, 160_000);
  assert.ok(result.assumptions.some((a) => /waveform's length was not found/.test(a)));
});

test('a (batch, samples) waveform made in the step gives the samples; labels of a few tokens are not the sequence', async () => {
  const text = [
    'import torch',
    'from transformers import Wav2Vec2Config, Wav2Vec2ForCTC',
    'model = Wav2Vec2ForCTC(Wav2Vec2Config(vocab_size=32)).cuda()',
    'opt = torch.optim.AdamW(model.parameters())',
    'for step in range(10):',
    '    labels = torch.randint(1, 32, (4, 20), device="cuda")',
    '    loss = model(input_values=torch.randn(4, 16000, device="cuda"), labels=labels).loss',
    '    loss.backward()',
    '    opt.step()',
    '    opt.zero_grad()',
  ].join('\n');
  const result = await estimateText(text, '/tmp/ctc.py');
  assert.equal(result.unresolved, undefined);
  assert.equal(result.config.seqLen, 16_000);
  assert.equal(result.config.batchSize, 4);
});

test('every Wav2Vec2 / HuBERT configuration measured on the H200 (probe_wav2vec2.py): within 8%, parameters exact', async () => {
  const data = JSON.parse(fs.readFileSync(path.join(repoRoot, 'test', 'gpu', 'estimator', 'results', 'wav2vec2.json'), 'utf8')) as {
    params: Record<string, number>;
    runs: Array<{ label: string; family: string; batch: number; samples: number; freeze: boolean; ckpt: boolean; amp: string | null; mode: string; cfg: Record<string, unknown>; peak: number; params: number }>;
  };
  // The public checkpoints' configs, counted by transformers.
  assert.equal(countTransformerParameters(findCatalogModel('facebook/wav2vec2-large-960h')!.spec).total, data.params['wav2vec2-large-960h']);
  assert.equal(countTransformerParameters(findCatalogModel('facebook/wav2vec2-large-960h-lv60-self')!.spec).total, data.params['wav2vec2-large-960h-lv60-self']);
  assert.equal(countTransformerParameters(findCatalogModel('facebook/hubert-large-ls960-ft')!.spec).total, data.params['hubert-large-ls960-ft']);
  for (const r of data.runs) {
    const value = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : v === true ? 'True' : v === false ? 'False' : String(v));
    const args = Object.entries({ vocab_size: 32, mask_time_prob: 0.05, pad_token_id: 0, ...r.cfg }).map(([k, v]) => `${k}=${value(v)}`).join(', ');
    const cls = r.family === 'hubert' ? 'Hubert' : 'Wav2Vec2';
    const autocast = r.amp ? `    with torch.autocast("cuda", dtype=torch.${r.amp === 'fp16' ? 'float16' : 'bfloat16'}):` : '    if True:';
    const lines = ['import torch', `from transformers import ${cls}Config, ${cls}ForCTC`, `model = ${cls}ForCTC(${cls}Config(${args}))`,
      ...(r.freeze ? ['model.freeze_feature_encoder()'] : []), ...(r.ckpt && r.mode === 'train' ? ['model.gradient_checkpointing_enable()'] : []), 'model.cuda()'];
    if (r.mode === 'train') {
      lines.push('opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)', 'for step in range(3):',
        `    audio = torch.randn(${r.batch}, ${r.samples}, device="cuda")`, `    labels = torch.randint(1, 32, (${r.batch}, 160), device="cuda")`,
        autocast, '        loss = model(input_values=audio, labels=labels).loss', '    opt.zero_grad()', '    loss.backward()', '    opt.step()');
    } else {
      lines.push('model.eval()', 'with torch.no_grad():', '  for step in range(3):', `    audio = torch.randn(${r.batch}, ${r.samples}, device="cuda")`,
        autocast, '        logits = model(input_values=audio).logits');
    }
    const result = await estimateText(lines.join('\n'), '/tmp/probe.py');
    assert.equal(result.detected.parameters, r.params, r.label);
    const error = result.peakAllocated / (r.peak * MIB) - 1;
    assert.ok(Math.abs(error) < 0.08, `${r.label}: ${(error * 100).toFixed(1)}%`);
  }
});
