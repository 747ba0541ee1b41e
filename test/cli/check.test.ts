// `oomguard check` for CI: SARIF validated against the official SARIF 2.1.0 schema, GitHub annotations,
// --exit-zero, --statistics, [tool.oomguard] in pyproject.toml, .gitignore and virtual environments.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import Ajv from 'ajv';
import { main } from '../../server/src/cli/main';
import { collectPythonFiles } from '../../server/src/cli/files';
import { ruleDocUrl } from '../../server/src/protocol';
import { repoRoot } from '../helpers/analysis';

const LEAKY = fs.readFileSync(path.join(repoRoot, 'test', 'fixtures', 'rules', 'OOM106', 'empty_cache.py'), 'utf8');
const PINNED = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n';

/** A throw-away project: files by relative path, created under a fresh temporary folder. */
function project(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-cli-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

/** Runs `oomguard ARGS` in `cwd` in this process, capturing stdout, stderr and the exit status. */
async function run(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const previous = process.cwd();
  process.chdir(cwd);
  try {
    const code = await main(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
    return { code, stdout, stderr };
  } finally {
    process.chdir(previous);
  }
}

/** ajv for the SARIF schema, a draft-04 document: its `id` is draft-06+'s `$id`, and it uses no other draft-04-only keyword. */
function sarifValidator() {
  const schema = JSON.parse(fs.readFileSync(path.join(__dirname, 'schemas', 'sarif-2.1.0-rtm.5.json'), 'utf8')) as Record<string, unknown>;
  assert.ok(!JSON.stringify(schema).includes('exclusiveM'), 'draft-04 exclusiveMinimum/Maximum would need translating');
  const { $schema: _draft04, id, ...rest } = schema;
  // The schema's language pattern (`^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$`) is not valid with the u flag.
  const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
  ajv.addFormat('uri', (value: string) => URL.canParse(value));
  ajv.addFormat('uri-reference', (value: string) => URL.canParse(value, 'file:///') && !/\s/.test(value));
  ajv.addFormat('date-time', (value: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value) && !Number.isNaN(Date.parse(value)));
  return ajv.compile({ ...rest, $id: id as string });
}

test('--output-format sarif is valid SARIF 2.1.0 with rule metadata, help URIs and fixes', async () => {
  const dir = project({ 'train.py': LEAKY, 'sub dir/pinned.py': PINNED });
  const { code, stdout } = await run(dir, 'check', '--output-format', 'sarif');
  assert.equal(code, 1);
  const log = JSON.parse(stdout) as { version: string; runs: Array<{ tool: { driver: { rules: Array<{ id: string; helpUri: string }> } }; results: Array<{ ruleId: string; ruleIndex: number; fixes?: unknown[]; locations: Array<{ physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }> }> }> };
  const validate = sarifValidator();
  assert.ok(validate(log), JSON.stringify(validate.errors, null, 2));
  const [run0] = log.runs;
  const rules = run0!.tool.driver.rules;
  assert.ok(rules.some((rule) => rule.id === 'OOM100'), 'OOM100 has rule metadata');
  for (const rule of rules) assert.equal(rule.helpUri, ruleDocUrl(rule.id));
  const results = run0!.results;
  assert.equal(results.filter((r) => r.ruleId === 'OOM106').length, 8);
  for (const result of results) assert.equal(rules[result.ruleIndex]!.id, result.ruleId);
  assert.ok(results.every((r) => r.ruleId !== 'OOM106' || (r.fixes?.length ?? 0) === 1), 'OOM106 results carry their fix');
  const pinned = results.find((r) => r.ruleId === 'OOM105')!;
  assert.equal(pinned.locations[0]!.physicalLocation.artifactLocation.uri, 'sub%20dir/pinned.py');
  assert.equal(pinned.locations[0]!.physicalLocation.region.startLine, 2);
  // The schema check is real: a log without `version` fails it.
  assert.equal(validate({ runs: [] }), false);
});

test('--output-format github prints one workflow annotation per finding', async () => {
  const dir = project({ 'pinned.py': PINNED });
  const { code, stdout } = await run(dir, 'check', '--output-format', 'github');
  assert.equal(code, 1);
  const lines = stdout.trim().split('\n');
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /^::warning file=pinned\.py,line=2,col=1,endLine=2,endColumn=\d+,title=OOM105::\S/);
  assert.ok(!lines[0]!.slice(lines[0]!.indexOf('::', 2) + 2).includes('\n'));
});

test('--exit-zero reports but exits 0; usage errors still exit 2', async () => {
  const dir = project({ 'pinned.py': PINNED });
  const result = await run(dir, 'check', '--exit-zero');
  assert.equal(result.code, 0);
  assert.match(result.stdout, /OOM105/);
  assert.equal((await run(dir, 'check', '--output-format', 'xml', '--exit-zero')).code, 2);
});

test('--statistics counts findings per code (text and JSON)', async () => {
  const dir = project({ 'train.py': LEAKY, 'pinned.py': PINNED });
  const text = await run(dir, 'check', '--statistics');
  assert.equal(text.code, 1);
  assert.deepEqual(text.stdout.trim().split('\n').map((line) => line.split('\t').slice(0, 2).map((cell) => cell.trim())), [['8', 'OOM106'], ['1', 'OOM105']]);
  const json = JSON.parse((await run(dir, 'check', '--statistics', '--output-format', 'json')).stdout) as Array<{ code: string; count: number; fixable: number }>;
  assert.deepEqual(json.map((s) => [s.code, s.count, s.fixable]), [['OOM106', 8, 8], ['OOM105', 1, 0]]);
});

test('[tool.oomguard] in the nearest pyproject.toml: ignore, per-file-ignores, severity; flags override it', async () => {
  const dir = project({
    'pyproject.toml': '[project]\nname = "demo"\n\n[tool.oomguard]\nignore = ["OOM103"]\nseverity = { OOM105 = "error" }\n\n[tool.oomguard.per-file-ignores]\n"tests/**" = ["OOM106"]\n',
    'pinned.py': PINNED,
    'tests/test_train.py': LEAKY,
    'train.py': LEAKY,
  });
  const json = JSON.parse((await run(dir, 'check', '--output-format', 'json')).stdout) as Array<{ file: string; code: string; severity: string }>;
  assert.deepEqual([...new Set(json.map((f) => `${f.file}:${f.code}`))].sort(), ['pinned.py:OOM105', 'train.py:OOM106']);
  assert.equal(json.find((f) => f.code === 'OOM105')!.severity, 'error');
  // --select replaces the configured selection; --ignore adds to the configured ignores.
  const selected = JSON.parse((await run(dir, 'check', '--output-format', 'json', '--select', 'OOM105')).stdout) as Array<{ code: string }>;
  assert.deepEqual([...new Set(selected.map((f) => f.code))], ['OOM105']);
  const ignored = JSON.parse((await run(dir, 'check', '--output-format', 'json', '--ignore', 'OOM105')).stdout) as Array<{ code: string }>;
  assert.deepEqual([...new Set(ignored.map((f) => f.code))], ['OOM106']);
  // A nested project's own pyproject.toml is the nearest one for its files.
  fs.mkdirSync(path.join(dir, 'nested'));
  fs.writeFileSync(path.join(dir, 'nested', 'pyproject.toml'), '[tool.oomguard]\nselect = ["OOM106"]\n');
  fs.writeFileSync(path.join(dir, 'nested', 'pinned.py'), PINNED);
  const nested = JSON.parse((await run(dir, 'check', 'nested', '--output-format', 'json')).stdout) as unknown[];
  assert.deepEqual(nested, []);
});

test('a broken pyproject.toml gives one message on stderr and the defaults', async () => {
  const dir = project({ 'pyproject.toml': '[tool.oomguard]\nignore = ["OOM105"\n', 'a.py': PINNED, 'b.py': PINNED });
  const { code, stdout, stderr } = await run(dir, 'check');
  assert.equal(code, 1);
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
  assert.match(stderr, /pyproject\.toml:\d+:\d+: not valid TOML/);
  assert.equal((stdout.match(/OOM105/g) ?? []).length, 2, 'the defaults apply: OOM105 is not ignored');
  const wrongType = project({ 'pyproject.toml': '[tool.oomguard]\nignore = "OOM105"\n', 'a.py': PINNED });
  const typed = await run(wrongType, 'check');
  assert.match(typed.stderr, /"ignore" must be a list of rule codes/);
  assert.match(typed.stdout, /OOM105/);
});

test('.gitignore is respected and virtual environments are skipped', () => {
  const dir = project({
    '.gitignore': 'build/\n*_generated.py\n',
    'train.py': PINNED,
    'model_generated.py': PINNED,
    'build/lib/train.py': PINNED,
    '.venv/pyvenv.cfg': 'home = /usr/bin\n',
    '.venv/lib/site.py': PINNED,
    'env/conda-meta/history': '',
    'env/lib/x.py': PINNED,
    'src/.gitignore': 'scratch.py\n',
    'src/scratch.py': PINNED,
    'src/model.py': PINNED,
    'node_modules/pkg/a.py': PINNED,
  });
  fs.mkdirSync(path.join(dir, '.git'));
  const { files } = collectPythonFiles([dir]);
  assert.deepEqual(files.map((file) => path.relative(dir, file).split(path.sep).join('/')), ['src/model.py', 'train.py']);
  // A file named on the command line is checked even when ignored, as ruff does.
  assert.equal(collectPythonFiles([path.join(dir, 'model_generated.py')]).files.length, 1);
});

test('--fix applies the safe unused-noqa fix and --diff shows it', async () => {
  const dir = project({ 'a.py': 'x = 1  # noqa: OOM101\n' });
  const diff = await run(dir, 'check', '--diff');
  assert.match(diff.stdout, /-x = 1  # noqa: OOM101\n\+x = 1\n/);
  const fixed = await run(dir, 'check', '--fix');
  assert.equal(fixed.code, 0);
  assert.equal(fs.readFileSync(path.join(dir, 'a.py'), 'utf8'), 'x = 1\n');
});

test('--fix on a file with lone \\r line endings removes the reported line and no other, and a second run changes nothing', async () => {
  const lf = [
    'import torch',
    '',
    'def train(model, loader, optimizer):',
    '    for x, y in loader:',
    '        optimizer.zero_grad()',
    '        loss = model(x, y)',
    '        loss.backward()',
    '        torch.cuda.empty_cache()',
    '        optimizer.step()',
    '',
  ];
  const dir = project({ 'mac.py': lf.join('\r') });
  const first = await run(dir, 'check', '--select', 'OOM106', 'mac.py');
  assert.match(first.stdout, /mac\.py:8:9: OOM106/);
  assert.equal((await run(dir, 'check', '--select', 'OOM106', '--fix', 'mac.py')).code, 0);
  const fixed = fs.readFileSync(path.join(dir, 'mac.py'), 'utf8');
  assert.equal(fixed, lf.filter((line) => !line.includes('empty_cache')).join('\r'));
  assert.equal((await run(dir, 'check', '--select', 'OOM106', '--fix', 'mac.py')).code, 0);
  assert.equal(fs.readFileSync(path.join(dir, 'mac.py'), 'utf8'), fixed);
});

test('a skipped file is never reported as clean: the summary names it and the exit status is 1', async () => {
  const dir = project({ 'ok.py': 'x = 1\n', 'big.py': 'x = 1\n'.repeat(400_000) });
  fs.writeFileSync(path.join(dir, 'binary.py'), Buffer.from([0xff, 0xfe, 0x00, 0x41]));
  const result = await run(dir, 'check', '.');
  assert.equal(result.code, 1);
  assert.doesNotMatch(result.stdout, /All checks passed/);
  assert.match(result.stdout, /2 file\(s\) skipped: (big\.py, binary\.py|binary\.py, big\.py)/);
  assert.equal((await run(dir, 'check', '--exit-zero', '.')).code, 0);
});

test('oomguard check over many files: worker threads print exactly what one thread prints', () => {
  // Workers run only from the bundled CLI (dist/cli.js, built by `npm test` before the unit tests).
  const files: Record<string, string> = {};
  for (let i = 0; i < 24; i++) files[`train_${String(i).padStart(2, '0')}.py`] = i % 3 === 0 ? LEAKY : PINNED + LEAKY;
  const dir = project(files);
  const cli = path.join(repoRoot, 'dist', 'cli.js');
  const runWith = (jobs: string, format: string, ...extra: string[]) =>
    spawnSync(process.execPath, [cli, 'check', '.', '--output-format', format, ...extra], { cwd: dir, encoding: 'utf8', env: { ...process.env, OOMGUARD_JOBS: jobs } });
  for (const format of ['text', 'json']) {
    const one = runWith('1', format);
    const three = runWith('3', format);
    assert.equal(one.status, 1);
    assert.ok(one.stdout.length > 0);
    assert.equal(three.stdout, one.stdout, format);
    assert.equal(three.stderr, one.stderr, format);
    assert.equal(three.status, one.status, format);
  }
  // The threads write the findings' messages: in the locale the run asked for, as one thread does.
  const translated = runWith('3', 'json', '--lang', 'zh-cn');
  assert.equal(translated.stdout, runWith('1', 'json', '--lang', 'zh-cn').stdout);
  assert.notEqual(translated.stdout, runWith('3', 'json').stdout);
});
