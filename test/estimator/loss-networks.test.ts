// A frozen network in the loss, run with grad on what the trained model makes (a perceptual loss's VGG features):
// its freezing is not the trained model's, its weights are on the GPU, and what its forward saves is kept for the
// backward that reaches the model through it. Figures are computed by hand in the comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { estimateText, fixturesDir } from './helpers';

const file = path.join(fixturesDir, 'loss-networks', 'perceptual_vgg.py');
const text = fs.readFileSync(file, 'utf8');

test('a perceptual loss\'s frozen VGG features run with grad: weights and saved activations counted, the generator trained whole', async () => {
  const result = await estimateText(text, file);
  // Generator: 3 x 32 x 9 + 32 + 32 x 3 x 9 + 3 = 1,763 parameters, none frozen by the loss module's loop.
  assert.equal(result.detected.parameters, 1_763);
  assert.equal(result.detected.trainableParameters, 1_763);
  const network = result.config?.lossNetwork;
  assert.ok(network);
  // vgg16.features[:16]: convolutions 3-64, 64-64, 64-128, 128-128, 128-256, 256-256, 256-256 with biases:
  // 1,792 + 36,928 + 73,856 + 147,584 + 295,168 + 590,080 + 590,080 = 1,735,488 fp32 weights.
  assert.equal(network.weightBytes, 1_735_488 * 4);
  // Per 64x64 sample, fp32: the image its first convolution reads (3 x 64^2), the ReLUs' outputs the next layers
  // read (64 x 64^2 twice, 128 x 32^2 twice, 256 x 16^2 three times), the pools' outputs (64 x 32^2, 128 x 16^2):
  // 1,093,632 elements; int64 pool indices 64 x 32^2 + 128 x 16^2 = 98,304 x 8 bytes. No weight copies in fp32.
  assert.equal(network.savedBytesPerSample, 1_093_632 * 4 + 98_304 * 8);
  assert.equal(network.savedBytes, 0);
  const withoutGrad = await estimateText(text.replace('        return F.mse_loss(self.net(fake), target)', '            return F.mse_loss(self.net(fake), target) + fake.mean()'), file);
  assert.equal(withoutGrad.config?.lossNetwork, undefined);
  // Four samples' saved tensors on top of what the same step keeps when the network runs under no_grad.
  assert.equal(result.breakdown.activations - withoutGrad.breakdown.activations, 4 * network.savedBytesPerSample);
  // Under bf16 autocast: half the bytes an element, the same indices, and the bf16 copies of the weights.
  const bf16 = await estimateText(text.replace('    fake = gen(real)\n    loss = loss_fn(fake, real)', '    with torch.autocast("cuda", dtype=torch.bfloat16):\n        fake = gen(real)\n        loss = loss_fn(fake, real)'), file);
  assert.equal(bf16.config?.lossNetwork?.savedBytesPerSample, 1_093_632 * 2 + 98_304 * 8);
  assert.equal(bf16.config?.lossNetwork?.savedBytes, 1_735_488 * 2);
});

test('a VGG an optimizer is given is trained, not a loss network', async () => {
  const result = await estimateText(text.replace('torch.optim.Adam(gen.parameters()', 'torch.optim.Adam(list(gen.parameters()) + list(loss_fn.net.parameters())'), file);
  assert.equal(result.config?.lossNetwork, undefined);
});
