// VS Code end to end: the packaged .vsix installed into code-server (VS Code 1.100 served to headless Chromium),
// a workspace of the example scripts, and assertions on what a user sees: the Problems panel, a hover on a
// squiggle, the quick fix menu and its edit, the memory panel when the extension declares its command, and the
// explanation "Explain CUDA OOM Error" shows for a training log, and a Jupyter notebook's cells with their findings,
// CodeLens and a quick fix.
// A second run sets the display language to Simplified Chinese and checks that a diagnostic and the panel follow it.
// Screenshots of every step go to test-artifacts/e2e/; a step that fails names its screenshot.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import type { BrowserContext, Frame, Locator, Page } from 'playwright-core';
import { formatBytes } from '../../server/src/engine/bytes';
import { packageVsix } from '../vsix/pack';
import {
  applyCliEdits,
  artifactsDir,
  failIfMissing,
  findChromium,
  findCodeServer,
  freePort,
  missingClients,
  repoRoot,
  skipUnlessCI,
  waitFor,
} from './clients';
import type { CliFinding } from './clients';

const chromiumPath = findChromium();
const codeServer = findCodeServer();
const missing = missingClients([
  ['chromium', chromiumPath, 'apt-get install -y chromium'],
  ['code-server', codeServer, 'node test/e2e/setup.mjs, which needs apt-get install -y libkrb5-dev ripgrep'],
]);

const SCRIPT = 'leaky_train.py';
/** A Jupyter notebook of the workspace (test/e2e/workspace): findings in two cells, the training loop in one. */
const NOTEBOOK = 'leaky_notebook.ipynb';
const ESTIMATE_SCRIPT = 'train_gpt2.py';
const MEMORY_COMMAND = 'oomguard.showMemoryEstimate';
const EXPLAIN_COMMAND = 'oomguard.explainOom';
/** A training log whose CUDA OOM traceback points at the workspace's ESTIMATE_SCRIPT (matches `*train*.log`). */
const OOM_LOG = 'train_gpt2.log';

let tmp: string;
let workspace: string;
let server: ChildProcess | undefined;
let failed = false;
let context: BrowserContext | undefined;
let page: Page;
const timings: string[] = [];
/** The display language of the running suite; its screenshots carry it in their names. */
let locale: string | undefined;

function cli(args: string[]): string {
  const result = spawnSync(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), ...args], { cwd: workspace, encoding: 'utf8' });
  if (result.status !== 0 && result.status !== 1) throw new Error(`oomguard ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}

/** What `oomguard check` reports for a workspace file: the findings the editor must show. */
function cliFindings(file: string): CliFinding[] {
  return JSON.parse(cli(['check', file, '--output-format', 'json'])) as CliFinding[];
}

async function shoot(name: string): Promise<string> {
  const file = path.join(artifactsDir, `vscode-${locale ? `${locale}-` : ''}${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** Runs one user-visible step; on failure saves a screenshot and names it in the error. */
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
    throw new Error(`VS Code e2e step "${name}" failed: ${message}\n  screenshot: ${shot}\n  code-server log: ${path.join(tmp, 'code-server.log')}`, { cause: error });
  }
}

/** Quick Open (Ctrl+P), the way a user opens a file, then waits for its tab to be the active one. */
async function openFile(name: string): Promise<void> {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(name);
  // The file's own row, by its exact label: while the list still filters, Enter would open whatever row is
  // focused then (the editor that was open before, a file whose name contains this one).
  const row = page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: exactly(name) }) }).first();
  await pickRow(row, input);
  // By the file's resource name: the memory panel's tab ("Memory: name") and a second group may show the name too.
  await page.locator(`.tab.active[data-resource-name="${name}"]`).first().waitFor({ timeout: 15_000 });
}

/**
 * The sample log of the explain tests, its user frame moved onto the workspace's copy of the script. Written
 * when the workspace is made: a file created later may be missing from Quick Open's index for a while.
 */
function writeOomLog(dir: string): void {
  const sample = fs.readFileSync(path.join(repoRoot, 'test', 'explain', 'samples', 'current_gpt2.log'), 'utf8');
  const log = sample.replace(/File "[^"]*\/train_gpt2\.py"/, `File "${path.join(dir, ESTIMATE_SCRIPT)}"`);
  assert.notEqual(log, sample, 'the sample log has no train_gpt2.py frame to point at the workspace');
  fs.writeFileSync(path.join(dir, OOM_LOG), log);
}

/** What the CLI estimates for a workspace file: the total nvidia-smi would show at the peak, in bytes. */
function cliEstimateTotal(file: string): number {
  const estimate = JSON.parse(cli(['estimate', file, '--json'])) as { peakReserved: number; cudaContext: number };
  return estimate.peakReserved + estimate.cudaContext;
}

/** The title of the checkpointing suggestion, whose Apply runs the gradient checkpointing refactoring. */
const CHECKPOINTING_SUGGESTION = 'Turn on activation checkpointing';

/** The memory panel's frame (the webview's inner frame, where the panel's #app lives). */
async function panelFrame(): Promise<Frame> {
  return waitFor(async () => {
    for (const frame of page.frames()) {
      if (frame === page.mainFrame()) continue;
      if (await frame.locator('#app #headline').count().catch(() => 0)) return frame;
    }
    return undefined;
  }, 90_000, () => 'no memory panel frame with a headline');
}

/** Waits until an item of the status bar shows `figure` (a formatted byte count). */
async function waitForStatusFigure(figure: string, timeoutMs = 30_000): Promise<void> {
  let seen: string[] = [];
  await waitFor(async () => ((seen = await page.locator('.statusbar-item').allInnerTexts()).some((text) => text.includes(figure)) || undefined),
    timeoutMs, () => `no status bar item shows ${figure}; status bar: ${JSON.stringify(seen)}`);
}

/**
 * Picks a color theme with "Preferences: Color Theme", as a user does, by the label the picker shows. The picker
 * lists themes by label ("Dark Modern"), not by the id that settings.json stores ("Default Dark Modern").
 */
async function setColorTheme(name: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill('>Preferences: Color Theme');
  // This exact command: "Browse Color Themes in Marketplace" matches the same words and may come first.
  const command = page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: /^Preferences: Color Theme$/ }) }).first();
  await command.waitFor({ timeout: 10_000 });
  await command.click();
  await input.fill(name);
  // By its exact label: "Default High Contrast" is also the start of "Default High Contrast Light".
  const row = page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: exactly(name) }) }).first();
  await pickRow(row, input);
}

/**
 * Clicks a Quick Open row and waits for Quick Open to close. A click that lands while the list re-renders its rows
 * leaves it open (seen once in CI, the row still listed): the row is clicked again, up to three times.
 */
async function pickRow(row: Locator, input: Locator): Promise<void> {
  await row.waitFor({ timeout: 10_000 });
  for (let attempt = 1; ; attempt++) {
    await row.click();
    try {
      await input.waitFor({ state: 'hidden', timeout: 4_000 });
      return;
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}

/** Runs a command from the Command Palette by its title, as a user does. */
async function runCommand(title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(`>${title}`);
  // The row of this exact title: a longer title that contains it may be listed, or focused, first.
  const row = page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: exactly(title) }) }).first();
  await row.waitFor({ timeout: 10_000 });
  await row.click();
}

/** A pattern matching `text` and nothing longer. */
function exactly(text: string): RegExp {
  return new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
}

/** Moves the cursor with Go to Line (Ctrl+G), 1-based line and column. */
async function goTo(line: number, column: number): Promise<void> {
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(`:${line}:${column}`);
  await page.keyboard.press('Enter');
  await input.waitFor({ state: 'hidden', timeout: 10_000 });
}

/** `key` from package.json, resolved through package.nls.json (package.nls.<locale>.json in that language) when it is a `%placeholder%`. */
function localizedTitle(value: string): string {
  const match = /^%(.+)%$/.exec(value);
  if (!match) return value;
  const nls = JSON.parse(fs.readFileSync(path.join(repoRoot, locale ? `package.nls.${locale}.json` : 'package.nls.json'), 'utf8')) as Record<string, string>;
  return nls[match[1]!] ?? value;
}

interface DeclaredCommand {
  command: string;
  title: string;
  category?: string;
}

/** A command as package.json declares it when the test runs, or undefined. */
function declaredCommand(id: string): DeclaredCommand | undefined {
  const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { contributes?: { commands?: DeclaredCommand[] } };
  return manifest.contributes?.commands?.find((entry) => entry.command === id);
}

/** The memory panel's command as package.json declares it when the test runs, or undefined. */
function declaredMemoryCommand(): DeclaredCommand | undefined {
  return declaredCommand(MEMORY_COMMAND);
}

/** What the Command Palette lists for a declared command: "Category: Title", localized. */
function paletteTitle(declared: DeclaredCommand): string {
  return declared.category ? `${localizedTitle(declared.category)}: ${localizedTitle(declared.title)}` : localizedTitle(declared.title);
}

/**
 * Installs the packaged extension into a fresh code-server and opens the example workspace in Chromium. With a
 * `displayLocale`, code-server runs with `--locale`; VS Code only adopts a locale that a language pack provides
 * (its NLS resolution falls back to English otherwise, and vscode.env.language with it), and the Marketplace's
 * packs cannot be downloaded offline, so the user-data folder registers a language pack for that locale whose
 * translation of VS Code's own UI is empty. The workbench's chrome stays English; vscode.env.language, and so the
 * extension's package.nls.<locale>.json and l10n bundle, follow the locale as with a real pack.
 */
function codeServerSuite(name: string, displayLocale: string | undefined, body: () => void): void {
  describe(name, { skip: skipUnlessCI(missing), timeout: 300_000 }, () => {
    before(() => startWorkbench(displayLocale));
    after(stopWorkbench);
    body();
  });
}

async function startWorkbench(displayLocale: string | undefined): Promise<void> {
  locale = displayLocale;
  failed = false;
  failIfMissing(missing);
  const started = Date.now();
  fs.mkdirSync(artifactsDir, { recursive: true });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-e2e-vscode-'));
  workspace = path.join(tmp, 'workspace');
  const home = path.join(tmp, 'home');
  const userData = path.join(tmp, 'user-data');
  const extensions = path.join(tmp, 'extensions');
  fs.mkdirSync(workspace);
  fs.mkdirSync(home);
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  if (displayLocale) {
    // The layout VS Code's language pack extensions register (remoteLanguagePacks / node/nls: languagepacks.json).
    const translations = path.join(userData, `${displayLocale}.core.i18n.json`);
    fs.writeFileSync(translations, JSON.stringify({ contents: {} }));
    fs.writeFileSync(path.join(userData, 'languagepacks.json'), JSON.stringify({
      [displayLocale]: {
        hash: `oomguard-e2e-${displayLocale}`,
        extensions: [{ extensionIdentifier: { id: `oomguard-e2e.language-pack-${displayLocale}` }, version: '0.0.0' }],
        translations: { vscode: translations },
        label: displayLocale,
      },
    }));
  }
  for (const name of fs.readdirSync(path.join(repoRoot, 'examples')).filter((n) => n.endsWith('.py'))) {
    fs.copyFileSync(path.join(repoRoot, 'examples', name), path.join(workspace, name));
  }
  for (const name of fs.readdirSync(path.join(__dirname, 'workspace'))) {
    fs.copyFileSync(path.join(__dirname, 'workspace', name), path.join(workspace, name));
  }
  writeOomLog(workspace);
  // A quiet first start: no welcome page, tips or prompts covering the editor and panels.
  fs.writeFileSync(
    path.join(userData, 'User', 'settings.json'),
    JSON.stringify({
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'security.workspace.trust.enabled': false,
      'extensions.ignoreRecommendations': true,
      'git.openRepositoryInParentFolders': 'never',
      'telemetry.telemetryLevel': 'off',
      'editor.hover.delay': 200,
    }),
  );

  const vsix = path.join(tmp, 'oomguard.vsix');
  packageVsix(vsix);
  // code-server writes its config under HOME; keep it out of the real one.
  const env = { ...process.env, HOME: home };
  const install = spawnSync(process.execPath, [codeServer!, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix], { env, encoding: 'utf8' });
  assert.match(install.stdout + install.stderr, /successfully installed/, `code-server --install-extension failed:\n${install.stdout}\n${install.stderr}`);

  const port = await freePort();
  const logFile = fs.openSync(path.join(tmp, 'code-server.log'), 'w');
  // Its own process group, so that after() ends code-server together with the extension host and servers it forked.
  server = spawn(
    process.execPath,
    [codeServer!, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--user-data-dir', userData, '--extensions-dir', extensions, ...(displayLocale ? ['--locale', displayLocale] : []), workspace],
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
    await page.locator('.monaco-workbench .part.editor').waitFor({ timeout: 60_000 });
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: SCRIPT }).waitFor({ timeout: 60_000 });
  });
  timings.push(`start (package, install, code-server, workbench) ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function stopWorkbench(): Promise<void> {
  await context?.close().catch(() => undefined);
  if (server?.pid !== undefined && server.exitCode === null) {
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  }
  if (timings.length) console.log(`# VS Code e2e timings: ${timings.join('; ')}`);
  // Keep the workspace and logs of a failed run for inspection; a clean run leaves nothing behind.
  if (tmp && failed) console.log(`# VS Code e2e: workspace and code-server log kept in ${tmp}`);
  else if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  timings.length = 0;
}

codeServerSuite('VS Code (code-server) with the packaged extension', undefined, () => {
  test('the Problems panel lists what oomguard check finds', async () => {
    const expected = cliFindings(SCRIPT).filter((f) => f.severity !== 'hint');
    assert.ok(expected.length > 0, `oomguard check finds nothing in examples/${SCRIPT}`);
    const want = expected.map((f) => `${f.code} [Ln ${f.line}, Col ${f.column}]`).sort();
    await step('problems', async () => {
      await openFile(SCRIPT);
      await page.locator('.monaco-editor .squiggly-warning, .monaco-editor .squiggly-error, .monaco-editor .squiggly-info').first().waitFor({ timeout: 60_000 });
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
      const badge = await page.locator('.panel .composite-bar .badge-content').first().innerText().catch(() => '');
      assert.equal(badge.trim(), String(want.length), `the Problems badge reads ${JSON.stringify(badge)}`);
      await shoot('1-problems');
    });
  });

  test('hovering the squiggle shows the message, and the quick fix edits the file', async () => {
    const original = fs.readFileSync(path.join(workspace, SCRIPT), 'utf8');
    const finding = cliFindings(SCRIPT).find((f) => f.code === 'OOM102' && f.fix);
    assert.ok(finding?.fix, `oomguard check reports no OOM102 with a fix in ${SCRIPT}`);
    const lineText = original.split('\n')[finding.line - 1]!;
    const flagged = lineText.slice(finding.column - 1, finding.endColumn - 1);

    const box = await step('hover', async () => {
      await goTo(finding.line, finding.column);
      // After the jump the editor scrolls and redraws its decorations: look again until the squiggle is there.
      // Where the squiggle of the flagged line is now. The layout moves while the editor settles (a CodeLens
      // appears above the loop and pushes the lines down), so this is asked again before every attempt.
      const squiggleOfLine = async () => {
        const lineBox = await page.locator('.monaco-editor .view-line', { hasText: flagged }).first().boundingBox();
        if (!lineBox) return undefined;
        // Of the squiggles in the line's band, the last drawn is this line's (the line above's reaches into it).
        const squiggles = page.locator('.monaco-editor .view-overlays [class*="squiggly-"]');
        let found: { x: number; y: number; width: number; height: number } | undefined;
        for (let i = 0; i < (await squiggles.count()); i++) {
          const b = await squiggles.nth(i).boundingBox();
          if (b && Math.abs(b.y + b.height / 2 - (lineBox.y + lineBox.height / 2)) < lineBox.height / 2) found = b;
        }
        return found;
      };
      await waitFor(squiggleOfLine, 15_000, () => `no squiggle drawn on line ${finding.line} (${JSON.stringify(flagged)})`);
      const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: finding.message.slice(0, 60) });
      let target: { x: number; y: number; width: number; height: number } | undefined;
      // The hover's text is read as soon as it shows: a late layout change can close it again.
      const text = await waitFor(
        async () => {
          target = await squiggleOfLine();
          if (!target) return undefined;
          // Along the line from its left end, so that no other line's squiggle is crossed on the way.
          await page.mouse.move(target.x - 30, target.y + target.height / 2);
          await page.mouse.move(target.x + target.width / 2, target.y + target.height / 2, { steps: 4 });
          const shown = await hover.first().waitFor({ state: 'visible', timeout: 4_000 }).then(() => true, () => false);
          return shown ? hover.first().innerText({ timeout: 1_000 }).catch(() => undefined) : undefined;
        },
        30_000,
        () => `no hover with ${JSON.stringify(finding.message.slice(0, 60))} over the squiggle`,
      );
      assert.ok(text.includes(finding.code), `the hover does not name ${finding.code}: ${text}`);
      await page.waitForTimeout(300); // the hover fades in
      await shoot('2-hover');
      return target!;
    });

    await step('quick-fix', async () => {
      await page.mouse.move(box.x, box.y + 200);
      await page.keyboard.press('Escape');
      await goTo(finding.line, finding.column);
      await page.keyboard.press('Control+.');
      const item = page.locator('.action-widget .monaco-list-row', { hasText: finding.fix!.title });
      await item.first().waitFor({ state: 'visible', timeout: 15_000 });
      await shoot('3-quick-fix-menu');
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
      // The finding the fix addressed leaves the Problems panel.
      await waitFor(
        async () => ((await page.locator('.markers-panel .monaco-list-row', { hasText: `[Ln ${finding.line}, Col ${finding.column}]` }).count()) === 0 ? true : undefined),
        15_000,
        () => `the Problems panel still lists line ${finding.line} after the fix`,
      );
      assert.ok(!cliFindings(SCRIPT).some((f) => f.code === finding.code && f.line === finding.line), 'oomguard check still reports the fixed finding');
      await shoot('4-after-fix');
    });
  });

  test('the memory panel opens from its command and shows an estimate', async (t) => {
    const declared = declaredMemoryCommand();
    if (!declared) {
      // Decided when the test runs, so the case starts running (also under CI) as soon as the panel lands.
      t.skip(`package.json declares no ${MEMORY_COMMAND} command yet`);
      return;
    }
    const estimate = JSON.parse(cli(['estimate', ESTIMATE_SCRIPT, '--json'])) as {
      detected: { model: { name: string } | null };
      peakReserved: number;
      cudaContext: number;
    };
    // What nvidia-smi would show at the peak: reserved by PyTorch plus the CUDA context (protocol.ts, EstimateSegments).
    const total = estimate.peakReserved + estimate.cudaContext;
    const title = paletteTitle(declared);
    await step('memory-panel', async () => {
      await openFile(ESTIMATE_SCRIPT);
      await runCommand(title);
      let lastText = '';
      await waitFor(
        async () => {
          // Only the webview's frames: the workbench itself shows file names and a status bar figure too.
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
      await shoot('5-memory-panel');
    });
  });

  test('Apply from the panel updates the panel and the status bar, with the focus still in the panel', async () => {
    const before = cliEstimateTotal(ESTIMATE_SCRIPT);
    const frame = await panelFrame();
    const suggestion = frame.locator('li.suggestion', { hasText: CHECKPOINTING_SUGGESTION });
    await step('panel-apply', async () => {
      await suggestion.locator('button:not(.secondary)').first().waitFor({ timeout: 30_000 });
      // Focus in the panel, as after any click there: no text editor is active now.
      await frame.locator('#title').click();
      // The status bar already shows this file's figure while the panel has focus.
      await waitForStatusFigure(formatBytes(before));
      await suggestion.locator('button:not(.secondary)').first().click();
      // The panel refreshes by itself (nobody clicks the editor), and stops offering the change it just made.
      await waitFor(async () => ((await frame.locator('li.suggestion', { hasText: CHECKPOINTING_SUGGESTION }).count()) === 0 ? true : undefined),
        30_000, () => 'the panel still offers activation checkpointing after applying it');
      // Saved, the file is what the CLI estimates: the panel and the status bar show that figure. The script's editor
      // is in the first group, the panel in the second.
      await page.keyboard.press('Control+1');
      await page.locator(`.tab.active[data-resource-name="${ESTIMATE_SCRIPT}"]`).first().waitFor({ timeout: 15_000 });
      await page.keyboard.press('Control+S');
      await waitFor(() => (/gradient_checkpointing|checkpoint/.test(fs.readFileSync(path.join(workspace, ESTIMATE_SCRIPT), 'utf8')) ? true : undefined),
        15_000, () => `${ESTIMATE_SCRIPT} was not changed by the Apply button`);
      const after = cliEstimateTotal(ESTIMATE_SCRIPT);
      assert.ok(after < before, `the CLI estimates ${after} bytes after checkpointing, not less than ${before}`);
      let headline = '';
      await waitFor(async () => ((headline = await frame.locator('#headline').innerText().catch(() => '')).includes(formatBytes(after)) ? true : undefined),
        30_000, () => `the panel headline reads ${JSON.stringify(headline)}, expected ${formatBytes(after)}`);
      await waitForStatusFigure(formatBytes(after));
      await shoot('5b-panel-after-apply');
    });
  });

  test('after a reload the status bar shows the estimate of the file that was open', async () => {
    const total = cliEstimateTotal(ESTIMATE_SCRIPT);
    await step('reload-status', async () => {
      await openFile(ESTIMATE_SCRIPT);
      // The old page's workbench answers every locator until the reload navigates away: wait for the new page.
      const reloaded = page.waitForEvent('load', { timeout: 60_000 });
      await runCommand('Developer: Reload Window');
      await reloaded;
      await page.locator('.monaco-workbench .part.editor').waitFor({ timeout: 60_000 });
      await page.locator(`.tab.active[data-resource-name="${ESTIMATE_SCRIPT}"]`).first().waitFor({ timeout: 60_000 });
      // No click, no edit: the restored editor's figure appears once the server runs.
      await waitForStatusFigure(formatBytes(total), 90_000);
      await shoot('5c-status-after-reload');
    });
  });

  test('the memory panel passes axe-core in dark, light and both high contrast themes', async () => {
    const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
    const imagesDir = path.join(repoRoot, 'docs', 'images');
    // `name`: the picker's label of the theme (code-server's theme-defaults package.nls.json); `bodyClass`: the
    // workbench's class for its kind; `webviewClass`: the class a webview's body gets for it.
    const themes: Array<{ name: string; label: string; bodyClass: string; webviewClass: string }> = [
      { name: 'Dark Modern', label: 'dark', bodyClass: 'vs-dark', webviewClass: 'vscode-dark' },
      { name: 'Light Modern', label: 'light', bodyClass: 'vs', webviewClass: 'vscode-light' },
      { name: 'Dark High Contrast', label: 'hc-dark', bodyClass: 'hc-black', webviewClass: 'vscode-high-contrast' },
      { name: 'Light High Contrast', label: 'hc-light', bodyClass: 'hc-light', webviewClass: 'vscode-high-contrast-light' },
    ];
    const report: string[] = [];
    // The panel in view, beside the script (an earlier step may have put another editor over it).
    await openFile(ESTIMATE_SCRIPT);
    await runCommand(paletteTitle(declaredMemoryCommand()!));
    // The whole height for the panel: the Problems panel of earlier steps would cover its lower half.
    if (await page.locator('.part.panel').isVisible()) {
      await runCommand('View: Hide Panel');
      await page.locator('.part.panel').waitFor({ state: 'hidden', timeout: 10_000 });
    }
    for (const theme of themes) {
      await step(`axe-${theme.label}`, async () => {
        await setColorTheme(theme.name);
        await page.locator(`.monaco-workbench.${theme.bodyClass}`).waitFor({ timeout: 30_000 });
        const frame = await panelFrame();
        // The webview gets the theme's variables by a message after the workbench repaints.
        let bodyClass = '';
        await waitFor(async () => ((bodyClass = await frame.evaluate(() => document.body.className)).split(/\s+/).includes(theme.webviewClass) ? true : undefined),
          30_000, () => `the panel never took the ${theme.name} theme; its body's class is ${JSON.stringify(bodyClass)}`);
        await page.waitForTimeout(500);
        if (!(await frame.evaluate(() => 'axe' in window))) await frame.evaluate(`${axeSource}\n;true`);
        type Rule = { id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[]; failureSummary?: string }> };
        // No named functions inside: tsx's keepNames would call a __name helper the frame does not have.
        const raw = await frame.evaluate(async () => {
          const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Rule[]; passes: Rule[]; incomplete: Rule[] }> } }).axe;
          const run = await axe.run(document, { resultTypes: ['violations', 'passes', 'incomplete'] });
          return JSON.parse(JSON.stringify({ violations: run.violations, passes: run.passes, incomplete: run.incomplete })) as { violations: Rule[]; passes: Rule[]; incomplete: Rule[] };
        });
        const summary = (rules: Rule[]) => rules.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => `${JSON.stringify(n.target)}: ${n.failureSummary ?? ''}`) }));
        const result = { violations: summary(raw.violations), passes: summary(raw.passes), incomplete: summary(raw.incomplete) };
        const { violations } = result;
        // axe really looked at the panel's text: its contrast rule passed on the text it could measure.
        const contrastChecked = result.passes.find((rule) => rule.id === 'color-contrast')?.nodes.length ?? 0;
        const contrastUnsure = result.incomplete.find((rule) => rule.id === 'color-contrast')?.nodes ?? [];
        report.push(`${theme.label}: ${violations.length ? violations.map((v) => `${v.id} (${v.impact})`).join(', ') : 'no violations'}, color-contrast passed on ${contrastChecked} elements${contrastUnsure.length ? `, not measurable on ${contrastUnsure.length}: ${contrastUnsure.join(' | ')}` : ''}`);
        assert.ok(contrastChecked > 10, `axe-core checked the contrast of only ${contrastChecked} elements in the ${theme.name} theme`);
        fs.mkdirSync(imagesDir, { recursive: true });
        // The panel itself, cut from the workbench: the webview's outer frame (the inner frame is inside it).
        const outer = await frame.parentFrame()?.frameElement();
        const box = await outer?.boundingBox();
        assert.ok(box, 'the memory panel\'s webview has no box on the page');
        await page.screenshot({ path: path.join(imagesDir, `panel-${theme.label}.png`), clip: box });
        const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        assert.deepEqual(serious, [], `axe-core finds serious or critical violations in the ${theme.name} theme`);
      });
    }
    console.log(`# axe-core on the memory panel: ${report.join('; ')}`);
    await setColorTheme('Dark Modern');
    await page.locator('.monaco-workbench.vs-dark').waitFor({ timeout: 30_000 });
  });

  test('the status item opens a menu, and Show Output shows the start line', async () => {
    const version = (JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
    await step('status-menu', async () => {
      // The server's item reads "OOM Guard"; the estimate's item beside it shows a figure and a GPU.
      await page.locator('.statusbar-item', { hasText: 'OOM Guard' }).first().click();
      const rows = page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
      await rows.first().waitFor({ state: 'visible', timeout: 10_000 });
      const labels = await rows.allInnerTexts();
      for (const wanted of ['Show Output', 'Show Memory Estimate', 'Restart Server', 'Open Settings']) {
        assert.ok(labels.some((label) => label.includes(wanted)), `the status menu lacks ${wanted}: ${JSON.stringify(labels)}`);
      }
      await shoot('12-status-menu');
      await page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: 'Show Output' }).first().click();
      const startLine = new RegExp(`OOM Guard ${version.replace(/\./g, '\\.')} started: server \\S+dist/server\\.js \\(version ${version.replace(/\./g, '\\.')}\\) on Node v\\d+`);
      let text = '';
      await waitFor(async () => {
        // The output view wraps long lines: read it as one run of text.
        text = ((await page.locator('.part.panel .monaco-editor .view-lines').allInnerTexts()).join('')).replace(/\u00a0/g, ' ').replace(/\n/g, '');
        return startLine.test(text) && /Configuration: /.test(text) ? true : undefined;
      }, 30_000, () => `the output channel shows no start line and configuration line: ${JSON.stringify(text.slice(0, 800))}`);
      await shoot('13-output-start-line');
    });
  });

  test('a model the estimator cannot read, and a leak that grows: the CodeLens and the status bar say so', async () => {
    const lensTexts = () => page.locator('.monaco-editor .codelens-decoration').allInnerTexts();
    const statusTexts = () => page.locator('.statusbar-item').allInnerTexts();
    let seen: string[] = [];
    await step('unresolved', async () => {
      await openFile('unknown_model.py');
      await waitFor(async () => ((seen = await lensTexts()).some((text) => text.includes('No memory estimate: timm model "my_private_net_v7" is not in the catalog')) || undefined),
        60_000, () => `no unresolved CodeLens; lenses: ${JSON.stringify(seen)}`);
      await waitFor(async () => ((seen = await statusTexts()).some((text) => text.includes('no estimate')) || undefined),
        30_000, () => `no "no estimate" status item; status bar: ${JSON.stringify(seen)}`);
      // Never a figure for a model it could not read.
      assert.ok(!(await lensTexts()).some((text) => /\d\s*(GiB|MiB)/.test(text)));
      await shoot('6-unresolved');
    });
    await step('growth', async () => {
      await openFile('leaky_eval.py');
      await waitFor(async () => ((seen = await lensTexts()).some((text) => /leak \+250 KiB per batch \(line 15\): out of memory after about \d+ batches/.test(text)) || undefined),
        60_000, () => `no growth on the CodeLens; lenses: ${JSON.stringify(seen)}`);
      await waitFor(async () => ((seen = await statusTexts()).some((text) => text.includes('250 KiB')) || undefined),
        30_000, () => `no growth in the status bar; status bar: ${JSON.stringify(seen)}`);
      await shoot('7-growth');
    });
  });

  test('a notebook: each Python cell shows its findings, the CodeLens sits on the training cell, a quick fix edits the cell', async () => {
    const expected = cliFindings(NOTEBOOK);
    assert.deepEqual(expected.map((f) => [f.cell, f.code]), [[4, 'OOM101'], [4, 'OOM106'], [5, 'OOM118']]);
    const want = expected.map((f) => `${f.code} [Ln ${f.line}, Col ${f.column}]`).sort();
    await step('notebook-problems', async () => {
      // Closed editors' diagnostics are cleared by the server: only the notebook's are left in the Problems panel.
      await runCommand('View: Close All Editors');
      await openFile(NOTEBOOK);
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
        60_000,
        () => `the Problems panel shows ${JSON.stringify(seen)}, expected the notebook's ${JSON.stringify(want)}`,
      );
      // The training cell may be below the fold (a notebook renders the cells in view): its finding's row reveals
      // it, with the squiggle in the cell.
      await page.locator('.markers-panel .monaco-list-row', { hasText: 'OOM101' }).first().dblclick();
      await page.locator('.notebook-editor .monaco-editor [class*="squiggly-"]').first().waitFor({ timeout: 30_000 });
      await shoot('8-notebook-problems');
    });
    await step('notebook-codelens', async () => {
      let lenses: string[] = [];
      await waitFor(async () => ((lenses = await page.locator('.notebook-editor .codelens-decoration').allInnerTexts()).some((text) => /peak/.test(text)) || undefined),
        60_000, () => `no estimate CodeLens in the notebook; lenses: ${JSON.stringify(lenses)}`);
      // One lens, above the training loop's cell (the fourth cell, its first line).
      const withLens = page.locator('.notebook-editor .monaco-editor', { has: page.locator('.codelens-decoration') });
      assert.equal(await withLens.count(), 1);
      // The editor draws spaces as no-break spaces.
      const code = ((await withLens.first().locator('.view-lines').textContent()) ?? '').replace(/\u00a0/g, ' ');
      assert.match(code, /for step in range\(100\)/);
      await shoot('9-notebook-codelens');
    });
    await step('notebook-quick-fix', async () => {
      const finding = expected.find((f) => f.code === 'OOM118')!;
      // The Problems panel's row opens the cell at the finding, as a user gets there.
      await page.locator('.markers-panel .monaco-list-row', { hasText: 'OOM118' }).first().dblclick();
      await page.waitForTimeout(500);
      await page.keyboard.press('Control+.');
      const item = page.locator('.action-widget .monaco-list-row', { hasText: finding.fix!.title });
      await item.first().waitFor({ state: 'visible', timeout: 15_000 });
      await shoot('10-notebook-quick-fix-menu');
      const itemBox = await item.first().boundingBox();
      assert.ok(itemBox);
      await page.mouse.move(itemBox.x + 20, itemBox.y + itemBox.height / 2, { steps: 4 });
      await page.mouse.click(itemBox.x + 20, itemBox.y + itemBox.height / 2);
      await page.locator('.action-widget').first().waitFor({ state: 'hidden', timeout: 10_000 });
      await page.keyboard.press('Control+S');
      const sourceOf = (cell: number) => {
        const notebook = JSON.parse(fs.readFileSync(path.join(workspace, NOTEBOOK), 'utf8')) as { cells: Array<{ source: string | string[] }> };
        const source = notebook.cells[cell - 1]!.source;
        return Array.isArray(source) ? source.join('') : source;
      };
      await waitFor(() => (sourceOf(finding.cell!) === 'loss;' ? true : undefined), 15_000,
        () => `after "${finding.fix!.title}" and Save, cell ${finding.cell} reads ${JSON.stringify(sourceOf(finding.cell!))}`);
      // The other cells are as they were, and the finding leaves the Problems panel.
      assert.match(sourceOf(4), /losses\.append\(loss\)/);
      await waitFor(async () => ((await page.locator('.markers-panel .monaco-list-row', { hasText: 'OOM118' }).count()) === 0 ? true : undefined),
        15_000, () => 'the Problems panel still lists OOM118 after the fix');
      assert.ok(!cliFindings(NOTEBOOK).some((f) => f.code === 'OOM118'), 'oomguard check still reports OOM118');
      await shoot('11-notebook-after-fix');
    });
  });

  test('a finding\'s code link opens the rule page shipped in the extension, in the Markdown preview', async () => {
    const heading = fs.readFileSync(path.join(repoRoot, 'docs', 'rules', 'OOM105.md'), 'utf8').split('\n')[0]!.replace(/^#\s*/, '');
    assert.ok(cliFindings(SCRIPT).some((f) => f.code === 'OOM105'), `oomguard check reports no OOM105 in ${SCRIPT}`);
    await step('rule-doc', async () => {
      await openFile(SCRIPT);
      // The Problems panel lists the findings of open files; OOM105's row is there once the server has checked it.
      await runCommand('View: Focus Problems (Errors, Warnings, Infos)');
      await page.locator('.markers-panel').waitFor({ state: 'visible', timeout: 15_000 });
      const row = page.locator('.markers-panel .monaco-list-row', { hasText: 'OOM105' }).first();
      await row.waitFor({ timeout: 60_000 });
      // The code of the row is a link; its address is a command of the extension, never a web address.
      const link = row.locator('a', { hasText: /^OOM105$/ }).first();
      await link.waitFor({ timeout: 10_000 });
      const href = (await link.getAttribute('href')) ?? '';
      assert.match(href, /^command:oomguard\.showRuleDoc/, `the code link of OOM105 points at ${JSON.stringify(href)}`);
      const pagesBefore = context!.pages().length;
      await link.click();
      // The Markdown preview's editor ("Preview OOM105.md"), with the shipped page rendered in its webview.
      await page.locator('.tab.active', { hasText: /Preview.*OOM105\.md/ }).first().waitFor({ timeout: 30_000 });
      let seen: string[] = [];
      await waitFor(
        async () => {
          seen = [];
          for (const frame of page.frames().filter((f) => f !== page.mainFrame())) {
            const title = await frame.locator('.markdown-body h1').first().innerText({ timeout: 500 }).catch(() => undefined);
            if (title !== undefined) seen.push(title);
            if (title?.trim() === heading) return true;
          }
          return undefined;
        },
        30_000,
        () => `no Markdown preview shows the heading ${JSON.stringify(heading)}; preview headings: ${JSON.stringify(seen)}`,
      );
      // Inside VS Code: no browser tab was opened for a web page.
      assert.equal(context!.pages().length, pagesBefore, 'clicking the code link opened a browser page');
      await shoot('14-rule-doc');
    });
  });

  test('explaining a CUDA OOM log shows the request, the fragmentation advice and the script', async () => {
    const declared = declaredCommand(EXPLAIN_COMMAND);
    assert.ok(declared, `package.json declares no ${EXPLAIN_COMMAND} command`);
    // The log was written with the workspace (writeOomLog), before code-server indexed it for Quick Open.
    assert.ok(fs.existsSync(path.join(workspace, OOM_LOG)), `${OOM_LOG} is missing from the workspace`);
    const script = path.join(workspace, ESTIMATE_SCRIPT);
    // What the user must see, as the CLI explains the same log: the request, the fragmentation advice, the script.
    const [explained] = JSON.parse(cli(['explain', OOM_LOG, '--json'])) as Array<{
      message: { requested?: { text: string } };
      causes: Array<{ kind: string; tryThis: string[] }>;
      script?: { file: string };
    }>;
    const requested = explained?.message.requested?.text;
    const advice = explained?.causes.find((cause) => cause.kind === 'fragmentation')?.tryThis[0];
    assert.ok(requested, `oomguard explain finds no requested size in ${OOM_LOG}`);
    assert.ok(advice, `oomguard explain gives no fragmentation advice for ${OOM_LOG}`);
    assert.equal(explained.script?.file, script, `oomguard explain does not read the workspace's ${ESTIMATE_SCRIPT}`);
    const bundle = JSON.parse(fs.readFileSync(path.join(repoRoot, 'l10n', 'bundle.l10n.json'), 'utf8')) as Record<string, string>;
    const scriptHeading = bundle['The script: {0}']!.replace('{0}', script);
    const tabLabel = bundle['CUDA OOM explanation']!;
    // The preview reflows text; compare with runs of whitespace made single spaces.
    const flat = (text: string) => text.replace(/\s+/g, ' ');
    const wanted = [requested, advice, scriptHeading].map(flat);
    await step('explain-oom', async () => {
      await openFile(OOM_LOG);
      await runCommand(paletteTitle(declared));
      await page.locator('.tab.active', { hasText: tabLabel }).waitFor({ timeout: 15_000 });
      let texts: string[] = [];
      await waitFor(
        async () => {
          texts = (await webviewTexts()).map(flat);
          return texts.some((text) => wanted.every((phrase) => text.includes(phrase))) ? true : undefined;
        },
        15_000,
        () => `the explanation never showed ${JSON.stringify(wanted)}; webview texts: ${JSON.stringify(texts.map((t) => t.slice(0, 400)))}`,
      );
      await shoot('6-explain-oom');
    });
  });
});

/** The zh-CN bundle the extension and the server ship: what the Chinese run expects to see. */
function zhBundle(): Record<string, string> {
  return JSON.parse(fs.readFileSync(path.join(repoRoot, 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8')) as Record<string, string>;
}

/** The text of every webview frame (the workbench itself is the main frame). */
async function webviewTexts(): Promise<string[]> {
  const frames = page.frames().filter((f) => f !== page.mainFrame());
  return Promise.all(frames.map((frame) => frame.evaluate(() => document.body?.innerText ?? '').catch(() => '')));
}

codeServerSuite('VS Code (code-server) in Simplified Chinese (display language zh-cn)', 'zh-cn', () => {
  test('a diagnostic reads in Chinese in the Problems panel', async () => {
    const zh = zhBundle();
    // The English message of OOM105 has no placeholder, so its translation is the whole Chinese message.
    const english = cliFindings(SCRIPT).find((f) => f.code === 'OOM105');
    assert.ok(english, `oomguard check reports no OOM105 in ${SCRIPT}`);
    const expected = zh[english.message];
    assert.ok(expected, `the zh-CN bundle has no translation of ${JSON.stringify(english.message)}`);
    await step('problems', async () => {
      await openFile(SCRIPT);
      await page.keyboard.press('Control+Shift+M');
      await page.locator('.markers-panel').waitFor({ state: 'visible' });
      let rows: string[] = [];
      await waitFor(
        async () => {
          rows = await page.locator('.markers-panel .monaco-list-row').allInnerTexts();
          return rows.some((row) => row.includes(expected.slice(0, 40))) ? true : undefined;
        },
        60_000,
        () => `the Problems panel never showed ${JSON.stringify(expected.slice(0, 40))}; rows: ${JSON.stringify(rows)}`,
      );
      await shoot('1-problems');
    });
  });

  test('the memory panel opens from its Chinese command title and shows Chinese labels', async () => {
    const zh = zhBundle();
    const declared = declaredMemoryCommand();
    assert.ok(declared, `package.json declares no ${MEMORY_COMMAND} command`);
    const title = paletteTitle(declared);
    assert.match(title, /[\u4e00-\u9fff]/, 'package.nls.zh-cn.json gives the command a Chinese title');
    // Section headings of the panel (strings.ts → webview) and a suggestion title from the server's estimate.
    const wanted = [zh['Peak GPU memory per GPU']!, zh['What if']!, zh['Ways to save memory']!, zh['Batch size']!];
    await step('memory-panel', async () => {
      await openFile(ESTIMATE_SCRIPT);
      await runCommand(title);
      let texts: string[] = [];
      await waitFor(
        async () => {
          texts = await webviewTexts();
          return texts.some((text) => wanted.every((label) => text.includes(label)) && /\d\s*(GiB|MiB)/.test(text)) ? true : undefined;
        },
        90_000,
        () => `the memory panel never showed ${JSON.stringify(wanted)}; webview texts: ${JSON.stringify(texts.map((t) => t.slice(0, 300)))}`,
      );
      await page.waitForTimeout(500);
      await shoot('2-memory-panel');
    });
  });
});
