import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

/** Inference without no_grad, the forward written in a function that returns `returned`. */
function embedScript(returned: string): string {
  return [
    'import torch',
    'from transformers import AutoModel',
    'model = AutoModel.from_pretrained("bert-base-uncased").to(torch.bfloat16).cuda().eval()',
    'def encode(ids):',
    '    hidden = model(input_ids=ids).last_hidden_state',
    '    pooled = hidden.mean(1)',
    `    return ${returned}`,
    'out = []',
    'for _ in range(4):',
    '    ids = torch.randint(0, 30000, (32, 256), device="cuda")',
    '    out.append(encode(ids))',
  ].join('\n');
}

test('inference with grad in a function that returns only detached values: one graph at a time, not two', async () => {
  const freed = await estimateText(embedScript('pooled.detach().cpu()'), '/tmp/embed_detached.py');
  const kept = await estimateText(embedScript('pooled.cpu()'), '/tmp/embed_kept.py');
  assert.equal(freed.detected.mode.value, 'infer-grad');
  assert.equal(freed.config.graphFreedOnReturn, true);
  // .cpu() alone keeps the tensor's grad_fn, so the graph outlives the call (and the next one is built beside it).
  assert.equal(kept.config.graphFreedOnReturn, undefined);
  const graph = kept.breakdown!.activations / 2;
  assert.ok(Math.abs(freed.breakdown!.activations - graph) < 1e-6 * graph);
  for (const ending of ['pooled.sum().item()', 'pooled.float().tolist()']) {
    assert.equal((await estimateText(embedScript(ending), '/tmp/embed_number.py')).config.graphFreedOnReturn, true, ending);
  }
});

/** No-grad scoring of a decoder: an fp32 log-likelihood over the logits; `forward` is how the logits are taken. */
function scoreScript(forward: string[]): string {
  return [
    'import torch',
    'import torch.nn.functional as F',
    'from transformers import AutoModelForCausalLM',
    'model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16).cuda().eval()',
    'scores = []',
    'with torch.no_grad():',
    '    for _ in range(4):',
    '        ids = torch.randint(0, 50000, (4, 1024), device="cuda")',
    ...forward.map((line) => `        ${line}`),
    '        logp = F.log_softmax(logits.float(), dim=-1)',
    '        scores.extend(logp.gather(-1, ids[..., None]).sum((1, 2)).tolist())',
  ].join('\n');
}

test('no-grad fp32 log-likelihood: the previous batch\'s logits are rebound before the loss; a cache read away with .logits is gone', async () => {
  const direct = await estimateText(scoreScript(['logits = model(input_ids=ids).logits']), '/tmp/score_direct.py');
  const object = await estimateText(scoreScript(['out = model(input_ids=ids)', 'logits = out.logits']), '/tmp/score_object.py');
  assert.equal(direct.detected.mode.value, 'infer-no-grad');
  assert.equal(direct.config.outputObjectDropped, true);
  assert.equal(object.config.outputObjectDropped, undefined);
  const logits = 4 * 1024 * 50257 * 2;
  const fp32 = 2 * logits;
  // Loss time: this batch's bf16 logits, the fp32 copy and log_softmax's fp32 output (not two batches' logits).
  assert.equal(direct.breakdown!.activations, logits + 2 * fp32);
  // The output object bound to a name still holds the KV cache (12 layers of k and v) while the loss runs.
  const cache = 12 * 2 * 4 * 1024 * 768 * 2;
  assert.equal(object.breakdown!.activations, logits + cache + 2 * fp32);
  // Given labels, the model computes the loss itself while the previous batch's outputs are still bound.
  const labels = await estimateText(scoreScript(['logits = model(input_ids=ids, labels=ids).logits']), '/tmp/score_labels.py');
  assert.equal(labels.config.lossAfterRebind, undefined);
  assert.ok(labels.breakdown!.activations > direct.breakdown!.activations + logits);
});

/** No-grad masked-LM evaluation without labels: the loop reads the logits through `reading` (one line per statement). */
function mlmEvalScript(reading: string[]): string {
  return [
    'import torch',
    'import torch.nn.functional as F',
    'from transformers import AutoModelForMaskedLM',
    'model = AutoModelForMaskedLM.from_pretrained("bert-base-uncased").half().cuda().eval()',
    'def evaluate(loader):',
    '    out = []',
    '    with torch.no_grad():',
    '        for ids in loader:',
    '            logits = model(input_ids=ids.cuda()).logits',
    ...reading.map((line) => `            ${line}`),
    '    return out',
    'evaluate([torch.randint(1000, 30000, (16, 512)) for _ in range(4)])',
  ].join('\n');
}

test('no-grad outputs read only by an argmax: no fp32 copy or log-softmax; the masked LM has no pooler', async () => {
  const argmax = await estimateText(mlmEvalScript(['out.append(logits.argmax(-1).cpu())']), '/tmp/mlm_argmax.py');
  const scored = await estimateText(mlmEvalScript(['out.append(F.log_softmax(logits.float(), -1).amax(-1).cpu())']), '/tmp/mlm_scored.py');
  assert.equal(argmax.config.outputsUnscored, true);
  assert.equal(scored.config.outputsUnscored, undefined);
  // BertForMaskedLM builds BertModel(add_pooling_layer=False): 109,514,298 parameters (measured on the H200).
  assert.equal(argmax.detected.parameters, 109_514_298);
  const logits = 16 * 512 * 30522 * 2;
  // The previous batch's logits and this one's are alive together; nothing vocabulary-sized in fp32.
  assert.ok(argmax.breakdown!.activations >= 2 * logits && argmax.breakdown!.activations < 2.5 * logits);
  assert.ok(scored.breakdown!.activations >= logits + 2 * (2 * logits));
  // A loss written in a function of the script that the loop calls counts too.
  const helper = mlmEvalScript(['out.append(score(logits))']).replace('def evaluate', 'def score(x):\n    return F.cross_entropy(x.float().flatten(0, 1), x.argmax(-1).flatten()).item()\ndef evaluate');
  assert.equal((await estimateText(helper, '/tmp/mlm_helper.py')).config.outputsUnscored, undefined);
});
