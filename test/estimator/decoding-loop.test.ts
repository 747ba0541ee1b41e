// A decoding loop written by hand: the prompt's forward, then one token at a time with the cache its output
// returned (past_key_values). The prompt's output (every position's logits and the cache) stays bound until the first
// step's output replaces it; the cache then grows by a token a step. Not the previous batch's output held twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const loopScript = `import torch
from transformers import AutoModelForCausalLM

ROWS = 8
PROMPT = 128
STEPS = 31


@torch.no_grad()
def decode(model, ids, steps):
    out = model(input_ids=ids, use_cache=True)
    cache = out.past_key_values
    tok = out.logits[:, -1, :].argmax(dim=-1)
    tokens = [tok]
    for _ in range(steps):
        out = model(input_ids=tok[:, None], past_key_values=cache, use_cache=True)
        cache = out.past_key_values
        tok = out.logits[:, -1, :].argmax(dim=-1)
        tokens.append(tok)
    return torch.stack(tokens, dim=1)


model = AutoModelForCausalLM.from_pretrained("gpt2").half().cuda().eval()
ids = torch.randint(0, 50000, (ROWS, PROMPT), device="cuda")
print(decode(model, ids, STEPS).shape)
`;

test('a hand-written decoding loop: the prompt\'s logits beside the cache, then the cache grown by each step\'s token', async () => {
  const r = await estimateText(loopScript, 'decode.py');
  assert.ok(r.assumptions.some((a) => a.includes('a decoding loop feeds 31 tokens')), r.assumptions.join('\n'));
  // GPT-2 in fp16: 12 layers of 12 heads of 64, a vocabulary of 50,257. Keys and values a token a layer: 2 x 8 rows x
  // 768 x 2 bytes. The first step runs beside the prompt's logits (8 x 128 x vocab x 2 bytes) and the cache of 129
  // tokens, one layer's made anew; the last holds 128 + 31 tokens of cache, one layer's twice, and its logits.
  const kv = 2 * 8 * 768 * 2;
  const stepLogits = 8 * 50257 * 2;
  const firstStep = 8 * 128 * 50257 * 2 + 13 * 129 * kv + stepLogits;
  const lastStep = 13 * (128 + 31) * kv + stepLogits;
  assert.equal(r.breakdown.activations, Math.max(firstStep, lastStep));
});
