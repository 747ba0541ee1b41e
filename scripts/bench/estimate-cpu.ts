// Repeated estimates of the bench's 1,051-line script (scripts/bench.ts, estimateSpeed) in one process, for a CPU
// profile (`node --cpu-prof --import tsx scripts/bench/estimate-cpu.ts [RUNS] [LINES]`) or per-run times with GC
// counts: which runs are slow, and whether a garbage collection falls in them.
import * as fs from 'node:fs';
import { Session } from 'node:inspector';
import * as path from 'node:path';
import { performance, PerformanceObserver } from 'node:perf_hooks';
// The repository root: run from it (the harness also runs bundled, scripts/bench/estimate-cpu.mjs).
const repoRoot = process.cwd();
import { generateTrainingScript, percentile } from './generate';
import { parsePython } from '../../server/src/engine/parser';
import { estimateScript } from '../../server/src/estimator';
import { copyTree } from '../../server/src/engine/syntax-tree';
import { SemanticModel, STATEMENT_NODES_COLLECTOR } from '../../server/src/engine/semantic/model';
import { refactoringTitles } from '../../server/src/features/memory-estimate';

/** The CPU time this thread has run (Linux schedstat, ns): unlike wall time, not lengthened by other processes' work. */
function threadCpuMs(): number {
  try {
    return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return NaN;
  }
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 50);
  const lines = Number(process.argv[3] ?? 1000);
  const base = fs.readFileSync(path.join(repoRoot, 'examples', 'train_gpt2.py'), 'utf8');
  const text = base + '\n' + generateTrainingScript(lines - base.split('\n').length, 3);
  const tree = (await parsePython(text))!;
  let gcMs = 0;
  let gcCount = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) { gcMs += entry.duration; gcCount++; }
  });
  observer.observe({ entryTypes: ['gc'] });
  // OOMGUARD_ALLOCATION_PROFILE=FILE: a sampling profile of what the estimates allocate, collected objects included.
  const allocationFile = process.env.OOMGUARD_ALLOCATION_PROFILE;
  const session = allocationFile ? new Session() : undefined;
  const post = (method: string, params?: object) => new Promise<unknown>((resolve, reject) =>
    session!.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  if (session) {
    session.connect();
    await post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  }
  const times: number[] = [];
  const cpu: number[] = [];
  /** Minor page faults of the process during each estimate: memory the heap touches for the first time. */
  const faults: number[] = [];
  const gcs: string[] = [];
  // OOMGUARD_TITLES=1: each run also makes the refactorings' titles of the estimate request (a new version's first
  // request makes them on the document's semantic model), timed apart.
  const titles = process.env.OOMGUARD_TITLES === '1';
  const titleCpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const plain = { rootNode: titles ? copyTree(tree, text, STATEMENT_NODES_COLLECTOR) : copyTree(tree, text) };
    await new Promise((resolve) => setImmediate(resolve));
    const [ms0, n0] = [gcMs, gcCount];
    const [start, startCpu, startFaults] = [performance.now(), threadCpuMs(), process.resourceUsage().minorPageFault];
    const result = estimateScript(plain, text, 'bench.py', { gpu: 'RTX 4090' });
    times.push(performance.now() - start);
    cpu.push(threadCpuMs() - startCpu);
    faults.push(process.resourceUsage().minorPageFault - startFaults);
    if (titles) {
      const model = new SemanticModel(plain.rootNode, text, tree);
      const titlesStart = threadCpuMs();
      refactoringTitles(model, text, result.config.lines.mode, 'bench.py');
      titleCpu.push(threadCpuMs() - titlesStart);
    }
    // OOMGUARD_EACH_RUN=1: each run as it ends (between V8's --trace-opt lines: which runs ran optimized code).
    if (process.env.OOMGUARD_EACH_RUN) console.log(`run ${i + 1}: ${times[i]!.toFixed(1)} ms, thread CPU ${cpu[i]!.toFixed(1)} ms, ${faults[i]} page faults`);
    await new Promise((resolve) => setImmediate(resolve));
    if (String(i + 1) === process.env.OOMGUARD_GC_AFTER) (globalThis as { gc?: () => void }).gc?.();
    gcs.push(`${gcCount - n0}/${(gcMs - ms0).toFixed(1)}`);
  }
  if (session) {
    const { profile } = await post('HeapProfiler.stopSampling') as { profile: unknown };
    fs.writeFileSync(allocationFile!, JSON.stringify(profile));
  }
  console.log('runs (wall ms / thread CPU ms, gc count/ms, page faults):', times.map((t, i) => `${t.toFixed(1)}/${cpu[i]!.toFixed(1)}(${gcs[i]}, ${faults[i]})`).join(' '));
  for (const [label, values] of [['wall', times], ['thread CPU', cpu]] as const) {
    const sorted = values.slice(1).sort((a, b) => a - b);
    if (sorted.length === 0) continue;
    console.log(`${label}: first ${values[0]!.toFixed(1)} ms; the others median ${percentile(sorted, 50).toFixed(1)} p90 ${percentile(sorted, 90).toFixed(1)} p95 ${percentile(sorted, 95).toFixed(1)} max ${sorted[sorted.length - 1]!.toFixed(1)}`);
  }
  if (titleCpu.length > 1) {
    const sorted = titleCpu.slice(1).sort((a, b) => a - b);
    console.log(`refactoring titles, thread CPU: first ${titleCpu[0]!.toFixed(1)} ms; the others median ${percentile(sorted, 50).toFixed(1)} p90 ${percentile(sorted, 90).toFixed(1)}`);
  }
  const warmFaults = faults.slice(1).sort((a, b) => a - b);
  if (warmFaults.length > 0) {
    console.log(`page faults: first ${faults[0]}; the others median ${percentile(warmFaults, 50)} p90 ${percentile(warmFaults, 90)} total ${warmFaults.reduce((a, b) => a + b, 0)}; ` +
      `collections during the estimates ${gcCount} (${gcMs.toFixed(0)} ms)`);
  }
}

void main();
