// The incremental path (tree.edit, re-parse, reuse of unchanged statements) must give exactly what a fresh parse
// gives: the same tree shape and positions, and the same findings, after every edit of a random sequence.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { analyze } from '../../server/src/engine/analyze';
import { computeLineStarts, DocumentStore } from '../../server/src/engine/documents';
import type { DocumentState } from '../../server/src/engine/documents';
import { analyzeIncrementally, completeFacts, completeFactsForEdit, completeFactsOnRows, completeSomeFacts } from '../../server/src/engine/incremental';
import type { AnalysisCache } from '../../server/src/engine/incremental';
import type { SyntaxNode } from '../../server/src/engine/syntax-tree';
import { copyTree } from '../../server/src/engine/syntax-tree';
import { queryNames } from '../../server/src/engine/queries';
import { SemanticModel } from '../../server/src/engine/semantic/model';
import { indentUnitOfTree } from '../../server/src/fixes/edits';
import { analyzeText, repoRoot } from '../helpers/analysis';
import { editSites, generateTrainingScript } from '../../scripts/bench/generate';

function shape(node: SyntaxNode): string {
  return `${node.type}@${node.startIndex}-${node.endIndex}:${node.startPosition.row}.${node.startPosition.column}-${node.endPosition.row}.${node.endPosition.column}(${node.children.map(shape).join(',')})`;
}

function positionOf(text: string, offset: number) {
  const starts = computeLineStarts(text);
  let line = 0;
  while (line + 1 < starts.length && starts[line + 1]! <= offset) line++;
  return { line, character: offset - starts[line]! };
}

for (const lineBreak of ['\n', '\r\n', '\r']) test(`incremental copies and findings equal a fresh analysis after each of 120 random edits (${JSON.stringify(lineBreak)} line breaks)`, async () => {
  let text = fs.readFileSync(path.join(repoRoot, 'test', 'fixtures', 'rules', 'OOM101', 'appended.py'), 'utf8').replace(/\n/g, lineBreak);
  const store = new DocumentStore();
  let state = await store.open('mem://a.py', 1, text);
  store.modelOf(state);
  let seed = 7;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  // Mostly edits that keep the file valid (so statements can be reused), with some that break it.
  const insertions = ['x', 'x', 'x', '1', '\n', 'loss', '', '', '', '# c', '(', ')'];
  let reusedSomewhere = false;
  for (let version = 2; version < 122; version++) {
    // Edits land inside identifiers or comments most of the time: after a letter.
    let start = random(text.length);
    while (start > 0 && !/[a-z_]/.test(text[start - 1]!)) start--;
    let end = Math.min(text.length, start + random(4));
    // Never end between the two characters of a CRLF (no editor sends such a position).
    if (text[end - 1] === '\r') end--;
    const inserted = insertions[random(insertions.length)]!.replace(/\n/g, lineBreak);
    const previousChildren = new Set(state.syntaxRoot?.children ?? []);
    state = (await store.change('mem://a.py', version, [{ range: { start: positionOf(text, start), end: positionOf(text, end) }, text: inserted }]))!;
    text = text.slice(0, start) + inserted + text.slice(end);
    assert.equal(state.text, text);
    assert.deepEqual(state.lineStarts, computeLineStarts(text), `line starts differ after edit ${version}`);
    const model = store.modelOf(state)!;
    reusedSomewhere ||= model.root.children.some((child) => previousChildren.has(child));
    const fresh = new DocumentStore();
    const freshState = await fresh.open('mem://b.py', 1, text);
    const freshModel = fresh.modelOf(freshState)!;
    // tree-sitter recovers from a syntax error in its own way on an incremental parse; only error-free trees
    // must have the same shape (the findings must match either way).
    if (!freshModel.root.hasError) assert.ok(shape(model.root) === shape(freshModel.root), `tree differs after edit ${version}`);
    assert.deepEqual(analyze(model, text), await analyzeText(text), `findings differ after edit ${version}`);
    fresh.close('mem://b.py');
  }
  assert.ok(reusedSomewhere, 'no statement was ever reused');
});

test('incremental findings equal a full analysis after each of 240 edits across several scripts', async () => {
  const files = ['test/fixtures/rules/OOM101/appended.py', 'test/fixtures/rules/OOM103/zero_grad.py', 'test/fixtures/rules/OOM104/eval.py', 'test/corpus/actor_critic.py', 'test/corpus/nanogpt_train.py',
    'test/fixtures/rules/OOM110/distributed_load.py', 'test/fixtures/rules/OOM112/worker_code.py', 'test/fixtures/rules/OOM113/frozen_forwards.py', 'test/fixtures/rules/OOM100/unused_noqa.py'];
  let reusedRuns = 0;
  for (const [fileIndex, file] of files.entries()) {
    let text = fs.readFileSync(path.join(repoRoot, file), 'utf8');
    const store = new DocumentStore();
    let state = await store.open('mem://c.py', 1, text);
    let cache: AnalysisCache | undefined;
    let seed = 11 + fileIndex;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    // Edits that matter to the rules: detach a value, drop a zero_grad, add a no_grad, rename, break a line.
    const insertions = ['.detach()', '.item()', 'x', '', '\n', '#', 'with torch.no_grad():\n    ', '_'];
    for (let version = 2; version < 32; version++) {
      let start = random(text.length);
      while (start > 0 && !/[a-z_)]/.test(text[start - 1]!)) start--;
      const end = Math.min(text.length, start + random(3));
      const inserted = insertions[random(insertions.length)]!;
      state = (await store.change('mem://c.py', version, [{ range: { start: positionOf(text, start), end: positionOf(text, end) }, text: inserted }]))!;
      text = text.slice(0, start) + inserted + text.slice(end);
      const model = store.modelOf(state)!;
      assert.equal(modelDigest(model), modelDigest(new SemanticModel(model.root, text)), `the model differs from a fresh one after version ${version}`);
      const result = analyzeIncrementally(model, state.content, {}, 'default', cache);
      cache = result.cache;
      completeFacts(model, cache);
      if (result.analysedStatements < model.root.children.length) reusedRuns++;
      assert.deepEqual(result.findings, await analyzeText(text), `${file}: findings differ after edit ${version}`);
    }
  }
  // Many random edits break the syntax or touch module-level code (full analysis); enough must take the reuse path.
  assert.ok(reusedRuns >= 10, `only ${reusedRuns} runs reused findings`);
});

test('module-level edits across the whole corpus: findings equal a full analysis after every edit, and most reuse findings', async () => {
  const files = fs.readdirSync(path.join(repoRoot, 'test', 'corpus')).filter((name) => name.endsWith('.py')).sort();
  let edits = 0;
  let reused = 0;
  for (const [fileIndex, name] of files.entries()) {
    let text = fs.readFileSync(path.join(repoRoot, 'test', 'corpus', name), 'utf8');
    const store = new DocumentStore();
    let state = await store.open('mem://m.py', 1, text);
    let cache: AnalysisCache | undefined;
    let seed = 101 + fileIndex;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    // Edits at column 0 lines (module-level code): names, numbers, detach, no_grad blocks, deleted characters.
    const insertions = ['.detach()', '1', 'x', '', '_', '.item()', '\n', ' = 0'];
    const moduleLines = [...text.matchAll(/^[A-Za-z_].*$/gm)].map((match) => match.index!).filter((index) => !/^(def|class|@|import|from)\b/.test(text.slice(index)));
    for (let version = 2; version < 14 && moduleLines.length > 0; version++) {
      const lineStart = moduleLines[random(moduleLines.length)]!;
      const lineEnd = text.indexOf('\n', lineStart) < 0 ? text.length : text.indexOf('\n', lineStart);
      const start = Math.min(text.length, lineStart + random(Math.max(1, lineEnd - lineStart)));
      const end = Math.min(text.length, start + random(2));
      const inserted = insertions[random(insertions.length)]!;
      state = (await store.change('mem://m.py', version, [{ range: { start: positionOf(text, start), end: positionOf(text, end) }, text: inserted }]))!;
      text = text.slice(0, start) + inserted + text.slice(end);
      const model = store.modelOf(state)!;
      assert.equal(modelDigest(model), modelDigest(new SemanticModel(model.root, text)), `the model differs from a fresh one after version ${version}`);
      const result = analyzeIncrementally(model, state.content, {}, 'default', cache);
      cache = result.cache;
      completeFacts(model, cache);
      edits++;
      if (result.analysedStatements < model.root.children.length) reused++;
      assert.deepEqual(result.findings, await analyzeText(text), `${name}: findings differ after module-level edit ${version}`);
      // Later edits index the new text.
      moduleLines.length = 0;
      moduleLines.push(...[...text.matchAll(/^[A-Za-z_].*$/gm)].map((match) => match.index!).filter((index) => !/^(def|class|@|import|from)\b/.test(text.slice(index))));
    }
  }
  // An edit of module-level code analyses all module-level code again, not the functions (engine/incremental.ts);
  // edits that break the syntax or change what a statement tells the others still take the whole file.
  assert.ok(reused * 3 >= edits, `only ${reused} of ${edits} module-level edits reused findings`);
});

test('module-level edits that call nothing (names, numbers, blank space) analyse only the module-level code that shares a name with them, and findings equal a full analysis', async () => {
  const folders = ['corpus', 'corpus-holdout', 'corpus-holdout2'];
  const files = folders.flatMap((folder) => fs.readdirSync(path.join(repoRoot, 'test', folder)).filter((name) => name.endsWith('.py')).sort().map((name) => path.join(repoRoot, 'test', folder, name)));
  let edits = 0;
  let narrowed = 0;
  for (const [fileIndex, file] of files.entries()) {
    let text = fs.readFileSync(file, 'utf8');
    const store = new DocumentStore();
    let state = await store.open('mem://n.py', 1, text);
    let cache: AnalysisCache | undefined;
    let seed = 303 + fileIndex;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    // What a user types into module-level code without a call: a name's letters, a number, a rebinding, an empty
    // list, blank space at the end of a line; or a deleted character.
    const insertions = ['x', '_', '1', '', ' = 0', ' = []', ' ', 'losses', 'model'];
    // Module-level lines that call nothing (a part that calls something analyses all module-level code again).
    const moduleLines = () => [...text.matchAll(/^[A-Za-z_][^()\n]*$/gm)].map((match) => match.index!).filter((index) => !/^(def|class|@|import|from)\b/.test(text.slice(index)));
    let lines = moduleLines();
    for (let version = 2; version < 10 && lines.length > 0; version++) {
      const lineStart = lines[random(lines.length)]!;
      const lineEnd = text.indexOf('\n', lineStart) < 0 ? text.length : text.indexOf('\n', lineStart);
      const start = Math.min(text.length, lineStart + random(Math.max(1, lineEnd - lineStart + 1)));
      const end = Math.min(lineEnd, start + random(2));
      const inserted = insertions[random(insertions.length)]!;
      state = (await store.change('mem://n.py', version, [{ range: { start: positionOf(text, start), end: positionOf(text, end) }, text: inserted }]))!;
      text = text.slice(0, start) + inserted + text.slice(end);
      const model = store.modelOf(state)!;
      const result = analyzeIncrementally(model, state.content, {}, 'default', cache);
      cache = result.cache;
      completeFacts(model, cache);
      if (!model.root.hasError) edits++;
      const moduleCode = model.root.children.filter((statement) => statement.type !== 'comment' && statement.type !== 'function_definition' && statement.type !== 'class_definition' && statement.type !== 'decorated_definition').length;
      if (!model.root.hasError && result.analysedStatements < moduleCode) narrowed++;
      assert.deepEqual(result.findings, await analyzeText(text), `${path.basename(file)}: findings differ after module-level edit ${version} (${JSON.stringify(inserted)} at ${start})`);
      lines = moduleLines();
    }
  }
  // Of the edits that keep the file parsing, those that change what a statement tells the others (a role, a fact)
  // take the whole file, and a name that most module-level code mentions takes all of it; many take neither.
  assert.ok(narrowed * 3 >= edits, `only ${narrowed} of ${edits} module-level edits that parse analysed less than all module-level code`);
});

test('edits of every kind in a 20,000-line script: incremental findings equal a full analysis after each', async () => {
  let text = generateTrainingScript(20_000, 5);
  const store = new DocumentStore();
  let state = await store.open('mem://big.py', 1, text);
  let cache: AnalysisCache | undefined;
  let seed = 2024;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  // Where a user types (as `npm run bench` edits): a module-level setting, a function body, the training loop, a
  // docstring, the entry point at the end of the file; what they type changes what the rules see.
  const kinds: Array<[string, RegExp]> = [
    ['module level', /^BLOCK_\d+_WIDTH = 256|^block_\d+_history = \[\]/gm],
    ['function body', /^    seen = 0$/gm],
    ['training loop', /^        total \+= loss\.item\(\)$|^        losses\.append\(loss\)$/gm],
    ['docstring', /Residual MLP block/g],
    ['end of file', /^    train_epoch_\d+\(model.*$/gm],
  ];
  const insertions = ['.detach()', '1', 'x', '', '_', '.item()', ' = 0', '\n', 'torch.cuda.empty_cache()\n'];
  let version = 1;
  let reused = 0;
  for (let round = 0; round < 2; round++) {
    for (const [kind, pattern] of kinds) {
      const sites = [...text.matchAll(pattern)].map((match) => [match.index!, match[0].length] as const);
      const [at, length] = sites[random(sites.length)]!;
      const start = at + random(length);
      const end = Math.min(text.length, start + random(2));
      const inserted = insertions[random(insertions.length)]!;
      version++;
      state = (await store.change('mem://big.py', version, [{ range: { start: positionOf(text, start), end: positionOf(text, end) }, text: inserted }]))!;
      text = text.slice(0, start) + inserted + text.slice(end);
      const model = store.modelOf(state)!;
      // As the server runs it: with the indentation unit the document counts edit by edit.
      const result = analyzeIncrementally(model, state.content, {}, 'default', cache, '', store.indentUnitOf(state));
      assert.equal(modelDigest(model), modelDigest(new SemanticModel(model.root, text)), `the model differs from a fresh one after the ${kind} edit of version ${version}`);
      cache = result.cache;
      completeFacts(model, cache);
      if (result.analysedStatements < model.root.children.length) reused++;
      assert.deepEqual(result.findings, await analyzeText(text), `findings differ after the ${kind} edit of version ${version} (${JSON.stringify(inserted)})`);
    }
  }
  // Many random edits break the syntax or change what a statement tells the others; enough must reuse findings.
  assert.ok(reused >= 3, `only ${reused} of ${version - 1} edits reused findings`);
});

test('the edits `npm run bench` makes in a 20,000-line script are parsed and analysed statement by statement without making the whole text, and equal a full analysis', async () => {
  let text = generateTrainingScript(20_000, 3);
  const store = new DocumentStore();
  let state = await store.open('mem://bench.py', 1, text);
  let cache = analyzeIncrementally(store.modelOf(state)!, state.content, {}, 'default', undefined, '', store.indentUnitOf(state)).cache;
  completeFacts(store.modelOf(state)!, cache);
  const sites = editSites(text.split('\n'));
  let version = 1;
  for (const kind of [...new Set(sites.map((site) => site.kind))]) {
    const ofKind = sites.filter((site) => site.kind === kind);
    for (const site of [ofKind[0]!, ofKind[ofKind.length - 1]!]) {
      for (const undo of [false, true]) {
        // As the bench types them: a one-character replacement, or a space typed after the last character and deleted.
        const [character, length, inserted] = kind === 'end of file' ? [site.character + 1, undo ? 1 : 0, undo ? '' : ' '] : [site.character, 1, undo ? site.original : site.replacement];
        const lineStart = computeLineStarts(text)[site.line]!;
        state = (await store.change('mem://bench.py', ++version, [{ range: { start: { line: site.line, character }, end: { line: site.line, character: character + length } }, text: inserted }]))!;
        text = text.slice(0, lineStart + character) + inserted + text.slice(lineStart + character + length);
        assert.ok(state.treeBehind, `the ${kind} edit of version ${version} was not parsed statement by statement`);
        const model = store.modelOf(state)!;
        const result = analyzeIncrementally(model, state.content, {}, 'default', cache, '', store.indentUnitOf(state));
        cache = result.cache;
        assert.ok(result.analysedStatements < model.root.children.length, `the ${kind} edit of version ${version} analysed the whole file`);
        assert.ok(!state.content.isWhole, `the ${kind} edit of version ${version} made the whole text`);
        completeFacts(model, cache);
        assert.deepEqual(result.findings, await analyzeText(text), `findings differ after the ${kind} edit of version ${version}`);
      }
    }
  }
  assert.equal(state.text, text);
});

/** indentUnit's answer, read line by line without any cache. */
function referenceIndentUnit(text: string): string {
  let unit = Infinity;
  for (const line of text.split(/\r\n|\r|\n/)) {
    const run = /^( +|\t+)\S/.exec(line)?.[1];
    if (run?.[0] === '\t') return '\t';
    if (run) unit = Math.min(unit, run.length);
  }
  return ' '.repeat(Number.isFinite(unit) ? unit : 4);
}

test('the indentation unit, read statement by statement and counted line by line edit by edit, equals a scan of the whole text after each of 240 random edits', async () => {
  const script = fs.readFileSync(path.join(repoRoot, 'test', 'corpus', 'nanogpt_train.py'), 'utf8');
  // The script as written (4 spaces) and indented with tabs, with each kind of line break.
  for (const [base, lineBreak] of [script, script.replace(/^ {4}/gm, '\t')].flatMap((base) => ['\n', '\r\n', '\r'].map((lineBreak) => [base, lineBreak] as const))) {
    let text = base.replace(/\r?\n/g, lineBreak);
    const store = new DocumentStore();
    let state = await store.open('mem://i.py', 1, text);
    store.modelOf(state);
    let seed = 5;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    // Edits that change what starts a line: spaces, tabs, line breaks (a lone CR too), strings that span lines.
    const insertions = ['  ', ' ', '\t', '\n', '\n\t', '\nx', '\n   y = 1', 'x', '', '"""\n  s\n"""', '\r', '\n\n'];
    for (let version = 2; version < 42; version++) {
      let start = random(text.length);
      let end = Math.min(text.length, start + random(3));
      // Never split a CRLF (no editor sends such a position).
      if (text[start - 1] === '\r' && text[start] === '\n') start--;
      if (text[end - 1] === '\r' && text[end] === '\n') end--;
      if (end < start) end = start;
      const inserted = insertions[random(insertions.length)]!.replace(/\n/g, lineBreak);
      state = (await store.change('mem://i.py', version, [{ range: { start: positionOf(text, start), end: positionOf(text, end) }, text: inserted }]))!;
      text = text.slice(0, start) + inserted + text.slice(end);
      const model = store.modelOf(state)!;
      assert.equal(indentUnitOfTree(model.root, state.text), referenceIndentUnit(state.text), `indentation unit differs after edit ${version} (${JSON.stringify(lineBreak)})`);
      // And as the document counts it line by line, edit by edit (what the server hands the analysis).
      assert.equal(store.indentUnitOf(state), referenceIndentUnit(state.text), `counted indentation unit differs after edit ${version} (${JSON.stringify(lineBreak)})`);
    }
    store.close('mem://i.py');
  }
});

/** What a model's whole-file lists and tables say, by node ranges: a model derived from the previous version's must say the same as one built afresh. */
function modelDigest(model: SemanticModel): string {
  const ranges = (nodes: readonly SyntaxNode[]) => nodes.map((node) => `${node.startIndex}-${node.endIndex}`).join(' ');
  return JSON.stringify([
    ranges(model.calls), ranges(model.assignments), ranges(model.augmentedAssignments), ranges(model.loops), ranges(model.withStatements),
    ranges(model.deleteStatements), ranges(model.returnStatements), [...model.imports],
    model.classes.map((cls) => [cls.name, cls.node.startIndex, cls.baseNames, cls.isModule, cls.isLightning]),
    model.functions.map((info) => [info.name, info.node.startIndex, info.classInfo?.node.startIndex, ranges(info.decorators)]),
    model.globalsSignature(), [...model.calleeNames()].sort(),
    ['append', 'backward', 'to', 'set_grad_enabled', 'zero_grad', 'DataLoader'].map((name) => ranges(model.callsNamed(name))),
    model.functions.map((info) => model.functionInfo(info.node) === info && model.callersOf(info).length),
    // The indexes and word counts carried from version to version (SemanticModel.statementIndex, spells).
    [...model.assignments, ...model.augmentedAssignments].map((assignment) => {
      const target = assignment.childForFieldName('left')?.text ?? '';
      return [target, ranges(model.assignmentsTo(target)), ranges(model.augmentedAssignmentsTo(target))];
    }),
    ['backward', 'create_graph', 'noqa', 'oomguard', 'DistributedDataParallel', 'LOCAL_RANK', 'x', 'loss.item'].map((word) => model.spells(word)),
  ]);
}

/** Every query's matches as sorted strings (capture name, range, type), to compare two models of the same text. */
function allMatches(model: SemanticModel, region?: readonly SyntaxNode[]): string[] {
  return queryNames().flatMap((name) => model.queryMatches(name, region).map((captures) =>
    `${name}:${[...captures].map(([capture, node]) => `${capture}@${node.startIndex}-${node.endIndex}:${node.type}`).join(',')}`)).sort();
}

test('an edit inside one statement is parsed with that statement alone: the same copy, query matches and findings as a fresh parse', async () => {
  let text = generateTrainingScript(400, 3) + '\nfor x in data:\n    loss = model(x)\n    loss.backward(retain_graph=True)\n    torch.cuda.empty_cache()\n';
  const store = new DocumentStore();
  let state = await store.open('mem://s.py', 1, text);
  store.modelOf(state);
  let seed = 11;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  // Each edit is undone next (as a user types and deletes): some break the file or add a statement (the whole
  // parse then runs), the undo brings it back to an error-free state.
  const insertions = ['x', '_', '1', '', ' ', '\n', '\n    ', '# c', '(', ')', '\nz = 2\n', 'retain_graph=True, ', '"""', '\\'];
  let alone = 0;
  let version = 1;
  const check = async (start: number, end: number, inserted: string) => {
    version++;
    state = (await store.change('mem://s.py', version, [{ range: { start: positionOf(text, start), end: positionOf(text, end) }, text: inserted }]))!;
    text = text.slice(0, start) + inserted + text.slice(end);
    const model = store.modelOf(state)!;
    assert.equal(modelDigest(model), modelDigest(new SemanticModel(model.root, text)), `the model differs from a fresh one after edit ${version}`);
    const parsedAlone = state.treeBehind;
    if (parsedAlone) alone++;
    const fresh = new DocumentStore();
    const freshModel = fresh.modelOf(await fresh.open('mem://f.py', 1, text))!;
    if (parsedAlone || !freshModel.root.hasError) assert.ok(shape(model.root) === shape(freshModel.root), `tree differs after edit ${version}`);
    if (parsedAlone) {
      // Statement by statement (the parses alone), then after the document's tree is brought up to date.
      assert.deepEqual(allMatches(model, model.root.children), allMatches(freshModel), `query matches differ after edit ${version}`);
      assert.equal(shape(copyTree(store.currentTree(state)!, text)), shape(freshModel.root), `re-parsed tree differs after edit ${version}`);
      assert.equal(state.treeBehind, false);
    }
    assert.deepEqual(analyze(model, text), await analyzeText(text), `findings differ after edit ${version}`);
    fresh.close('mem://f.py');
  };
  for (let round = 0; round < 60; round++) {
    let start = random(text.length);
    while (start > 0 && !/[a-z_]/.test(text[start - 1]!)) start--;
    const end = Math.min(text.length, start + random(3));
    const removed = text.slice(start, end);
    const inserted = insertions[random(insertions.length)]!;
    await check(start, end, inserted);
    await check(start, start + inserted.length, removed);
  }
  assert.ok(alone >= 30, `only ${alone} of ${version - 1} edits were parsed statement by statement`);
});

test('when only the leak sizes change (the estimate arrived), only the rules that write them run again, with the full analysis\'s result', async () => {
  const text = generateTrainingScript(1000, 3);
  const store = new DocumentStore();
  const state = await store.open('mem://sizes.py', 1, text);
  const model = store.modelOf(state)!;
  const first = analyzeIncrementally(model, state.text, {}, 'default', undefined, JSON.stringify([null, null]));
  completeFacts(model, first.cache);
  const sized = { keptBytes: (keeps: string) => (keeps === 'graph' ? 300 * 2 ** 20 : 12 * 2 ** 20) };
  const again = analyzeIncrementally(model, state.text, sized, 'default', first.cache, JSON.stringify([300, 12]));
  assert.deepEqual(again.findings, analyze(model, state.text, sized));
  const withSizes = again.findings.filter((finding) => finding.sizeHint);
  assert.ok(withSizes.length > 0, 'the script has sized leaks');
  assert.equal(again.analysedStatements, 0, 'the other rules did not run again');
  // The same sizes again: nothing to analyse for them (a change elsewhere would take the ordinary edit path).
  const unchanged = analyzeIncrementally(model, state.text, sized, 'default', again.cache, JSON.stringify([300, 12]));
  assert.deepEqual(unchanged.findings, again.findings);
});

test('new leak sizes that arrive with an edit rewrite the findings kept and analyse only what the edit changed, with the full analysis\'s result', async () => {
  const text = generateTrainingScript(1000, 3);
  const store = new DocumentStore();
  let state = await store.open('mem://sizes-edit.py', 1, text);
  let model = store.modelOf(state)!;
  const first = analyzeIncrementally(model, state.text, {}, 'default', undefined, JSON.stringify([null, null]));
  completeFacts(model, first.cache);
  const lines = text.split('\n');
  const row = lines.findIndex((line) => line.includes('total += loss.item()'));
  const column = lines[row]!.indexOf('total');
  state = (await store.change('mem://sizes-edit.py', 2, [{ range: { start: { line: row, character: column }, end: { line: row, character: column + 1 } }, text: 'T' }]))!;
  model = store.modelOf(state)!;
  const sized = { keptBytes: (keeps: string) => (keeps === 'graph' ? 300 * 2 ** 20 : 12 * 2 ** 20) };
  const edited = analyzeIncrementally(model, state.text, sized, 'default', first.cache, JSON.stringify([300, 12]));
  assert.ok(edited.analysedStatements < model.root.children.length, `${edited.analysedStatements} of ${model.root.children.length} statements analysed`);
  assert.ok(edited.findings.some((finding) => finding.sizeHint), 'the script has sized leaks');
  assert.deepEqual(edited.findings, analyze(model, state.text, sized));
});

test('an edit right after opening reuses the other statements when only the facts of the edited rows were computed (the rest still pending)', async () => {
  const text = generateTrainingScript(2000, 5);
  const store = new DocumentStore();
  let state = await store.open('mem://pending.py', 1, text);
  let model = store.modelOf(state)!;
  const first = analyzeIncrementally(model, state.text, {}, 'default', undefined);
  const lines = text.split('\n');
  const row = lines.findIndex((line) => line.includes('total += loss.item()'));
  const column = lines[row]!.indexOf('total');
  completeFactsOnRows(model, first.cache, row, row);
  state = (await store.change('mem://pending.py', 2, [{ range: { start: { line: row, character: column }, end: { line: row, character: column + 1 } }, text: 'T' }]))!;
  model = store.modelOf(state)!;
  const edited = analyzeIncrementally(model, state.text, {}, 'default', first.cache);
  assert.ok(edited.analysedStatements < model.root.children.length, `${edited.analysedStatements} of ${model.root.children.length} statements analysed`);
  assert.deepEqual(edited.findings, analyze(model, state.text, {}));
});

test('the facts are computed a slice at a time, each from where the last stopped, to the same result as all at once', async () => {
  const text = generateTrainingScript(2000, 5);
  const store = new DocumentStore();
  const state = await store.open('mem://slices.py', 1, text);
  const model = store.modelOf(state)!;
  const sliced = analyzeIncrementally(model, state.text, {}, 'default', undefined).cache;
  const whole = analyzeIncrementally(model, state.text, {}, 'default', undefined).cache;
  let slices = 1;
  while (!completeSomeFacts(model, sliced, 0)) slices++;
  completeFacts(model, whole);
  // The budget is checked after each statement: an edit never waits for more than one statement past it.
  assert.equal(slices, model.root.children.length, 'a zero budget stops after each statement');
  const factsOf = (cache: AnalysisCache) => cache.children.map((statement) => cache.statements.get(statement)!.facts);
  assert.deepEqual(factsOf(sliced), factsOf(whole));
});

test('callersOf, resolved once per name for every function of that name, gives each function the calls that resolve to it', async () => {
  // Hundreds of classes share `__init__` (and `super().__init__()` calls); functions share names across classes;
  // a module-level alias calls one of them by another name.
  const text = generateTrainingScript(2000, 7) + '\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n    def forward(self, x):\n        return x\n\nhead = Head()\nrun = head.forward\nrun(1)\nhead.forward(2)\n';
  const store = new DocumentStore();
  const model = store.modelOf(await store.open('mem://callers.py', 1, text))!;
  const shared = model.functions.filter((info) => info.name === '__init__');
  assert.ok(shared.length > 10, `${shared.length} functions named __init__`);
  for (const info of model.functions) {
    const expected = model.callsNamed(info.name).filter((call) => model.resolveLocalFunction(call)?.node.id === info.node.id);
    assert.deepEqual(model.callersOf(info), expected, `callers of ${info.name} at row ${info.node.startPosition.row}`);
  }
});

test('callersOf carried to the next version after an edit of a class, a method or a call equals the calls resolved afresh', async () => {
  // Instances of local classes whose methods are called elsewhere (`helper.evaluate(…)` under no_grad), classes that
  // gain or lose a method, a function and a method of one name, calls added and removed inside the edited statements.
  let text = [
    'import torch', 'import torch.nn as nn', '',
    'class Helper:', '    """Helper."""', '', '    def __init__(self):', '        super().__init__()', '',
    '    def evaluate(self, x):', '        return self.score(x)', '',
    '    def score(self, x):', '        return x', '',
    'class Other(nn.Module):', '    def __init__(self):', '        super().__init__()', '',
    'def score(x):', '    return x', '',
    'helper = Helper()', 'other = Other()', '',
    'with torch.no_grad():', '    helper.evaluate(1)', '    other.evaluate(2)', '    score(3)', '    evaluate(5)', '',
  ].join('\n');
  const edits: Array<[string, string]> = [
    ['"""Helper."""', '"""Helper, edited."""'],
    ['        return self.score(x)', '        return self.score(x) + self.score(x)'],
    ['        return self.score(x) + self.score(x)', '        return x'],
    ['class Other(nn.Module):\n    def __init__(self):\n        super().__init__()', 'class Other(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n    def evaluate(self, x):\n        return x'],
    ['    def evaluate(self, x):\n        return x\n', '    def evaluated(self, x):\n        return x\n'],
    ['    def score(self, x):\n        return x', '    def scored(self, x):\n        return x'],
    ['def score(x):', 'def score(y):'],
    ['def score(y):', 'def evaluate(x):\n    return x\n\ndef score(y):'],
    ['    helper.evaluate(1)', '    helper.evaluate(1)\n    helper.evaluate(4)'],
  ];
  const store = new DocumentStore();
  let state = await store.open('mem://carried.py', 1, text);
  const resolvedAfresh = (model: SemanticModel) => model.functions.map((info) =>
    `${info.name}@${info.node.startIndex}: ${model.callsNamed(info.name).filter((call) => model.resolveLocalFunction(call)?.node.id === info.node.id).map((call) => call.startIndex).join(' ')}`);
  const carried = (model: SemanticModel) => model.functions.map((info) => `${info.name}@${info.node.startIndex}: ${model.callersOf(info).map((call) => call.startIndex).join(' ')}`);
  let model = store.modelOf(state)!;
  assert.deepEqual(carried(model), resolvedAfresh(model));
  for (const [version, [before, after]] of edits.entries()) {
    const start = text.indexOf(before);
    assert.ok(start >= 0, before);
    state = (await store.change('mem://carried.py', version + 2, [{ range: { start: positionOf(text, start), end: positionOf(text, start + before.length) }, text: after }]))!;
    text = text.slice(0, start) + after + text.slice(start + before.length);
    model = store.modelOf(state)!;
    assert.deepEqual(carried(model), resolvedAfresh(model), `callers differ after the edit of ${JSON.stringify(before)}`);
    assert.deepEqual(carried(model), carried(new SemanticModel(model.root, text)), `callers differ from a fresh model's after the edit of ${JSON.stringify(before)}`);
  }
});

test('a module-level edit right after opening computes first the facts of the statements that share a name with it: the rest stay pending, and the findings equal a full analysis', async () => {
  let text = generateTrainingScript(2000, 5);
  const store = new DocumentStore();
  let state = await store.open('mem://names.py', 1, text);
  let model = store.modelOf(state)!;
  let cache = analyzeIncrementally(model, state.text, {}, 'default', undefined).cache;
  let seed = 77;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  // Module-level settings that classes read (as the bench edits them), then what a user types into them.
  const insertions = ['6', '7', '', '1', 'X', ' + 1', ' = 0', '\nextra = BLOCK_1_WIDTH'];
  let incremental = 0;
  for (let version = 2; version < 26; version++) {
    const sites = [...text.matchAll(/^BLOCK_\d+_WIDTH = \d+/gm)];
    const site = sites[random(sites.length)]!;
    const start = site.index! + random(site[0].length + 1);
    const end = Math.min(site.index! + site[0].length, start + random(2));
    const inserted = insertions[random(insertions.length)]!;
    const range = { start: positionOf(text, start), end: positionOf(text, end) };
    completeFactsForEdit(model, cache, { fromRow: range.start.line, toRow: range.end.line, startIndex: start, endIndex: end, text: inserted });
    state = (await store.change('mem://names.py', version, [{ range, text: inserted }]))!;
    text = text.slice(0, start) + inserted + text.slice(end);
    model = store.modelOf(state)!;
    const result = analyzeIncrementally(model, state.content, {}, 'default', cache);
    cache = result.cache;
    if (result.analysedStatements < model.root.children.length) incremental++;
    assert.deepEqual(result.findings, await analyzeText(text), `findings differ after edit ${version} (${JSON.stringify(inserted)} at ${start})`);
  }
  // Facts of the statements no edit shares a name with are still pending.
  assert.equal(completeSomeFacts(model, cache, 0), false, 'some facts are still pending');
  assert.ok(incremental >= 12, `only ${incremental} of 24 edits reused findings`);
});

test('a document opened and left unedited keeps its tree for its first edit; once it lets the tree go, query matches and findings after edits equal a fresh analysis', async () => {
  const base = generateTrainingScript(400, 5) + '\nfor x in data:\n    loss = model(x)\n    loss.backward(retain_graph=True)\n    torch.cuda.empty_cache()\n';
  // Let go after the first analysis (the whole-file query left each statement its matches), and before any
  // analysis (a newer document opened: each statement's matches come from parsing it alone).
  for (const analysedFirst of [true, false]) {
    let text = base;
    const store = new DocumentStore();
    let state = await store.open('mem://idle.py', 1, text);
    assert.ok(state.tree && !state.treeBehind, 'a document just opened keeps its tree');
    if (analysedFirst) {
      assert.deepEqual(analyze(store.modelOf(state)!, text), await analyzeText(text));
      assert.ok(store.releaseUneditedTree(state));
    } else {
      await store.open('mem://newer.py', 1, 'x = 1\n');
      assert.equal(store.get('mem://newer.py')!.tree !== undefined, true, 'the newest document keeps its tree');
    }
    assert.equal(state.tree, undefined, 'the unedited tree was let go');
    assert.equal(state.treeBehind, true);
    let seed = analysedFirst ? 3 : 5;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    const insertions = ['x', '1', '', ' ', '\n', '# c', '(', '\nz = 2\n', 'retain_graph=True, '];
    // The query matches can be compared only while both texts parse: count the edits where they were.
    let compared = 0;
    for (let version = 2; version < 42; version++) {
      let start = random(text.length);
      while (start > 0 && !/[a-z_]/.test(text[start - 1]!)) start--;
      const end = Math.min(text.length, start + random(3));
      const inserted = insertions[random(insertions.length)]!;
      state = (await store.change('mem://idle.py', version, [{ range: { start: positionOf(text, start), end: positionOf(text, end) }, text: inserted }]))!;
      text = text.slice(0, start) + inserted + text.slice(end);
      assert.equal(store.releaseUneditedTree(state), false, 'an edited document keeps its tree');
      const model = store.modelOf(state)!;
      const fresh = new DocumentStore();
      const freshModel = fresh.modelOf(await fresh.open('mem://f.py', 1, text))!;
      if (!model.root.hasError && !freshModel.root.hasError) {
        assert.deepEqual(allMatches(model, model.root.children), allMatches(freshModel), `query matches differ after edit ${version}`);
        compared++;
      }
      assert.deepEqual(analyze(model, text), await analyzeText(text), `findings differ after edit ${version}`);
      fresh.close('mem://f.py');
    }
    // The seeded edits leave both texts parsing after 4 of them (released after the first analysis) and 12 (before it).
    assert.ok(compared >= 4, `query matches compared after only ${compared} of 40 edits`);
  }
});

test('of the documents opened and not edited, only the newest keeps its tree-sitter tree; an edited one keeps its own', async () => {
  const store = new DocumentStore();
  await store.open('mem://edited.py', 1, 'import torch\nx = 1\n');
  const edited = (await store.change('mem://edited.py', 2, [{ range: { start: { line: 1, character: 4 }, end: { line: 1, character: 5 } }, text: '2' }]))!;
  const editedTree = edited.tree;
  const states: DocumentState[] = [];
  // Each spells what a query looks for: its first analysis queries the whole file, which parses a tree let go again.
  const loop = '\nfor x in data:\n    loss = model(x)\n    loss.backward(retain_graph=True)\n    torch.cuda.empty_cache()\n';
  for (let i = 0; i < 4; i++) states.push(await store.open(`mem://read_${i}.py`, 1, generateTrainingScript(60, i + 1) + loop));
  const holdingTrees = () => states.map((state) => state.tree !== undefined);
  assert.deepEqual(holdingTrees(), [false, false, false, true]);
  assert.equal(edited.tree, editedTree, 'the edited document still has its own tree');
  assert.equal(store.releaseUneditedTree(edited), false, 'an edited document keeps its tree');
  // Each released one analyses as a fresh parse does, and goes back to holding no tree (as the server has it).
  for (const state of states) {
    assert.deepEqual(analyze(store.modelOf(state)!, state.text), await analyzeText(state.text));
    assert.ok(state.tree !== undefined, 'the whole-file query parsed the text again');
    store.releaseOlderUneditedTrees();
    assert.deepEqual(holdingTrees(), [false, false, false, true]);
  }
});
