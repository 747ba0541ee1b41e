// The web worker server in Debian's Chromium, outside VS Code: a local HTTP server serves dist/ and a page whose
// script (web-worker-client.ts) starts dist/web/server.js as the browser client does; playwright-core drives the page.
// Used by the worker's protocol test (test/web/) and `npm run bench:web`. Nothing is downloaded.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { repoRoot } from './analysis';
import type { ColdStart } from './web-worker-client';
import type { Diagnostic } from 'vscode-languageserver-protocol';

export { findChromium } from '../e2e/clients';

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.map': 'application/json' };

export interface WorkerPage {
  page: Page;
  /** Opens a fresh page (a cold browser-side start: new worker, new WebAssembly compile). */
  reload(): Promise<void>;
  coldStart(uri: string, text: string, initializationOptions?: unknown): Promise<ColdStart>;
  request<T>(method: string, params: unknown): Promise<T>;
  notify(method: string, params: unknown): Promise<void>;
  diagnostics(uri: string, version: number): Promise<Diagnostic[]>;
  log(): Promise<string[]>;
  close(): Promise<void>;
}

export async function openWorkerPage(chromiumPath: string): Promise<WorkerPage> {
  for (const file of ['dist/web/server.js', 'dist/tree-sitter.wasm', 'dist/tree-sitter-python.wasm']) {
    if (!fs.existsSync(path.join(repoRoot, file))) throw new Error(`${file} is missing: run "npm run build" first`);
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-web-worker-'));
  await esbuild.build({
    entryPoints: [path.join(__dirname, 'web-worker-client.ts')],
    outfile: path.join(tmp, 'page.js'),
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    logLevel: 'warning',
  });
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    let file: string | undefined;
    if (url.pathname === '/') {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<!doctype html><meta charset="utf-8"><title>oomguard worker</title><script src="/page.js"></script>');
      return;
    }
    if (url.pathname === '/page.js') file = path.join(tmp, 'page.js');
    else if (url.pathname.startsWith('/dist/')) file = path.join(repoRoot, path.normalize(url.pathname).slice(1));
    if (!file || !file.startsWith(repoRoot + path.sep) && !file.startsWith(tmp) || !fs.existsSync(file)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    fs.createReadStream(file).pipe(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('the page server has no port');
  const base = `http://127.0.0.1:${address.port}/`;
  const browser: Browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  let page = await browser.newPage();
  const pageErrors: string[] = [];
  const open = async () => {
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(base);
    await page.waitForFunction(() => typeof window.oomguardWorker === 'object');
  };
  await open();
  return {
    get page() {
      return page;
    },
    async reload() {
      await page.close();
      page = await browser.newPage();
      await open();
    },
    coldStart: (uri, text, initializationOptions) =>
      page.evaluate(([u, t, o]) => window.oomguardWorker.coldStart(u as string, t as string, o), [uri, text, initializationOptions ?? {}] as const),
    request: async <T>(method: string, params: unknown) => (await page.evaluate(([m, p]) => window.oomguardWorker.request(m as string, p), [method, params] as const)) as T,
    notify: (method, params) => page.evaluate(([m, p]) => window.oomguardWorker.notify(m as string, p), [method, params] as const),
    diagnostics: (uri, version) => page.evaluate(([u, v]) => window.oomguardWorker.diagnostics(u as string, v as number), [uri, version] as const),
    log: async () => [...pageErrors, ...(await page.evaluate(() => window.oomguardWorker.log()))],
    async close() {
      await browser.close().catch(() => undefined);
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}
