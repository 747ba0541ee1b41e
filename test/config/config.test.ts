// [tool.oomguard] parsing and layering (settings win in the editor), file-level noqa, OOM100 and source.fixAll.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import type { CodeActionParams } from 'vscode-languageserver/node';
import { EditorConfiguration } from '../../server/src/config/editor';
import { layer, optionsForFile, parsePyproject, perFileIgnored } from '../../server/src/config/pyproject';
import { computeLineStarts } from '../../server/src/engine/documents';
import { parsePython } from '../../server/src/engine/parser';
import { SemanticModel } from '../../server/src/engine/semantic/model';
import { applyEdits } from '../../server/src/fixes/apply';
import { fixAllActions, FIX_ALL_KIND } from '../../server/src/features/fix-all';
import { normalizeSettings } from '../../server/src/protocol';
import { analyzeText } from '../helpers/analysis';

const PINNED = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n';

test('parsePyproject reads select, ignore, per-file-ignores and severity', () => {
  const { config, error } = parsePyproject(
    '[tool.oomguard]\nselect = ["oom10"]\nignore = ["OOM105"]\nseverity = { oom101 = "error", OOM108 = "off" }\n[tool.oomguard.per-file-ignores]\n"tests/**" = ["OOM101"]\n',
    'pyproject.toml',
  );
  assert.equal(error, undefined);
  assert.deepEqual(config, { select: ['OOM10'], ignore: ['OOM105'], perFileIgnores: { 'tests/**': ['OOM101'] }, severity: { OOM101: 'error', OOM108: 'off' } });
  assert.deepEqual(parsePyproject('[project]\nname = "x"\n', 'pyproject.toml'), { config: {} });
});

test('a broken or mistyped pyproject.toml yields the defaults and one message', () => {
  const broken = parsePyproject('[tool.oomguard\nselect = 1', '/p/pyproject.toml');
  assert.deepEqual(broken.config, {});
  assert.match(broken.error!, /^\/p\/pyproject\.toml:1:\d+: not valid TOML/);
  const typed = parsePyproject('[tool.oomguard]\nseverity = { OOM101 = "loud" }\nunknown = 1\n', 'pyproject.toml');
  assert.deepEqual(typed.config, {});
  assert.match(typed.error!, /severity of OOM101/);
  assert.match(typed.error!, /unknown key "unknown"/);
});

test('per-file-ignores globs use gitignore syntax relative to the project root', () => {
  const globs = { 'tests/**': ['OOM101'], '__init__.py': ['OOM105'], 'scripts/*.py': ['OOM106'] };
  assert.deepEqual(perFileIgnored(globs, '/repo', '/repo/tests/unit/test_a.py'), ['OOM101']);
  assert.deepEqual(perFileIgnored(globs, '/repo', '/repo/pkg/__init__.py'), ['OOM105']);
  assert.deepEqual(perFileIgnored(globs, '/repo', '/repo/scripts/run.py'), ['OOM106']);
  assert.deepEqual(perFileIgnored(globs, '/repo', '/repo/src/scripts/run.py'), []);
  assert.deepEqual(perFileIgnored(globs, '/repo', '/elsewhere/tests/a.py'), []);
});

test('layer: the first configuration that sets a key wins, per key', () => {
  const settings = { select: [], ignore: ['OOM104'], severity: { OOM101: 'hint' as const }, perFileIgnores: {} };
  const pyproject = { select: ['OOM101', 'OOM104'], ignore: ['OOM102'], severity: { OOM101: 'error' as const, OOM103: 'off' as const } };
  const merged = layer(settings, pyproject);
  assert.deepEqual(merged.select, ['OOM101', 'OOM104']); // settings left select empty
  assert.deepEqual(merged.ignore, ['OOM104']);
  assert.deepEqual(merged.severity, { OOM101: 'hint', OOM103: 'off' });
  assert.deepEqual(optionsForFile(merged, '/repo', '/repo/a.py'), { select: ['OOM101', 'OOM104'], ignore: ['OOM104', 'OOM103'], severity: { OOM101: 'hint' } });
});

test('the editor layers its settings over the nearest pyproject.toml and reports a broken one once', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-config-'));
  fs.writeFileSync(path.join(dir, 'pyproject.toml'), '[tool.oomguard]\nignore = ["OOM105"]\n[tool.oomguard.per-file-ignores]\n"gen_*.py" = ["OOM101"]\n');
  const messages: string[] = [];
  const editor = new EditorConfiguration((message) => messages.push(message));
  const uri = pathToFileURL(path.join(dir, 'gen_a.py')).href;
  const defaults = normalizeSettings({});
  assert.deepEqual((await editor.optionsFor(uri, defaults)).ignore, ['OOM105', 'OOM101']);
  const findings = await analyzeText(PINNED, await editor.optionsFor(uri, defaults));
  assert.deepEqual(findings, []);
  // Settings that are set win: an explicit ignore list replaces pyproject's.
  const withSettings = normalizeSettings({ rules: { ignore: ['OOM104'], perFileIgnores: { 'gen_*.py': ['OOM102'] } } });
  assert.deepEqual((await editor.optionsFor(uri, withSettings)).ignore, ['OOM104', 'OOM102']);
  // An edit that breaks the file: one message, then the defaults (plus the settings).
  fs.writeFileSync(path.join(dir, 'pyproject.toml'), '[tool.oomguard]\nignore = [\n');
  assert.deepEqual((await editor.optionsFor(uri, defaults)).ignore, []);
  assert.deepEqual((await editor.optionsFor(uri, defaults)).ignore, []);
  assert.equal(messages.length, 1);
  assert.match(messages[0]!, /not valid TOML/);
  // Unsaved documents have settings only.
  assert.deepEqual((await editor.optionsFor('untitled:Untitled-1', withSettings)).ignore, ['OOM104']);
});

test('file-level `# oomguard: noqa: CODE` silences a code in the whole file; a bare one silences all', async () => {
  assert.deepEqual(await analyzeText(`# oomguard: noqa: OOM105\n${PINNED}`), []);
  assert.deepEqual(await analyzeText(`#oomguard:noqa\n${PINNED}`), []);
  assert.deepEqual((await analyzeText(`# oomguard: noqa: OOM101\n${PINNED}`)).map((f) => f.code).sort(), ['OOM100', 'OOM105']);
  // A line noqa is not file-level, and the file-level form is not a line noqa.
  assert.deepEqual((await analyzeText(`import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"  # oomguard: noqa: OOM105\n`)).map((f) => f.code), ['OOM105']);
});

test('OOM100 follows select/ignore/severity and judges only the rules that ran', async () => {
  const text = 'x = 1  # noqa: OOM101\n';
  assert.deepEqual((await analyzeText(text)).map((f) => `${f.code}:${f.severity}`), ['OOM100:information']);
  assert.deepEqual(await analyzeText(text, { ignore: ['OOM100'] }), []);
  assert.deepEqual(await analyzeText(text, { ignore: ['OOM101'] }), []);
  assert.deepEqual((await analyzeText(text, { severity: { OOM100: 'warning' } })).map((f) => f.severity), ['warning']);
  assert.deepEqual(await analyzeText('x = 1  # noqa: E501, OOM999\n'), []);
});

async function fixAll(text: string, only: string[] | undefined, options = {}) {
  const tree = (await parsePython(text))!;
  const model = new SemanticModel(tree, text);
  const params = { textDocument: { uri: 'file:///t.py' }, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: [], ...(only ? { only } : {}) } } as CodeActionParams;
  try {
    return fixAllActions({ text, lineStarts: computeLineStarts(text), params, model, analysisOptions: options });
  } finally {
    tree.delete();
  }
}

test('source.fixAll.oomguard applies every safe fix in one edit, and only when asked for', async () => {
  const text = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'rules', 'OOM106', 'empty_cache.py'), 'utf8') + 'y = 2  # noqa: OOM102\n';
  for (const only of [['source.fixAll'], [FIX_ALL_KIND], ['source']]) {
    const actions = await fixAll(text, only);
    assert.equal(actions.length, 1, `only=${only}`);
    assert.equal(actions[0]!.kind, FIX_ALL_KIND);
  }
  assert.deepEqual(await fixAll(text, undefined), []);
  assert.deepEqual(await fixAll(text, ['quickfix']), []);
  const [action] = await fixAll(text, ['source.fixAll']);
  const fixed = applyEdits(text, action!.edit!.changes!['file:///t.py']!);
  const after = await analyzeText(fixed);
  assert.deepEqual(after.filter((f) => f.fixes.some((fix) => fix.safe)).map((f) => f.code), []);
  assert.ok(!fixed.includes('# noqa: OOM102'));
  // Ignored rules are not fixed: the options of the diagnostics apply.
  assert.deepEqual(await fixAll(text, ['source.fixAll'], { ignore: ['OOM106', 'OOM100'] }), []);
  // Unsafe fixes (OOM109's generated helper) are never applied.
  assert.deepEqual(await fixAll('from transformers import Trainer\nt = Trainer(model=None, compute_metrics=f)\n', ['source.fixAll']), []);
});
