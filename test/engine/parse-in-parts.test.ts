// A long document is opened parsed a part at a time (engine/parse-in-parts.ts): its copy must be the copy of the
// whole file's tree, node for node, or not made at all (the whole file is parsed then), and its findings the same.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { computeLineStarts, DocumentStore } from '../../server/src/engine/documents';
import { parsePython, pythonParser } from '../../server/src/engine/parser';
import { copyParsedInParts } from '../../server/src/engine/parse-in-parts';
import { queryNames, queryNeeds, querySource } from '../../server/src/engine/queries';
import { analyzeIncrementally } from '../../server/src/engine/incremental';
import { copyTree, SourceText } from '../../server/src/engine/syntax-tree';
import type { SyntaxNode } from '../../server/src/engine/syntax-tree';
import { analyzeText, repoRoot } from '../helpers/analysis';
import { editSites, generateTrainingScript } from '../../scripts/bench/generate';

/** Every difference between two copies, as paths (none expected). */
function differences(ours: SyntaxNode, theirs: SyntaxNode, where = 'root'): string[] {
  const found: string[] = [];
  const expect = (what: string, a: unknown, b: unknown) => {
    if (a !== b) found.push(`${where}: ${what} ${String(a)} != ${String(b)}`);
  };
  expect('type', ours.type, theirs.type);
  expect('start', ours.startIndex, theirs.startIndex);
  expect('end', ours.endIndex, theirs.endIndex);
  expect('start position', JSON.stringify(ours.startPosition), JSON.stringify(theirs.startPosition));
  expect('end position', JSON.stringify(ours.endPosition), JSON.stringify(theirs.endPosition));
  expect('named', ours.isNamed, theirs.isNamed);
  expect('missing', ours.isMissing, theirs.isMissing);
  expect('has error', ours.hasError, theirs.hasError);
  expect('children', ours.children.length, theirs.children.length);
  expect('fields', JSON.stringify(ours.childFields), JSON.stringify(theirs.childFields));
  for (let i = 0; i < Math.min(ours.children.length, theirs.children.length) && found.length < 10; i++) {
    if (ours.children[i]!.parent !== ours) found.push(`${where}/${i}: parent`);
    found.push(...differences(ours.children[i]!, theirs.children[i]!, `${where}/${i}`));
  }
  return found;
}

async function wholeCopy(text: string): Promise<SyntaxNode> {
  const tree = (await parsePython(text))!;
  try {
    return copyTree(tree, text);
  } finally {
    tree.delete();
  }
}

const corpusFiles = ['corpus', 'corpus-holdout', 'corpus-holdout2'].flatMap((folder) =>
  fs.readdirSync(path.join(repoRoot, 'test', folder)).filter((name) => name.endsWith('.py')).sort().map((name) => path.join(repoRoot, 'test', folder, name)));

test('every script of the corpora, cut into parts of 30 lines, copies as its whole tree does, or is parsed whole', async () => {
  await pythonParser();
  let inParts = 0;
  for (const file of corpusFiles) {
    const text = fs.readFileSync(file, 'utf8');
    const lineStarts = computeLineStarts(text);
    const parts = copyParsedInParts(text, new SourceText(text, lineStarts), lineStarts, undefined, 30);
    if (!parts) continue;
    inParts++;
    assert.deepEqual(differences(parts, await wholeCopy(text)), [], path.basename(file));
  }
  // Most scripts have a definition every so often and no error: they are parsed in parts.
  assert.ok(inParts * 2 >= corpusFiles.length, `only ${inParts} of ${corpusFiles.length} scripts were parsed in parts`);
});

test('a part cut inside a string, a bracket, a decorated definition or an if statement is not used: the whole file is parsed', async () => {
  await pythonParser();
  const filler = Array.from({ length: 12 }, (_, i) => `x${i} = ${i}`).join('\n');
  const cut = [
    // A definition line inside a triple-quoted string.
    `${filler}\ns = """\ndef not_a_function():\n    pass\n"""\n${filler}\n`,
    // A matrix product continued on a line of its own inside brackets.
    `${filler}\ny = (x0\n@ x1)\n${filler}\n`,
    // A decorator, a blank line, then its definition (the definition's line is past the first part's lines).
    `x0 = 0\nx1 = 1\nx2 = 2\nx3 = 3\n@decorate\n\ndef g():\n    pass\n${filler}\n`,
    // An if statement whose else comes after a definition at column 0 (an error of the file's own).
    `${filler}\nif x0:\n    pass\ndef h():\n    pass\nelse:\n    pass\n${filler}\n`,
  ];
  for (const text of cut) {
    const lineStarts = computeLineStarts(text);
    assert.equal(copyParsedInParts(text, new SourceText(text, lineStarts), lineStarts, undefined, 5), undefined, text);
  }
  // A decorator right before its definition starts a part of its own.
  const decorated = `${filler}\n@decorate\ndef g():\n    pass\n${filler}\n`;
  const lineStarts = computeLineStarts(decorated);
  const parts = copyParsedInParts(decorated, new SourceText(decorated, lineStarts), lineStarts, undefined, 5);
  assert.ok(parts, 'the decorated definition was not a part of its own');
  assert.deepEqual(differences(parts, await wholeCopy(decorated)), []);
});

test('a 20,000-line script opens without a whole tree-sitter tree; its findings, and those after edits, equal a whole-file analysis', async () => {
  let text = generateTrainingScript(20_000, 2);
  const store = new DocumentStore();
  let state = await store.open('mem://parts.py', 1, text);
  assert.equal(state.tree, undefined, 'the whole file was parsed');
  assert.deepEqual(differences(state.syntaxRoot!, await wholeCopy(text)), []);
  let result = analyzeIncrementally(store.modelOf(state)!, state.content, {}, 'default', undefined);
  assert.deepEqual(result.findings, await analyzeText(text));
  const site = editSites(text.split('\n')).find((candidate) => candidate.kind === 'function body')!;
  const lineStart = computeLineStarts(text)[site.line]!;
  state = (await store.change('mem://parts.py', 2, [{ range: { start: { line: site.line, character: site.character }, end: { line: site.line, character: site.character + 1 } }, text: site.replacement }]))!;
  text = text.slice(0, lineStart + site.character) + site.replacement + text.slice(lineStart + site.character + 1);
  result = analyzeIncrementally(store.modelOf(state)!, state.content, {}, 'default', result.cache);
  assert.deepEqual(result.findings, await analyzeText(text));
});

test('every query file says the words it needs, and each of its patterns tests its captures against one of them', () => {
  for (const name of queryNames()) {
    const source = querySource(name);
    const needs = queryNeeds(source);
    assert.ok(needs && needs.length > 0, `${name}.scm has no "; needs:" line`);
    // The patterns: the top-level parenthesised expressions, comments left out.
    const code = source.replace(/;.*$/gm, '');
    const patterns: string[] = [];
    let depth = 0;
    let start = 0;
    for (let i = 0; i < code.length; i++) {
      if (code[i] === '(') {
        if (depth === 0) start = i;
        depth++;
      } else if (code[i] === ')' && --depth === 0) patterns.push(code.slice(start, i + 1));
    }
    assert.ok(patterns.length > 0, name);
    for (const pattern of patterns) {
      const equal = [...pattern.matchAll(/#eq\? @\w+ "([^"]+)"/g)].map((match) => match[1]!);
      const matching = [...pattern.matchAll(/#match\? @\w+ "([^"]+)"/g)].map((match) => new RegExp(match[1]!));
      // An exact word the file needs, or an anchored pattern that every needed word it stands for matches.
      const needsOne = equal.some((word) => needs!.includes(word)) ||
        matching.some((pattern) => pattern.source.startsWith('^') && pattern.source.endsWith('$') && needs!.some((word) => pattern.test(word)));
      assert.ok(needsOne, `a pattern of ${name}.scm matches without any of ${needs!.join(', ')}`);
    }
  }
});
