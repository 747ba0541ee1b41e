// Which model the step trains, and what the script's own program decides about it: the model whose parameters reach
// the optimizer (not the first one built), layers a module makes through setattr, torch.nn's composite Transformer,
// and model configurations a script reads from a Python file. Figures are computed by hand in the comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

test('distillation between Hugging Face models: the one the optimizer holds is trained, the frozen one costs its weights', async () => {
  const script = (teacherFirst: boolean) => {
    const teacher = [
      'big = AutoModelForCausalLM.from_pretrained("gpt2").to("cuda")',
      'big.eval()',
      'big.requires_grad_(False)',
    ];
    const student = ['small = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=256, n_head=4)).to("cuda")'];
    return [
      'import torch',
      'from transformers import AutoModelForCausalLM, GPT2Config, GPT2LMHeadModel',
      ...(teacherFirst ? [...teacher, ...student] : [...student, ...teacher]),
      'optim = torch.optim.AdamW(small.parameters(), lr=3e-4)',
      'for _ in range(4):',
      '    ids = torch.randint(0, 50257, (8, 128), device="cuda")',
      '    with torch.no_grad():',
      '        soft = big(ids).logits.softmax(-1)',
      '    out = small(ids).logits.log_softmax(-1)',
      '    loss = torch.nn.functional.kl_div(out, soft, reduction="batchmean")',
      '    optim.zero_grad()',
      '    loss.backward()',
      '    optim.step()',
    ].join('\n');
  };
  for (const teacherFirst of [true, false]) {
    const result = await estimateText(script(teacherFirst), '/tmp/hf_distill.py');
    // The student: token table 50,257 x 256 = 12,865,792, positions 1,024 x 256 = 262,144, two blocks of
    // 12 x 256^2 + 13 x 256 = 789,760 each, the final norm 512 (the head shares the token table): 14,707,968.
    assert.equal(result.detected.parameters, 14_707_968, `teacher first: ${teacherFirst}`);
    // Freezing the teacher freezes nothing the optimizer updates.
    assert.equal(result.detected.trainableParameters, 14_707_968);
    // gpt2 (124,439,808 parameters) stays on the GPU beside it: its weights count, in units of the student's.
    assert.equal(result.config.modelCopies, 124_439_808 / 14_707_968);
  }
});
