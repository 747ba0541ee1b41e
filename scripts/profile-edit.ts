// The phases of one edit in process, as the server runs them on the script `npm run bench` generates, at the places it
// edits (scripts/bench/generate.ts): the facts of
// the edited rows (while the open's are still pending), applying the change (parse and tree copy), the model, the
// incremental analysis, the diagnostics' LSP form and their JSON. Prints each phase's median (and mean and max: a
// collection falls in one edit of several) per kind of edit.
//   node --import tsx scripts/profile-edit.ts
//   SIZE=5000 (lines; 20,000 by default), EDITS=n (edits of each kind, each undone next; 40 by default),
//   FIRST=1 (the open's facts left pending, as right after an open: the first edit's phases are printed too),
//   PROFILE=file.cpuprofile (a CPU profile of the edits alone, not of the open), KINDS='docstring,training loop' (those kinds only).
import * as fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { DocumentStore } from '../server/src/engine/documents';
import { analyzeIncrementally, completeFacts, completeFactsOnRows } from '../server/src/engine/incremental';
import { toDiagnostic } from '../server/src/server';
import { editSites, generateTrainingScript } from './bench/generate';

const size = Number(process.env.SIZE ?? 20000);
const editsPerKind = Number(process.env.EDITS ?? 40);
const firstAfterOpen = process.env.FIRST === '1';

async function main(): Promise<void> {
  const text = generateTrainingScript(size);
  const sites = editSites(text.split('\n'));
  const store = new DocumentStore();
  let state = await store.open('file:///profile.py', 1, text);
  let model = store.modelOf(state)!;
  let cache = analyzeIncrementally(model, state.content, {}, 'options', undefined, '', store.indentUnitOf(state)).cache;
  if (!firstAfterOpen) completeFacts(model, cache);
  const session = process.env.PROFILE ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  let version = 1;
  const kinds = process.env.KINDS?.split(',');
  for (const kind of [...new Set(sites.map((site) => site.kind))].filter((kind) => !kinds || kinds.includes(kind))) {
    const ofKind = sites.filter((site) => site.kind === kind);
    const phases: Record<string, number[]> = { facts: [], change: [], model: [], analysis: [], diagnostics: [], json: [], total: [] };
    for (let k = 0; k < editsPerKind; k++) {
      const site = ofKind[Math.floor((k * ofKind.length) / editsPerKind)]!;
      for (const undo of [false, true]) {
        const times = [performance.now()];
        // The server computes the pending facts of the edited rows before it applies the change.
        completeFactsOnRows(model, cache, site.line, site.line);
        times.push(performance.now());
        // The end of the file, as the bench edits it: a character typed after the last one, then deleted.
        const range = kind === 'end of file'
          ? { start: { line: site.line, character: site.character + 1 }, end: { line: site.line, character: site.character + (undo ? 2 : 1) } }
          : { start: { line: site.line, character: site.character }, end: { line: site.line, character: site.character + 1 } };
        const newText = kind === 'end of file' ? (undo ? '' : ' ') : undo ? site.original : site.replacement;
        state = (await store.change(state.uri, ++version, [{ range, text: newText }]))!;
        times.push(performance.now());
        model = store.modelOf(state)!;
        times.push(performance.now());
        const result = analyzeIncrementally(model, state.content, {}, 'options', cache, '', store.indentUnitOf(state));
        cache = result.cache;
        times.push(performance.now());
        const diagnostics = result.findings.map((finding) => toDiagnostic(finding));
        times.push(performance.now());
        JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/publishDiagnostics', params: { uri: state.uri, version, diagnostics } });
        times.push(performance.now());
        ['facts', 'change', 'model', 'analysis', 'diagnostics', 'json'].forEach((phase, i) => phases[phase]!.push(times[i + 1]! - times[i]!));
        phases.total!.push(times.at(-1)! - times[0]!);
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    console.log(`${kind.padEnd(13)} median (mean, max) ms: ` + Object.entries(phases).map(([phase, values]) => `${phase} ${median(values).toFixed(2)} (${mean(values).toFixed(2)}, max ${Math.max(...values).toFixed(1)})`).join('  '));
    if (firstAfterOpen && kind === sites[0]!.kind) console.log(`${''.padEnd(10)} first edit: ` + Object.entries(phases).map(([phase, values]) => `${phase} ${values[0]!.toFixed(1)}`).join('  '));
  }
  if (session) fs.writeFileSync(process.env.PROFILE!, JSON.stringify((await session.post('Profiler.stop')).profile));
}

void main();
