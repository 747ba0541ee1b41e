// Library backbones inside a module of the script. timm ConvNeXt with features_only=True (each stage's output, strides 4 to 32) under a feature pyramid that the
// script builds with int(r).bit_length() and fuses with sum(...): sized exactly and followed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { estimateFixture } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

test('convnext_tiny features_only + an FPN: exact parameters, forward followed', async () => {
  const result = await estimateFixture(path.join('library-parts', 'convnext_features_fpn.py'));
  assert.equal(result.unresolved, undefined);
  // convnext_tiny's 28,589,128 less its head (LayerNorm 768: 1,536; Linear 768 -> 1000: 769,000); the laterals
  // (96 + 192 + 384 + 768) x 64 + 4 x 64; ten 3x3 convs 64 -> 64 (one a level, plus 0, 1, 2, 3 upsampling steps for
  // strides 4, 8, 16, 32); the 1x1 classifier 64 -> 5.
  assert.equal(result.detected.parameters, 28_589_128 - 1_536 - 769_000 + 1_440 * 64 + 256 + 10 * (64 * 64 * 9 + 64) + 64 * 5 + 5);
  const spec = result.config.model as LayerNetSpec;
  assert.equal(spec.forwardUntraced, undefined);
  assert.ok(!result.assumptions.some((a) => a.includes('could not be followed')), result.assumptions.join('\n'));
});

test('a module around a timm ViT and a head of its own is estimated as the ViT, and says the head is not counted', async () => {
  const result = await estimateFixture(path.join('library-parts', 'vit_wrapper_head.py'));
  assert.equal(result.unresolved, undefined);
  assert.equal(result.config.model.kind, 'transformer');
  assert.equal(result.config.modelName, 'vit_small_patch16_224');
  // ViT-S/16 without its classifier: 21,665,664 parameters (timm's count with num_classes=0).
  assert.equal(result.detected.parameters, 21_665_664);
  assert.ok(result.assumptions.some((a) => a.includes('Classifier') && a.includes('head') && a.includes('not')), result.assumptions.join('\n'));
});
