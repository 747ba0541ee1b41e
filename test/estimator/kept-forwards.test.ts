// A value kept per batch that carries the graphs of several forward passes (test-time augmentation: the mean of the
// plain and the flipped view's probabilities, appended without no_grad) keeps every one's saved activations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { runEstimate } from '../../server/src/cli/estimate';
import { fixturesDir } from './helpers';

async function growthOf(name: string): Promise<{ bytesPerBatch: number; line: number } | undefined> {
  let stdout = '';
  const code = await runEstimate([path.join(fixturesDir, 'kept-graphs', name), '--json'], { stdout: (s) => { stdout += s; }, stderr: () => undefined });
  assert.equal(code, 0);
  return (JSON.parse(stdout) as { growth?: { bytesPerBatch: number; line: number } }).growth;
}

test('the mean of two views\' forwards, kept per batch, keeps both graphs: twice one view\'s', async () => {
  const two = await growthOf('eval_two_views_kept.py');
  const one = await growthOf('eval_one_view_kept.py');
  assert.ok(two && one);
  assert.equal(two.line, 21);
  assert.ok(Math.abs(two.bytesPerBatch / (2 * one.bytesPerBatch) - 1) < 1e-6, `${two.bytesPerBatch} vs ${one.bytesPerBatch}`);
});
