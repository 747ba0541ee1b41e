// VS Code for the Web end to end: the packaged .vsix in code-server's *browser* extension host. code-server
// (VS Code 1.100) runs an extension in the web worker extension host, as vscode.dev and github.dev do, when the user
// setting `remote.extensionKind` asks for "web": the extension's `browser` entry (dist/web/extension.js) runs in
// Chromium, and the language server is dist/web/server.js in a web worker, with no Node process of ours anywhere.
// The workspace is read through code-server's remote file system (vscode-remote: URIs, as github.dev has vscode-vfs:),
// never as file: URIs. Checked: the Problems panel (exact lines and columns, with a pyproject.toml that the worker
// reads through vscode.workspace.fs), a quick fix and its edit, and the memory panel.
// @vscode/test-web, the usual host for such tests, downloads a VS Code build at run time, which cannot work offline.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';
import { packageVsix } from '../vsix/pack';
import { applyCliEdits, artifactsDir, failIfMissing, findChromium, findCodeServer, freePort, missingClients, repoRoot, skipUnlessCI, waitFor } from './clients';
import type { CliFinding } from './clients';

const chromiumPath = findChromium();
const codeServer = findCodeServer();
const missing = missingClients([
  ['chromium', chromiumPath, 'apt-get install -y chromium'],
  ['code-server', codeServer, 'node test/e2e/setup.mjs, which needs apt-get install -y libkrb5-dev ripgrep'],
]);

const SCRIPT = 'leaky_train.py';
const ESTIMATE_SCRIPT = 'train_gpt2.py';
/** The workspace's pyproject.toml: the worker must read it through the editor, so OOM105 must not show. */
const PYPROJECT = '[tool.oomguard]\nignore = ["OOM105"]\n';
const EXTENSION_ID = 'oomguard.oomguard';

let tmp: string;
let workspace: string;
let extensions: string;
let server: ChildProcess | undefined;
let context: BrowserContext | undefined;
let page: Page;
let failed = false;
const timings: string[] = [];

function cli(args: string[]): string {
  const result = spawnSync(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), ...args], { cwd: workspace, encoding: 'utf8' });
  if (result.status !== 0 && result.status !== 1) throw new Error(`oomguard ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}

/** What `oomguard check` reports for a workspace file (it reads the same pyproject.toml). */
function cliFindings(file: string): CliFinding[] {
  return JSON.parse(cli(['check', file, '--output-format', 'json'])) as CliFinding[];
}

async function shoot(name: string): Promise<string> {
  const file = path.join(artifactsDir, `vscode-web-${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

async function step<T>(name: string, body: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    const value = await body();
    timings.push(`${name} ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return value;
  } catch (error) {
    failed = true;
    const shot = await shoot(`FAILED-${name}`).catch((e: unknown) => `(no screenshot: ${String(e)})`);
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`VS Code for the Web e2e step "${name}" failed: ${message}\n  screenshot: ${shot}\n  code-server log: ${path.join(tmp, 'code-server.log')}`, { cause: error });
  }
}

async function quickInput(keys: string, text: string): Promise<void> {
  await page.keyboard.press(keys);
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(text);
}

async function openFile(name: string): Promise<void> {
  await quickInput('Control+P', name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 10_000 });
  await page.keyboard.press('Enter');
  await page.locator('.tab.active', { hasText: name }).waitFor({ timeout: 15_000 });
}

async function goTo(line: number, column: number): Promise<void> {
  await quickInput('Control+G', `:${line}:${column}`);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget input').waitFor({ state: 'hidden', timeout: 10_000 });
}

/** Command lines of the processes of this machine that run the extension's Node server. */
function nodeServerProcesses(): string[] {
  const ps = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return ps.stdout.split('\n').filter((line) => line.includes(extensions) && line.includes(path.join('dist', 'server.js')));
}

describe('VS Code for the Web (code-server, browser extension host) with the packaged extension', { skip: skipUnlessCI(missing), timeout: 300_000 }, () => {
  before(async () => {
    failIfMissing(missing);
    const started = Date.now();
    fs.mkdirSync(artifactsDir, { recursive: true });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-e2e-web-'));
    workspace = path.join(tmp, 'workspace');
    extensions = path.join(tmp, 'extensions');
    const home = path.join(tmp, 'home');
    const userData = path.join(tmp, 'user-data');
    for (const dir of [workspace, home, path.join(userData, 'User')]) fs.mkdirSync(dir, { recursive: true });
    for (const name of [SCRIPT, ESTIMATE_SCRIPT]) fs.copyFileSync(path.join(repoRoot, 'examples', name), path.join(workspace, name));
    fs.writeFileSync(path.join(workspace, 'pyproject.toml'), PYPROJECT);
    fs.writeFileSync(
      path.join(userData, 'User', 'settings.json'),
      JSON.stringify({
        // The extension runs in the browser's web worker extension host, as on vscode.dev, not in code-server's Node one.
        'remote.extensionKind': { [EXTENSION_ID]: ['web'] },
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'security.workspace.trust.enabled': false,
        'extensions.ignoreRecommendations': true,
        'telemetry.telemetryLevel': 'off',
      }),
    );
    const vsix = path.join(tmp, 'oomguard.vsix');
    packageVsix(vsix);
    const env = { ...process.env, HOME: home };
    const install = spawnSync(process.execPath, [codeServer!, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix], { env, encoding: 'utf8' });
    assert.match(install.stdout + install.stderr, /successfully installed/, `code-server --install-extension failed:\n${install.stdout}\n${install.stderr}`);
    const port = await freePort();
    const logFile = fs.openSync(path.join(tmp, 'code-server.log'), 'w');
    server = spawn(
      process.execPath,
      [codeServer!, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check',
        '--disable-workspace-trust', '--user-data-dir', userData, '--extensions-dir', extensions, workspace],
      { env, detached: true, stdio: ['ignore', logFile, logFile] },
    );
    const base = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) || undefined,
      30_000,
      () => `code-server did not answer ${base}/healthz within 30 s:\n${fs.readFileSync(path.join(tmp, 'code-server.log'), 'utf8')}`,
    );
    context = await chromium.launchPersistentContext(path.join(tmp, 'browser'), {
      executablePath: chromiumPath!,
      viewport: { width: 1400, height: 900 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(30_000);
    await step('workbench', async () => {
      await page.goto(`${base}/?folder=${encodeURIComponent(workspace)}`);
      await page.locator('.explorer-folders-view .monaco-list-row', { hasText: SCRIPT }).waitFor({ timeout: 60_000 });
    });
    timings.push(`start (package, install, code-server, workbench) ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  after(async () => {
    await context?.close().catch(() => undefined);
    if (server?.pid !== undefined && server.exitCode === null) {
      try {
        process.kill(-server.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
    if (timings.length) console.log(`# VS Code for the Web e2e timings: ${timings.join('; ')}`);
    if (tmp && failed) console.log(`# VS Code for the Web e2e: workspace and code-server log kept in ${tmp}`);
    else if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the server runs in a web worker: diagnostics at the exact places oomguard check reports, pyproject.toml applied', async () => {
    const expected = cliFindings(SCRIPT).filter((f) => f.severity !== 'hint');
    assert.ok(expected.length > 0, `oomguard check finds nothing in examples/${SCRIPT}`);
    assert.ok(!expected.some((f) => f.code === 'OOM105'), 'the CLI did not apply the workspace pyproject.toml');
    const want = expected.map((f) => `${f.code} [Ln ${f.line}, Col ${f.column}]`).sort();
    await step('problems', async () => {
      const opened = Date.now();
      await openFile(SCRIPT);
      await page.locator('.monaco-editor .squiggly-warning, .monaco-editor .squiggly-error, .monaco-editor .squiggly-info').first().waitFor({ timeout: 60_000 });
      timings.push(`open to first squiggle (extension activation, worker start, parse, analysis) ${((Date.now() - opened) / 1000).toFixed(1)} s`);
      await page.keyboard.press('Control+Shift+M');
      await page.locator('.markers-panel').waitFor({ state: 'visible' });
      let seen: string[] = [];
      await waitFor(
        async () => {
          const rows = await page.locator('.markers-panel .monaco-list-row').allInnerTexts();
          seen = rows.flatMap((row) => {
            const m = /(OOM\d{3})\)?\s*\[Ln (\d+), Col (\d+)\]/.exec(row);
            return m ? [`${m[1]} [Ln ${m[2]}, Col ${m[3]}]`] : [];
          }).sort();
          return JSON.stringify(seen) === JSON.stringify(want) ? true : undefined;
        },
        30_000,
        () => `the Problems panel shows ${JSON.stringify(seen)}, expected ${JSON.stringify(want)}`,
      );
      await shoot('1-problems');
    });
    // Where it ran: the workbench's web worker extension host, and no Node process started the server.
    assert.ok(page.frames().some((frame) => /webWorkerExtensionHostIframe/.test(frame.url())), 'the workbench has no web worker extension host');
    assert.deepEqual(nodeServerProcesses(), [], 'a Node process runs dist/server.js: the extension did not run in the browser');
  });

  test('a quick fix edits the file through the worker', async () => {
    const original = fs.readFileSync(path.join(workspace, SCRIPT), 'utf8');
    const finding = cliFindings(SCRIPT).find((f) => f.code === 'OOM102' && f.fix);
    assert.ok(finding?.fix, `oomguard check reports no OOM102 with a fix in ${SCRIPT}`);
    await step('quick-fix', async () => {
      await goTo(finding.line, finding.column);
      await page.keyboard.press('Control+.');
      const item = page.locator('.action-widget .monaco-list-row', { hasText: finding.fix!.title });
      await item.first().waitFor({ state: 'visible', timeout: 15_000 });
      await shoot('2-quick-fix-menu');
      // The menu lays a pointer block over the page until the mouse moves; move onto the item, then click it.
      const itemBox = await item.first().boundingBox();
      assert.ok(itemBox);
      await page.mouse.move(itemBox.x + 20, itemBox.y + itemBox.height / 2, { steps: 4 });
      await page.mouse.click(itemBox.x + 20, itemBox.y + itemBox.height / 2);
      await page.locator('.action-widget').first().waitFor({ state: 'hidden', timeout: 10_000 });
      await page.keyboard.press('Control+S');
      const expected = applyCliEdits(original, finding.fix!.edits);
      assert.notEqual(expected, original);
      await waitFor(
        () => (fs.readFileSync(path.join(workspace, SCRIPT), 'utf8') === expected ? true : undefined),
        15_000,
        () => `after "${finding.fix!.title}" and Save, line ${finding.line} reads ${JSON.stringify(fs.readFileSync(path.join(workspace, SCRIPT), 'utf8').split('\n')[finding.line - 1])}, expected ${JSON.stringify(expected.split('\n')[finding.line - 1])}`,
      );
      await waitFor(
        async () => ((await page.locator('.markers-panel .monaco-list-row', { hasText: `[Ln ${finding.line}, Col ${finding.column}]` }).count()) === 0 ? true : undefined),
        15_000,
        () => `the Problems panel still lists line ${finding.line} after the fix`,
      );
      await shoot('3-after-fix');
    });
  });

  test('the memory panel shows the estimate the worker computed', async () => {
    const estimate = JSON.parse(cli(['estimate', ESTIMATE_SCRIPT, '--json'])) as { detected: { model: { name: string } | null }; peakReserved: number; cudaContext: number };
    const total = estimate.peakReserved + estimate.cudaContext;
    const nls = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.nls.json'), 'utf8')) as Record<string, string>;
    await step('memory-panel', async () => {
      await openFile(ESTIMATE_SCRIPT);
      await quickInput('F1', `>OOM Guard: ${nls['command.showMemoryEstimate']}`);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: nls['command.showMemoryEstimate']! }).first().waitFor({ timeout: 10_000 });
      await page.keyboard.press('Enter');
      let lastText = '';
      await waitFor(
        async () => {
          for (const frame of page.frames().filter((f) => f !== page.mainFrame())) {
            const text = await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '');
            if (!/\d\s*(GiB|MiB)/.test(text)) continue;
            lastText = text;
            const figures = [...text.matchAll(/(\d+(?:\.\d+)?)\s*(GiB|MiB)/g)].map((m) => Number(m[1]) * (m[2] === 'GiB' ? 2 ** 30 : 2 ** 20));
            const modelShown = !estimate.detected.model || text.includes(estimate.detected.model.name);
            // Rounded to one decimal in the panel; 5 % covers that rounding and nothing else.
            if (modelShown && figures.some((bytes) => Math.abs(bytes - total) <= total * 0.05)) return true;
          }
          return undefined;
        },
        90_000,
        () => `the memory panel never showed ${estimate.detected.model?.name ?? 'the model'} with a total near ${(total / 2 ** 30).toFixed(2)} GiB; last webview text: ${JSON.stringify(lastText.slice(0, 600))}`,
      );
      await page.waitForTimeout(500);
      await shoot('4-memory-panel');
    });
  });
});
