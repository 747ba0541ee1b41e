// The memory estimate as the editor gets it: the built language server (dist/server.js, from a code cache as the
// extension runs it) with the bench's 1,051-line script open (scripts/bench.ts, estimateSpeed), asked
// `oomguard/estimate` once the document's diagnostics are out: the first estimate after the start, then one per
// edit of a number in the code (a new version whose estimate is computed again, not the cached one), and once more
// with a what-if batch size (the version's detection kept, the figures computed again). The times
// are the server's own (EstimateResponse.elapsedMs: from the request to the answer, on the server's thread).
// `node --import tsx scripts/bench/server-estimate.ts [EDITS] [STARTS]` after `npm run build`.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startServer } from '../../test/helpers/lsp-client';
import { generateTrainingScript, percentile } from './generate';
import { ESTIMATE_REQUEST, type EstimateResponse } from '../../server/src/protocol';

async function main(): Promise<void> {
  const edits = Number(process.argv[2] ?? 20);
  const starts = Number(process.argv[3] ?? 3);
  const base = fs.readFileSync(path.join(process.cwd(), 'examples', 'train_gpt2.py'), 'utf8');
  const text = base + '\n' + generateTrainingScript(1000 - base.split('\n').length, 3);
  const lines = text.split('\n');
  // The generated blocks' `hidden=1024` defaults: an edit of one of them changes what the estimate reads.
  const sites = lines.flatMap((line, row) => (line.includes('hidden=1024') ? [{ row, character: line.indexOf('hidden=1024') + 'hidden=102'.length }] : []));
  const uri = 'file:///bench/estimate_1051.py';
  const cacheFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-estimate-code-cache-'));
  const userCacheFolder = process.env.OOMGUARD_CODE_CACHE_DIR;
  process.env.OOMGUARD_CODE_CACHE_DIR = cacheFolder;
  try {
    // The first start compiles the bundle and writes the code cache as it exits; the later ones start from it.
    for (let start = 0; start < starts; start++) {
      const client = await startServer();
      const published = client.diagnostics(uri, 1, 120_000);
      await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
      await published;
      const ask = async (overrides?: object): Promise<{ server: number; roundTrip: number }> => {
        const asked = performance.now();
        const response: EstimateResponse = await client.connection.sendRequest(ESTIMATE_REQUEST, { textDocument: { uri }, ...(overrides ? { overrides } : {}) });
        return { server: response.elapsedMs, roundTrip: performance.now() - asked };
      };
      const first = await ask();
      const later: number[] = [];
      const whatIf: number[] = [];
      for (let edit = 0; edit < edits; edit++) {
        const site = sites[edit % sites.length]!;
        const version = edit + 2;
        const diagnostics = client.diagnostics(uri, version, 30_000);
        const digit = String((edit % 8) + 1);
        await client.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version },
          contentChanges: [{ range: { start: { line: site.row, character: site.character }, end: { line: site.row, character: site.character + 1 } }, text: digit }] });
        await diagnostics;
        later.push((await ask()).server);
        // A what-if value from the panel: the same version, another batch size.
        whatIf.push((await ask({ batchSize: 2 + (edit % 4) })).server);
      }
      await client.close();
      const sorted = [...later].sort((a, b) => a - b);
      console.log(`start ${start + 1} (${start === 0 ? 'no code cache' : 'from the code cache'}): first estimate ${first.server.toFixed(1)} ms ` +
        `(round trip ${first.roundTrip.toFixed(1)}); after ${edits} edits: median ${percentile(sorted, 50).toFixed(1)} ms, p90 ${percentile(sorted, 90).toFixed(1)}, ` +
        `max ${sorted[sorted.length - 1]!.toFixed(1)} (in order: ${later.map((ms) => ms.toFixed(0)).join(' ')}); ` +
        `a what-if batch size on the same version: median ${percentile([...whatIf].sort((a, b) => a - b), 50).toFixed(1)} ms`);
    }
  } finally {
    if (userCacheFolder === undefined) delete process.env.OOMGUARD_CODE_CACHE_DIR;
    else process.env.OOMGUARD_CODE_CACHE_DIR = userCacheFolder;
    fs.rmSync(cacheFolder, { recursive: true, force: true });
  }
}

void main();
