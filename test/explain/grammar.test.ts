// Runs the TextMate grammar tests (test/syntaxes/*.test.*) with vscode-tmgrammar-test, which loads the grammars
// and injections that package.json contributes, exactly as VS Code would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const repoRoot = path.resolve(__dirname, '..', '..');
// The runner lives outside test/syntaxes so that the glob there matches grammar test cases only.

test('every contributed grammar file exists and declares the scope package.json names', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { contributes: { grammars: Array<{ scopeName: string; path: string }> } };
  assert.ok(pkg.contributes.grammars.length >= 2);
  for (const grammar of pkg.contributes.grammars) {
    const json = JSON.parse(fs.readFileSync(path.join(repoRoot, grammar.path), 'utf8')) as { scopeName: string };
    assert.equal(json.scopeName, grammar.scopeName, grammar.path);
  }
});

test('vscode-tmgrammar-test passes on test/syntaxes', () => {
  const bin = path.join(repoRoot, 'node_modules', 'vscode-tmgrammar-test', 'dist', 'unit.js');
  const result = spawnSync(process.execPath, [bin, '--config', 'package.json', 'test/syntaxes/*.test.*'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
  assert.match(result.stdout, /oom\.test\.log run successfuly/);
});
