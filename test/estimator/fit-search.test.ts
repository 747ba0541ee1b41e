// The fit check searches the largest batch size for every catalog GPU; the searches share the footprint of each
// batch size they try (one estimate per size), and must find what a search of each GPU on its own finds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimate, fitOnGpus, maxBatchSize, GPU_CATALOG } from '../../server/src/estimator/index';
import { estimateFixture } from './helpers';

for (const fixture of ['custom_cnn.py', 'hf_bert_amp.py', 'batch-dependent/top1_experts_capacity.py']) {
  test(`${fixture}: the catalog's fit check finds, GPU by GPU, the largest batch size a search of that GPU alone finds`, async () => {
    const { config } = await estimateFixture(fixture);
    const fits = fitOnGpus(config, estimate(config));
    assert.equal(fits.length, GPU_CATALOG.length);
    for (const fit of fits) assert.equal(fit.maxBatchSize, maxBatchSize(config, fit.capacity), fit.gpu);
    // Some GPU takes a batch larger than one: the searches went past their first size.
    assert.ok(fits.some((fit) => (fit.maxBatchSize ?? 0) > 1));
  });
}
