// Public API of "Explain CUDA OOM": find the errors in a text, locate the script of each traceback, and explain.
// The CLI reads scripts from disk; the language server passes `scriptFor`, which uses the open document's model.
import * as path from 'node:path';
import { buildExplanation, type Explanation } from './explain';
import { findOomErrors } from './parse';
import { resolveFrameFile, scriptContextFromFile, type ScriptContext } from './script';
import type { AnalysisOptions } from '../engine/analyze';

export { findOomErrors, isLibraryFile } from './parse';
export type { OomMessage, OomReport, TracebackFrame, OomFormat, ProcessMemory } from './parse';
export { buildExplanation } from './explain';
export type { Explanation, Cause, CauseKind, Figure, ScriptSummary } from './explain';
export { renderMarkdown, renderText } from './render';
export { parseSize, formatBytes } from './sizes';
export { resolveFrameFile, stepTensors, scriptContextFromFile, scriptContextFromModel } from './script';
export type { ScriptContext, StepTensor } from './script';

export interface ExplainTextOptions {
  /** Folders where a frame's relative or foreign path is looked up (the log's folder, workspace folders, cwd). */
  roots?: string[];
  /** A script to use for every error instead of the traceback's frame (oomguard explain --script). */
  script?: string;
  /** Where a traceback's file is (a path or, in a browser, an open document's URI); defaults to the disk (resolveFrameFile). */
  resolveFrame?: (file: string, roots: string[]) => string | undefined;
  /** How to load a script's context; defaults to reading and analysing the file from disk. */
  scriptFor?: (file: string) => Promise<ScriptContext | undefined>;
  analysis?: AnalysisOptions;
}

/** Explains each distinct out-of-memory error of the text; identical messages (one per rank) are explained once. */
export async function explainText(text: string, options: ExplainTextOptions = {}): Promise<Explanation[]> {
  const roots = options.roots ?? [];
  const load = options.scriptFor ?? ((file: string) => scriptContextFromFile(file, options.analysis));
  const seen = new Set<string>();
  const explanations: Explanation[] = [];
  const contexts = new Map<string, Promise<ScriptContext | undefined>>();
  for (const report of findOomErrors(text)) {
    const key = `${report.message.text}\u0000${report.userFrame?.file ?? ''}:${report.userFrame?.line ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const frameFile = options.script
      ? path.resolve(options.script)
      : report.userFrame ? (options.resolveFrame ?? resolveFrameFile)(report.userFrame.file, roots) : undefined;
    let script: ScriptContext | undefined;
    if (frameFile) {
      let pending = contexts.get(frameFile);
      if (!pending) {
        pending = load(frameFile);
        contexts.set(frameFile, pending);
      }
      script = await pending;
    }
    explanations.push(buildExplanation(report, { frameFile, script }));
  }
  return explanations;
}
