// The translation at run time: the built CLI with --lang zh-cn or a zh_CN environment, and the built server
// initialized with the locale zh-cn, speak Chinese. Expected text comes from the bundle, not from a copy of the output.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import type { CodeAction, Diagnostic } from 'vscode-languageserver-protocol/node';
import { bundleDir, repoRoot } from '../../scripts/l10n';
import { startServer } from '../helpers/lsp-client';

const zh = JSON.parse(fs.readFileSync(path.join(bundleDir, 'bundle.l10n.zh-cn.json'), 'utf8')) as Record<string, string>;
const cliPath = path.join(repoRoot, 'dist', 'cli.js');
const script = path.join('examples', 'leaky_train.py');
// A message without placeholders that examples/leaky_train.py triggers (OOM105), and the summary line.
const PINNED = 'CUDA_VISIBLE_DEVICES is pinned to a literal, so every run uses the same GPUs even when they are full and others are free. Set it when launching (CUDA_VISIBLE_DEVICES=1 python train.py) or use os.environ.setdefault(...).';
const FOUND = 'Found {0} finding(s).';

function format(message: string, ...args: Array<string | number>): string {
  return message.replace(/\{(\d+)\}/g, (_, index: string) => String(args[Number(index)]));
}

/** The environment without any locale variable, so that only what a test sets decides the language. */
function neutralEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.LC_ALL;
  delete env.LC_MESSAGES;
  delete env.LANG;
  return { ...env, ...extra };
}

function cli(args: string[], env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [cliPath, ...args], { cwd: repoRoot, env, encoding: 'utf8' });
}

const findingCount = (): number => (JSON.parse(cli(['check', script, '--output-format', 'json'], neutralEnv()).stdout) as unknown[]).length;

test('oomguard check --lang zh-cn prints the Chinese messages', () => {
  const count = findingCount();
  assert.ok(count > 0);
  const english = cli(['check', script], neutralEnv());
  assert.ok(english.stdout.includes(PINNED), 'English is the default');
  const run = cli(['check', script, '--lang', 'zh-cn'], neutralEnv());
  assert.equal(run.status, 1, run.stderr);
  assert.ok(run.stdout.includes(zh[PINNED]!), run.stdout);
  assert.ok(run.stdout.includes(format(zh[FOUND]!, count)), run.stdout);
  assert.ok(!run.stdout.includes(PINNED));
});

test('LANG=zh_CN.UTF-8 selects Chinese, and --lang en wins over it', () => {
  const run = cli(['check', script], neutralEnv({ LANG: 'zh_CN.UTF-8' }));
  assert.equal(run.status, 1, run.stderr);
  assert.ok(run.stdout.includes(zh[PINNED]!), run.stdout);
  const english = cli(['check', script, '--lang', 'en'], neutralEnv({ LANG: 'zh_CN.UTF-8' }));
  assert.ok(english.stdout.includes(PINNED), english.stdout);
});

test('the CLI help is translated', () => {
  const key = Object.keys(zh).find((message) => message.startsWith('Usage: oomguard <command>'));
  assert.ok(key, 'the bundle has the top-level usage');
  const run = cli(['--help', '--lang', 'zh-cn'], neutralEnv());
  assert.equal(run.status, 0);
  assert.equal(run.stdout, `${zh[key]}\n`);
});

test('the server initialized with locale zh-cn publishes Chinese diagnostics and code actions', async () => {
  const client = await startServer({ locale: 'zh-cn' });
  try {
    const file = path.join(repoRoot, script);
    const uri = pathToFileURL(file).href;
    const published = client.diagnostics(uri, 1);
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: fs.readFileSync(file, 'utf8') } });
    const diagnostics: Diagnostic[] = await published;
    const pinned = diagnostics.find((d) => d.code === 'OOM105');
    assert.ok(pinned, `no OOM105 among ${diagnostics.map((d) => d.code).join(', ')}`);
    // Its documentation link opens the Chinese page.
    assert.match(pinned.codeDescription?.href ?? '', /docs\/zh-CN\/rules\/OOM105\.md$/);
    assert.ok(fs.existsSync(path.join(repoRoot, 'docs', 'zh-CN', 'rules', 'OOM105.md')));
    assert.equal(pinned.message, zh[PINNED]);
    const actions = (await client.connection.sendRequest('textDocument/codeAction', {
      textDocument: { uri },
      range: pinned.range,
      context: { diagnostics: [pinned] },
    })) as CodeAction[];
    const titles = actions.map((action) => action.title);
    assert.ok(titles.includes(format(zh['Disable {0} for this line']!, 'OOM105')), titles.join(' | '));
    assert.ok(titles.includes(zh['Remove the CUDA_VISIBLE_DEVICES assignment']!), titles.join(' | '));
  } finally {
    await client.close();
  }
});
