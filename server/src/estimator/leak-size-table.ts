// What the leak findings of one document version keep per batch (OOM101, OOM104), as plain data: the memory
// estimate computes it where it runs (a worker thread in Node, see estimate-worker.ts) and the diagnostics read it
// without computing anything, so that the estimate never holds them back.
import type { AnalysisOptions } from '../engine/analyze';
import type { ProgramModel } from '../engine/program/interpreter';
import type { Node } from '../engine/parser';
import type { KeptMemory } from '../engine/types';
import { keptBytes, loopBatchSize } from './growth';
import type { TrainingConfig } from './types';
import { treeIndex } from '../engine/program/tree-index';

/** Bytes one batch keeps, by what a leak keeps (`graph`, `output`, `output[1]`); absent where the estimator cannot say. */
export type KeptBytesByKind = Partial<Record<KeptMemory, number>>;

export interface LeakSizeTable {
  /** At the batch size of the estimate's configuration. */
  bytes: KeptBytesByKind;
  /** The loops (by first row) whose loader batches differently from the configuration: their own sizes. */
  loops: Array<{ row: number; bytes: KeptBytesByKind }>;
}

/**
 * The text the estimate depends on: the document's without its comments. Comments never hold a line break, so
 * lines and the columns of code stay where they are; an edit inside a comment (a note, a `# noqa`) changes nothing
 * the estimate reads, and it is not computed again.
 */
export function estimatedText(root: Node, text: string): string {
  const comments = root.descendantsOfType('comment');
  if (comments.length === 0) return text;
  const parts: string[] = [];
  let from = 0;
  for (const comment of comments) {
    // The blanks before a comment go with it (code never ends in them).
    let end = comment.startIndex;
    while (end > from && (text[end - 1] === ' ' || text[end - 1] === '\t')) end--;
    parts.push(text.slice(from, end));
    from = comment.endIndex;
  }
  parts.push(text.slice(from));
  return parts.join('');
}

/** Every kind of kept memory that can have a size under `config`. */
function keptKinds(config: TrainingConfig): KeptMemory[] {
  const parts = config.model.kind === 'layers' ? config.model.outputPartsPerSample?.length ?? 0 : 0;
  const modules = config.model.kind === 'layers' ? Object.keys(config.model.namedOutputElementsPerSample ?? {}) : [];
  return ['graph', 'output', ...Array.from({ length: parts }, (_, i): KeptMemory => `output[${i}]`), ...modules.map((name): KeptMemory => `module:${name}`)];
}

function bytesAt(config: TrainingConfig, batchSize: number | undefined): KeptBytesByKind {
  const bytes: KeptBytesByKind = {};
  for (const kind of keptKinds(config)) {
    const kept = keptBytes(config, kind, batchSize);
    if (kept !== undefined) bytes[kind] = kept;
  }
  return bytes;
}

/** The sizes of every leak of a script: `program` is the program model of `root`, the tree `config` was detected on. */
export function leakSizeTable(config: TrainingConfig, program: ProgramModel, root: Node): LeakSizeTable {
  const loops: LeakSizeTable['loops'] = [];
  const byBatch = new Map<number, KeptBytesByKind>();
  for (const loop of treeIndex(root).forLoops) {
    const batch = loopBatchSize(program, loop);
    if (batch === undefined) continue;
    let bytes = byBatch.get(batch);
    if (!bytes) byBatch.set(batch, (bytes = bytesAt(config, batch)));
    loops.push({ row: loop.startPosition.row, bytes });
  }
  return { bytes: bytesAt(config, undefined), loops };
}

/**
 * The analysis option that sizes leaks from a table. Its loops are read only when the table is of the analysed
 * version (`sameVersion`): an older version's rows may hold other loops, and its configuration's batch size is used.
 */
export function keptBytesFromTable(table: LeakSizeTable, sameVersion: boolean): NonNullable<AnalysisOptions['keptBytes']> {
  const byRow = sameVersion ? new Map(table.loops.map((loop) => [loop.row, loop.bytes])) : undefined;
  return (keeps, loopRow) => ((loopRow !== undefined ? byRow?.get(loopRow) : undefined) ?? table.bytes)[keeps];
}
