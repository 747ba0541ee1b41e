// The `oomguard.gpu` setting: a choice list of the GPU catalog plus `auto` (nvidia-smi) and `custom`
// (oomguard.customGpuMemory); a name OOM Guard does not know turns the fit check off with a warning.
// nvidia-smi-h200.csv is what nvidia-smi printed for this query on a machine with one H200.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { GPU_CATALOG } from '../../server/src/estimator/index';
import { GPU_SETTING_CHOICES, lookupGpu, parseNvidiaSmi, queryLocalGpus, resolveGpuSetting } from '../../server/src/features/gpu-target';
import { ESTIMATE_REQUEST } from '../../server/src/protocol';
import type { EstimateResponse } from '../../server/src/protocol';
import { repoRoot } from '../helpers/analysis';
import { startServer } from '../helpers/lsp-client';

const MIB = 2 ** 20;
const GIB = 2 ** 30;
const capture = fs.readFileSync(path.join(__dirname, 'nvidia-smi-h200.csv'), 'utf8');

test('nvidia-smi\'s CSV is read as index, name, total and free memory in bytes', () => {
  assert.deepEqual(parseNvidiaSmi(capture), [{ index: 0, name: 'NVIDIA H200', total: 143771 * MIB, free: 143156 * MIB }]);
  // Lines that are not four fields of the query (a driver error message) are skipped, not guessed at.
  assert.deepEqual(parseNvidiaSmi('NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver.\n'), []);
});

test('package.json offers exactly the catalog plus auto and custom, each with a description', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, { enum?: string[]; enumDescriptions?: string[]; default?: unknown }> } };
  };
  const gpu = manifest.contributes.configuration.properties['oomguard.gpu']!;
  assert.deepEqual(gpu.enum, GPU_SETTING_CHOICES);
  assert.deepEqual(GPU_SETTING_CHOICES.slice(2), GPU_CATALOG.map((g) => g.name));
  assert.equal(gpu.enumDescriptions?.length, gpu.enum?.length);
  assert.ok(gpu.enum?.includes(gpu.default as string));
  assert.ok(manifest.contributes.configuration.properties['oomguard.customGpuMemory']);
});

test('auto picks the local GPU with the most free memory and checks against that free memory', async () => {
  const target = await resolveGpuSetting('auto', 0, async () => ({ gpus: parseNvidiaSmi(capture) }));
  assert.equal(target.name, 'GPU 0: NVIDIA H200, 140 GiB free');
  assert.equal(target.warning, undefined);
  assert.match(target.info ?? '', /nvidia-smi lists GPU 0: NVIDIA H200, 140 GiB free of 140 GiB/);
  assert.deepEqual(lookupGpu(target.name), { name: target.name, capacity: 143156 * MIB, catalog: false });
});

test('auto without nvidia-smi says so, and checks against no GPU', async () => {
  // The real query, with a command that is not installed (as on a laptop without an NVIDIA driver).
  const target = await resolveGpuSetting('auto', 0, () => queryLocalGpus('nvidia-smi-not-installed-here'));
  assert.equal(target.name, '');
  assert.match(target.warning ?? '', /^oomguard\.gpu is "auto", but nvidia-smi was not found on this machine: there is no local GPU/);
});

test('custom uses oomguard.customGpuMemory, and asks for it when it is not set', async () => {
  const target = await resolveGpuSetting('custom', 20, async () => ({ error: 'unused' }));
  assert.equal(target.name, 'custom GPU (20.0 GiB)');
  assert.equal(lookupGpu(target.name)?.capacity, 20 * GIB);
  const unset = await resolveGpuSetting('custom', 0, async () => ({ error: 'unused' }));
  assert.equal(unset.name, '');
  assert.match(unset.warning ?? '', /oomguard\.customGpuMemory is not set/);
});

test('the server: a custom capacity gets a fit and a largest batch; an unknown name gets a warning and no fit', async () => {
  const file = path.join(repoRoot, 'examples', 'train_gpt2.py');
  const uri = pathToFileURL(file).href;
  const text = fs.readFileSync(file, 'utf8');
  const ask = async (settings: object) => {
    const client = await startServer({ settings });
    const messages: string[] = [];
    // A warning is window/showMessageRequest (what vscode-languageserver's showWarningMessage sends).
    client.connection.onRequest('window/showMessageRequest', (params: { message: string }) => {
      messages.push(params.message);
      return null;
    });
    try {
      const published = client.diagnostics(uri, 1);
      await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
      await published;
      const response = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri } });
      return { response, messages };
    } finally {
      await client.close();
    }
  };
  const custom = await ask({ gpu: 'custom', customGpuMemory: 6 });
  assert.deepEqual(custom.response.gpu, { name: 'custom GPU (6.0 GiB)', capacity: 6 * GIB });
  assert.equal(custom.response.fits, custom.response.total <= 6 * GIB);
  assert.equal(typeof custom.response.maxBatchSize, 'number');
  assert.ok(!custom.response.assumptions.some((a) => a.includes('not in the catalog')));
  assert.deepEqual(custom.messages, []);

  const unknown = await ask({ gpu: 'Quadro Imaginary 9000' });
  assert.equal(unknown.response.gpu, null);
  assert.equal(unknown.response.fits, null);
  assert.equal(unknown.messages.length, 1, JSON.stringify(unknown.messages));
  assert.match(unknown.messages[0]!, /oomguard\.gpu is "Quadro Imaginary 9000", which is not a GPU OOM Guard knows/);
});
