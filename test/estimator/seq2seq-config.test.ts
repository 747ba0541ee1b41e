import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { findCatalogModel } from '../../server/src/estimator/catalog/models';
import { countTransformerParameters } from '../../server/src/estimator/transformer';

test('BART and mBART parameter counts: two position tables offset by 2, a LayerNorm on each stack\'s embeddings (mBART: final norms too)', () => {
  assert.equal(countTransformerParameters(findCatalogModel('facebook/bart-base')!.spec).total, 139_420_416);
  assert.equal(countTransformerParameters(findCatalogModel('facebook/bart-large')!.spec).total, 406_291_456);
  assert.equal(countTransformerParameters(findCatalogModel('facebook/mbart-large-cc25')!.spec).total, 610_851_840);
});

/** A small encoder-decoder trained from an explicit config, its collate padding sources and targets to their own lengths. */
function seq2seqScript(configLine: string, modelClass: string): string {
  return [
    'import torch',
    `from transformers import ${configLine.split('(')[0]}, ${modelClass}`,
    'SRC_LEN = 256',
    'max_target_length = 64',
    'max_source_length = SRC_LEN',
    `cfg = ${configLine}`,
    `model = ${modelClass}(cfg).cuda()`,
    'opt = torch.optim.AdamW(model.parameters(), lr=1e-4)',
    'def collate(pairs):',
    '    src = torch.full((len(pairs), max_source_length), 1, dtype=torch.long)',
    '    tgt = torch.full((len(pairs), max_target_length), -100, dtype=torch.long)',
    '    return {"input_ids": src, "labels": tgt}',
    'loader = torch.utils.data.DataLoader(list(range(64)), batch_size=8, collate_fn=collate)',
    'for batch in loader:',
    '    batch = {k: v.cuda() for k, v in batch.items()}',
    '    loss = model(**batch).loss',
    '    opt.zero_grad()',
    '    loss.backward()',
    '    opt.step()',
  ].join('\n');
}

test('an encoder-decoder from an explicit BartConfig / MBartConfig / T5Config: sizes from the config, source and target lengths apart', async () => {
  const bart = await estimateText(seq2seqScript('BartConfig(vocab_size=32000, d_model=512, encoder_layers=3, decoder_layers=2, encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048, max_position_embeddings=512)', 'BartForConditionalGeneration'), '/tmp/bart_config.py');
  assert.equal(bart.detected.model.source, 'from-config');
  const spec = bart.config.model;
  assert.ok(spec.kind === 'transformer' && spec.family === 'bart' && spec.task === 'seq2seq');
  if (spec.kind !== 'transformer') return;
  assert.equal(spec.layers, 3);
  assert.equal(spec.decoderLayers, 2);
  assert.equal(spec.intermediate, 2048);
  assert.equal(spec.attnDropout, false); // BartConfig's default attention_dropout is 0
  // 32000 x 512 shared embedding, two (512 + 2) x 512 position tables, two embedding LayerNorms, 3 + 2 layers.
  const encoderLayer = 4 * (512 * 512 + 512) + 2 * 1024 + (512 * 2048 + 2048) + (2048 * 512 + 512);
  const decoderLayer = encoderLayer + 4 * (512 * 512 + 512) + 1024;
  assert.equal(bart.detected.parameters, 32000 * 512 + 2 * 514 * 512 + 2 * 1024 + 3 * encoderLayer + 2 * decoderLayer);
  assert.equal(bart.detected.seqLen?.value, 256);
  assert.equal(bart.config.targetLen, 64);
  assert.ok(bart.peakAllocated && bart.peakAllocated > 0);

  const mbart = await estimateText(seq2seqScript('MBartConfig(vocab_size=32000, d_model=512, encoder_layers=2, decoder_layers=2, encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048)', 'MBartForConditionalGeneration'), '/tmp/mbart_config.py');
  assert.ok(mbart.config.model.kind === 'transformer' && mbart.config.model.normPlacement === 'pre');

  const t5 = await estimateText(seq2seqScript('T5Config(vocab_size=32128, d_model=512, num_layers=4, num_decoder_layers=2, num_heads=8, d_kv=64, d_ff=2048)', 'T5ForConditionalGeneration'), '/tmp/t5_config.py');
  assert.ok(t5.config.model.kind === 'transformer' && t5.config.model.family === 't5');
  assert.equal(t5.config.targetLen, 64);
});

test('a model built from a config class the estimator does not model says which one', async () => {
  const r = await estimateText(seq2seqScript('LEDConfig(vocab_size=32000, d_model=512)', 'LEDForConditionalGeneration'), '/tmp/led_config.py');
  assert.ok(r.unresolved);
  assert.match(r.unresolved!.reason, /LEDConfig/);
});

test('HfArgumentParser dataclasses: the model id, batch size and length are the fields\' defaults (field(default=...) too)', async () => {
  const text = [
    'from dataclasses import dataclass, field',
    'import torch',
    'from transformers import AutoModelForSequenceClassification, HfArgumentParser',
    '@dataclass',
    'class ModelArgs:',
    '    model_id: str = field(default="distilbert-base-uncased", metadata={"help": "hub id"})',
    '@dataclass',
    'class DataArgs:',
    '    seq_len: int = 96',
    '    batch_size: int = field(default=24)',
    'def run():',
    '    margs, dargs = HfArgumentParser((ModelArgs, DataArgs)).parse_args_into_dataclasses()',
    '    model = AutoModelForSequenceClassification.from_pretrained(margs.model_id, num_labels=3).cuda()',
    '    opt = torch.optim.AdamW(model.parameters(), lr=2e-5)',
    '    for _ in range(3):',
    '        ids = torch.randint(0, 1000, (dargs.batch_size, dargs.seq_len), device="cuda")',
    '        opt.zero_grad()',
    '        model(input_ids=ids, labels=torch.zeros(dargs.batch_size, dtype=torch.long, device="cuda")).loss.backward()',
    '        opt.step()',
    'if __name__ == "__main__":',
    '    run()',
  ].join('\n');
  const r = await estimateText(text, '/tmp/hf_argparser.py');
  assert.equal(r.detected.model.name, 'distilbert-base-uncased');
  assert.equal(r.detected.batchSize?.value, 24);
  assert.equal(r.detected.seqLen?.value, 96);
  // parse_dict: the dict's entries over the defaults.
  const dict = await estimateText(text.replace('.parse_args_into_dataclasses()', '.parse_dict({"batch_size": 12})'), '/tmp/hf_argparser_dict.py');
  assert.equal(dict.detected.batchSize?.value, 12);
});

test('autocast\'s dtype as written, where the program model did not run the function around it', async () => {
  const text = [
    'import torch',
    'from transformers import AutoModelForSequenceClassification',
    'def evaluate(model, batches):',
    '    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):',
    '        return sum(model(input_ids=b).logits.sum().item() for b in batches)',
    'model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased").cuda()',
    'opt = torch.optim.AdamW(model.parameters(), lr=2e-5)',
    'for step in range(3):',
    '    ids = torch.randint(0, 1000, (16, 128), device="cuda")',
    '    opt.zero_grad()',
    '    with torch.autocast("cuda", dtype=torch.bfloat16):',
    '        loss = model(input_ids=ids).logits.float().mean()',
    '    loss.backward()',
    '    opt.step()',
    'print(f"eval {evaluate(model, [ids]):.3f}")',
  ].join('\n');
  const r = await estimateText(text, '/tmp/autocast_text.py');
  assert.equal(r.detected.precision.value, 'bf16-amp');
});
