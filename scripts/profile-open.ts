// The phases of opening a document in process, as the server runs them before its first diagnostics: the parse,
// the tree copy with the semantic model, the full analysis, the diagnostics' LSP form and their JSON. Each phase is
// timed on a fresh store; prints each phase's median over the runs.
//   node --import tsx scripts/profile-open.ts
//   SIZE=5000 (lines; 20,000 by default), RUNS=n (5 by default), PROFILE=file.cpuprofile (a CPU profile of the last run).
import * as fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { DocumentStore } from '../server/src/engine/documents';
import { loadPython } from '../server/src/engine/parser';
import { analyzeIncrementally } from '../server/src/engine/incremental';
import { toDiagnostic } from '../server/src/server';
import { generateTrainingScript } from './bench/generate';

const size = Number(process.env.SIZE ?? 20000);
const runs = Number(process.env.RUNS ?? 5);

async function main(): Promise<void> {
  const text = generateTrainingScript(size);
  await loadPython();
  const phases: Record<string, number[]> = { open: [], model: [], analysis: [], diagnostics: [], json: [], total: [] };
  let session: Session | undefined;
  for (let run = 0; run < runs; run++) {
    if (run === runs - 1 && process.env.PROFILE) {
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 100 });
      await session.post('Profiler.start');
    }
    const store = new DocumentStore();
    const times = [performance.now()];
    const state = await store.open(`file:///open${run}.py`, 1, text);
    times.push(performance.now());
    const model = store.modelOf(state)!;
    times.push(performance.now());
    const result = analyzeIncrementally(model, state.content, {}, 'options', undefined, '', store.indentUnitOf(state));
    times.push(performance.now());
    const diagnostics = result.findings.map((finding) => toDiagnostic(finding));
    times.push(performance.now());
    JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/publishDiagnostics', params: { uri: state.uri, version: 1, diagnostics } });
    times.push(performance.now());
    ['open', 'model', 'analysis', 'diagnostics', 'json'].forEach((phase, i) => phases[phase]!.push(times[i + 1]! - times[i]!));
    phases.total!.push(times.at(-1)! - times[0]!);
    store.close(state.uri);
  }
  if (session) fs.writeFileSync(process.env.PROFILE!, JSON.stringify((await session.post('Profiler.stop')).profile));
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(`${size} lines, median ms of ${runs}: ` + Object.entries(phases).map(([phase, values]) => `${phase} ${median(values).toFixed(1)}`).join('  '));
  console.log(`first run: ` + Object.entries(phases).map(([phase, values]) => `${phase} ${values[0]!.toFixed(1)}`).join('  '));
}

void main();
