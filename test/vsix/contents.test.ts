// What the .vsix that `npm run package` builds carries: the bundles, both tree-sitter .wasm files, the grammars and
// the rule docs; never sources, source maps or node_modules (the bundles already include every dependency).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { packageVsix, repoRoot, zipEntries } from './pack';
import type { ZipEntry } from './pack';

/** The target for the download size. */
const MAX_VSIX_BYTES = 3 * 1000 * 1000;

let tmp: string;
let vsix: string;
let files: string[];
let entries: ZipEntry[];

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-vsix-'));
  vsix = path.join(tmp, 'oomguard.vsix');
  packageVsix(vsix);
  entries = zipEntries(vsix);
  // vsce puts the extension's files under extension/, beside its own manifest files.
  files = entries.filter((entry) => entry.name.startsWith('extension/')).map((entry) => entry.name.slice('extension/'.length));
});

after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function manifest(): { contributes?: { grammars?: Array<{ path: string }> }; l10n?: string; main?: string; browser?: string } {
  return JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
}

/** What `oomguard` runs from dist/: the editor never loads them. */
const CLI_BUNDLES = new Set(['cli.js', 'cli-tools.js']);

test('ships the bundles for Node and for VS Code for the Web, and both tree-sitter .wasm files', () => {
  const main = path.posix.normalize(manifest().main ?? '');
  // The browser entry (vscode.dev, github.dev, Codespaces in a browser) and the server's web worker bundle.
  const browser = path.posix.normalize(manifest().browser ?? '');
  assert.equal(browser, 'dist/web/extension.js', 'package.json has no "browser" entry for VS Code for the Web');
  for (const file of [main, 'dist/server.js', browser, 'dist/web/server.js', 'dist/tree-sitter.wasm', 'dist/tree-sitter-python.wasm', 'package.json']) {
    assert.ok(files.includes(file), `${file} is missing from the .vsix; it holds: ${files.join(', ')}`);
  }
  // Whatever the build writes to dist/ for the editor (a webview bundle and its stylesheet, say) must ship too;
  // the CLI's bundles (cli.js, and cli-tools.js that it loads for estimate/explain/refactor) and source maps are the
  // only files the editor never loads.
  const built = (fs.readdirSync(path.join(repoRoot, 'dist'), { recursive: true }) as string[])
    .map((name) => name.split(path.sep).join('/'))
    .filter((name) => !name.endsWith('.map') && !CLI_BUNDLES.has(name) && fs.statSync(path.join(repoRoot, 'dist', name)).isFile());
  for (const name of built) {
    assert.ok(files.includes(`dist/${name}`), `dist/${name} is built but not in the .vsix (whitelist it in .vscodeignore)`);
  }
  const wasm = entries.filter((entry) => entry.name.endsWith('.wasm'));
  for (const entry of wasm) assert.ok(entry.size > 10_000, `${entry.name} is only ${entry.size} bytes`);
});

test('ships every rule doc, the grammars and the localization bundles', () => {
  const docs = fs.readdirSync(path.join(repoRoot, 'docs', 'rules')).filter((name) => name.endsWith('.md'));
  assert.ok(docs.length > 0);
  for (const doc of docs) assert.ok(files.includes(`docs/rules/${doc}`), `docs/rules/${doc} is missing from the .vsix`);
  // The extension opens these pages in VS Code's Markdown preview (the Chinese ones for a Chinese display language).
  for (const doc of fs.readdirSync(path.join(repoRoot, 'docs', 'zh-CN', 'rules')).filter((name) => name.endsWith('.md'))) {
    assert.ok(files.includes(`docs/zh-CN/rules/${doc}`), `docs/zh-CN/rules/${doc} is missing from the .vsix`);
  }
  assert.ok(files.some((file) => file.toLowerCase() === 'readme.md'), 'README.md is missing from the .vsix');
  for (const grammar of manifest().contributes?.grammars ?? []) {
    const file = path.posix.normalize(grammar.path);
    assert.ok(files.includes(file), `grammar ${file} (package.json contributes.grammars) is missing from the .vsix`);
  }
  for (const name of fs.readdirSync(repoRoot).filter((n) => /^package\.nls(\..+)?\.json$/.test(n))) {
    assert.ok(files.includes(name), `${name} is missing from the .vsix`);
  }
  const l10n = manifest().l10n;
  const l10nDir = l10n ? path.join(repoRoot, l10n) : undefined;
  if (l10nDir && fs.existsSync(l10nDir)) {
    for (const name of fs.readdirSync(l10nDir).filter((n) => n.endsWith('.json'))) {
      const file = path.posix.join(path.posix.normalize(l10n!), name);
      assert.ok(files.includes(file), `${file} is missing from the .vsix`);
    }
  }
});

test('ships no sources, source maps, tests or node_modules', () => {
  const forbidden = files.filter(
    (file) =>
      /(^|\/)node_modules\//.test(file) ||
      /\.(ts|tsx|mts|cts|map|py|vsix)$/.test(file) ||
      /^(server|extension|test|scripts|examples|\.ci|\.github)\//.test(file) ||
      /^(tsconfig.*\.json|package-lock\.json|\.vscodeignore|\.gitignore)$/.test(file),
  );
  assert.deepEqual(forbidden, [], `the .vsix carries files that users never need: ${forbidden.join(', ')}`);
});

test(`weighs less than ${MAX_VSIX_BYTES / 1e6} MB`, (t) => {
  const size = fs.statSync(vsix).size;
  const unpacked = entries.reduce((sum, entry) => sum + entry.size, 0);
  t.diagnostic(`oomguard.vsix: ${(size / 1e6).toFixed(2)} MB (${entries.length} files, ${(unpacked / 1e6).toFixed(2)} MB unpacked)`);
  assert.ok(size < MAX_VSIX_BYTES, `the .vsix is ${(size / 1e6).toFixed(2)} MB, over the ${MAX_VSIX_BYTES / 1e6} MB target`);
});
