// Where the numbers of a model live in a script: keywords given to a config's from_pretrained, layers dropped from a
// loaded model, constructor options of library models, and values computed from the environment or a class.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

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
