// The built server's estimate worker (dist/estimate-worker.js): the leak sizes of a script, computed on a thread of
// their own, and not computed again for a version whose code is the same as the last one's (an edit in a comment);
// paused while the server computes diagnostics (busy-signal.ts).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { after, before, test } from 'node:test';
import { BusySignal } from '../../server/src/busy-signal';
import { parsePython } from '../../server/src/engine/parser';
import { copyTree, flattenTree, type FlatTree } from '../../server/src/engine/syntax-tree';
import { configFromDetection, detectConfig } from '../../server/src/estimator/index';
import { leakSizeTable } from '../../server/src/estimator/leak-size-table';
import { programOf } from '../../server/src/estimator/python-values';
import type { EstimatedSizes, EstimateWorkerData, EstimateWorkerReply, EstimateWorkerRequest } from '../../server/src/node-estimate-worker';
import { repoRoot } from '../helpers/analysis';

let worker: Worker;
let nextId = 0;

/** What the server hands the worker with a text: its copy of the text's tree, flattened. */
async function flatTreeOf(text: string): Promise<FlatTree> {
  const tree = (await parsePython(text))!;
  try {
    return flattenTree(copyTree(tree, text), tree.language.types, tree.language.fields);
  } finally {
    tree.delete();
  }
}

async function ask(text: string, lastRead?: string): Promise<EstimatedSizes> {
  const id = nextId++;
  const tree = await flatTreeOf(text);
  return new Promise((resolve, reject) => {
    const onReply = (reply: EstimateWorkerReply) => {
      if (reply.id !== id) return;
      worker.off('message', onReply);
      if ('error' in reply) reject(new Error(reply.error));
      else resolve(reply.sizes);
    };
    worker.on('message', onReply);
    worker.postMessage({ id, text, file: '', lastRead, tree } satisfies EstimateWorkerRequest, [tree.data.buffer as ArrayBuffer]);
  });
}

before(() => {
  worker = new Worker(path.join(repoRoot, 'dist', 'estimate-worker.js'));
});

after(async () => {
  await worker.terminate();
});

const SCRIPT = [
  'import torch',
  'from transformers import GPT2LMHeadModel',
  'model = GPT2LMHeadModel.from_pretrained("gpt2").cuda()',
  'kept = []',
  'for batch in eval_loader:  # evaluation',
  '    kept.append(model(input_ids=batch).logits)',
  '',
].join('\n');

test('the worker sizes the leaks of a script and says what its estimate read', async () => {
  const first = await ask(SCRIPT);
  assert.ok(first.table && first.table.bytes.graph! > 0 && first.table.bytes.output! > 0, JSON.stringify(first));
  assert.match(first.read, /^[0-9a-f]{64}$/);

  // Only a comment changed: the same code, not estimated again.
  const commented = await ask(SCRIPT.replace('# evaluation', '# the evaluation, 注释'), first.read);
  assert.deepEqual(commented, { read: first.read, unchanged: true });

  // The code changed: estimated again.
  const changed = await ask(SCRIPT.replace('kept = []', 'kept = list()'), first.read);
  assert.notEqual(changed.read, first.read);
  assert.deepEqual(changed.table, first.table);
});

test('the sizes the worker reads from the flattened tree are those computed on this thread from a parse of the text', async () => {
  const tree = (await parsePython(SCRIPT))!;
  const root = copyTree(tree, SCRIPT);
  tree.delete();
  const config = configFromDetection(detectConfig({ rootNode: root }, SCRIPT, ''), []);
  const expected = leakSizeTable(config, programOf({ rootNode: root }, ''), root);
  assert.deepEqual((await ask(SCRIPT)).table, expected);
});

test('a script whose model the estimator cannot read has no sizes, and a broken one no error', async () => {
  assert.equal((await ask('import torch\nmodel = make_model()\nfor b in loader:\n    model(b)\n')).table, undefined);
  assert.equal((await ask('def f(:\n  )))\x00')).table, undefined);
});

test('the worker gives way while the server is busy, and estimates once it has been idle a moment', async () => {
  const signal = new BusySignal();
  const busyWorker = new Worker(path.join(repoRoot, 'dist', 'estimate-worker.js'), { workerData: { serverBusy: signal.buffer } satisfies EstimateWorkerData });
  try {
    const answered = new Promise<number>((resolve) => busyWorker.once('message', () => resolve(performance.now())));
    signal.set(true);
    busyWorker.postMessage({ id: 0, text: SCRIPT, file: '', tree: await flatTreeOf(SCRIPT) } satisfies EstimateWorkerRequest);
    // Long enough for the estimate of this small script (a few milliseconds once the worker has loaded).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const idleAt = performance.now();
    signal.set(false);
    const at = await answered;
    assert.ok(at >= idleAt, 'no answer while the server was busy');
  } finally {
    await busyWorker.terminate();
  }
});

test('a worker that waits on a busy server stops waiting at its deadline', () => {
  const signal = new BusySignal();
  signal.set(true);
  const start = Date.now();
  signal.waitWhileBusy(50, start + 200);
  assert.ok(Date.now() - start >= 190, 'waited until the deadline');
  // An idle server: no wait at all.
  signal.set(false);
  const idleStart = Date.now();
  signal.waitWhileBusy(50, idleStart + 10_000);
  assert.ok(Date.now() - idleStart < 50);
});
