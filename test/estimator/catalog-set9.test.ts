import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { estimateFixture, estimateText, fixturesDir } from './helpers';
import { findVisionModel } from '../../server/src/estimator/catalog/vision';
import { findCatalogModel } from '../../server/src/estimator/catalog/models';
import { countTransformerParameters, transformerActivations, type ActivationContext } from '../../server/src/estimator/transformer';

function readFixture(name: string): string {
  return fs.readFileSync(path.join(fixturesDir, name), 'utf8');
}

function parametersOf(name: string, numClasses = 1000, imageSize?: number): number | undefined {
  const model = findVisionModel(name);
  const spec = model?.build(imageSize ?? model.imageSize ?? 224, numClasses);
  return spec === undefined ? undefined : spec.kind === 'layers' ? spec.parameters : countTransformerParameters(spec).total;
}

/** Within timm's published figure, given to 0.01M. */
function nearPublished(count: number | undefined, millions: number): boolean {
  return count !== undefined && Math.abs(count / 1e6 - millions) <= 0.005;
}

test('DeiT-III, distilled DeiT and the small ConvNeXts by name: timm\'s published counts (results-imagenet.csv)', () => {
  const published: Array<[string, number]> = [
    ['deit3_small_patch16_224', 22.06], ['deit3_small_patch16_384', 22.21], ['deit3_medium_patch16_224', 38.85],
    ['deit3_base_patch16_224', 86.59], ['deit3_base_patch16_384', 86.88], ['deit3_large_patch16_224', 304.37],
    ['deit3_large_patch16_384', 304.76], ['deit3_huge_patch14_224', 632.13],
    ['deit_tiny_distilled_patch16_224', 5.91], ['deit_small_distilled_patch16_224', 22.44], ['deit_base_distilled_patch16_224', 87.34],
    ['deit_base_distilled_patch16_384', 87.63],
    ['convnext_atto', 3.70], ['convnext_femto', 5.22], ['convnext_pico', 9.05], ['convnext_nano', 15.59], ['convnext_xlarge', 350.20],
    ['convnextv2_huge', 660.29],
  ];
  for (const [name, millions] of published) {
    const count = parametersOf(name);
    assert.ok(nearPublished(count, millions), `${name}: ${count} vs ${millions}M`);
  }
  // Names timm does not register are not guessed at.
  assert.equal(findVisionModel('deit_large_patch16_224'), undefined);
  assert.equal(findVisionModel('deit3_tiny_patch16_224'), undefined);
  assert.equal(findVisionModel('deit3_small_distilled_patch16_224'), undefined);
});

test('a DeiT-III\'s position table covers the patches alone; its blocks keep each branch\'s output for the layer scale', () => {
  const deit3 = findVisionModel('deit3_small_patch16_224')!.build(224, 1000);
  const deit = findVisionModel('deit_small_patch16_224')!.build(224, 1000);
  assert.ok(deit3.kind === 'transformer' && deit.kind === 'transformer');
  if (deit3.kind !== 'transformer' || deit.kind !== 'transformer') return;
  // Two gains of 384 per block (12 blocks) more, the class token's position row (384) less.
  assert.equal(countTransformerParameters(deit3).total - countTransformerParameters(deit).total, 12 * 2 * 384 - 384);
  const ctx: ActivationContext = { mode: 'amp', training: true, attention: 'sdpa', batch: 8, seqLen: 0, imageSize: 224, frozenBase: false, loraTargets: new Set() };
  // Each block's two products keep a half (autocast) tensor of 197 x 384 per image.
  assert.equal(transformerActivations(deit3, ctx, false).saved - transformerActivations(deit, ctx, false).saved, 12 * 8 * 197 * 2 * 2 * 384);
});

test('timm\'s img_size= builds the position table for that size', async () => {
  const text = readFixture('catalog-set9/deit3_refit_larger_images.py');
  const r = await estimateText(text, path.join(fixturesDir, 'catalog-set9/deit3_refit_larger_images.py'));
  // deit3_medium with 50 classes at 320 px: 400 patches' positions where 224 px has 196.
  const at224 = parametersOf('deit3_medium_patch16_224', 50)!;
  assert.equal(r.detected.parameters, at224 + (400 - 196) * 512);
  assert.equal(r.detected.parameters, 38_849_512 - 512 * 1000 - 1000 + 512 * 50 + 50 + (400 - 196) * 512);
});

test('a training function run again on larger images with a smaller batch (a notebook\'s later cells): the estimate is that run\'s', async () => {
  const file = path.join(fixturesDir, 'catalog-set9/deit3_refit_larger_images.py');
  const text = readFixture('catalog-set9/deit3_refit_larger_images.py');
  const r = await estimateText(text, file);
  assert.equal(r.detected.batchSize?.value, 24);
  assert.equal(r.detected.imageSize?.value, 320);
  assert.ok(r.assumptions.some((a) => a.includes('40 images of 224x224')), r.assumptions.join('\n'));
  // Without the second run, the first run's batches and model are the estimate's.
  const once = await estimateText(text.slice(0, text.indexOf('del net, opt')), file);
  assert.equal(once.detected.batchSize?.value, 40);
  assert.equal(once.detected.imageSize?.value, 224);
  assert.equal(once.detected.parameters, parametersOf('deit3_medium_patch16_224', 50));
  // A second run on fewer pixels (32 images of 160 px) leaves the first run's figures.
  const smaller = await estimateText(text.replace('img_size=320', 'img_size=160').replace('loader_for(320, 24)', 'loader_for(160, 32)'), file);
  assert.equal(smaller.detected.batchSize?.value, 40);
  assert.equal(smaller.detected.imageSize?.value, 224);
  assert.ok(r.peakAllocated! > once.peakAllocated!);
});

test('a small timm ConvNeXt named by an argparse default is resolved, its head sized by the class count', async () => {
  const r = await estimateFixture('catalog-set9/convnext_atto_from_choices.py');
  assert.equal(r.detected.model.name, 'convnext_atto');
  assert.equal(r.detected.model.source, 'timm');
  // 320 features into the 10-way head in place of the 1,000-way one.
  assert.equal(r.detected.parameters, parametersOf('convnext_atto')! - 320 * 1000 - 1000 + 320 * 10 + 10);
});

/** ALBERT's parameters from its sizes: factorised embeddings, `stored` layers, the masked-LM head. */
function albertParameters(vocab: number, e: number, h: number, i: number, stored: number): number {
  const embeddings = vocab * e + 512 * e + 2 * e + 2 * e;
  const mapping = e * h + h;
  const layer = 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h) + 2 * h;
  const head = h * e + e + 2 * e + vocab;
  return embeddings + mapping + stored * layer + head;
}

test('ALBERT checkpoints: published counts of the base model (pooler, no head)', () => {
  const base = findCatalogModel('albert-base-v2')!;
  assert.equal(countTransformerParameters({ ...base.spec, task: 'base' }).total, 11_683_584);
  assert.equal(countTransformerParameters({ ...findCatalogModel('albert-xxlarge-v2')!.spec, task: 'base' }).total, 222_595_584);
  // AlbertForMaskedLM on albert-base-v2: no pooler, the 768 -> 128 transform, its LayerNorm and the decoder's bias.
  assert.equal(countTransformerParameters(base.spec).total, albertParameters(30000, 128, 768, 3072, 1));
});

test('AlbertConfig(**dict): parameters of the stored layer groups, activations of every application', async () => {
  const text = readFixture('catalog-set9/albert_shared_from_dict.py');
  const file = path.join(fixturesDir, 'catalog-set9/albert_shared_from_dict.py');
  const r = await estimateText(text, file);
  assert.equal(r.detected.model.source, 'from-config');
  assert.equal(r.detected.parameters, albertParameters(32000, 64, 512, 2048, 2));
  // Twice the applications of the same two groups: the same parameters, and the layers' activations twice over.
  const deeper = await estimateText(text.replace('num_hidden_layers=6', 'num_hidden_layers=12'), file);
  assert.equal(deeper.detected.parameters, r.detected.parameters);
  assert.ok(deeper.breakdown!.activations > 1.5 * r.breakdown!.activations, `${deeper.breakdown!.activations} vs ${r.breakdown!.activations}`);
  // One group stores one layer.
  const oneGroup = await estimateText(text.replace('num_hidden_groups=2', 'num_hidden_groups=1'), file);
  assert.equal(oneGroup.detected.parameters, albertParameters(32000, 64, 512, 2048, 1));
});

test('AlbertConfig(**json.load(handle)) from a JSON file next to the script', async () => {
  const r = await estimateFixture('catalog-set9/albert_json/pretrain_from_json.py');
  assert.equal(r.detected.parameters, albertParameters(30000, 96, 384, 1536, 1));
  assert.equal(r.detected.seqLen?.value, 128);
});

test('mT5: the checkpoints\' published counts, MT5Config\'s sizes with the head tied as transformers 5 ties it', async () => {
  for (const [id, published] of [['google/mt5-small', 300_176_768], ['google/mt5-base', 582_401_280], ['google/mt5-large', 1_229_581_312]] as const) {
    const entry = findCatalogModel(id)!;
    assert.equal(entry.headTiedOnLoad, true);
    assert.equal(countTransformerParameters(entry.spec).total + entry.spec.vocab * entry.spec.hidden, published);
  }
  const r = await estimateFixture('catalog-set9/mt5_config_bf16.py');
  assert.equal(r.detected.model.source, 'from-config');
  // d_model 256, 4 heads of 32, gated-GELU MLP of 640, 4 encoder and 2 decoder layers, one shared 250,112-row table.
  const attention = 4 * 256 * 128;
  const mlp = 2 * 256 * 640 + 640 * 256;
  const encoder = 4 * (attention + mlp + 2 * 256);
  const decoder = 2 * (2 * attention + mlp + 3 * 256);
  assert.equal(r.detected.parameters, 250112 * 256 + encoder + decoder + 2 * (32 * 4 + 256));
});

test('T5 on half weights without autocast keeps half log-probabilities (its loss reads the logits as they are)', () => {
  const spec = { ...findCatalogModel('google/mt5-small')!.spec, task: 'seq2seq' as const };
  const ctx: ActivationContext = { mode: 'half', training: true, attention: 'sdpa', batch: 4, seqLen: 256, targetLen: 64, imageSize: 224,
    frozenBase: false, loraTargets: new Set(), autocast: false };
  const plain = transformerActivations(spec, ctx, false);
  const underAutocast = transformerActivations(spec, { ...ctx, autocast: true }, false);
  // fp32 under autocast, half without: 2 bytes per logit less, saved; the fp32 copy of the logits is not made.
  assert.equal(underAutocast.saved - plain.saved, 4 * 64 * 250112 * 2);
  assert.equal(plain.forwardTransient, 0);
});
