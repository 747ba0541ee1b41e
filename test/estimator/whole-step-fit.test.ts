// A full-graph step (every tensor its forward is given is made whole, with no batch axis): the estimate's figures are
// the whole step's, so no largest batch is shown anywhere (CLI text and JSON, the hover, the panel's data), and each
// says why in the user's language. Fixture in test/fixtures/estimator/step-methods/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runEstimate } from '../../server/src/cli/estimate';
import { DocumentStore } from '../../server/src/engine/documents';
import { baseEstimate, estimateResponse } from '../../server/src/features/memory-estimate';
import type { ServerContext } from '../../server/src/features/context';
import { bundleDir } from '../../scripts/l10n';
import { fixturesDir, repoRoot } from './helpers';

const script = path.join(fixturesDir, 'step-methods', 'graph_encode_then_score.py');
const REASON = 'No largest batch size: the step runs on the whole graph (every tensor it is given is made whole, with no batch axis), so the batch size does not change its memory.';

async function run(args: string[]): Promise<string> {
  let stdout = '';
  const code = await runEstimate(args, { stdout: (s) => { stdout += s; }, stderr: () => undefined });
  assert.equal(code, 0);
  return stdout;
}

test('CLI: a full-graph step has no largest batch in the JSON or the fit table, and the table says why', async () => {
  const json = JSON.parse(await run([script, '--json'])) as { fits: Array<{ maxBatchSize: number | null; noMaxBatchSize?: string }> };
  assert.ok(json.fits.length > 0);
  for (const fit of json.fits) {
    assert.equal(fit.maxBatchSize, null);
    assert.equal(fit.noMaxBatchSize, REASON);
  }
  const text = await run([script]);
  assert.ok(text.includes(REASON), text);
});

test('the built CLI with --lang zh-cn gives the reason in the bundle\'s translation', () => {
  const zh = JSON.parse(fs.readFileSync(path.join(bundleDir, 'bundle.l10n.zh-cn.json'), 'utf8')) as Record<string, string>;
  assert.ok(zh[REASON]);
  const run = spawnSync(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), 'estimate', script, '--lang', 'zh-cn'], { cwd: repoRoot, encoding: 'utf8' });
  assert.ok(run.stdout.includes(zh[REASON]!), run.stdout + run.stderr);
});

test('the panel\'s data: no largest batch, and the reason the engine gives', async () => {
  const store = new DocumentStore();
  const context = { modelOf: (state) => store.modelOf(state) } as Pick<ServerContext, 'modelOf'> as ServerContext;
  const state = (await store.open('mem://graph.py', 1, fs.readFileSync(script, 'utf8')))!;
  const base = baseEstimate(context, state);
  assert.ok(base && 'config' in base);
  const response = estimateResponse(state, base, {}, 'RTX 4090', [], {}, Date.now());
  assert.equal(response.maxBatchSize, null);
  assert.equal(response.noMaxBatchSize, REASON);
});

test('a batched step keeps its largest batch and gives no such reason', async () => {
  const json = JSON.parse(await run([path.join(fixturesDir, 'step-methods', 'encode_decode_methods.py'), '--json'])) as { fits: Array<{ maxBatchSize: number | null; noMaxBatchSize?: string }> };
  assert.ok(json.fits.some((fit) => typeof fit.maxBatchSize === 'number' && fit.maxBatchSize > 1));
  assert.ok(json.fits.every((fit) => fit.noMaxBatchSize === undefined));
});
