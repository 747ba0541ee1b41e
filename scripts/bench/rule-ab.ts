// CPU time of one rule (and of all rules) on a cold model, two checkouts interleaved in one process, so that a
// loaded machine weighs on both alike: `node --import tsx scripts/bench/rule-ab.ts OLD_ROOT NEW_ROOT [CODE] [PAIRS]`.
import * as path from 'node:path';
import { generateTrainingScript } from './generate';

interface Build {
  DocumentStore: typeof import('../../server/src/engine/documents').DocumentStore;
  analyze: typeof import('../../server/src/engine/analyze').analyze;
  RULES: typeof import('../../server/src/rules').RULES;
}

async function load(root: string): Promise<Build> {
  const src = path.resolve(root, 'server/src');
  const parser = await import(path.join(src, 'engine/parser.ts'));
  await parser.loadPython();
  return {
    DocumentStore: (await import(path.join(src, 'engine/documents.ts'))).DocumentStore,
    analyze: (await import(path.join(src, 'engine/analyze.ts'))).analyze,
    RULES: (await import(path.join(src, 'rules/index.ts'))).RULES,
  };
}

const cpu = () => { const usage = process.cpuUsage(); return (usage.user + usage.system) / 1000; };

async function once(build: Build, text: string, code: string, run: number): Promise<[number, number]> {
  const store = new build.DocumentStore();
  const state = await store.open(`file:///ab${run}.py`, 1, text);
  const model = store.modelOf(state)!;
  let rule = 0;
  let all = 0;
  for (const each of build.RULES) {
    const start = cpu();
    build.analyze(model, state.content, { rules: [each], ignore: ['OOM100'] });
    const spent = cpu() - start;
    all += spent;
    if (each.code === code) rule = spent;
  }
  store.close(state.uri);
  return [rule, all];
}

async function main(): Promise<void> {
  const [oldRoot, newRoot, code = 'OOM113', pairs = '15'] = process.argv.slice(2);
  const builds = { old: await load(oldRoot!), new: await load(newRoot!) };
  const text = generateTrainingScript(Number(process.env.SIZE ?? 20000));
  const times: Record<string, [number[], number[]]> = { old: [[], []], new: [[], []] };
  for (let i = 0; i < Number(pairs) + 1; i++) {
    for (const name of (i % 2 ? ['new', 'old'] : ['old', 'new']) as Array<'old' | 'new'>) {
      const [rule, all] = await once(builds[name], text, code, i);
      // The first pair warms both builds up.
      if (i > 0) { times[name]![0].push(rule); times[name]![1].push(all); }
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  for (const name of ['old', 'new']) console.log(`${name}: ${code} median ${median(times[name]![0]).toFixed(1)} ms CPU, all rules ${median(times[name]![1]).toFixed(1)} ms (${times[name]![0].length} runs)`);
}
void main();
