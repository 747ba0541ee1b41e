// Hugging Face models built in the script from DebertaV2Config (DeBERTa-v3's layout) and ElectraConfig (a generator
// and a discriminator trained by one optimizer): the config class is one more source of the catalog's description.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

/** A training loop over random token batches, `models` trained by one AdamW. */
function script(imports: string, build: string[], step: string[], parameters = 'model.parameters()'): string {
  return [
    'import torch',
    imports,
    ...build,
    `optimizer = torch.optim.AdamW(${parameters}, lr=1e-4)`,
    'for step in range(3):',
    '    ids = torch.randint(0, 1000, (8, 128), device="cuda")',
    ...step.map((line) => `    ${line}`),
    '    optimizer.zero_grad()',
    '    loss.backward()',
    '    optimizer.step()',
  ].join('\n');
}

/** A BERT-like post-LN layer's parameters (q, k, v, output, two LayerNorms, the MLP). */
const layer = (h: number, i: number): number => 4 * (h * h + h) + 2 * 2 * h + (h * i + i) + (i * h + h);

const V3_SHAPE = 'relative_attention=True, position_buckets=256, norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type=["p2c", "c2p"], position_biased_input=False';

test('DebertaV2Config in DeBERTa-v3\'s layout: its sizes; the class\'s own layout (absolute positions) is said to be unmodelled', async () => {
  const build = (options: string): string[] => [`config = DebertaV2Config(vocab_size=1000, hidden_size=256, num_hidden_layers=3, num_attention_heads=4, intermediate_size=1024, max_position_embeddings=512, type_vocab_size=0, num_labels=3${options})`,
    'model = DebertaV2ForSequenceClassification(config).cuda()'];
  const imports = 'from transformers import DebertaV2Config, DebertaV2ForSequenceClassification';
  const step = ['loss = model(input_ids=ids, labels=torch.zeros(8, dtype=torch.long, device="cuda")).loss'];
  const v3 = await estimateText(script(imports, build(`, ${V3_SHAPE}`), step), '/tmp/deberta_v3_config.py');
  assert.equal(v3.detected.model.source, 'from-config');
  // Token table and its LayerNorm, 3 layers, 512 relative embeddings and their LayerNorm, pooler, 3-way classifier.
  const h = 256;
  assert.equal(v3.detected.parameters, 1000 * h + 2 * h + 3 * layer(h, 1024) + 512 * h + 2 * h + (h * h + h) + (h * 3 + 3));
  assert.ok(v3.peakAllocated && v3.peakAllocated > 0);
  const v2 = await estimateText(script(imports, build(''), step), '/tmp/deberta_v2_config.py');
  assert.equal(v2.detected.model.source, 'unresolved');
  assert.match(v2.unresolved?.reason ?? '', /DebertaV2Config/);
});

test('ElectraConfig: a generator (tables wider than its layers) and a discriminator trained together, each its own checkpointing', async () => {
  const imports = 'from transformers import ElectraConfig, ElectraForMaskedLM, ElectraForPreTraining';
  const build = [
    'gen_cfg = ElectraConfig(vocab_size=1000, embedding_size=256, hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512, max_position_embeddings=128)',
    'disc_cfg = ElectraConfig(vocab_size=1000, embedding_size=256, hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024, max_position_embeddings=128)',
    'generator = ElectraForMaskedLM(gen_cfg).cuda()',
    'discriminator = ElectraForPreTraining(disc_cfg).cuda()',
  ];
  const step = ['gen = generator(input_ids=ids, labels=ids)',
    'disc = discriminator(input_ids=ids, labels=torch.zeros_like(ids))', 'loss = gen.loss + 50.0 * disc.loss'];
  const params = 'list(generator.parameters()) + list(discriminator.parameters())';
  // Tables (tokens, positions, two types) and their LayerNorm at the embedding width.
  const tables = (e: number): number => (1000 + 128 + 2) * e + 2 * e;
  // The generator: a projection from the tables to its layers, an MLM head back to the tables' width and a bias a token.
  const generator = tables(256) + (256 * 128 + 128) + 2 * layer(128, 512) + (128 * 256 + 256) + 2 * 256 + 1000;
  // The discriminator: tables as wide as its layers (no projection), a dense layer and one logit a token.
  const discriminator = tables(256) + 4 * layer(256, 1024) + (256 * 256 + 256) + (256 + 1);
  const plain = await estimateText(script(imports, build, step, params), '/tmp/electra_pair.py');
  assert.equal(plain.detected.parameters, generator + discriminator);
  assert.ok(plain.assumptions.some((line) => /ElectraForPreTraining.*trained in the same step as ElectraForMaskedLM/.test(line)));
  // Only the discriminator checkpointed: the generator keeps all it did, the discriminator less.
  const checkpointed = await estimateText(script(imports, [...build, 'discriminator.gradient_checkpointing_enable()'], step, params), '/tmp/electra_pair_ckpt.py');
  assert.equal(checkpointed.detected.checkpointing, false);
  assert.ok(checkpointed.peakAllocated! < plain.peakAllocated!);
  const both = await estimateText(script(imports, [...build, 'discriminator.gradient_checkpointing_enable()', 'generator.gradient_checkpointing_enable()'], step, params), '/tmp/electra_pair_both.py');
  assert.ok(both.peakAllocated! < checkpointed.peakAllocated!);
});
