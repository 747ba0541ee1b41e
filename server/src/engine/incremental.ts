// Incremental analysis for the editor. A keystroke usually changes one statement of a long script. When what the
// changed top-level statements tell the rest of the file is the same as before (their functions' summaries, the
// calls they make into other statements, the containers they reset, the roles of names: statementFacts), the
// findings of the statements that cannot depend on them are reused, moved with their statements, and the rules run
// on the rest alone: the changed statements, the module-level code that shares a name with the change (all of it
// when the change may call something: it shares one scope), and the statements that write a name the edit changed
// (regionAfterEdit). Different options or file-wide facts (imports, classes, roles, the indentation unit, a
// file-level noqa) analyse the whole file.
import { indentUnitOfTree } from '../fixes/edits';
import { analyze, compareFindings, resized, textSpells } from './analyze';
import { wholeText } from './piece-text';
import type { TextLike } from './piece-text';
import type { AnalysisOptions } from './analyze';
import type { Node } from './parser';
import { crossStatementFacts } from './semantic/cross-statement';
import { clearFreesGraphs, clearSitesWithin, identifierNames } from './semantic/lifetime';
import { contains, enclosingLoops, lowerBoundBy } from './syntax';
import type { SemanticModel } from './semantic/model';
import type { Finding, TextEdit } from './types';

interface StatementEntry {
  /** What the statement tells the rest of the file (PENDING: not computed yet, see completeFacts). */
  facts: string;
  /**
   * Module-level code only (not a function or class definition): the texts of its simple statements and of the
   * headers of its compound ones, read while its text was current (see regionAfterEdit).
   */
  parts: string[] | undefined;
  /** The statement's first row when `findings` were computed. */
  row: number;
  findings: Finding[];
}

export interface AnalysisCache {
  optionsKey: string;
  /** The leak sizes the findings' messages were written with (see analyzeIncrementally's sizesKey). */
  sizesKey: string;
  globals: string;
  /** The file's indentation unit: fixes that indent code are written with it, wherever the finding is. */
  indent: string;
  statements: Map<Node, StatementEntry>;
  /** The top-level statements the cache was made for, in document order (compared with the next version's). */
  children: readonly Node[];
  /** Its statements by the identifiers they spell, once asked (see statementsMentioning). */
  mentions?: MentionIndex;
  /**
   * The findings of `statements`, in the order a full analysis gives them: an edit that moves no statement to other
   * rows makes the next version's list from this one (the findings it analysed again out, the fresh ones in), not
   * from every statement's. Undefined where they were written again (new leak sizes): made from the statements then.
   */
  findings?: readonly Finding[];
}

/** Facts not computed yet: a full analysis publishes first and fills them in afterwards (completeFacts). */
const PENDING = '\u0000pending';

export interface IncrementalResult {
  findings: Finding[];
  /**
   * What the next version reuses. A full analysis builds it when it is first read, which the server does once the
   * diagnostics are out: they never need it.
   */
  readonly cache: AnalysisCache;
  /** How many top-level statements the rules ran on (all of them for a full analysis; 0 when only new leak sizes were written). */
  analysedStatements: number;
}

function isDefinition(statement: Node): boolean {
  const definition = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
  return definition?.type === 'function_definition' || definition?.type === 'class_definition';
}


/** What a top-level statement tells the rest of the file, as a comparable string. */
export function statementFacts(model: SemanticModel, statement: Node): string {
  const facts: unknown[] = [];
  for (const info of model.functionsWithin(statement)) {
    const summary = model.summary(info);
    facts.push(['def', info.name, info.classInfo?.name ?? '', info.decorators.map((d) => d.text), model.isNoGradFunction(info),
      summary.backward, summary.step, summary.clear, summary.forward, model.returnsAttached(info)]);
  }
  for (const call of model.nodesWithin('calls', statement)) {
    const callee = model.resolveLocalFunction(call);
    if (!callee || contains(statement, callee.node)) continue;
    const loops = enclosingLoops(call);
    const training = loops.find((loop) => model.runsBackward(loop));
    facts.push(['call', callee.name, callee.classInfo?.name ?? '', loops.length > 0, !!training,
      training ? model.clearsGradients(training) : false, loops.some((loop) => model.isPerBatchLoop(loop)), model.isNoGrad(call)]);
  }
  for (const site of clearSitesWithin(model, statement)) facts.push(['clear', site.last, clearFreesGraphs(model, site)]);
  for (const assignment of model.nodesWithin('assignments', statement)) {
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
  return findings.sort(compareFindings);
}

/** A sorted list of findings less those `leaving`, with `fresh` (sorted) merged in: one pass, no sort. */
function splicedFindings(previous: readonly Finding[], leaving: ReadonlySet<Finding>, fresh: readonly Finding[]): Finding[] {
  const result: Finding[] = [];
  let next = 0;
  for (const finding of previous) {
    if (leaving.has(finding)) continue;
    while (next < fresh.length && compareFindings(fresh[next]!, finding) < 0) result.push(fresh[next++]!);
    result.push(finding);
  }
  while (next < fresh.length) result.push(fresh[next++]!);
  return result;
}

/** The findings that `statements` hold, in the order of `findings` (all of them, where each has its statement). */
function ownedFindings(findings: readonly Finding[], statements: Iterable<StatementEntry>): readonly Finding[] {
  const owned = new Set<Finding>();
  for (const entry of statements) for (const finding of entry.findings) owned.add(finding);
  return owned.size === findings.length ? findings : findings.filter((finding) => owned.has(finding));
}

/** Groups findings by the top-level statement whose rows hold them. */
function buildCache(model: SemanticModel, findings: Finding[], keys: { optionsKey: string; sizesKey: string }, indent: string, factsOf: (statement: Node) => string, statementsOf: readonly Node[] = model.root.children): AnalysisCache {
  const statements = new Map<Node, StatementEntry>();
  const children = model.root.children;
  for (const statement of statementsOf) {
    statements.set(statement, { facts: factsOf(statement), parts: isModuleCode(statement) ? moduleCodeParts(statement) : undefined, row: statement.startPosition.row, findings: [] });
  }
  for (const finding of findings) {
    const owner = statementAtRow(children, finding.range.start.line);
    if (owner) statements.get(owner)?.findings.push(finding);
  }
  return { ...keys, globals: model.globalsSignature(), indent, statements, children, findings: ownedFindings(findings, statements.values()) };
}

/**
 * The statements of this version that the cache does not hold and those of the cache that are gone, with where
 * the unchanged leading and trailing statements end: found by comparing the two lists from both ends (unchanged
 * statements are the same objects), not by looking every statement up.
 */
function diffStatements(previous: AnalysisCache, children: readonly Node[]): { changed: Node[]; removed: Node[]; first: number; end: number } {
  const before = previous.children;
  let prefix = 0;
  while (prefix < children.length && prefix < before.length && children[prefix] === before[prefix]) prefix++;
  let suffix = 0;
  while (suffix < children.length - prefix && suffix < before.length - prefix && children[children.length - 1 - suffix] === before[before.length - 1 - suffix]) suffix++;
  const middle = children.slice(prefix, children.length - suffix);
  const middleSet = new Set(middle);
  return {
    changed: middle.filter((statement) => !previous.statements.has(statement)),
    removed: before.slice(prefix, before.length - suffix).filter((statement) => !middleSet.has(statement)),
    first: prefix,
    end: children.length - suffix,
  };
}

/** The top-level statement whose rows hold `row` (statements in document order), by binary search. */
function statementAtRow(children: readonly Node[], row: number): Node | undefined {
  const low = lowerBoundBy(children, row + 1, (statement) => statement.startRow);
  // Several statements can share a row (a statement and its trailing comment): the first whose rows hold `row`, as
  // a scan from the start would find. End rows never decrease along the statements, so the scan back stops early.
  let found: Node | undefined;
  for (let i = low - 1; i >= 0 && children[i]!.endPosition.row >= row; i--) found = children[i]!;
  return found;
}

const COMPOUND_STATEMENTS = new Set(['if_statement', 'for_statement', 'while_statement', 'try_statement', 'with_statement', 'match_statement',
  'function_definition', 'class_definition', 'decorated_definition', 'elif_clause', 'else_clause', 'except_clause', 'except_group_clause', 'finally_clause', 'case_clause']);

/**
 * The parts of a module-level statement whose text another statement may read: each simple statement whole, and
 * each compound statement's header (up to its first block), with how deep in the statement's blocks it lies and
 * which of the two it is (`2s…`, `0h…`). Compared before and after an edit, the parts that differ say what the edit
 * changed.
 */
function moduleCodeParts(statement: Node): string[] {
  const parts: string[] = [];
  const visit = (node: Node, depth: number) => {
    if (node.type === 'block') {
      for (const child of node.children) visit(child, depth + 1);
      return;
    }
    if (!COMPOUND_STATEMENTS.has(node.type)) {
      parts.push(`${depth}s${node.text}`);
      return;
    }
    const firstBlock = node.children.find((child) => child.type === 'block');
    parts.push(`${depth}h${node.content.slice(node.startIndex, firstBlock ? firstBlock.startIndex : node.endIndex)}`);
    for (const child of node.children) if (child.type === 'block' || COMPOUND_STATEMENTS.has(child.type)) visit(child, depth);
  };
  visit(statement, 0);
  return parts;
}

const NAME = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*/gu;

/** The parts (moduleCodeParts) that differ between the old and the new versions of the changed statements. */
function changedParts(oldParts: readonly string[], newParts: readonly string[]): string[] {
  const count = new Map<string, number>();
  for (const part of oldParts) count.set(part, (count.get(part) ?? 0) + 1);
  for (const part of newParts) count.set(part, (count.get(part) ?? 0) - 1);
  return [...count].filter(([, difference]) => difference !== 0).map(([part]) => part);
}

/** The names written in some parts (words in strings and comments too: more names only analyse more). */
function namesIn(parts: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const part of parts) for (const match of part.matchAll(NAME)) names.add(match[0]);
  return names;
}

/**
 * The top-level statements by the identifiers they spell (identifierNames), for a version: an index built from
 * the statements of an earlier version, less the statements removed since and plus those added since. A version
 * derives its own from the last one's with the statements its edit removed and added (deriveMentions): a
 * module-level edit of a long file looked for the statements that mention its names by reading every statement's.
 */
interface MentionIndex {
  byName: ReadonlyMap<string, readonly Node[]>;
  removed: ReadonlySet<Node>;
  added: readonly Node[];
}

/** Past this many statements removed and added since the index was built, it is built again when next asked. */
const MAX_MENTION_CHANGES = 256;

function buildMentions(children: readonly Node[]): MentionIndex {
  const byName = new Map<string, Node[]>();
  for (const statement of children) {
    for (const name of identifierNames(statement)) {
      const list = byName.get(name);
      if (list) list.push(statement);
      else byName.set(name, [statement]);
    }
  }
  return { byName, removed: new Set(), added: [] };
}

/** The next version's index: the last one's with an edit's removed and added statements (none: built when asked). */
function deriveMentions(previous: MentionIndex | undefined, removed: readonly Node[], added: readonly Node[]): MentionIndex | undefined {
  if (!previous || previous.removed.size + previous.added.length + removed.length + added.length > MAX_MENTION_CHANGES) return undefined;
  return { byName: previous.byName, removed: new Set([...previous.removed, ...removed]), added: [...previous.added, ...added] };
}

/** The statements of the cache's version whose identifiers include one of `names` (its index made if it has none). */
function statementsMentioning(cache: Pick<AnalysisCache, 'children' | 'mentions'>, names: ReadonlySet<string>): Set<Node> {
  const index = (cache.mentions ??= buildMentions(cache.children));
  const found = new Set<Node>();
  for (const name of names) {
    for (const statement of index.byName.get(name) ?? []) if (!index.removed.has(statement)) found.add(statement);
  }
  for (const statement of index.added) {
    if (!index.removed.has(statement) && sharesName(identifierNames(statement), names)) found.add(statement);
  }
  return found;
}

/** Whether two sets of names share one (the smaller is looked up in the larger: no array is made per statement). */
function sharesName(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const name of small) if (large.has(name)) return true;
  return false;
}

/** A file-level `# oomguard: noqa` reads every finding of the file (and its OOM100 all of them). */
function hasFileNoqa(model: SemanticModel, text: TextLike): boolean {
  return textSpells(model, text)('noqa') && /^[ \t]*#[ \t]*oomguard[ \t]*:[ \t]*noqa/im.test(wholeText(text));
}

function sameMultiset(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const x = [...a].sort();
  const y = [...b].sort();
  return x.every((item, i) => item === y[i]);
}

/** Module-level code: a top-level statement that is neither a definition nor a comment. */
function isModuleCode(statement: Node): boolean {
  return statement.type !== 'comment' && !isDefinition(statement);
}

function rowsOverlap(a: Node, b: Node): boolean {
  return a.startPosition.row <= b.endPosition.row && b.startPosition.row <= a.endPosition.row;
}

/**
 * The top-level statements to analyse again after an edit, with the facts computed on the way, or undefined when
 * the whole file must be analysed.
 *
 * A changed function or class tells the rest of the file only its facts (statementFacts): when they are the same
 * as before, only it is analysed. Module-level code also shares the module's scope with all other module-level
 * code (the rules' dataflow, the calls they group by scope, the loop after a model.eval()), and functions read
 * module-level names by name (a global a function mutates, an assignment found by its target's name): so an edit
 * of module-level code analyses again the module-level code it may reach (all of it when a changed part may call
 * something, see moduleCodeMentioning otherwise), and the statements that write a name of a part the edit changed.
 * The facts of a statement are read through the names it writes (dataflow, callees, containers), so those that
 * write a changed name must still tell the rest of the file what they told before. A statement that
 * shares a row with a changed one (a trailing comment's `# noqa`) is analysed again too.
 */
function regionAfterEdit(model: SemanticModel, previous: AnalysisCache, changed: readonly Node[], removed: readonly Node[], changedFrom: number, changedEnd: number, mentioning: (names: ReadonlySet<string>) => Set<Node>): { region: Node[]; facts: Map<Node, string> } | undefined {
  const oldEntries = removed.map((statement) => previous.statements.get(statement)!);
  if (oldEntries.some((entry) => entry.facts === PENDING)) return undefined;
  const facts = new Map(changed.map((statement) => [statement, statementFacts(model, statement)]));
  if (!sameMultiset([...facts.values()], oldEntries.map((entry) => entry.facts))) return undefined;
  const moduleCode = changed.some(isModuleCode) || oldEntries.some((entry) => entry.parts !== undefined);
  const differing = moduleCode
    ? changedParts(oldEntries.flatMap((entry) => entry.parts ?? []), changed.flatMap((statement) => (isModuleCode(statement) ? moduleCodeParts(statement) : [])))
    : [];
  const names = namesIn(differing);
  const children = model.root.children;
  const changedSet = new Set(changed);
  // The statements that share a row with a changed one: its neighbours (statements are in document order, and the
  // changed ones lie in children[changedFrom, changedEnd)).
  const sharingRows: Node[] = [];
  for (let i = changedFrom - 1; i >= 0 && changed.some((other) => rowsOverlap(other, children[i]!)); i--) sharingRows.push(children[i]!);
  for (let i = changedFrom; i < changedEnd; i++) if (!changedSet.has(children[i]!) && changed.some((other) => rowsOverlap(other, children[i]!))) sharingRows.push(children[i]!);
  for (let i = changedEnd; i < children.length && changed.some((other) => rowsOverlap(other, children[i]!)); i++) sharingRows.push(children[i]!);
  // Module-level code shares one scope: a rule may report in one module-level statement what another one holds (a
  // loop after a model.eval() at module level, checked from the eval()). A changed part that may call something
  // (an opening parenthesis) may change what the scope does, wherever the rules look for it: all module-level code
  // is analysed again, as it is when module-level code shares a row with a changed statement.
  const allModuleCode = (moduleCode && differing.some((part) => part.includes('('))) || sharingRows.some(isModuleCode);
  // Otherwise the changed parts tell the other module-level statements something only through the names they
  // bind or read (none, when only blank space changed): the statements that mention one are analysed again.
  const moduleCodeAgain = allModuleCode ? undefined : moduleCodeMentioning(mentioning, changedSet, names);
  // `torch.set_grad_enabled(False)` switches gradients off for all module-level code after it, wherever it is.
  if (names.has('set_grad_enabled')) return undefined;
  // Only the changed statements, their neighbours, the statements that mention a changed name and the module-level
  // code they reach can be analysed again, unless all module-level code is.
  const candidates = allModuleCode
    ? children
    : [...new Set([...changed, ...sharingRows, ...(names.size > 0 ? mentioning(names) : []), ...moduleCodeAgain!])].sort((a, b) => a.startIndex - b.startIndex);
  const sharing = new Set(sharingRows);
  const region: Node[] = [];
  for (const statement of candidates) {
    if (changedSet.has(statement)) {
      region.push(statement);
      continue;
    }
    const writesChangedName = names.size > 0 && sharesName(identifierNames(statement), names);
    const moduleCodeAffected = isModuleCode(statement) && (allModuleCode || moduleCodeAgain!.has(statement));
    const again = moduleCodeAffected || writesChangedName || sharing.has(statement);
    if (!again) continue;
    if (writesChangedName) {
      const entry = previous.statements.get(statement);
      const now = statementFacts(model, statement);
      if (!entry || now !== entry.facts) return undefined;
      facts.set(statement, now);
    }
    region.push(statement);
  }
  return { region, facts };
}

/**
 * The unchanged module-level statements that mention one of `names`, and those that mention a name of one of
 * them, and so on: a value flows through module-level names from statement to statement (`y = f(x)` carries a
 * change of `x` on to the statements that read `y`).
 */
function moduleCodeMentioning(mentioning: (names: ReadonlySet<string>) => Set<Node>, changed: ReadonlySet<Node>, names: ReadonlySet<string>): Set<Node> {
  const found = new Set<Node>();
  const carried = new Set(names);
  // Each name carried is looked up once: the statements that mention it join, and bring their own names.
  const waiting = [...names];
  for (let name = waiting.pop(); name !== undefined; name = waiting.pop()) {
    for (const statement of mentioning(new Set([name]))) {
      if (found.has(statement) || changed.has(statement) || !isModuleCode(statement)) continue;
      found.add(statement);
      for (const mentioned of identifierNames(statement)) {
        if (carried.has(mentioned)) continue;
        carried.add(mentioned);
        waiting.push(mentioned);
      }
    }
  }
  return found;
}

/**
 * The findings of `model`, reusing those of the statements an edit left alone. `optionsKey` says which rules run and
 * how (findings are reused only under the same); `sizesKey` says which leak sizes the messages of the rules that
 * report kept memory were written with: when only it changed (the memory estimate arrived), just the statements with
 * such findings are analysed again. `indent` is indentUnit(text), which a document keeps edit by edit (the
 * server's: DocumentStore.indentUnitOf); read from the tree's statements otherwise.
 */
export function analyzeIncrementally(
  model: SemanticModel,
  text: TextLike,
  options: AnalysisOptions,
  optionsKey: string,
  previous: AnalysisCache | undefined,
  sizesKey = '',
  indent = indentUnitOfTree(model.root, text),
): IncrementalResult {
  const children = model.root.children;
  const keys = { optionsKey, sizesKey };
  const diff = previous ? diffStatements(previous, children) : undefined;
  const changed = diff?.changed ?? children;
  const sameFile = !!previous && previous.optionsKey === optionsKey && previous.globals === model.globalsSignature() &&
    previous.indent === indent && !hasFileNoqa(model, text);
  if (sameFile && previous.sizesKey !== sizesKey) {
    // New leak sizes (the estimate arrived): the findings kept are written again with them, with or without an edit.
    const withSizes = resizedCache(previous, options, sizesKey);
    if (changed.length === 0 && diff!.removed.length === 0) {
      const findings = children.flatMap((statement) => withSizes.statements.get(statement)?.findings ?? []);
      return { findings, cache: withSizes, analysedStatements: 0 };
    }
    return analyzeIncrementally(model, text, options, optionsKey, withSizes, sizesKey, indent);
  }
  const canReuse = sameFile && previous.sizesKey === sizesKey && changed.length > 0 && changed.length < children.length;
  // This version's statements by identifier: the last version's index with the edit's statements, else built when asked.
  const next: Pick<AnalysisCache, 'children' | 'mentions'> = { children, mentions: canReuse ? deriveMentions(previous.mentions, diff!.removed, changed) : undefined };
  const after = canReuse ? regionAfterEdit(model, previous, changed, diff!.removed, diff!.first, diff!.end, (names) => statementsMentioning(next, names)) : undefined;
  if (previous && after && after.region.length < children.length) {
    const { region, facts } = after;
    const fresh = analyze(model, text, { ...options, region });
    // The previous cache is carried on (the server and the tests keep only the latest): gone statements leave it,
    // moved ones move their findings, and the analysed ones get new entries.
    const statements = previous.statements;
    // Whether a statement kept moved to other rows: the statements after the last changed one all move alike (one is
    // looked at), and those left between changed ones (several changes at once) each by its own count.
    let moved = false;
    for (let i = diff!.first; i <= diff!.end && i < children.length && !moved; i++) {
      const entry = statements.get(children[i]!);
      moved = !!entry && entry.row !== children[i]!.startRow;
    }
    let findings: Finding[];
    if (previous.findings && !moved) {
      // No statement moved: the last version's findings, less those of the statements gone or analysed again.
      const leaving = new Set<Finding>();
      for (const statement of [...diff!.removed, ...region]) for (const finding of statements.get(statement)?.findings ?? []) leaving.add(finding);
      for (const statement of diff!.removed) statements.delete(statement);
      findings = splicedFindings(previous.findings, leaving, fresh);
    } else {
      findings = [...fresh];
      const inRegion = new Set(region);
      for (const statement of diff!.removed) statements.delete(statement);
      for (const statement of children) {
        const entry = statements.get(statement);
        if (!entry || inRegion.has(statement)) continue;
        const rows = statement.startRow - entry.row;
        if (rows !== 0) {
          const oldRow = entry.row;
          entry.findings = entry.findings.map((finding) => moveFinding(finding, rows, oldRow));
          entry.row = statement.startRow;
        }
        for (const finding of entry.findings) findings.push(finding);
      }
      sortFindings(findings);
    }
    // The facts of the analysed statements: computed for the changed ones and those that write a changed name,
    // the same as before for the others (see regionAfterEdit).
    const partial = buildCache(model, fresh, keys, indent, (statement) => facts.get(statement) ?? statements.get(statement)!.facts, region);
    for (const statement of region) statements.set(statement, partial.statements.get(statement)!);
    // A fresh finding that no analysed statement holds (a row shared with a statement not analysed) is not carried on.
    const owned = partial.findings!.length === fresh.length ? findings : ownedFindings(findings, statements.values());
    return { findings, cache: { ...keys, globals: partial.globals, indent: partial.indent, statements, children, mentions: next.mentions, findings: owned }, analysedStatements: region.length };
  }
  const findings = analyze(model, text, options);
  let cache: AnalysisCache | undefined;
  return {
    findings,
    get cache() {
      return (cache ??= buildCache(model, findings, keys, indent, () => PENDING));
    },
    analysedStatements: children.length,
  };
}

/**
 * The cache with other leak sizes: the findings that say what they keep are written again with the new sizes
 * (resized); no rule runs, so that new sizes (the estimate arrived) never hold back the next edit's diagnostics.
 */
function resizedCache(previous: AnalysisCache, options: AnalysisOptions, sizesKey: string): AnalysisCache {
  for (const entry of previous.statements.values()) entry.findings = entry.findings.map((finding) => resized(finding, options.keptBytes));
  return { ...previous, sizesKey, findings: undefined };
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

/** Where completeSomeFacts stopped in a cache's statements. */
const factsCursor = new WeakMap<AnalysisCache, number>();

/**
 * completeFacts a slice at a time: computes pending facts in document order for about `budgetMs`, from where the
 * last call on this cache stopped; true once none is left. The server runs it between other work, so that an edit
 * right after opening a long file does not wait for every statement's facts (its own are made by completeFactsOnRows).
 */
export function completeSomeFacts(model: SemanticModel, cache: AnalysisCache, budgetMs: number): boolean {
  const children = cache.children;
  const start = performance.now();
  let index = factsCursor.get(cache) ?? 0;
  while (index < children.length) {
    const statement = children[index++]!;
    const entry = cache.statements.get(statement);
    if (entry?.facts !== PENDING) continue;
    entry.facts = statementFacts(model, statement);
    // After each statement: one statement's facts can take a millisecond, and an edit may be waiting.
    if (performance.now() - start > budgetMs) break;
  }
  factsCursor.set(cache, index);
  return index >= children.length;
}

/**
 * Before one edit is applied (while the statements still hold the text their facts read), the pending facts that
 * the next analysis compares: those of the statements on the edited rows (completeFactsOnRows) and, when the edit
 * is in module-level code (or between statements), those of every statement that mentions a name the touched
 * statements spell before or after it. regionAfterEdit compares the facts of the statements that write a name the
 * edit changed, and analyses the whole file where they are not known: computed here, a module-level edit right
 * after opening a long file does not wait for all of them. The offsets are the edit's in the model's text.
 */
export function completeFactsForEdit(model: SemanticModel, cache: AnalysisCache, edit: { fromRow: number; toRow: number; startIndex: number; endIndex: number; text: string }): void {
  completeFactsOnRows(model, cache, edit.fromRow, edit.toRow);
  const children = cache.children;
  // The statements the edit touches, or abuts (a name typed at a statement's end joins it).
  const touched: Node[] = [];
  for (let i = lowerBoundBy(children, edit.startIndex, (statement) => statement.endIndex); i < children.length && children[i]!.startIndex <= edit.endIndex; i++) touched.push(children[i]!);
  if (touched.length > 0 && !touched.some(isModuleCode)) return;
  const source = model.root.content;
  const from = Math.min(edit.startIndex, touched[0]?.startIndex ?? edit.startIndex);
  const to = Math.max(edit.endIndex, touched.at(-1)?.endIndex ?? edit.endIndex);
  const names = namesIn([source.slice(from, to), source.slice(from, edit.startIndex) + edit.text + source.slice(edit.endIndex, to)]);
  if (names.size === 0) return;
  for (const statement of statementsMentioning(cache, names)) {
    const entry = cache.statements.get(statement);
    if (entry?.facts === PENDING) entry.facts = statementFacts(model, statement);
  }
}

/**
 * Computes the pending facts of the statements on rows `from` to `to` and of one statement on each side: those an
 * edit of these rows replaces, whose facts the next analysis compares (regionAfterEdit). Run before the edit is
 * applied, while the statements still hold the text the facts read.
 */
export function completeFactsOnRows(model: SemanticModel, cache: AnalysisCache, from: number, to: number): void {
  const children = cache.children;
  const first = Math.max(0, lowerBoundBy(children, from, (statement) => statement.endPosition.row) - 1);
  for (let i = first; i < children.length; i++) {
    const statement = children[i]!;
    const entry = cache.statements.get(statement);
    if (entry?.facts === PENDING) entry.facts = statementFacts(model, statement);
    if (statement.startPosition.row > to) break;
  }
}
