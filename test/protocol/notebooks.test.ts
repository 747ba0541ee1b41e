// Protocol tests of Jupyter notebooks (LSP 3.17 notebook document sync): the built server over stdio, driven with
// notebookDocument/didOpen, didChange and didClose as VS Code sends them. Diagnostics arrive on each Python cell's URI
// (an empty list for a clean cell), with exact UTF-16 ranges in that cell; quick fixes, refactorings and fix-all edit
// the cells they touch; CodeLens, hovers and the estimate answer for a cell.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CodeAction, CodeLens, Diagnostic, Hover, MarkupContent, TextEdit } from 'vscode-languageserver-protocol/node';
import { ESTIMATE_REQUEST, SHOW_MEMORY_ESTIMATE_COMMAND } from '../../server/src/protocol';
import type { EstimateResponse } from '../../server/src/protocol';
import { startServer } from '../helpers/lsp-client';
import type { TestClient } from '../helpers/lsp-client';

// Cell URIs are opaque to the server: VS Code's scheme, a fragment, characters that need escaping.
const notebookUri = 'file:///work/%E6%98%BE%E5%AD%98%20nb.ipynb';
const cellUri = (id: string) => `vscode-notebook-cell:/work/%E6%98%BE%E5%AD%98%20nb.ipynb#${id}`;
const SETUP = cellUri('W0sZmlsZQ==');
const NOTES = cellUri('W1sZmlsZQ==');
const BATCH = cellUri('W2sZmlsZQ==');
const TRAIN = cellUri('W3sZmlsZQ==');
const SHOW = cellUri('W4sZmlsZQ==');

const cells: Array<{ uri: string; kind: 1 | 2; languageId: string; text: string }> = [
  { uri: SETUP, kind: 2, languageId: 'python', text: 'import torch\nfrom transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("gpt2").cuda()\noptimizer = torch.optim.AdamW(model.parameters())\nlosses = []' },
  { uri: NOTES, kind: 1, languageId: 'markdown', text: '# Training\nlosses.append(loss)' },
  { uri: BATCH, kind: 2, languageId: 'python', text: '%load_ext autoreload\n!nvidia-smi\nbatch_size = 8\ninput_ids = torch.randint(0, 50257, (batch_size, 256), device="cuda")' },
  // CRLF inside the cell, and a line with CJK and an emoji before the finding (UTF-16 columns).
  { uri: TRAIN, kind: 2, languageId: 'python', text: 'for step in range(100):\r\n    optimizer.zero_grad()\r\n    loss = model(input_ids, labels=input_ids).loss\r\n    loss.backward()\r\n    optimizer.step()\r\n    s = "显存😀"; losses.append(loss)\r\n    torch.cuda.empty_cache()\r\n' },
  { uri: SHOW, kind: 2, languageId: 'python', text: 'loss' },
];

let client: TestClient;
let version = 1;
/** The diagnostics last published on each cell, as far as the tests waited for them. */
const latest = new Map<string, Diagnostic[]>();

function summary(diagnostics: Diagnostic[]): string[] {
  return diagnostics.map((d) => `${d.code}@${d.range.start.line}:${d.range.start.character}-${d.range.end.line}:${d.range.end.character}`);
}

/** Waits for the next diagnostics of each given cell, started before `send` so that none is missed. */
async function publishedOn<T extends string>(uris: readonly T[], send: () => Promise<void>): Promise<Record<T, string[]>> {
  const waiting = uris.map((uri) => client.nextDiagnostics(uri));
  await send();
  const results = await Promise.all(waiting);
  uris.forEach((uri, i) => latest.set(uri, results[i]!));
  return Object.fromEntries(uris.map((uri, i) => [uri, summary(results[i]!)])) as Record<T, string[]>;
}

function changeCell(uri: string, cellVersion: number, range: { start: { line: number; character: number }; end: { line: number; character: number } }, text: string) {
  return client.connection.sendNotification('notebookDocument/didChange', {
    notebookDocument: { uri: notebookUri, version: ++version },
    change: { cells: { textContent: [{ document: { uri, version: cellVersion }, changes: [{ range, text }] }] } },
  });
}

function apply(text: string, edits: TextEdit[]): string {
  const lines = text.split(/(?<=\r\n|\n)/);
  const offset = (p: { line: number; character: number }) => lines.slice(0, p.line).join('').length + p.character;
  return [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start)).reduce((acc, e) => acc.slice(0, offset(e.range.start)) + e.newText + acc.slice(offset(e.range.end)), text);
}

before(async () => {
  client = await startServer({ settings: { gpu: 'RTX 4090' } });
});

after(async () => {
  await client.close();
});

test('the server declares notebook document sync for the Python cells of Jupyter notebooks', () => {
  assert.deepEqual(client.initializeResult.capabilities.notebookDocumentSync, {
    notebookSelector: [{ notebook: { notebookType: 'jupyter-notebook' }, cells: [{ language: 'python' }] }],
  });
});

test('didOpen: diagnostics on each Python cell URI, an empty list for clean cells, UTF-16 ranges within the cell', async () => {
  const published = await publishedOn([SETUP, BATCH, TRAIN, SHOW], () => client.connection.sendNotification('notebookDocument/didOpen', {
    notebookDocument: { uri: notebookUri, notebookType: 'jupyter-notebook', version, cells: cells.map((cell) => ({ kind: cell.kind, document: cell.uri })) },
    cellTextDocuments: cells.map((cell) => ({ uri: cell.uri, languageId: cell.languageId, version: 1, text: cell.text })),
  }));
  const start = '    s = "显存😀"; '.length;
  assert.equal(start, 16);
  assert.deepEqual(published, {
    [SETUP]: [],
    [BATCH]: [],
    // The list made in the first cell is appended to in this cell's loop (a finding that spans cells).
    [TRAIN]: [`OOM101@5:${start}-5:${start + 'losses.append(loss)'.length}`, 'OOM106@6:4-6:28'],
    [SHOW]: ['OOM118@0:0-0:4'],
  });
});

test('didChange in one cell republishes that cell; a cell whose diagnostics did not change is not sent again', async () => {
  // `losses.append(loss)` -> `losses.append(loss.item())`
  const column = '    s = "显存😀"; losses.append(loss'.length;
  const published = await publishedOn([TRAIN], () => changeCell(TRAIN, 2, { start: { line: 5, character: column }, end: { line: 5, character: column } }, '.item()'));
  assert.deepEqual(published[TRAIN], ['OOM106@6:4-6:28']);
  // Undo: the finding is back, at the same place.
  const undone = await publishedOn([TRAIN], () => changeCell(TRAIN, 3, { start: { line: 5, character: column }, end: { line: 5, character: column + 7 } }, ''));
  assert.deepEqual(undone[TRAIN], ['OOM101@5:16-5:35', 'OOM106@6:4-6:28']);
});

async function codeActions(uri: string, range: Diagnostic['range'], diagnostics: Diagnostic[], only?: string[]): Promise<CodeAction[]> {
  return client.connection.sendRequest<CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics, ...(only ? { only } : {}) } });
}

test('a quick fix on a cell edits that cell, in its own positions', async () => {
  const [diagnostic] = latest.get(SHOW)!;
  assert.equal(diagnostic?.code, 'OOM118');
  const actions = await codeActions(SHOW, diagnostic!.range, [diagnostic!]);
  const fix = actions.find((action) => action.title.startsWith("End the line with ';'"));
  assert.deepEqual(fix?.edit?.changes, { [SHOW]: [{ range: { start: { line: 0, character: 4 }, end: { line: 0, character: 4 } }, newText: ';' }] });
  assert.equal(fix?.isPreferred, true);
  assert.deepEqual(fix?.diagnostics, [diagnostic]);
  const noqa = actions.find((action) => action.title === 'Disable OOM118 for this line');
  assert.deepEqual(noqa?.edit?.changes, { [SHOW]: [{ range: { start: { line: 0, character: 4 }, end: { line: 0, character: 4 } }, newText: '  # noqa: OOM118' }] });
  // The CRLF cell: removing the empty_cache line takes its line break with it, and nothing of the next cell.
  const train = latest.get(TRAIN)!;
  const emptyCache = train.find((d) => d.code === 'OOM106')!;
  const remove = (await codeActions(TRAIN, emptyCache.range, [emptyCache])).find((action) => action.title.startsWith('Remove torch.cuda.empty_cache()'));
  const edits = remove?.edit?.changes?.[TRAIN];
  assert.deepEqual(Object.keys(remove?.edit?.changes ?? {}), [TRAIN]);
  assert.equal(apply(cells[3]!.text, edits!), cells[3]!.text.replace('    torch.cuda.empty_cache()\r\n', ''));
});

test('the fix is applied by the client: the cell republishes without the finding', async () => {
  const published = await publishedOn([SHOW], () => changeCell(SHOW, 2, { start: { line: 0, character: 4 }, end: { line: 0, character: 4 } }, ';'));
  assert.deepEqual(published[SHOW], []);
  const back = await publishedOn([SHOW], () => changeCell(SHOW, 3, { start: { line: 0, character: 4 }, end: { line: 0, character: 5 } }, ''));
  assert.deepEqual(back[SHOW], ['OOM118@0:0-0:4']);
});

test('refactorings and fix-all asked of a cell: edits go to cells, never to the notebook URI; fix-all stays in the cell', async () => {
  const loop = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
  const refactorings = await codeActions(TRAIN, loop, [], ['refactor.rewrite']);
  assert.ok(refactorings.length > 0, 'the training loop of the cell offers refactorings');
  for (const action of refactorings) {
    const touched = Object.keys(action.edit?.changes ?? {});
    assert.ok(touched.length > 0 && touched.every((uri) => [SETUP, BATCH, TRAIN].includes(uri)), `${action.title}: ${touched.join(', ')}`);
  }
  const fixAll = await codeActions(TRAIN, loop, [], ['source.fixAll.oomguard']);
  assert.equal(fixAll.length, 1);
  assert.deepEqual(Object.keys(fixAll[0]!.edit!.changes!), [TRAIN]);
  const fixed = apply(cells[3]!.text, fixAll[0]!.edit!.changes![TRAIN]!);
  assert.ok(!fixed.includes('empty_cache') && fixed.includes('losses.append(loss.detach())'), fixed);
});

test('CodeLens appears on the cell with the training loop and opens the panel on that cell; hovers and the estimate answer for cells', async () => {
  const lenses = await client.connection.sendRequest<CodeLens[]>('textDocument/codeLens', { textDocument: { uri: TRAIN } });
  assert.equal(lenses.length, 1);
  assert.deepEqual(lenses[0]!.range.start, { line: 0, character: 0 });
  assert.match(lenses[0]!.command!.title, /^≈ [\d.]+ GiB peak · (fits|does not fit) RTX 4090/);
  assert.equal(lenses[0]!.command!.command, SHOW_MEMORY_ESTIMATE_COMMAND);
  assert.deepEqual(lenses[0]!.command!.arguments, [TRAIN]);
  for (const other of [SETUP, BATCH, SHOW]) {
    assert.deepEqual(await client.connection.sendRequest<CodeLens[]>('textDocument/codeLens', { textDocument: { uri: other } }), [], other);
  }
  const hover = await client.connection.sendRequest<Hover | null>('textDocument/hover', { textDocument: { uri: BATCH }, position: { line: 2, character: 13 } });
  assert.match((hover?.contents as MarkupContent).value, /\*\*batch size 8\*\*/);
  assert.deepEqual(hover?.range, { start: { line: 2, character: 13 }, end: { line: 2, character: 14 } });
  const estimate = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri: TRAIN } });
  assert.equal(estimate.uri, TRAIN);
  assert.equal(estimate.modelName, 'gpt2');
  assert.equal(estimate.current.batchSize, 8);
  // Lines are the asking cell's, or null (no link) where the value is in another cell.
  assert.equal(estimate.inputs.find((input) => input.key === 'model')?.line, null);
  const batch = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri: BATCH } });
  assert.equal(batch.inputs.find((input) => input.key === 'batchSize')?.line, 2);
  const setup = await client.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri: SETUP } });
  assert.equal(setup.inputs.find((input) => input.key === 'model')?.line, 2);
  // The refactorings of the training loop are offered at the loop's line in its own cell.
  assert.ok(estimate.suggestions.some((suggestion) => suggestion.refactor?.line === 0));
  assert.ok(setup.suggestions.every((suggestion) => !suggestion.refactor || suggestion.refactor.kind === 'quickfix'));
});

/** The quick fix removing the training cell's empty_cache(), asked with the diagnostic the client holds for it. */
async function emptyCacheRemoval(): Promise<string> {
  const emptyCache = latest.get(TRAIN)!.find((d) => d.code === 'OOM106')!;
  const remove = (await codeActions(TRAIN, emptyCache.range, [emptyCache])).find((action) => action.title.startsWith('Remove torch.cuda.empty_cache()'));
  assert.deepEqual(Object.keys(remove?.edit?.changes ?? {}), [TRAIN]);
  return apply(cells[3]!.text, remove!.edit!.changes![TRAIN]!);
}

test('cells added, moved and removed: findings stay with their cells; a removed cell\'s diagnostics are cleared', async () => {
  const NEW = cellUri('W5sZmlsZQ==');
  const withoutEmptyCache = cells[3]!.text.replace('    torch.cuda.empty_cache()\r\n', '');
  // A new cell at the top: the others move down in the program but keep their cell positions, so only the cells
  // whose diagnostics changed are sent. The training cell's quick fix, asked with the diagnostics the client
  // already has, still edits its own line.
  const added = await publishedOn([NEW], () => client.connection.sendNotification('notebookDocument/didChange', {
    notebookDocument: { uri: notebookUri, version: ++version },
    change: { cells: { structure: { array: { start: 0, deleteCount: 0, cells: [{ kind: 2, document: NEW }] }, didOpen: [{ uri: NEW, languageId: 'python', version: 1, text: 'import os\nx = torch.zeros(3, device="cuda")\nx' }] } } },
  }));
  assert.deepEqual(added, { [NEW]: ['OOM118@2:0-2:1'] });
  assert.equal(await emptyCacheRemoval(), withoutEmptyCache);
  // Move the last cell before the training cell (removed and inserted again, its text not sent again): `loss` is
  // then read before the loop assigns it, and is no longer a tensor there.
  const moved = await publishedOn([SHOW], () => client.connection.sendNotification('notebookDocument/didChange', {
    notebookDocument: { uri: notebookUri, version: ++version },
    change: { cells: { structure: { array: { start: 3, deleteCount: 3, cells: [{ kind: 2, document: BATCH }, { kind: 2, document: SHOW }, { kind: 2, document: TRAIN }] } } } },
  }));
  assert.deepEqual(moved, { [SHOW]: [] });
  assert.equal(await emptyCacheRemoval(), withoutEmptyCache);
  // Remove it: its (empty) diagnostics are cleared, the others stay.
  const removed = await publishedOn([SHOW], () => client.connection.sendNotification('notebookDocument/didChange', {
    notebookDocument: { uri: notebookUri, version: ++version },
    change: { cells: { structure: { array: { start: 4, deleteCount: 1 }, didClose: [{ uri: SHOW }] } } },
  }));
  assert.deepEqual(removed, { [SHOW]: [] });
  assert.equal(await emptyCacheRemoval(), withoutEmptyCache);
  // The notebook keeps working after the structure changes: an edit in the training cell is seen.
  const edited = await publishedOn([TRAIN], () => changeCell(TRAIN, 4, { start: { line: 6, character: 0 }, end: { line: 7, character: 0 } }, ''));
  assert.deepEqual(edited[TRAIN], ['OOM101@5:16-5:35']);
});

test('didClose clears the diagnostics of every cell that had them', async () => {
  const closing = [cellUri('W5sZmlsZQ=='), SETUP, BATCH, TRAIN];
  const published = await publishedOn(closing, () => client.connection.sendNotification('notebookDocument/didClose', {
    notebookDocument: { uri: notebookUri },
    cellTextDocuments: closing.map((uri) => ({ uri })),
  }));
  for (const uri of closing) assert.deepEqual(published[uri], [], uri);
  // The cells are gone: a request about one is answered as about an unknown document.
  assert.deepEqual(await client.connection.sendRequest<CodeLens[]>('textDocument/codeLens', { textDocument: { uri: TRAIN } }), []);
});

test('a .py file next to notebooks is unaffected', async () => {
  const uri = 'file:///work/train.py';
  const published = client.diagnostics(uri, 1);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: 'import torch\nx = torch.zeros(3, device="cuda")\nx\n' } });
  assert.deepEqual(summary(await published), []);
});
