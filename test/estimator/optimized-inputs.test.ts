// An optimizer given a tensor of the script's instead of a module's parameters (an image optimised through a frozen
// library network, as in feature visualisation or style transfer): the tensor trains, the network only runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateFixture, estimateText } from './helpers';
import { findVisionModel } from '../../server/src/estimator/catalog/vision';

test('Adam over an image run through vgg16(...).features, frozen: the image trains, its first axis is the batch, the features part is the model', async () => {
  const r = await estimateFixture('optimized-inputs/feature_visualization_adam.py');
  assert.equal(r.detected.model.name, 'vgg16.features');
  // torchvision's vgg16 features: its 13 convolutions, without avgpool and the classifier.
  assert.equal(r.detected.parameters, 14_714_688);
  // The image (2, 3, 384, 384) is what the optimizer holds.
  assert.equal(r.detected.trainableParameters, 2 * 3 * 384 * 384);
  assert.equal(r.detected.batchSize.value, 2);
  assert.equal(r.detected.imageSize?.value, 384);
  // Adam's two moments for the image alone; the frozen network gets neither gradients nor states.
  assert.equal(r.breakdown!.optimizerStates, 2 * 2 * 3 * 384 * 384 * 4);
  // Backward reaches the image through every layer: the features' activations are kept, as for a trained network.
  const features = findVisionModel('vgg16')!.build(384, 1000);
  assert.ok(features.kind === 'layers' && features.parts);
  const kept = 2 * features.parts.find((part) => part.name === 'avgpool')!.savedBefore * 4;
  assert.ok(r.breakdown!.activations >= kept, `activations ${r.breakdown!.activations} < ${kept}`);
  assert.ok(r.assumptions.some((a) => a.includes('trains a tensor of the script\'s')), r.assumptions.join('\n'));
});

const lbfgsOverImage = (loop: string) => `import torch
import torch.nn as nn

net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1)).cuda()
net.requires_grad_(False)
target = torch.rand(1, 32, 256, 256, device="cuda")
image = torch.rand(1, 3, 256, 256, device="cuda").requires_grad_(True)
opt = torch.optim.LBFGS([image], max_iter=10, history_size=50)

def closure():
    opt.zero_grad()
    loss = (net(image) - target).pow(2).mean()
    loss.backward()
    return loss

${loop}
`;

test('LBFGS over an image, stepped a counted number of times: its history holds no more pairs than iterations ran', async () => {
  const image = 3 * 256 * 256 * 4;
  // 2 steps of up to 10 iterations: 19 (s, y) pairs after the first iteration, fewer than history_size 50.
  const short = await estimateText(lbfgsOverImage('for outer in range(2):\n    opt.step(closure)'), 'lbfgs_short.py');
  assert.equal(short.detected.trainableParameters, 3 * 256 * 256);
  assert.equal(short.breakdown!.optimizerStates, (2 * 19 + 3) * image);
  // 8 steps: 79 iterations fill the history.
  const long = await estimateText(lbfgsOverImage('for outer in range(8):\n    opt.step(closure)'), 'lbfgs_long.py');
  assert.equal(long.breakdown!.optimizerStates, (2 * 50 + 3) * image);
  // Steps not counted (a while loop): the full history.
  const open = await estimateText(lbfgsOverImage('done = False\nwhile not done:\n    opt.step(closure)'), 'lbfgs_open.py');
  assert.equal(open.breakdown!.optimizerStates, (2 * 50 + 3) * image);
});
