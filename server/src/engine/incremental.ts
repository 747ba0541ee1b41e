// Incremental analysis for the editor. A keystroke usually changes one function of a long script. When the
// changed top-level statements are function or class definitions, and what they tell the rest of the file is
// the same as before (their functions' summaries, the calls they make into other statements, the containers
// they reset, the roles of names), the findings of every other statement cannot have changed: those are reused,
// moved with their statements, and the rules run on the changed statements alone. Anything else (module-level
// code, new or removed definitions, different options) analyses the whole file.
import { analyze } from './analyze';
import type { AnalysisOptions } from './analyze';
import type { Node } from './parser';
import { crossStatementFacts } from './semantic/cross-statement';
import { clearFreesGraphs, clearSitesWithin } from './semantic/lifetime';
import { lowerBound } from './semantic/model';
import type { SemanticModel } from './semantic/model';
import { contains, enclosingLoops } from './syntax';
import type { Finding, TextEdit } from './types';

interface StatementEntry {
  /**
   * What the statement tells the rest of the file (undefined: module-level code, never analysed alone;
   * PENDING: not computed yet, see completeFacts).
   */
  facts: string | undefined;
  /** The statement's first row when `findings` were computed. */
  row: number;
  findings: Finding[];
}

export interface AnalysisCache {
  optionsKey: string;
  globals: string;
  statements: Map<Node, StatementEntry>;
}

/** Facts not computed yet: a full analysis publishes first and fills them in afterwards (completeFacts). */
const PENDING = '\u0000pending';

export interface IncrementalResult {
  findings: Finding[];
  cache: AnalysisCache;
  /** How many top-level statements the rules ran on (all of them for a full analysis). */
  analysedStatements: number;
}

function isDefinition(statement: Node): boolean {
  const definition = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
  return definition?.type === 'function_definition' || definition?.type === 'class_definition';
}

function nodesWithin<T extends Node>(nodes: readonly T[], region: Node): T[] {
  const result: T[] = [];
  for (let i = lowerBound(nodes, region.startIndex); i < nodes.length && nodes[i]!.startIndex < region.endIndex; i++) result.push(nodes[i]!);
  return result;
}

/** What a definition statement tells the rest of the file, as a comparable string. */
export function statementFacts(model: SemanticModel, statement: Node): string | undefined {
  if (!isDefinition(statement)) return undefined;
  const facts: unknown[] = [];
  // model.functions is in document order: the statement's functions are one run of it.
  let first = 0;
  for (let high = model.functions.length; first < high;) {
    const mid = (first + high) >> 1;
    if (model.functions[mid]!.node.startIndex < statement.startIndex) first = mid + 1;
    else high = mid;
  }
  for (let i = first; i < model.functions.length && model.functions[i]!.node.startIndex < statement.endIndex; i++) {
    const info = model.functions[i]!;
    if (!contains(statement, info.node)) continue;
    const summary = model.summary(info);
    facts.push(['def', info.name, info.classInfo?.name ?? '', info.decorators.map((d) => d.text), model.isNoGradFunction(info),
      summary.backward, summary.step, summary.clear, summary.forward, model.returnsAttached(info)]);
  }
  for (const call of nodesWithin(model.calls, statement)) {
    const callee = model.resolveLocalFunction(call);
    if (!callee || contains(statement, callee.node)) continue;
    const loops = enclosingLoops(call);
    const training = loops.find((loop) => model.runsBackward(loop));
    facts.push(['call', callee.name, callee.classInfo?.name ?? '', loops.length > 0, !!training,
      training ? model.clearsGradients(training) : false, loops.some((loop) => model.isPerBatchLoop(loop)), model.isNoGrad(call)]);
  }
  for (const site of clearSitesWithin(model, statement)) facts.push(['clear', site.last, clearFreesGraphs(model, site)]);
  for (const assignment of nodesWithin(model.assignments, statement)) {
    // Read across statements by OOM109 (TrainingArguments(prediction_loss_only=True) assigned elsewhere).
    if (assignment.text.includes('prediction_loss_only')) facts.push(['args', assignment.text]);
  }
  facts.push(...crossStatementFacts(model, statement));
  return JSON.stringify(facts);
}

function shiftRange<R extends { start: { line: number }; end: { line: number } }>(range: R, rows: number): R {
  return { ...range, start: { ...range.start, line: range.start.line + rows }, end: { ...range.end, line: range.end.line + rows } };
}

/** Moves a cached finding with its statement; fix edits before the statement (an import at the top) stay. */
function moveFinding(finding: Finding, rows: number, oldRow: number): Finding {
  if (rows === 0) return finding;
  const moveEdit = (edit: TextEdit) => (edit.range.start.line >= oldRow ? { ...edit, range: shiftRange(edit.range, rows) } : edit);
  return {
    ...finding,
    range: shiftRange(finding.range, rows),
    fixes: finding.fixes.map((fix) => ({ ...fix, edits: fix.edits.map(moveEdit) })),
  };
}

function sortFindings(findings: Finding[]): Finding[] {
  return findings.sort((a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character || a.code.localeCompare(b.code));
}

/** Groups findings by the top-level statement whose rows hold them. */
function buildCache(model: SemanticModel, findings: Finding[], optionsKey: string, factsOf: (statement: Node) => string | undefined): AnalysisCache {
  const statements = new Map<Node, StatementEntry>();
  const children = model.root.children;
  for (const statement of children) statements.set(statement, { facts: factsOf(statement), row: statement.startPosition.row, findings: [] });
  for (const finding of findings) {
    const line = finding.range.start.line;
    const owner = children.find((statement) => statement.startPosition.row <= line && line <= statement.endPosition.row);
    if (owner) statements.get(owner)!.findings.push(finding);
  }
  return { optionsKey, globals: model.globalsSignature(), statements };
}

export function analyzeIncrementally(
  model: SemanticModel,
  text: string,
  options: AnalysisOptions,
  optionsKey: string,
  previous: AnalysisCache | undefined,
): IncrementalResult {
  const children = model.root.children;
  const changed = children.filter((statement) => !previous?.statements.has(statement));
  const present = new Set(children);
  const removed = previous ? [...previous.statements.keys()].filter((statement) => !present.has(statement)) : [];
  const canReuse =
    !!previous && previous.optionsKey === optionsKey && changed.length > 0 && changed.length < children.length &&
    changed.every(isDefinition) &&
    removed.every((statement) => ![undefined, PENDING].includes(previous.statements.get(statement)!.facts)) &&
    previous.globals === model.globalsSignature();
  if (canReuse) {
    const changedFacts = new Map(changed.map((statement) => [statement, statementFacts(model, statement)]));
    const newFacts = changed.map((statement) => changedFacts.get(statement)!).sort();
    const oldFacts = removed.map((statement) => previous.statements.get(statement)!.facts!).sort();
    if (newFacts.length === oldFacts.length && newFacts.every((facts, i) => facts === oldFacts[i])) {
      const fresh = analyze(model, text, { ...options, region: changed });
      const findings: Finding[] = [...fresh];
      const statements = new Map<Node, StatementEntry>();
      for (const statement of children) {
        const entry = previous.statements.get(statement);
        if (entry) {
          const rows = statement.startPosition.row - entry.row;
          const moved = entry.findings.map((finding) => moveFinding(finding, rows, entry.row));
          findings.push(...moved);
          statements.set(statement, { facts: entry.facts, row: statement.startPosition.row, findings: moved });
        }
      }
      const partial = buildCache(model, fresh, optionsKey, (statement) => changedFacts.get(statement));
      for (const statement of changed) statements.set(statement, partial.statements.get(statement)!);
      return { findings: sortFindings(findings), cache: { optionsKey, globals: partial.globals, statements }, analysedStatements: changed.length };
    }
  }
  const findings = analyze(model, text, options);
  return {
    findings,
    cache: buildCache(model, findings, optionsKey, () => PENDING),
    analysedStatements: children.length,
  };
}

/**
 * Computes the facts a full analysis left pending. The server calls it right after publishing, so the first
 * diagnostics do not wait for it; it must run before the next version's statements are moved (the facts read
 * the statements' text), which holds because the server handles one document's work in order.
 */
export function completeFacts(model: SemanticModel, cache: AnalysisCache): void {
  for (const [statement, entry] of cache.statements) {
    if (entry.facts === PENDING) entry.facts = statementFacts(model, statement);
  }
}
