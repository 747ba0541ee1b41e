// `npm run bench:web`: cold start to the first diagnostics of one document, the language server in a browser's web
// worker (Debian's Chromium, dist/web/server.js, started as the browser client starts it) beside the Node server
// (dist/server.js over stdio) on the same texts. Each cold run is a fresh worker in a fresh page (the WebAssembly
// compiled again) or a fresh Node process. The worker's figure includes fetching the two .wasm files, which the
// browser client reads from the extension's URI before starting the worker.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { repoRoot } from '../test/helpers/analysis';
import { startServer } from '../test/helpers/lsp-client';
import { findChromium, openWorkerPage } from '../test/helpers/web-worker-page';
import { generateTrainingScript } from './bench/generate';

const RUNS = Number(process.env.OOMGUARD_BENCH_RUNS ?? 7);

function summary(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  return `median ${sorted[Math.floor((sorted.length - 1) / 2)]!.toFixed(0)} ms, min ${sorted[0]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms`;
}

async function nodeColdStart(uri: string, text: string): Promise<{ ms: number; findings: number }> {
  const started = performance.now();
  const client = await startServer();
  const published = client.diagnostics(uri, 1, 120_000);
  await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
  const diagnostics = await published;
  const ms = performance.now() - started;
  await client.close();
  return { ms, findings: diagnostics.length };
}

async function main(): Promise<void> {
  const chromium = findChromium();
  if (!chromium) {
    console.error('bench:web needs chromium (apt-get install -y chromium)');
    process.exit(2);
  }
  const documents: Array<[name: string, text: string]> = [
    ['examples/leaky_train.py', fs.readFileSync(path.join(repoRoot, 'examples', 'leaky_train.py'), 'utf8')],
    ['examples/train_gpt2.py', fs.readFileSync(path.join(repoRoot, 'examples', 'train_gpt2.py'), 'utf8')],
    ['generated 5,000-line script', generateTrainingScript(5000)],
  ];
  const page = await openWorkerPage(chromium);
  console.log(`cold start to first diagnostics, ${RUNS} runs each (web: fresh page and worker in Chromium; node: fresh process)`);
  try {
    for (const [name, text] of documents) {
      const uri = `memfs:/bench/${path.basename(name).replace(/[^\w.]/g, '_')}${name.endsWith('.py') ? '' : '.py'}`;
      const web: number[] = [];
      const initialize: number[] = [];
      const node: number[] = [];
      let webFindings = -1;
      let nodeFindings = -1;
      for (let run = 0; run < RUNS; run++) {
        await page.reload();
        const cold = await page.coldStart(uri, text);
        web.push(cold.coldMs);
        initialize.push(cold.initializeMs);
        webFindings = cold.diagnostics.length;
        const fromNode = await nodeColdStart(uri, text);
        node.push(fromNode.ms);
        nodeFindings = fromNode.findings;
      }
      if (webFindings !== nodeFindings) throw new Error(`${name}: the worker found ${webFindings}, Node ${nodeFindings}`);
      console.log(`${name} (${text.split('\n').length} lines, ${webFindings} findings):`);
      console.log(`  web worker: ${summary(web)} (of which to initialize answered: ${summary(initialize)})`);
      console.log(`  node:       ${summary(node)}`);
    }
  } finally {
    await page.close();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
