import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateFixture } from './helpers';
import { findVisionModel } from '../../server/src/estimator/catalog/vision';

function parametersOf(name: string, numClasses = 1000): number | undefined {
  const spec = findVisionModel(name)?.build(224, numClasses);
  return spec?.kind === 'layers' ? spec.parameters : undefined;
}

test('timm RegNets are built with timm\'s width rounding: counts as timm publishes them, the _tv models as torchvision\'s', () => {
  // timm's results-imagenet.csv gives these to 0.01M (22.12M, 20.65M, 6.26M, 39.18M, 5.16M, 3.16M).
  assert.equal(parametersOf('regnetx_040'), 22_118_248);
  assert.equal(parametersOf('regnety_040'), 20_646_656);
  assert.equal(parametersOf('regnety_008'), 6_263_168);
  assert.equal(parametersOf('regnety_080'), 39_180_068);
  assert.equal(parametersOf('regnetx_004'), 5_157_512);
  assert.equal(parametersOf('regnety_002'), 3_162_996);
  // Where the two roundings agree timm's name is torchvision's model; where not, timm's `_tv` name is.
  assert.equal(parametersOf('regnety_032'), parametersOf('regnet_y_3_2gf'));
  assert.equal(parametersOf('regnety_008_tv'), parametersOf('regnet_y_800mf'));
  assert.equal(parametersOf('timm/regnety_160.swag_ft_in1k'), 83_590_140);
});

test('a timm RegNet named by an argparse default is resolved, its head sized by the class count', async () => {
  const r = await estimateFixture('library-models-set8/timm_regnet_from_cli.py');
  assert.equal(r.detected.model.name, 'regnety_040');
  assert.equal(r.detected.model.source, 'timm');
  assert.equal(r.detected.parameters, 20_646_656 - 1000 * 1088 - 1000 + 37 * 1088 + 37);
});
