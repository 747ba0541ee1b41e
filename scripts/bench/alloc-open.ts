// Bytes allocated while a document is opened and first analysed, by function and by phase (V8's sampling heap
// profiler, objects later collected included): the parse and tree copy, the semantic model, the analysis, the
// diagnostics and their JSON, on the script `npm run bench` generates.
//   node --import tsx scripts/bench/alloc-open.ts [SIZE=20000] [OUT.heapprofile]
import * as fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import { DocumentStore } from '../../server/src/engine/documents';
import { loadPython } from '../../server/src/engine/parser';
import { analyzeIncrementally } from '../../server/src/engine/incremental';
import { toDiagnostic } from '../../server/src/server';
import { generateTrainingScript } from './generate';

type ProfileNode = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: ProfileNode[] };

const size = Number(process.argv[2] ?? 20000);

async function sampled(session: Session, work: () => Promise<void>): Promise<ProfileNode> {
  await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  await work();
  return (await session.post('HeapProfiler.stopSampling')).profile.head as ProfileNode;
}

function report(label: string, head: ProfileNode): void {
  const self = new Map<string, number>();
  const walk = (node: ProfileNode) => {
    const name = `${node.callFrame.functionName || '(anon)'} ${node.callFrame.url.split('/').pop()}:${node.callFrame.lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(head);
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(`${label}: ${(total / 2 ** 20).toFixed(1)} MiB allocated`);
  for (const [name, bytes] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${(bytes / 2 ** 20).toFixed(2).padStart(8)} MiB  ${name}`);
}

async function main(): Promise<void> {
  const text = generateTrainingScript(size);
  await loadPython();
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  const store = new DocumentStore();
  const uri = 'file:///alloc-open.py';
  let heads = [] as Array<[string, ProfileNode]>;
  heads.push(['open (parse, tree copy)', await sampled(session, async () => void (await store.open(uri, 1, text)))]);
  const state = store.get(uri)!;
  heads.push(['model', await sampled(session, async () => void store.modelOf(state))]);
  let findings: ReturnType<typeof analyzeIncrementally>['findings'] = [];
  heads.push(['analysis', await sampled(session, async () => void (findings = analyzeIncrementally(store.modelOf(state)!, state.content, {}, 'options', undefined, '', store.indentUnitOf(state)).findings))]);
  heads.push(['diagnostics and JSON', await sampled(session, async () => {
    const diagnostics = findings.map((finding) => toDiagnostic(finding));
    Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/publishDiagnostics', params: { uri, version: 1, diagnostics } }), 'utf8');
  })]);
  for (const [label, head] of heads) report(label, head);
  if (process.argv[3]) fs.writeFileSync(process.argv[3], JSON.stringify(heads.map(([label, head]) => ({ label, head }))));
  heads = [];
}

void main();
