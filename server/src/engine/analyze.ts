// Runs the rules over one document version and turns their reports into findings: severity from the settings,
// suppression comments applied, each rule isolated so that one that throws cannot silence the others.
import { RULES } from '../rules';
import type { Rule } from '../rules';
import type { RegionNodes } from '../rules/rule';
import { t } from '../l10n';
import { contains, lowerBound, nodesWithin, rangeOf } from './syntax';
import type { NodeListKind, SemanticModel } from './semantic/model';
import type { Node } from './parser';
import type { Finding, KeptMemory, Severity } from './types';
import type { CellRows } from './notebook';
import { formatBytes } from './bytes';
import { Suppressions, UNUSED_NOQA } from './suppression';
import { wholeText } from './piece-text';
import type { TextLike } from './piece-text';

export interface AnalysisOptions {
  /** Codes or prefixes to run (`OOM10`); empty or absent means all. */
  select?: readonly string[];
  /** Codes or prefixes to skip. */
  ignore?: readonly string[];
  severity?: Readonly<Record<string, Severity>>;
  /** Called when a rule throws; the other rules still report. */
  onRuleError?: (code: string, error: unknown) => void;
  /** The rules to run; all registered rules by default. */
  rules?: readonly Rule[];
  /** Top-level statements to analyse (incremental analysis); the whole file when absent. */
  region?: readonly Node[];
  /**
   * Bytes one batch keeps for a leak (from the memory estimate): a finding that says what it keeps then says how
   * much. `loopRow` is the first row of the loop the finding sits in (its loader may batch differently).
   */
  keptBytes?: (keeps: KeptMemory, loopRow?: number) => number | undefined;
  /** The text is a notebook's code cells joined (engine/notebook.ts): the program rows of each cell. */
  notebookCells?: readonly CellRows[];
}

export { MAX_ANALYZED_CHARACTERS } from './limits';
import { MAX_ANALYZED_CHARACTERS } from './limits';

export function ruleEnabled(code: string, options: AnalysisOptions): boolean {
  const matches = (patterns: readonly string[] | undefined) => !!patterns?.some((pattern) => code.startsWith(pattern.trim().toUpperCase()));
  if (options.select && options.select.length > 0 && !matches(options.select)) return false;
  return !matches(options.ignore);
}

export function activeRules(options: AnalysisOptions): Rule[] {
  return (options.rules ?? RULES).filter((rule) => ruleEnabled(rule.code, options));
}

export function analyze(model: SemanticModel, text: TextLike, options: AnalysisOptions = {}): Finding[] {
  const findings: Finding[] = [];
  const suppressions = new Suppressions(options.region ? regionLines(model, text, options.region) : fileLines(text));
  const ran = new Set<string>();
  const region = options.region ? [...options.region].sort((a, b) => a.startIndex - b.startIndex) : undefined;
  const inRegion = region ? (node: Node) => regionStatementOf(region, node) !== undefined : () => true;
  // Rules ask for the same lists (model.calls, model.assignments…): each list's part is collected once per analysis.
  const regionParts = new Map<readonly Node[] | NodeListKind, readonly Node[]>();
  const regionNodes = ((nodes: readonly Node[] | NodeListKind): readonly Node[] => {
    if (!region) return typeof nodes === 'string' ? model[nodes] : nodes;
    let result = regionParts.get(nodes);
    if (!result) {
      const collected: Node[] = [];
      for (const statement of region) {
        for (const node of typeof nodes === 'string' ? model.nodesWithin(nodes, statement) : nodesWithin(nodes, statement)) collected.push(node);
      }
      regionParts.set(nodes, (result = collected));
    }
    return result;
  }) as RegionNodes;
  const spells = textSpells(model, text);
  for (const rule of activeRules(options)) {
    let reports;
    try {
      reports = rule.check({ model, text, spells, inRegion, regionNodes, region, cells: options.notebookCells });
    } catch (error) {
      options.onRuleError?.(rule.code, error);
      continue;
    }
    ran.add(rule.code);
    for (const report of reports) {
      if (!inRegion(report.node)) continue;
      const range = rangeOf(report.node);
      if (suppressions.suppresses(range.start.line, rule.code)) continue;
      const finding: Finding = {
        code: rule.code,
        name: rule.name,
        severity: options.severity?.[rule.code] ?? rule.defaultSeverity,
        range,
        message: report.message,
        fixes: report.fixes ?? [],
      };
      if (report.keeps) {
        const loopRow = enclosingLoop(report.node)?.startPosition.row;
        finding.keeps = { kind: report.keeps, unsizedMessage: report.message, ...(loopRow !== undefined ? { loopRowsAbove: range.start.line - loopRow } : {}),
          ...(report.keptForwards !== undefined ? { forwards: report.keptForwards } : {}) };
      }
      findings.push(resized(finding, options.keptBytes));
    }
  }
  // OOM100 is selected, ignored and given a severity like a rule; it judges only the rules that ran.
  if (ruleEnabled(UNUSED_NOQA.code, options)) {
    const unused = suppressions.unusedNoqaFindings((code) => ran.has(code), options.severity?.[UNUSED_NOQA.code]);
    const inRegionRows = (line: number) => !region || region.some((statement) => statement.startPosition.row <= line && line <= statement.endPosition.row);
    findings.push(...unused.filter((finding) => inRegionRows(finding.range.start.line)));
  }
  findings.sort(compareFindings);
  return findings;
}

/**
 * Rule codes compared by their characters: they are ASCII (`OOM101`), which localeCompare orders the same, but its
 * first call loads ICU's collation (30 ms and 3.7 MiB resident here) into every process that sorts findings.
 */
export function compareCodes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The order of findings: by position, then by code. */
export function compareFindings(a: Finding, b: Finding): number {
  return a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character || compareCodes(a.code, b.code);
}

/**
 * A finding that says what it keeps, with its message and size hint written for `keptBytes` (none: without a size);
 * any other finding as it is. New leak sizes rewrite findings through it without running their rules.
 */
export function resized(finding: Finding, keptBytes: AnalysisOptions['keptBytes']): Finding {
  const keeps = finding.keeps;
  if (!keeps) return finding;
  const loopRow = keeps.loopRowsAbove === undefined ? undefined : finding.range.start.line - keeps.loopRowsAbove;
  // A graph of several forward passes (test-time augmentation's plain and flipped) keeps each one's activations.
  const one = keptBytes?.(keeps.kind, loopRow);
  const bytes = one !== undefined ? one * (keeps.forwards ?? 1) : undefined;
  const { sizeHint: _old, ...unsized } = finding;
  return bytes !== undefined && bytes > 0
    ? { ...unsized, message: `${keeps.unsizedMessage} ${keptMessage(keeps.kind, bytes, keeps.forwards)}`, sizeHint: { keeps: keeps.kind, bytes } }
    : { ...unsized, message: keeps.unsizedMessage };
}

function keptMessage(keeps: KeptMemory, bytes: number, forwards?: number): string {
  if (keeps.startsWith('module:')) return t('By the memory estimate it keeps about {0} per batch (the module\'s output).', formatBytes(bytes));
  if (keeps === 'graph' && forwards !== undefined) {
    return t('By the memory estimate it keeps about {0} per batch (the graphs of {1} forward passes and the activations they saved).', formatBytes(bytes), forwards);
  }
  return keeps === 'graph'
    ? t('By the memory estimate it keeps about {0} per batch (the graph and the activations it saved).', formatBytes(bytes))
    : t('By the memory estimate it keeps about {0} per batch (the output tensor).', formatBytes(bytes));
}

/** Whether the analysed text contains a word: the model counts it when the text is its own (see SemanticModel.spells). */
export function textSpells(model: SemanticModel, text: TextLike): (word: string) => boolean {
  const own = typeof text === 'string' ? model.root.source === text : model.root.content === text;
  return own ? (word) => model.spells(word) : (word) => wholeText(text).includes(word);
}

export function tooLargeMessage(characters: number): string {
  return t('OOM Guard skipped this file: it has {0} characters, more than the {1} it analyses.', characters, MAX_ANALYZED_CHARACTERS);
}

/**
 * The lines of a whole file that suppression comments are read from: none when the file never says `noqa` (every
 * suppression comment does), which spares most files a split into lines (73,000 strings over 200 scripts).
 */
function fileLines(text: TextLike): string[] {
  const whole = wholeText(text);
  return /noqa/i.test(whole) ? whole.split(/\r\n|\r|\n/) : [];
}

/**
 * The lines that suppression comments are read from: for a region, only the rows of its statements (by row),
 * unless the file may hold a file-level `# oomguard: noqa`, which applies to every line.
 */
function regionLines(model: SemanticModel, text: TextLike, region: readonly Node[]): string[] | Map<number, string> {
  if (textSpells(model, text)('oomguard')) return wholeText(text).split(/\r\n|\r|\n/);
  const lines = new Map<number, string>();
  for (const statement of region) {
    const lineStart = statement.startIndex - statement.startPosition.column;
    let lineEnd = statement.endIndex;
    while (lineEnd < text.length && text.charCodeAt(lineEnd) !== 10 && text.charCodeAt(lineEnd) !== 13) lineEnd++;
    text.slice(lineStart, lineEnd).split(/\r\n|\r|\n/).forEach((line, i) => lines.set(statement.startPosition.row + i, line));
  }
  return lines;
}

/** The statement of a region (top-level statements sorted by start) that holds `node`, by binary search. */
function regionStatementOf(region: readonly Node[], node: Node): Node | undefined {
  const index = lowerBound(region, node.startIndex + 1) - 1;
  const statement = region[index];
  return statement && contains(statement, node) ? statement : undefined;
}

/** The innermost `for` loop around a node: the batch loop a leak grows in. */
function enclosingLoop(node: Node): Node | undefined {
  for (let current = node.parent; current; current = current.parent) {
    if (current.type === 'for_statement') return current;
    if (current.type === 'function_definition') return undefined;
  }
  return undefined;
}
