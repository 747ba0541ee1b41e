// The language server's notebook sync (server/src/notebooks.ts) over the real document store: an edit in one cell
// becomes one small edit of the program, so the store re-parses incrementally, statements of the other cells are
// reused, and the incremental analysis runs the rules on the changed statement alone; after any sequence of cell
// edits and structure changes, the program and its findings equal a fresh join and analysis.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DidChangeNotebookDocumentParams, DidOpenNotebookDocumentParams } from 'vscode-languageserver/node';
import { analyze } from '../../server/src/engine/analyze';
import { DocumentStore } from '../../server/src/engine/documents';
import { analyzeIncrementally, completeFacts } from '../../server/src/engine/incremental';
import type { AnalysisCache } from '../../server/src/engine/incremental';
import { cellRows, joinCells } from '../../server/src/engine/notebook';
import { NotebookSync, programEdit, sameJson } from '../../server/src/notebooks';
import type { TextChange } from '../../server/src/engine/documents';
import { analyzeText } from '../helpers/analysis';

const NOTEBOOK = 'file:///nb.ipynb';

function harness() {
  const store = new DocumentStore();
  let queue: Promise<unknown> = Promise.resolve();
  let cache: AnalysisCache | undefined;
  const edits: TextChange[][] = [];
  const sync = new NotebookSync({
    enqueue: (_uri, work) => void (queue = queue.then(work)),
    schedule: () => undefined,
    layoutChanged: () => void (queue = queue.then(() => (cache = undefined))),
    open: (uri, version, text) => store.open(uri, version, text),
    change: (uri, version, changes) => {
      edits.push(changes);
      return store.change(uri, version, changes);
    },
    closed: () => undefined,
  });
  return {
    store,
    sync,
    edits,
    /** Applies what is queued and analyses the program as the server does; returns the findings and how many statements were analysed. */
    async analyse() {
      await queue;
      const state = store.get(NOTEBOOK)!;
      const model = store.modelOf(state)!;
      const result = analyzeIncrementally(model, state.text, { notebookCells: sync.cellRowsOf(NOTEBOOK) }, 'options', cache);
      cache = result.cache;
      completeFacts(model, cache);
      return { state, model, ...result };
    },
  };
}

const CELLS = [
  'import torch\nmodel = Net().cuda()\nlosses = []\n\ndef train_step(x, y):\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n    loss.backward()\n    optimizer.step()\n    return loss',
  '# Notes\nThe loop below keeps every loss.',
  '%time warmup()\nfor x, y in loader:\r\n    loss = train_step(x, y)\r\n    losses.append(loss)\r\n',
  'def evaluate(loader):\n    total = 0.0\n    for x, y in loader:\n        total += criterion(model(x), y).item()\n    return total',
  'loss',
];

function openParams(texts: readonly string[]): DidOpenNotebookDocumentParams {
  return {
    notebookDocument: { uri: NOTEBOOK, notebookType: 'jupyter-notebook', version: 1, cells: texts.map((_, i) => ({ kind: i === 1 ? 1 : 2, document: `cell:${i}` } as const)) },
    cellTextDocuments: texts.map((text, i) => ({ uri: `cell:${i}`, languageId: i === 1 ? 'markdown' : 'python', version: 1, text })),
  };
}

test('programEdit is the one edit between two programs, and never splits a CRLF', () => {
  assert.equal(programEdit('abc', 'abc'), undefined);
  assert.deepEqual(programEdit('a\nbc\nd', 'a\nbXc\nd'), { range: { start: { line: 1, character: 1 }, end: { line: 1, character: 1 } }, text: 'X' });
  assert.deepEqual(programEdit('a\r\nb', 'a\nb'), { range: { start: { line: 0, character: 1 }, end: { line: 1, character: 0 } }, text: '\n' });
});

test('an edit inside a function of one cell is one small program edit; the other cells\' statements are reused and not analysed again', async () => {
  const { store, sync, edits, analyse } = harness();
  sync.open(openParams(CELLS));
  const first = await analyse();
  assert.deepEqual(first.findings.map((f) => `${f.code}@${f.range.start.line}`), ['OOM101@13', 'OOM104@18', 'OOM118@20']);
  const before = new Set(first.model.root.children);
  // Rename `total` to `acc` inside evaluate() (cell 3, line 3): a change inside a definition.
  const change: DidChangeNotebookDocumentParams = {
    notebookDocument: { uri: NOTEBOOK, version: 2 },
    change: { cells: { textContent: [{ document: { uri: 'cell:3', version: 2 }, changes: [{ range: { start: { line: 3, character: 8 }, end: { line: 3, character: 13 } }, text: 'acc' }] }] } },
  };
  sync.change(change);
  const second = await analyse();
  assert.equal(edits.at(-1)!.length, 1);
  assert.equal(edits.at(-1)![0]!.text, 'acc');
  const edited = CELLS.map((text, i) => ({ kind: i === 1 ? ('raw' as const) : ('code' as const), text: i === 3 ? text.replace('        total +=', '        acc +=') : text }));
  assert.equal(second.state.text, joinCells(edited).text);
  const reused = second.model.root.children.filter((statement) => before.has(statement));
  assert.ok(reused.length >= second.model.root.children.length - 2, `${reused.length} of ${second.model.root.children.length} statements reused`);
  assert.equal(second.analysedStatements, 1, 'only the changed definition was analysed');
  assert.deepEqual(second.findings, await analyzeText(second.state.text, { notebookCells: sync.cellRowsOf(NOTEBOOK) }));
  store.close(NOTEBOOK);
});

test('after random cell edits and structure changes the program and findings equal a fresh join and analysis', async () => {
  const { sync, analyse } = harness();
  const texts = [...CELLS];
  const kinds = texts.map((_, i) => (i === 1 ? 'markdown' : 'code'));
  const uris = texts.map((_, i) => `cell:${i}`);
  const versions = texts.map(() => 1);
  sync.open(openParams(texts));
  let seed = 11;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  const insertions = ['x', 'loss', '\n', '\r\n', '(', ')', '%time ', '!ls', ';', '', '    ', '# c', 'losses.append(loss)\n'];
  let next = texts.length;
  for (let version = 2; version < 90; version++) {
    if (random(8) === 0) {
      // Structure: add a code cell, remove one, or move one (removed and inserted again without its text).
      const op = random(3);
      if (op === 0 || texts.length < 3) {
        const at = random(texts.length + 1);
        const uri = `cell:${next++}`;
        const text = ['y = model(x)\ny', '', 'for a in b:\n    !echo hi', '%%bash\necho hi'][random(4)]!;
        texts.splice(at, 0, text);
        kinds.splice(at, 0, 'code');
        uris.splice(at, 0, uri);
        versions.splice(at, 0, 1);
        sync.change({ notebookDocument: { uri: NOTEBOOK, version }, change: { cells: { structure: { array: { start: at, deleteCount: 0, cells: [{ kind: 2, document: uri }] }, didOpen: [{ uri, languageId: 'python', version: 1, text }] } } } });
      } else if (op === 1) {
        const at = random(texts.length);
        const [uri] = uris.splice(at, 1);
        texts.splice(at, 1);
        kinds.splice(at, 1);
        versions.splice(at, 1);
        sync.change({ notebookDocument: { uri: NOTEBOOK, version }, change: { cells: { structure: { array: { start: at, deleteCount: 1 }, didClose: [{ uri: uri! }] } } } });
      } else {
        const from = random(texts.length - 1);
        // Swap cells `from` and `from + 1`.
        for (const list of [texts, kinds, uris, versions] as unknown[][]) [list[from], list[from + 1]] = [list[from + 1], list[from]];
        sync.change({ notebookDocument: { uri: NOTEBOOK, version }, change: { cells: { structure: { array: { start: from, deleteCount: 2, cells: [from, from + 1].map((i) => ({ kind: kinds[i] === 'code' ? (2 as const) : (1 as const), document: uris[i]! })) } } } } });
      }
    } else {
      const target = random(texts.length);
      const text = texts[target]!;
      let start = random(text.length + 1);
      let end = Math.min(text.length, start + random(4));
      // No client sends a position between \r and \n.
      if (text[start - 1] === '\r' && text[start] === '\n') start--;
      if (text[end - 1] === '\r' && text[end] === '\n') end++;
      const inserted = insertions[random(insertions.length)]!;
      const lines = text.slice(0, start).split(/\r\n|\r|\n/);
      const endLines = text.slice(0, end).split(/\r\n|\r|\n/);
      const range = { start: { line: lines.length - 1, character: lines.at(-1)!.length }, end: { line: endLines.length - 1, character: endLines.at(-1)!.length } };
      texts[target] = text.slice(0, start) + inserted + text.slice(end);
      versions[target]!++;
      sync.change({ notebookDocument: { uri: NOTEBOOK, version }, change: { cells: { textContent: [{ document: { uri: uris[target]!, version: versions[target]! }, changes: [{ range, text: inserted }] }] } } });
    }
    const { state, model, findings } = await analyse();
    const expected = joinCells(texts.map((text, i) => ({ kind: kinds[i] === 'code' ? 'code' : 'raw', text })));
    assert.equal(state.text, expected.text, `program differs after change ${version}`);
    assert.deepEqual(sync.cellRowsOf(NOTEBOOK), cellRows(expected));
    const fresh = await analyzeText(expected.text, { notebookCells: cellRows(expected) });
    assert.deepEqual(findings, fresh, `findings differ after change ${version}`);
    assert.deepEqual(analyze(model, state.text, { notebookCells: cellRows(expected) }), fresh);
  }
});

test('a cell is published again exactly when its diagnostics would serialise differently', () => {
  const diagnostic = { range: { start: { line: 1, character: 2 }, end: { line: 1, character: 9 } }, message: 'm', code: 'OOM101', data: { fixes: [{ title: 't', edits: [] }] } };
  const values: unknown[] = [
    [], [diagnostic], [{ ...diagnostic }], [{ ...diagnostic, severity: undefined }], [{ ...diagnostic, message: 'n' }],
    [{ ...diagnostic, range: { ...diagnostic.range, end: { line: 1, character: 8 } } }], [diagnostic, diagnostic], [{ ...diagnostic, data: null }],
    [{ ...diagnostic, data: { fixes: [] } }], [{ ...diagnostic, tags: [1] }], [{ ...diagnostic, tags: ['1'] }], [[1]], [{ 0: 1 }],
  ];
  for (const a of values) for (const b of values) assert.equal(sameJson(a, b), JSON.stringify(a) === JSON.stringify(b), `${JSON.stringify(a)} / ${JSON.stringify(b)}`);
});
