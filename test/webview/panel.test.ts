// The built panel (dist/webview.js + dist/webview.css, the page the extension serves) in headless Chromium, with a
// stand-in for acquireVsCodeApi that records what the page sends. Estimates come from the real language server.
// Needs Debian's `chromium` (apt-get install -y chromium): skipped without it, a failure under CI=true.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { makeNonce, panelHtml } from '../../extension/src/panel/html';
import { formatBytes } from '../../server/src/engine/bytes';
import { ESTIMATE_REQUEST } from '../../server/src/protocol';
import type { EstimateOverrides, EstimateResponse, HostToWebview, WebviewStrings, WebviewToHost } from '../../server/src/protocol';
import { GPU_CATALOG } from '../../server/src/estimator/catalog/gpus';
import { repoRoot } from '../helpers/analysis';
import { startServer } from '../helpers/lsp-client';
import type { TestClient } from '../helpers/lsp-client';

const CHROMIUM = '/usr/bin/chromium';
const available = fs.existsSync(CHROMIUM);
if (!available && process.env.CI === 'true') throw new Error('chromium is missing: .ci/run installs it (apt-get install -y chromium)');
const skip = available ? false : 'needs Debian chromium (apt-get install -y chromium)';

const ORIGIN = 'https://webview.test';
const artifacts = path.join(repoRoot, 'test-artifacts');
const file = path.join(repoRoot, 'examples', 'train_gpt2.py');
const uri = pathToFileURL(file).href;

/** English strings as the extension's vscode.l10n.t returns them without a translation bundle. */
const STRINGS: WebviewStrings = {
  title: 'Memory estimate: {0}', noDocument: 'Open a Python training script to see its GPU memory estimate.', peak: '≈ {0} peak on {1}',
  parameterCount: 'Parameter count of the model (for example 1.2e9)', estimateWithParameters: 'Estimate with this count',
  fits: 'fits', doesNotFit: 'does not fit', growth: 'Line {0} keeps {1} more every batch.',
  growthUntilFull: 'Line {0} keeps {1} more every batch: out of memory after about {2} batches.', growthBatches: 'The loop runs {0} batches: about {1} at its end.', weights: 'Weights', gradients: 'Gradients', optimizerStates: 'Optimizer states',
  activations: 'Activations', other: 'Other and allocator reserve', cudaContext: 'CUDA context', total: 'Peak (as nvidia-smi shows it)',
  capacity: '{0} memory', part: 'Part', size: 'Size', share: 'Share of peak', inputs: 'What the estimate read', detected: 'detected', assumed: 'assumed',
  overridden: 'what-if', line: 'line {0}', whatIf: 'What if', batchSize: 'Batch size', seqLen: 'Sequence length', imageSize: 'Image size',
  precision: 'Precision', optimizer: 'Optimizer', checkpointing: 'Activation checkpointing', accumulation: 'Accumulation steps', gpus: 'GPUs',
  strategy: 'Sharding strategy', gpu: 'GPU model', reset: 'Reset to the script', maxBatch: 'Largest batch size that fits {0}: {1}',
  suggestions: 'Ways to save memory', noSuggestions: 'No change the estimator knows would lower this peak.', apply: 'Apply', tryIt: 'Try it',
  saves: 'saves ≈ {0}', savesLittle: 'saves only ≈ {0} (under {1}% of the peak)', assumptions: 'Assumptions', computedIn: 'Computed by the language server in {0} ms.', breakdownLabel: 'Peak GPU memory per GPU',
  gradientsLater: 'At the peak ({0}) the gradients hold {1}; all of them ({2}) exist only once backward is done, when the activations have been freed.',
  phaseForward: 'in the forward pass', phaseBackward: 'at the start of backward',
  model: 'Model', on: 'on', off: 'off',
};

/** A few of the variables VS Code sets on a webview's body, from its Light Modern and Dark Modern themes. */
const THEMES: Record<'light' | 'dark', Record<string, string>> = {
  light: {
    'foreground': '#3b3b3b', 'editor-background': '#ffffff', 'editor-foreground': '#3b3b3b', 'descriptionForeground': '#3b3b3b',
    'input-background': '#ffffff', 'input-foreground': '#3b3b3b', 'input-border': '#cecece', 'dropdown-background': '#ffffff',
    'dropdown-foreground': '#3b3b3b', 'dropdown-border': '#cecece', 'button-background': '#005fb8', 'button-foreground': '#ffffff',
    'button-hoverBackground': '#0258a8', 'button-secondaryBackground': '#e5e5e5', 'button-secondaryForeground': '#3b3b3b',
    'textLink-foreground': '#005fb8', 'focusBorder': '#005fb8', 'widget-border': '#e5e5e5', 'panel-border': '#e5e5e5',
    'badge-background': '#cccccc', 'badge-foreground': '#3b3b3b', 'editorWarning-foreground': '#bf8803', 'errorForeground': '#f85149',
    'charts-blue': '#1a85ff', 'charts-purple': '#652d90', 'charts-orange': '#d18616', 'charts-red': '#e51400', 'charts-yellow': '#bf8803',
    'charts-green': '#388a34', 'testing-iconPassed': '#388a34', 'editorInfo-foreground': '#1a85ff', 'textBlockQuote-background': '#f8f8f8',
    'font-family': 'system-ui, sans-serif', 'font-size': '13px', 'editor-font-family': 'monospace',
  },
  dark: {
    'foreground': '#cccccc', 'editor-background': '#1f1f1f', 'editor-foreground': '#cccccc', 'descriptionForeground': '#9d9d9d',
    'input-background': '#313131', 'input-foreground': '#cccccc', 'input-border': '#3c3c3c', 'dropdown-background': '#313131',
    'dropdown-foreground': '#cccccc', 'dropdown-border': '#3c3c3c', 'button-background': '#0078d4', 'button-foreground': '#ffffff',
    'button-hoverBackground': '#026ec1', 'button-secondaryBackground': '#313131', 'button-secondaryForeground': '#cccccc',
    'textLink-foreground': '#4daafc', 'focusBorder': '#0078d4', 'widget-border': '#313131', 'panel-border': '#2b2b2b',
    'badge-background': '#616161', 'badge-foreground': '#f8f8f8', 'editorWarning-foreground': '#cca700', 'errorForeground': '#f85149',
    'charts-blue': '#3794ff', 'charts-purple': '#b180d7', 'charts-orange': '#d18616', 'charts-red': '#f14c4c', 'charts-yellow': '#cca700',
    'charts-green': '#89d185', 'testing-iconPassed': '#73c991', 'editorInfo-foreground': '#3794ff', 'textBlockQuote-background': '#2b2b2b',
    'font-family': 'system-ui, sans-serif', 'font-size': '13px', 'editor-font-family': 'monospace',
  },
};

let browser: Browser | undefined;
let server: TestClient | undefined;

before(async () => {
  if (!available) return;
  fs.mkdirSync(artifacts, { recursive: true });
  server = await startServer({ settings: { gpu: 'RTX 4090' } });
  const published = server.diagnostics(uri, 1);
  await server.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: fs.readFileSync(file, 'utf8') } });
  await published;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

interface Harness {
  page: Page;
  sent: () => Promise<WebviewToHost[]>;
  post: (message: HostToWebview) => Promise<void>;
  dialogs: string[];
  errors: string[];
}

/** Opens the page exactly as the extension builds it, served from dist/, with the given theme. */
async function open(theme: 'light' | 'dark'): Promise<Harness> {
  const page = await browser!.newPage({ viewport: { width: 900, height: 1300 } });
  const dialogs: string[] = [];
  const errors: string[] = [];
  page.on('dialog', (dialog) => { dialogs.push(dialog.message()); void dialog.dismiss(); });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
  const nonce = makeNonce((bytes) => { for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256); return bytes; });
  const html = panelHtml({ cspSource: ORIGIN, nonce, scriptUri: `${ORIGIN}/dist/webview.js`, styleUri: `${ORIGIN}/dist/webview.css`, lang: 'en', title: 'Memory Estimate' });
  await page.route(`${ORIGIN}/**`, async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === '/index.html') return route.fulfill({ contentType: 'text/html', body: html });
    const local = path.join(repoRoot, url.pathname);
    if (!url.pathname.startsWith('/dist/') || !fs.existsSync(local)) return route.fulfill({ status: 404, body: '' });
    return route.fulfill({ contentType: local.endsWith('.css') ? 'text/css' : 'text/javascript', body: fs.readFileSync(local) });
  });
  // tsx compiles this file with esbuild's keepNames, so functions handed to the page call its __name helper.
  await page.addInitScript({ content: 'window.__name = (fn) => fn;' });
  // The stand-in for VS Code: acquireVsCodeApi, the theme's body class and variables.
  await page.addInitScript(({ vars, theme }) => {
    const w = window as unknown as { __sent: unknown[]; __state: unknown; acquireVsCodeApi: () => unknown };
    w.__sent = [];
    w.__state = undefined;
    w.acquireVsCodeApi = () => ({
      postMessage: (message: unknown) => w.__sent.push(message),
      getState: () => w.__state,
      setState: (state: unknown) => { w.__state = state; },
    });
    document.addEventListener('DOMContentLoaded', () => {
      document.body.classList.add(theme === 'light' ? 'vscode-light' : 'vscode-dark');
      for (const [name, value] of Object.entries(vars)) document.documentElement.style.setProperty(`--vscode-${name}`, value);
    });
  }, { vars: THEMES[theme], theme });
  await page.goto(`${ORIGIN}/index.html`);
  return {
    page,
    dialogs,
    errors,
    sent: () => page.evaluate(() => (window as unknown as { __sent: WebviewToHost[] }).__sent),
    post: (message) => page.evaluate((m) => window.postMessage(m, '*'), message),
  };
}

async function estimate(overrides: EstimateOverrides = {}): Promise<EstimateResponse> {
  return server!.connection.sendRequest<EstimateResponse>(ESTIMATE_REQUEST, { textDocument: { uri }, overrides });
}

/** Plays the extension host: answers each recompute the page sent with the server's estimate. */
async function answerLast(h: Harness): Promise<EstimateOverrides> {
  const sent = await h.sent();
  const last = [...sent].reverse().find((m): m is Extract<WebviewToHost, { type: 'recompute' }> => m.type === 'recompute');
  assert.ok(last, 'the page sent a recompute');
  await h.post({ type: 'estimate', fileName: 'train_gpt2.py', response: await estimate(last.overrides), overrides: last.overrides });
  return last.overrides;
}

test('the panel renders the server estimate, and every control changes the request it sends', { skip }, async () => {
  const h = await open('light');
  assert.deepEqual((await h.sent())[0], { type: 'ready' });
  await h.post({ type: 'init', strings: STRINGS, gpus: GPU_CATALOG.map((g) => ({ name: g.name, capacity: g.capacity })) });
  const response = await estimate();
  await h.post({ type: 'estimate', fileName: 'train_gpt2.py', response, overrides: {} });
  await h.page.waitForSelector('#headline');
  assert.equal(await h.page.textContent('#model-name'), 'gpt2');
  assert.match(String(await h.page.textContent('#headline')), /≈ [\d.]+ GiB peak on RTX 4090 \(24\.0 GiB\) fits/);
  assert.equal(await h.page.locator('svg.bar rect.segment').count(), 6);
  assert.equal(await h.page.textContent('#max-batch'), `Largest batch size that fits RTX 4090: ${response.maxBatchSize}`);
  // GPT-2's peak is at the start of backward: only the (tied) head's gradient exists there, all of them later.
  assert.equal(response.peakPhase, 'backward');
  assert.ok(response.segments.gradients > 0 && response.segments.gradients < response.gradientsAfterBackward);
  assert.equal(await h.page.textContent('#gradients-note'),
    `At the peak (at the start of backward) the gradients hold ${formatBytes(response.segments.gradients)}; all of them (${formatBytes(response.gradientsAfterBackward)}) exist only once backward is done, when the activations have been freed.`);

  await h.page.fill('#ctl-batchSize', '32');
  await h.page.press('#ctl-batchSize', 'Enter');
  await h.page.locator('#ctl-batchSize').blur();
  assert.deepEqual(await answerLast(h), { batchSize: 32 });
  await h.page.selectOption('#ctl-precision', 'fp32');
  assert.deepEqual(await answerLast(h), { batchSize: 32, precision: 'fp32' });
  await h.page.selectOption('#ctl-gpu', 'T4');
  assert.deepEqual(await answerLast(h), { batchSize: 32, precision: 'fp32', gpu: 'T4' });
  await h.page.selectOption('#ctl-checkpointing', 'true');
  await answerLast(h);
  await h.page.selectOption('#ctl-optimizer', 'sgd');
  await answerLast(h);
  await h.page.selectOption('#ctl-strategy', 'fsdp');
  await answerLast(h);
  await h.page.fill('#ctl-gpus', '4');
  await h.page.locator('#ctl-gpus').blur();
  await answerLast(h);
  await h.page.fill('#ctl-accumulation', '2');
  await h.page.locator('#ctl-accumulation').blur();
  await h.page.fill('#ctl-seqLen', '256');
  await h.page.locator('#ctl-seqLen').blur();
  const all = await answerLast(h);
  assert.deepEqual(all, { batchSize: 32, precision: 'fp32', gpu: 'T4', checkpointing: true, optimizer: 'sgd', strategy: 'fsdp', gpus: 4, accumulation: 2, seqLen: 256 });
  // The rendered numbers are the server's answer to those values.
  const expected = await estimate(all);
  assert.match(String(await h.page.textContent('#headline')), new RegExp(`on T4`));
  assert.equal(await h.page.textContent('#max-batch'), `Largest batch size that fits T4: ${expected.maxBatchSize}`);
  assert.ok((await h.page.locator('.mark.overridden').count()) >= 3);
  // Keyboard: a detected input's line link is a button; Enter on it asks the host to reveal the line.
  const link = h.page.locator('ul.inputs button.link').first();
  await link.focus();
  await h.page.keyboard.press('Enter');
  const reveal = (await h.sent()).find((m) => m.type === 'reveal');
  assert.deepEqual(reveal, { type: 'reveal', line: response.inputs[0]!.line });
  // Reset clears every what-if value.
  await h.page.click('#reset');
  assert.deepEqual(await answerLast(h), {});
  // The state that survives hiding and reloading is the document and its what-if values.
  assert.deepEqual(await h.page.evaluate(() => (window as unknown as { __state: unknown }).__state), { uri, overrides: {} });
  // A suggestion's Apply button names the refactoring to run.
  await h.page.locator('.suggestion button:not(.secondary)').first().click();
  const apply = (await h.sent()).find((m) => m.type === 'applySuggestion');
  assert.equal(apply?.type === 'applySuggestion' && apply.kind, 'refactor.rewrite');
  await h.post({ type: 'notice', text: 'This refactoring is not available yet.' });
  assert.equal(await h.page.textContent('#notice'), 'This refactoring is not available yet.');
  assert.deepEqual(h.errors, []);
  await h.page.close();
});

test('a model id and a file name from the script render as text, never as HTML', { skip }, async () => {
  const h = await open('dark');
  await h.post({ type: 'init', strings: STRINGS, gpus: [] });
  const payload = '<img src=x onerror=alert(1)>';
  const response = await estimate();
  const hostile: EstimateResponse = {
    ...response,
    modelName: payload,
    inputs: response.inputs.map((input) => (input.key === 'model' ? { ...input, value: payload } : input)),
    assumptions: [payload],
  };
  await h.post({ type: 'estimate', fileName: `${payload}.py`, response: hostile, overrides: {} });
  await h.page.waitForSelector('#model-name');
  assert.equal(await h.page.textContent('#model-name'), payload);
  assert.equal(await h.page.textContent('#title'), `Memory estimate: ${payload}.py`);
  assert.equal(await h.page.locator('img').count(), 0);
  await h.page.waitForTimeout(100);
  assert.deepEqual(h.dialogs, []);
  await h.page.close();
});

test('a model the estimator cannot read: the panel says why and asks for its parameter count', { skip }, async () => {
  const h = await open('light');
  await h.post({ type: 'init', strings: STRINGS, gpus: [] });
  await h.post({ type: 'unresolved', text: 'No memory estimate: the model on line 4 could not be read (timm model "my_net" is not in the catalog).' });
  await h.page.waitForSelector('#params-form');
  assert.match((await h.page.textContent('#notice')) ?? '', /could not be read/);
  assert.equal(await h.page.textContent('label[for="params"]'), STRINGS.parameterCount);
  await h.page.fill('#params', '1.2e9');
  await h.page.click('#params-form button');
  const sent = await h.sent();
  const last = [...sent].reverse().find((m): m is Extract<WebviewToHost, { type: 'recompute' }> => m.type === 'recompute');
  assert.deepEqual(last?.overrides, { params: 1.2e9 });
  assert.deepEqual(h.errors, []);
  await h.page.close();
});

test('screenshots of the panel in light and dark themes', { skip }, async () => {
  for (const theme of ['light', 'dark'] as const) {
    const h = await open(theme);
    await h.post({ type: 'init', strings: STRINGS, gpus: GPU_CATALOG.map((g) => ({ name: g.name, capacity: g.capacity })) });
    await h.post({ type: 'estimate', fileName: 'train_gpt2.py', response: await estimate({ batchSize: 24 }), overrides: { batchSize: 24 } });
    await h.page.waitForSelector('#headline');
    const target = path.join(artifacts, `panel-${theme}.png`);
    const box = await h.page.locator('#app').boundingBox();
    assert.ok(box);
    await h.page.screenshot({ path: target, clip: { x: 0, y: 0, width: 900, height: Math.ceil(box.y + box.height + 16) } });
    assert.ok(fs.statSync(target).size > 10_000);
    assert.deepEqual(h.errors, []);
    await h.page.close();
  }
});
