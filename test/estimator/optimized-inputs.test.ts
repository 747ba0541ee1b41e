// An optimizer given a tensor of the script's instead of a module's parameters (an image optimised through a frozen
// library network, as in feature visualisation or style transfer): the tensor trains, the network only runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateFixture } from './helpers';
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
