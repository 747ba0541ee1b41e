// Copies of models and tensors made at run time: a momentum key encoder (copy.deepcopy of the query encoder inside the
// model, frozen), EMA models (deepcopy + requires_grad_(False), AveragedModel, timm's ModelEmaV2), heads swapped into
// library models after construction, and queue / memory-bank tensors built from expressions of sized tensors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateFixture, MIB } from './helpers';

const fixture = (name: string) => estimateFixture(`model-copies/${name}`);

test('a frozen deepcopy of the query encoder inside the model: its weights counted once, frozen, and its queue buffer sized', async () => {
  const result = await fixture('momentum_pair_custom.py');
  // Two encoders of 938,240 parameters (conv 1,792 + norm 128 + conv 147,712 + MLP head 526,336 + 262,272).
  assert.equal(result.detected.parameters, 1_876_480);
  // The key encoder is frozen: only the query encoder trains.
  assert.equal(result.detected.trainableParameters, 938_240);
  // The copy is a part of the model, not a second model beside it.
  assert.equal(result.config.modelCopies, undefined);
  // F.normalize(torch.randn(128, 65536), dim=0) registered as a buffer: 128 x 65,536 fp32.
  assert.equal(result.config.residentDataBytes, 128 * 65_536 * 4);
  assert.ok(result.assumptions.some((a) => /buffers the script's modules register \(line 26.*32\.0 MiB/.test(a)), result.assumptions.join('\n'));
});

test('a library encoder with an MLP head swapped in, read through fc.weight.shape, and its frozen deepcopy on the GPU', async () => {
  const result = await fixture('momentum_pair_resnet18.py');
  // resnet18(num_classes=128) (11,242,176) and the head's Linear(512, 512) (262,656), hidden read from fc.weight.shape[1].
  assert.equal(result.detected.parameters, 11_242_176 + 262_656);
  // The key encoder (a deepcopy held by the model moved with .cuda()) stays on the GPU: one more copy of its weights.
  assert.equal(result.config.modelCopies, 1);
  assert.equal(result.config.residentDataBytes, 128 * 65_536 * 4);
  // The key encoder's no-grad forward runs while the query encoder's activations are kept: the step peaks there
  // (probe_moco12: pair_tv_b64 2,051 MiB; the query-only step of the same model peaks in backward).
  assert.equal(result.config.copyForwardUnderNoGrad, true);
  assert.equal(result.peakPhase, 'forward');
  assert.ok(Math.abs(result.peakAllocated / MIB / 2051 - 1) < 0.06, String(result.peakAllocated / MIB));
});

test('an EMA teacher run under no_grad before the model\'s forward, or evaluated after training, adds nothing to it; after it, its live tensors add', async () => {
  const after = await fixture('ema_teacher_after.py');
  assert.equal(after.config.copyForwardUnderNoGrad, true);
  // probe_moco12's ema_cnn_fp32_b64, the same step: 1,492 MiB, at the teacher's forward.
  assert.ok(Math.abs(after.peakAllocated / MIB / 1492 - 1) < 0.06, String(after.peakAllocated / MIB));
  const before = await fixture('ema_teacher_before.py');
  assert.equal(before.config.copyForwardUnderNoGrad, undefined);
  assert.equal(before.config.modelCopies, 1);
  assert.ok(after.peakAllocated > before.peakAllocated);
  // Evaluated after the training loop, alone: nothing of the step is alive then.
  const evaluated = await fixture('ema_evaluated_after_training.py');
  assert.equal(evaluated.config.copyForwardUnderNoGrad, undefined);
  assert.equal(evaluated.config.modelCopies, 1);
});

test('EMA models: deepcopy(model).requires_grad_(False) and timm ModelEmaV2 of a library model are one resident copy', async () => {
  const chained = await fixture('ema_deepcopy_chain.py');
  assert.equal(chained.config.modelCopies, 1);
  assert.equal(chained.detected.trainableParameters, 77_322);
  const timmEma = await fixture('timm_model_ema_v2.py');
  assert.equal(timmEma.config.modelCopies, 1);
  assert.ok(timmEma.assumptions.some((a) => /a copy of the model \(line 7/.test(a)), timmEma.assumptions.join('\n'));
});

test('an EMA model built anew from the trained model\'s class and frozen whole: its weights beside the model\'s, nothing of the model frozen', async () => {
  const result = await fixture('ema_rebuilt_from_class.py');
  // Conv(3, 64, 3) 1,792, GroupNorm 128, Conv(64, 64, 3) 36,928, GroupNorm 128, Conv(64, 3, 3) 1,731.
  const parameters = 1_792 + 128 + 36_928 + 128 + 1_731;
  assert.equal(result.detected.parameters, parameters);
  assert.equal(result.detected.trainableParameters, parameters);
  assert.ok(result.assumptions.some((a) => /^shadow \(line 21\) is on the GPU but no optimizer updates it/.test(a)), result.assumptions.join('\n'));
  // Both models' fp32 weights.
  assert.equal(result.breakdown.weights, 2 * 4 * parameters);
});

test('heads replaced after construction: classifier[-1] of a library model and a Sequential MLP in place of fc', async () => {
  // mobilenet_v2's features (2,223,872) and Linear(1280, 10).
  const mobilenet = await fixture('mobilenet_last_classifier_ema.py');
  assert.equal(mobilenet.detected.parameters, 2_223_872 + 12_810);
  assert.equal(mobilenet.config.modelCopies, 1);
  // resnet18's features (11,176,512), Linear(512, 1024) and Linear(1024, 10).
  const mlp = await fixture('resnet18_mlp_head_ema.py');
  assert.equal(mlp.detected.parameters, 11_176_512 + 525_312 + 10_250);
});

test('BYOL: target copies of a timm backbone (head set to Identity) and of the projector, frozen inside the model', async () => {
  const result = await fixture('byol_timm_targets.py');
  // Online: resnet18 without its head (11,176,512), projector (3,158,272), predictor (2,109,696); target: the first two.
  assert.equal(result.detected.trainableParameters, 11_176_512 + 3_158_272 + 2_109_696);
  assert.equal(result.detected.parameters, 2 * (11_176_512 + 3_158_272) + 2_109_696);
  assert.equal(result.config.modelCopies, undefined);
});

test('a memory bank held as plain attributes made on the GPU: counted, and forward reads it at its shape', async () => {
  const result = await fixture('queue_attributes.py');
  // F.normalize(torch.randn(131072, 256, device="cuda")) and torch.zeros(131072, device="cuda").long().
  assert.equal(result.config.residentDataBytes, 131_072 * 256 * 4 + 131_072 * 8);
  // z @ bank.T: (256, 131072) fp32 logits kept for the loss.
  assert.ok(result.breakdown.activations >= 128 * MIB, String(result.breakdown.activations));
});
