// The leak sizes of an open document come from the host's estimate worker, also for a document that keeps no
// tree-sitter tree (not edited since its open, or edited statement by statement): such a document had its estimate
// run on the server's thread, which a keystroke then waited behind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Connection } from 'vscode-languageserver';
import { DocumentStore } from '../../server/src/engine/documents';
import { leakSizes } from '../../server/src/features/leak-sizes';
import type { ServerContext } from '../../server/src/features/context';
import { host, setHost } from '../../server/src/host';
import { DEFAULT_SETTINGS } from '../../server/src/protocol';

const SCRIPT = ['import torch', 'losses = []', 'for x, y in loader:', '    loss = model(x).sum()', '    loss.backward()', '    losses.append(loss)', ''].join('\n');

test('a document without a tree-sitter tree asks the estimate worker for its leak sizes, before and after an edit', async () => {
  const asked: string[] = [];
  const previousHost = host();
  setHost({
    ...previousHost,
    estimateWorker: {
      leakSizes: async (text) => {
        asked.push(text);
        return { read: String(asked.length) };
      },
      serverBusy: () => undefined,
    },
  });
  try {
    const documents = new DocumentStore();
    const uri = 'file:///work/train.py';
    let state = await documents.open(uri, 1, SCRIPT);
    // What the server does once an unedited document has been idle a while: only the copy of its tree stays.
    assert.equal(documents.releaseUneditedTree(state), true, 'an error-free document lets its tree go');
    assert.equal(state.analysisTree, undefined);
    let modelsBuilt = 0;
    const context = {
      connection: {} as Connection,
      documents,
      ready: async () => documents.get(uri),
      modelOf: (current) => {
        modelsBuilt++;
        return documents.modelOf(current);
      },
      settingsFor: async () => DEFAULT_SETTINGS,
      locale: () => undefined,
      openDocuments: () => [uri],
      reanalyze: () => undefined,
      analysisOptionsFor: async () => ({}),
    } satisfies ServerContext;
    leakSizes.register(context);
    const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

    // The open: no sizes yet, so the estimate is asked for at once.
    leakSizes.analysisOptions!(state, DEFAULT_SETTINGS);
    leakSizes.published!(state);
    await settle();
    assert.deepEqual(asked, [SCRIPT]);

    // An edit inside one statement, parsed alone: still no tree-sitter tree; the sizes are refreshed after a pause.
    state = (await documents.change(uri, 2, [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 6 } }, text: 'kept' }]))!;
    assert.equal(state.analysisTree, undefined);
    leakSizes.analysisOptions!(state, DEFAULT_SETTINGS);
    leakSizes.published!(state);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(asked.length, 2);
    assert.equal(asked[1], state.text);
    // The estimate never ran on this thread (it builds the version's model there).
    assert.equal(modelsBuilt, 0);
    leakSizes.closed!(uri);
  } finally {
    setHost(previousHost);
  }
});

test('edits typed while the first estimate runs ask for newer sizes once typing pauses, not as soon as it answers', async () => {
  const asked: string[] = [];
  let answerFirst: (() => void) | undefined;
  const previousHost = host();
  setHost({
    ...previousHost,
    estimateWorker: {
      leakSizes: (text) => {
        asked.push(text);
        // The first estimate (the open's) answers when the test says; the others at once.
        return asked.length === 1 ? new Promise((resolve) => (answerFirst = () => resolve({ read: '1' }))) : Promise.resolve({ read: String(asked.length) });
      },
      serverBusy: () => undefined,
    },
  });
  const uri = 'file:///work/typing.py';
  try {
    const documents = new DocumentStore();
    let state = await documents.open(uri, 1, SCRIPT);
    const context = {
      connection: {} as Connection,
      documents,
      ready: async () => documents.get(uri),
      modelOf: (current) => documents.modelOf(current),
      settingsFor: async () => DEFAULT_SETTINGS,
      locale: () => undefined,
      openDocuments: () => [uri],
      reanalyze: () => undefined,
      analysisOptionsFor: async () => ({}),
    } satisfies ServerContext;
    leakSizes.register(context);
    const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    leakSizes.analysisOptions!(state, DEFAULT_SETTINGS);
    leakSizes.published!(state);
    await settle(20);
    assert.equal(asked.length, 1);
    // Keystrokes while the open's estimate runs, the last one just before it answers.
    for (let version = 2; version <= 4; version++) {
      state = (await documents.change(uri, version, [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } }, text: version % 2 ? 'l' : 'L' }]))!;
      leakSizes.analysisOptions!(state, DEFAULT_SETTINGS);
      leakSizes.published!(state);
      await settle(20);
    }
    answerFirst!();
    await settle(50);
    assert.equal(asked.length, 1, 'typing goes on: no new estimate yet');
    await settle(400);
    assert.deepEqual(asked.slice(1), [state.text], 'once typing paused, the sizes of the last version');
  } finally {
    leakSizes.closed!(uri);
    setHost(previousHost);
  }
});

test('a version whose edits were all undone keeps the sizes of the text it returned to: no estimate runs for it', async () => {
  const asked: string[] = [];
  const previousHost = host();
  setHost({
    ...previousHost,
    estimateWorker: {
      leakSizes: async (text) => {
        asked.push(text);
        return { read: String(asked.length), table: { bytes: { graph: asked.length * 1024 }, loops: [] } };
      },
      serverBusy: () => undefined,
    },
  });
  const uri = 'file:///work/undone.py';
  try {
    const documents = new DocumentStore();
    let state = await documents.open(uri, 1, SCRIPT);
    const reanalysed: string[] = [];
    const context = {
      connection: {} as Connection,
      documents,
      ready: async () => documents.get(uri),
      modelOf: (current) => documents.modelOf(current),
      settingsFor: async () => DEFAULT_SETTINGS,
      locale: () => undefined,
      openDocuments: () => [uri],
      reanalyze: (target) => void reanalysed.push(target),
      analysisOptionsFor: async () => ({}),
    } satisfies ServerContext;
    leakSizes.register(context);
    const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    leakSizes.analysisOptions!(state, DEFAULT_SETTINGS);
    leakSizes.published!(state);
    await settle(20);
    assert.equal(asked.length, 1);
    // A keystroke and its undo, then a pause: the text is the one estimated at the open.
    for (const [version, text] of [[2, 'L'], [3, 'l']] as const) {
      state = (await documents.change(uri, version, [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } }, text }]))!;
      leakSizes.analysisOptions!(state, DEFAULT_SETTINGS);
      leakSizes.published!(state);
    }
    assert.equal(state.text, SCRIPT);
    await settle(400);
    assert.equal(asked.length, 1, 'no estimate for a text already estimated');
    // The version has its sizes (the open's): its next analysis needs no refresh.
    leakSizes.analysisOptions!(state, DEFAULT_SETTINGS);
    leakSizes.published!(state);
    await settle(400);
    assert.equal(asked.length, 1);

    // A keystroke kept: estimated once typing pauses.
    state = (await documents.change(uri, 4, [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } }, text: 'L' }]))!;
    leakSizes.analysisOptions!(state, DEFAULT_SETTINGS);
    leakSizes.published!(state);
    await settle(400);
    assert.deepEqual(asked.slice(1), [state.text]);
  } finally {
    leakSizes.closed!(uri);
    setHost(previousHost);
  }
});
