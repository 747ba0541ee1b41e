// Protocol tests: the built server over stdio, as an editor drives it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CodeAction, Diagnostic } from 'vscode-languageserver-protocol/node';
import { startServer } from '../helpers/lsp-client';
import type { TestClient } from '../helpers/lsp-client';

const uri = 'file:///work/train_中文.py';
// The emoji is two UTF-16 code units and each CJK character one: LSP columns count UTF-16.
const source = [
  'import torch',
  'losses = []',
  'for x, y in loader:',
  '    optimizer.zero_grad()',
  '    loss = criterion(model(x), y)',
  '    loss.backward()',
  '    optimizer.step()',
  '    s = "显存😀"; losses.append(loss)  # 记录损失 🚀',
  '',
].join('\n');

let client: TestClient;

before(async () => {
  client = await startServer();
});

after(async () => {
  await client.close();
});

function summary(diagnostics: Diagnostic[]) {
  return diagnostics.map((d) => `${d.code}@${d.range.start.line}:${d.range.start.character}-${d.range.end.line}:${d.range.end.character}`);
}

test('publishes findings with exact UTF-16 ranges, a doc link, and no data beside the code', async () => {
  const published = client.diagnostics(uri, 1);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: source } });
  const diagnostics = await published;
  const line = source.split('\n')[7]!;
  const start = line.indexOf('losses.append');
  assert.equal(start, 16);
  assert.deepEqual(summary(diagnostics), [`OOM101@7:${start}-7:${start + 'losses.append(loss)'.length}`]);
  const [diagnostic] = diagnostics;
  assert.equal(diagnostic!.source, 'oomguard');
  assert.equal(diagnostic!.codeDescription?.href.endsWith('docs/rules/OOM101.md'), true);
  assert.match(String(diagnostic!.message), /'loss' is appended with its autograd graph/);
  assert.equal(diagnostic!.code, 'OOM101');
  // Code actions find the fixes by code and range: a `data` repeating the code would only lengthen every publish.
  assert.equal(diagnostic!.data, undefined);
});

test('incremental edits move and drop findings', async () => {
  // Insert a comment line at the top: the finding moves down one line.
  let published = client.diagnostics(uri, 2);
  await client.connection.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 2 },
    contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '# 训练脚本 🧪\n' }],
  });
  assert.deepEqual(summary(await published), ['OOM101@8:16-8:35']);
  // Replace `loss)` by `loss.item())` inside the append: the finding goes away.
  published = client.diagnostics(uri, 3);
  await client.connection.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 3 },
    contentChanges: [{ range: { start: { line: 8, character: 34 }, end: { line: 8, character: 34 } }, text: '.item()' }],
  });
  assert.deepEqual(summary(await published), []);
  // Undo it: the finding is back.
  published = client.diagnostics(uri, 4);
  await client.connection.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 4 },
    contentChanges: [{ range: { start: { line: 8, character: 34 }, end: { line: 8, character: 41 } }, text: '' }],
  });
  assert.deepEqual(summary(await published), ['OOM101@8:16-8:35']);
});

test('a syntax error typed mid-edit keeps the findings of the intact parts', async () => {
  const published = client.diagnostics(uri, 5);
  await client.connection.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 5 },
    contentChanges: [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 0 } }, text: 'def broken(:\n    x = (\n' }],
  });
  const diagnostics = await published;
  assert.deepEqual(diagnostics.map((d) => d.code), ['OOM101']);
});

test('code actions offer noqa and documentation for a finding', async () => {
  const diagnosticsNow = await client.diagnostics(uri, 5);
  const actions = (await client.connection.sendRequest('textDocument/codeAction', {
    textDocument: { uri },
    range: diagnosticsNow[0]!.range,
    context: { diagnostics: diagnosticsNow },
  })) as CodeAction[];
  const titles = actions.map((action) => action.title);
  assert.ok(titles.includes('Disable OOM101 for this line'), titles.join(' | '));
  assert.ok(titles.includes('Show documentation for OOM101'), titles.join(' | '));
  const noqa = actions.find((action) => action.title === 'Disable OOM101 for this line')!;
  const edit = noqa.edit!.changes![uri]![0]!;
  // Appended after the existing comment, at the line's end in UTF-16 units.
  assert.equal(edit.newText, '  # noqa: OOM101');
  const lineLength = '    s = "显存😀"; losses.append(loss)  # 记录损失 🚀'.length;
  assert.deepEqual(edit.range.start, { line: 10, character: lineLength });
});

test('settings pushed by the client select rules and severities', async () => {
  const otherUri = 'file:///work/pinned.py';
  let published = client.diagnostics(otherUri, 1);
  await client.connection.sendNotification('textDocument/didOpen', {
    textDocument: { uri: otherUri, languageId: 'python', version: 1, text: 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n' },
  });
  assert.deepEqual((await published).map((d) => [d.code, d.severity]), [['OOM105', 2]]);
  published = client.nextDiagnostics(otherUri);
  await client.connection.sendNotification('workspace/didChangeConfiguration', { settings: { oomguard: { rules: { severity: { OOM105: 'error' } } } } });
  assert.deepEqual((await published).map((d) => [d.code, d.severity]), [['OOM105', 1]]);
  published = client.nextDiagnostics(otherUri);
  await client.connection.sendNotification('workspace/didChangeConfiguration', { settings: { oomguard: { rules: { ignore: ['OOM105'] } } } });
  assert.deepEqual(await published, []);
  await client.connection.sendNotification('workspace/didChangeConfiguration', { settings: { oomguard: {} } });
});

test('closing a document clears its diagnostics', async () => {
  await client.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  // Re-analyses that the last settings change queued may still arrive first; the clearing one comes last.
  let diagnostics = await client.nextDiagnostics(uri);
  for (let i = 0; i < 3 && diagnostics.length > 0; i++) diagnostics = await client.nextDiagnostics(uri);
  assert.deepEqual(diagnostics, []);
  assert.equal(client.stderr(), '');
});

test('lone \\r line endings: diagnostics and the quick fix name the same line as the editor', async () => {
  const macUri = 'file:///work/mac_endings.py';
  const lines = [
    'import torch',
    'def train(model, loader, optimizer):',
    '    for x, y in loader:',
    '        optimizer.zero_grad()',
    '        model(x, y).backward()',
    '        torch.cuda.empty_cache()',
    '        optimizer.step()',
    '',
  ];
  const published = client.diagnostics(macUri, 1);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri: macUri, languageId: 'python', version: 1, text: lines.join('\r') } });
  const diagnostics = await published;
  assert.deepEqual(summary(diagnostics), ['OOM106@5:8-5:32']);
  const actions = (await client.connection.sendRequest('textDocument/codeAction', {
    textDocument: { uri: macUri },
    range: diagnostics[0]!.range,
    context: { diagnostics },
  })) as CodeAction[];
  const fix = actions.find((action) => action.kind === 'quickfix' && action.edit?.changes?.[macUri]);
  assert.ok(fix, actions.map((action) => action.title).join(' | '));
  const [edit] = fix.edit!.changes![macUri]!;
  assert.deepEqual([edit!.range.start.line, edit!.range.end.line, edit!.newText], [5, 6, '']);
});

test('a quick fix is that of the current text: a diagnostic the text no longer has gets no edit', async () => {
  const staleUri = 'file:///work/stale_fix.py';
  const text = ['import torch', 'def train(model, loader, optimizer):', '    for x, y in loader:', '        model(x, y).backward()', '        torch.cuda.empty_cache()', '        optimizer.step()', ''].join('\n');
  const published = client.diagnostics(staleUri, 1);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri: staleUri, languageId: 'python', version: 1, text } });
  const [diagnostic] = await published;
  assert.equal(diagnostic?.code, 'OOM106');
  const fixTitles = async (diagnostics: Diagnostic[]) =>
    ((await client.connection.sendRequest('textDocument/codeAction', { textDocument: { uri: staleUri }, range: diagnostics[0]!.range, context: { diagnostics } })) as CodeAction[])
      // The finding's own fixes (not the line's noqa, nor fix-all, which reads the current findings).
      .filter((action) => action.edit && !action.title.startsWith('Disable') && !action.title.startsWith('Fix all'))
      .map((action) => action.title);
  assert.ok((await fixTitles([diagnostic!])).some((title) => title.startsWith('Remove torch.cuda.empty_cache()')));
  // A line is inserted above and the client asks before it has the new diagnostics: the old range names no finding.
  const moved = client.diagnostics(staleUri, 2);
  await client.connection.sendNotification('textDocument/didChange', {
    textDocument: { uri: staleUri, version: 2 },
    contentChanges: [{ range: { start: { line: 3, character: 0 }, end: { line: 3, character: 0 } }, text: '        x = x.cuda()\n' }],
  });
  assert.deepEqual(await fixTitles([diagnostic!]), []);
  const [now] = await moved;
  assert.deepEqual(now?.range.start, { line: 5, character: 8 });
  assert.ok((await fixTitles([now!])).some((title) => title.startsWith('Remove torch.cuda.empty_cache()')));
});
