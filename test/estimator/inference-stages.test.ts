// A stage of blocks inside the model's container (torchvision's `features[i]`, ResNet's `layer1`..`layer4`): the
// outer container's loop holds the stage's input until the stage returns, so from the stage's second block on it is
// alive beside the block in a no-grad forward. Measured on the H200 (EfficientNetV2-M fp16, batch 160 at 416 px):
// inside `features[2]` each block peaks 1,426 MiB over its start, and the stage's 317 MiB input is held beside it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NetBuilder } from '../../server/src/estimator/layers';
import { findVisionModel } from '../../server/src/estimator/catalog/vision';
import type { LayerNetSpec } from '../../server/src/estimator/types';

function twoBlocks(staged: boolean): LayerNetSpec {
  const net = new NetBuilder({ kind: 'image', channels: 8, size: 32 });
  if (staged) net.beginStage();
  for (let b = 0; b < 2; b++) {
    net.beginBlock();
    net.conv(16, 3);
    net.endBlock();
  }
  if (staged) net.endStage();
  return net.build(true);
}

test('from a stage\'s second block on, the stage\'s input is alive beside the block (no-grad forward)', () => {
  const stageInput = 8 * 32 * 32;
  assert.equal(twoBlocks(true).inferenceLiveElementsPerSample - twoBlocks(false).inferenceLiveElementsPerSample, stageInput);
  // What backward keeps does not change: the stage's input is kept by its first block either way.
  assert.equal(twoBlocks(true).savedElementsPerSample, twoBlocks(false).savedElementsPerSample);
});

test('EfficientNetV2-M at 416 px: the peak block of features[2] with the stage input held, as measured', () => {
  const spec = findVisionModel('efficientnet_v2_m')!.build(416, 1000) as LayerNetSpec;
  const mib = (elements: number) => (elements * 160 * 2) / 2 ** 20;
  // 1,426 MiB the block itself, 317 MiB the stage's input (fp16, batch 160).
  const live = mib(spec.inferenceLiveElementsPerSample);
  assert.ok(Math.abs(live - (1426 + 317)) < 20, `${live.toFixed(0)} MiB`);
});
