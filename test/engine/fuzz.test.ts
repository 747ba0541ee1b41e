// Fuzzing: thousands of mutated scripts through the rules, their fixes and the estimator. No crash, no hang, every
// fix of a file that parses leaves it parsing, the safe fixes reach a fixed point, and the estimate is a number
// (or an honest "unresolved"). Seeds are the corpus and the rule fixtures; mutations are deterministic.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parsePython } from '../../server/src/engine/parser';
import { applyFixes } from '../../server/src/fixes/apply';
import { estimateScript } from '../../server/src/estimator/index';
import { analyzeText, listFiles, repoRoot } from '../helpers/analysis';

const seeds = [...listFiles(path.join(repoRoot, 'test', 'corpus'), '.py'), ...listFiles(path.join(repoRoot, 'test', 'fixtures', 'rules'), '.py')]
  .map((file) => fs.readFileSync(file, 'utf8'));

let state = 20261201;
const random = (n: number) => ((state = (state * 1103515245 + 12345) % 2147483648) % n);
const pick = <T>(items: readonly T[]): T => items[random(items.length)]!;

const JUNK = ['\r', '\r\n', '\t', '\u0000', '\ud800', '\udfff', '显存', '😀', '(', ')', '[', ']', ':', '"""', "'", '\\', '#', 'lambda', 'with', '@', '\u200b', '\ufeff'];

/** One mutation of a script: truncate, splice junk, swap line endings, indent with tabs, nest deeply, add a long line. */
function mutate(text: string): string {
  const at = random(text.length + 1);
  switch (random(9)) {
    case 0: return text.slice(0, at);
    case 1: return text.slice(0, at) + pick(JUNK) + text.slice(at);
    case 2: return text.slice(0, at) + Array.from({ length: 1 + random(20) }, () => String.fromCharCode(random(0x10000))).join('') + text.slice(at);
    case 3: return text.replace(/\n/g, pick(['\r', '\r\n', '\n\r']));
    case 4: return text.replace(/^( {4})+/gm, (spaces) => '\t'.repeat(spaces.length / 4));
    case 5: return text.slice(0, at) + '('.repeat(200 + random(300)) + text.slice(at);
    case 6: return text.slice(0, at) + `\nx = ${'1 + '.repeat(2000 + random(3000))}1\n` + text.slice(at);
    case 7: return text.slice(0, at) + text.slice(random(text.length), random(text.length));
    default: return text.slice(0, at) + '\n' + ' '.repeat(random(12)) + 'losses.append(model(x))\n' + text.slice(at);
  }
}

test('1,200 mutated scripts: no crash, no hang, fixes keep parsing files parsing and reach a fixed point, estimates are numbers', async () => {
  let fixesTried = 0;
  for (let i = 0; i < 1200; i++) {
    let text = pick(seeds);
    for (let m = 1 + random(3); m > 0; m--) text = mutate(text);
    const started = performance.now();
    const findings = await analyzeText(text);
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 2000, `input ${i} took ${Math.round(elapsed)} ms`);
    const tree = await parsePython(text);
    assert.ok(tree, `no tree for input ${i}`);
    const parsesBefore = !tree.rootNode.hasError;
    const estimate = estimateScript(tree, text, 'fuzz.py');
    tree.delete();
    assert.ok(estimate.unresolved || (Number.isFinite(estimate.peakAllocated) && estimate.peakAllocated >= 0), `estimate of input ${i}: ${estimate.peakAllocated}`);
    if (!parsesBefore) continue;
    const safe = findings.flatMap((f) => f.fixes.filter((fix) => fix.safe).slice(0, 1));
    if (safe.length === 0) continue;
    const { text: fixed } = applyFixes(text, safe);
    fixesTried++;
    const after = await parsePython(fixed);
    assert.ok(after && !after.rootNode.hasError, `the safe fixes broke input ${i}:\n${fixed.slice(0, 400)}`);
    after!.delete();
    // A second round of safe fixes on the fixed text changes nothing more than once: it settles (checked on every
    // fourth input, which keeps the whole test within CI's minute).
    if (i % 4 !== 0) continue;
    const again = (await analyzeText(fixed)).flatMap((f) => f.fixes.filter((fix) => fix.safe).slice(0, 1));
    const second = applyFixes(fixed, again).text;
    const third = applyFixes(second, (await analyzeText(second)).flatMap((f) => f.fixes.filter((fix) => fix.safe).slice(0, 1))).text;
    assert.equal(third, second, `safe fixes of input ${i} do not settle`);
  }
  assert.ok(fixesTried > 60, `only ${fixesTried} inputs had safe fixes`);
});
