// Bytes allocated per edit, by function (V8's sampling heap profiler, objects later collected included), on the
// script `npm run bench` generates. node --import tsx scripts/bench/alloc-edits.ts [SIZE] [OUT.heapprofile]
import * as fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import { DocumentStore } from '../../server/src/engine/documents';
import { analyzeIncrementally, completeFacts, completeFactsOnRows } from '../../server/src/engine/incremental';
import { toDiagnostic } from '../../server/src/server';
import { editSites, generateTrainingScript } from './generate';

const size = Number(process.argv[2] ?? 20000);
async function main(): Promise<void> {
  const text = generateTrainingScript(size);
  const lines = text.split('\n');
  // KINDS='docstring,module level' edits those kinds only (all but the end of the file otherwise).
  const kinds = process.env.KINDS?.split(',');
  const sites = editSites(lines).filter((site) => (kinds ? kinds.includes(site.kind) : site.kind !== 'end of file'));
  const store = new DocumentStore();
  let state = await store.open('file:///alloc.py', 1, text);
  let model = store.modelOf(state)!;
  let cache = analyzeIncrementally(model, state.content, {}, 'options', undefined, '', store.indentUnitOf(state)).cache;
  completeFacts(model, cache);
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  let version = 1;
  const edits = 200;
  for (let k = 0; k < edits / 2; k++) {
    const site = sites[Math.floor((k * sites.length) / (edits / 2))]!;
    for (const undo of [false, true]) {
      completeFactsOnRows(model, cache, site.line, site.line);
      const range = { start: { line: site.line, character: site.character }, end: { line: site.line, character: site.character + 1 } };
      state = (await store.change(state.uri, ++version, [{ range, text: undo ? site.original : site.replacement }]))!;
      model = store.modelOf(state)!;
      const result = analyzeIncrementally(model, state.content, {}, 'options', cache, '', store.indentUnitOf(state));
      cache = result.cache;
      const diagnostics = result.findings.map((finding) => toDiagnostic(finding));
      // The message the server sends (its JSON), as vscode-jsonrpc writes it.
      Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/publishDiagnostics', params: { uri: state.uri, version, diagnostics } }), 'utf8');
    }
  }
  const { profile } = await session.post('HeapProfiler.stopSampling');
  if (process.argv[3]) fs.writeFileSync(process.argv[3], JSON.stringify(profile));
  const self = new Map<string, number>();
  const walk = (node: typeof profile.head, stack: string) => {
    const name = `${node.callFrame.functionName || '(anon)'} ${node.callFrame.url.split('/').pop()}:${node.callFrame.lineNumber + 1}`;
    const bytes = node.selfSize;
    self.set(name, (self.get(name) ?? 0) + bytes);
    for (const child of node.children) walk(child, stack);
  };
  walk(profile.head, '');
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(`allocated per edit: ${(total / edits / 1024).toFixed(0)} KiB`);
  for (const [name, bytes] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${(bytes / edits / 1024).toFixed(1).padStart(8)} KiB  ${name}`);
}
void main();
