// Which modules make the model the step trains, and what each forward keeps: modules a builder function hands to
// other modules' constructors are layers of those (not models), blocks shared across iterations keep activations per
// call but count their parameters once, a latent array expanded over the batch keeps its shape, a coordinate grid
// with Fourier features is traced, and an optimizer given a model's submodules trains that model (a GAN's
// autoencoder beside its critic). Figures are computed by hand in the comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { estimateText, fixturesDir } from './helpers';
import type { EstimateResult } from '../../server/src/estimator';

const fixture = (name: string): { text: string; file: string } => {
  const file = path.join(fixturesDir, 'models-in-the-step', name);
  return { text: fs.readFileSync(file, 'utf8'), file };
};

const saved = (result: EstimateResult): number =>
  (result.config?.model.kind === 'layers' ? result.config.model.savedElementsPerSample : NaN);

test('modules handed to other modules in builder functions are layers; shared blocks keep activations per iteration', async () => {
  const { text, file } = fixture('shared_blocks_looped.py');
  const run = (iterations: number): Promise<EstimateResult> =>
    estimateText(text.replace('def build(iterations=3)', `def build(iterations=${iterations})`), file);
  const [once, twice, thrice] = await Promise.all([run(1), run(2), run(3)]);
  for (const result of [once, twice, thrice]) {
    // The looped model, not the first Mix(dim) a builder hands to Residual(...).
    assert.equal(result.detected.model?.name, 'Looped');
    // Residual(Mix): LayerNorm 128 + Linear 64 x 64 + 64 = 4,288; Residual(Expand): LayerNorm 128 + 64 x 256 + 256
    // + 256 x 64 + 64 = 33,216; a stage 37,504, the first and the two shared ones 112,512; latents 16 x 64 = 1,024,
    // embed 8 x 64 + 64 = 576, head 64 x 10 + 10 = 650: 114,762, whatever the number of iterations.
    assert.equal(result.detected.parameters, 114_762);
  }
  // Per sample, 16 latents of 64: Residual(Mix) keeps its norm's input and the Linear's (2 x 1,024), Residual(Expand)
  // those and the 256-wide hidden (2 x 1,024 + 4,096): 8,192 a stage. The first stage and one pass of the shared
  // two, plus the head's input (64): 8,192 + 16,384 + 64 = 24,640; each further pass keeps 16,384 more.
  assert.equal(saved(once), 24_640);
  assert.equal(saved(twice), 24_640 + 16_384);
  assert.equal(saved(thrice), 24_640 + 2 * 16_384);
});

test('a coordinate grid with sine and cosine features is traced at the image size', async () => {
  const { text, file } = fixture('fourier_grid_features.py');
  const result = await estimateText(text, file);
  // The projection's input: 32 x 48 positions, 3 colours + 2 axes x (2 x 4 bands + 1) = 21 features each: 32,256
  // elements, and the head's input (32): 32,288 per sample. The grid needs no gradient, so sin and cos keep nothing.
  assert.equal(saved(result), 32 * 48 * 21 + 32);
  assert.equal(result.detected.parameters, 21 * 32 + 32 + 32 * 10 + 10);
});

test('an optimizer given a model\'s submodules trains that model beside the critic another optimizer updates', async () => {
  const { text, file } = fixture('autoencoder_critic_two_optimizers.py');
  const direct = 'opt_g = torch.optim.Adam(list(ae.enc.parameters()) + list(ae.dec.parameters()), lr=1e-4)';
  assert.ok(text.includes(direct));
  // The parts given by name, or gathered in a variable first.
  const throughVariable = text.replace(direct, 'params = list(ae.enc.parameters()) + list(ae.dec.parameters())\nopt_g = torch.optim.Adam(params, lr=1e-4)');
  for (const script of [text, throughVariable]) {
    const result = await estimateText(script, file);
    assert.equal(result.detected.model?.name, 'AE + Critic');
    // AE: 3 x 16 x 9 + 16 = 448, 16 x 8 x 9 + 8 = 1,160, 8 x 16 x 9 + 16 = 1,168, 16 x 3 x 9 + 3 = 435 (3,211);
    // Critic: 3 x 16 x 16 + 16 = 784, 16 x 16 + 1 = 257 (1,041).
    assert.equal(result.detected.parameters, 3_211 + 1_041);
    assert.equal(result.detected.trainableParameters, 3_211 + 1_041);
  }
});

test('an earlier stage\'s optimizer (pretraining in its own loop) does not make its models part of the step', async () => {
  const { text, file } = fixture('pretrain_then_finetune.py');
  const result = await estimateText(text, file);
  // The finetuning loop runs the last backward: its Sequential is the model, not Enc + Dec + the Sequential.
  assert.equal(result.detected.model?.name, 'nn.Sequential');
  // Enc: 3 x 16 x 9 + 16 = 448, 16 x 16 x 9 + 16 = 2,320; the head 16 x 10 + 10 = 170.
  assert.equal(result.detected.parameters, 448 + 2_320 + 170);
});

test('two models chained on two views, both in one optimizer: trained together, each run twice before backward', async () => {
  const { text, file } = fixture('online_predictor_two_views.py');
  const result = await estimateText(text, file);
  assert.equal(result.detected.model?.name, 'Online + nn.Sequential');
  // Online: 3 x 32 x 9 + 32 = 896, 32 x 64 + 64 = 2,112; predictor: 64 x 128 + 128 = 8,320, 128 x 64 + 64 = 8,256.
  assert.equal(result.detected.parameters, 896 + 2_112 + 8_320 + 8_256);
  assert.equal(result.config.forwardsPerBackward, 2);
});
