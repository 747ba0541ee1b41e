// Jupyter notebooks in the language server (LSP 3.17 notebook document sync). The server keeps each open notebook's
// cells and analyses their code cells as one program (engine/notebook.ts), stored in the DocumentStore under the
// notebook's URI: an edit in one cell becomes one edit of the program, so the incremental re-parse and the reuse of
// unchanged statements' findings work as for a script. Findings are published on each cell's URI (an empty list
// for a cell with none, so that stale squiggles clear), and requests that name a cell (code actions, CodeLens,
// hovers, the estimate) are answered from the program with their positions carried into and out of the cell.
// Cell URIs are opaque: they are only compared, never parsed.
import { isPosition } from './params';
import type {
  CodeAction,
  CodeActionParams,
  CodeLens,
  Connection,
  Diagnostic,
  DidChangeNotebookDocumentParams,
  DidCloseNotebookDocumentParams,
  DidOpenNotebookDocumentParams,
  Disposable,
  Hover,
  NotebookCell,
  NotebookDocumentSyncOptions,
  TextDocumentContentChangeEvent,
  TextDocumentItem,
  TextEdit,
} from 'vscode-languageserver';
import { computeLineStarts, offsetAt } from './engine/documents';
import type { TextChange } from './engine/documents';
import { lineIndexAt } from './engine/lines';
import { cellRows, joinCells, toCellEdits, toCellPosition, toCellRange, toProgramPosition, toProgramRange } from './engine/notebook';
import { prepareCell } from './engine/notebook';
import type { CellRows, CellSpan, NotebookCellSource, NotebookProgram, PreparedCell } from './engine/notebook';
import type { Fix, Finding, Position, Range } from './engine/types';
import { ESTIMATE_REQUEST } from './protocol';
import type { EstimateResponse } from './protocol';

/** What the server asks clients to sync: the Python code cells of Jupyter notebooks. */
export const NOTEBOOK_DOCUMENT_SYNC: NotebookDocumentSyncOptions = {
  notebookSelector: [{ notebook: { notebookType: 'jupyter-notebook' }, cells: [{ language: 'python' }] }],
};

const CODE_CELL = 2;

interface CellState {
  uri: string;
  /** A Python code cell (the program's); anything else takes no rows. */
  python: boolean;
  languageId: string;
  version: number;
  text: string;
  /** The cell blanked and measured for the program, while `text` is what it was prepared from. */
  prepared?: { text: string; cell: PreparedCell };
}

interface NotebookState {
  uri: string;
  version: number;
  cells: CellState[];
  program: NotebookProgram;
  /** The program's cell spans by cell URI. */
  spans: Map<string, CellSpan>;
  /** What was last published on each cell (its version and diagnostics), so that an unchanged cell is not sent again. */
  published: Map<string, PublishedCell>;
}

/** A request about a cell, answered from its notebook's program. */
export interface CellRoute {
  notebookUri: string;
  cellUri: string;
  cell: CellSpan;
  cells: readonly CellSpan[];
  /** The URI of the cell at a notebook index. */
  uriOf(index: number): string;
}

/** What the notebook sync needs from the server: its per-document queue and analysis scheduling. */
export interface NotebookHost {
  /** Runs `work` after every change queued for `uri` (the program's document). */
  enqueue(uri: string, work: () => Promise<unknown>): void;
  /** Analyses `uri` again (coalesced) and publishes. */
  schedule(uri: string): void;
  /** The cells changed place, kind or number: findings cached for the program cannot be moved, only recomputed. */
  layoutChanged(uri: string): void;
  /** The notebook closed: drop the program's document and everything kept for it; clear the cells' diagnostics. */
  closed(uri: string, publishedCells: string[]): void;
  open(uri: string, version: number, text: string): Promise<unknown>;
  change(uri: string, version: number, changes: TextChange[]): Promise<unknown>;
}

function isPython(languageId: string): boolean {
  return languageId.toLowerCase() === 'python';
}

function cellState(cell: NotebookCell, document: TextDocumentItem | undefined): CellState {
  const languageId = document?.languageId ?? '';
  return { uri: cell.document, python: cell.kind === CODE_CELL && isPython(languageId), languageId, version: document?.version ?? 0, text: document?.text ?? '' };
}

/** A cell's preparation for the program, kept until its text changes (blanking scans the cell). */
function prepared(cell: CellState): PreparedCell {
  if (cell.prepared?.text !== cell.text) cell.prepared = { text: cell.text, cell: prepareCell(cell.text) };
  return cell.prepared.cell;
}

function buildProgram(cells: readonly CellState[]): { program: NotebookProgram; spans: Map<string, CellSpan> } {
  const sources: NotebookCellSource[] = cells.map((cell) => ({ kind: cell.python ? 'code' : 'raw', text: cell.text }));
  const program = joinCells(sources, (_, index) => prepared(cells[index]!));
  return { program, spans: new Map(program.cells.map((span) => [cells[span.index]!.uri, span])) };
}

/** Applies LSP content changes to a cell's text, in order. */
function applyContentChanges(text: string, changes: readonly TextDocumentContentChangeEvent[]): string {
  for (const change of changes) {
    if (!('range' in change) || !change.range) {
      text = change.text;
      continue;
    }
    const starts = computeLineStarts(text);
    const start = offsetAt(text, starts, change.range.start);
    const end = offsetAt(text, starts, change.range.end);
    text = text.slice(0, start) + change.text + text.slice(end);
  }
  return text;
}

function positionAt(lineStarts: readonly number[], offset: number): Position {
  const line = lineIndexAt(lineStarts, offset);
  return { line, character: offset - lineStarts[line]! };
}

/**
 * The one edit that turns the old program into the new one (their common prefix and suffix kept), or none when they
 * are equal. An edit in one cell becomes an edit of that cell's part of the program, which the document store
 * applies incrementally.
 */
export function programEdit(before: string, after: string, region?: ChangedRegion): TextChange | undefined {
  // Outside the region (one cell's part of the program, when only it changed) the two texts are the same.
  const from = region?.start ?? 0;
  const beforeEnd = region?.beforeEnd ?? before.length;
  const afterEnd = region?.afterEnd ?? after.length;
  let prefix = from;
  const limit = Math.min(beforeEnd, afterEnd);
  while (prefix < limit && before.charCodeAt(prefix) === after.charCodeAt(prefix)) prefix++;
  if (prefix === beforeEnd && prefix === afterEnd) return undefined;
  let suffix = 0;
  while (suffix < limit - prefix && before.charCodeAt(beforeEnd - 1 - suffix) === after.charCodeAt(afterEnd - 1 - suffix)) suffix++;
  let oldEnd = beforeEnd - suffix;
  let newEnd = afterEnd - suffix;
  // Never split a CRLF: the store reads positions by line, and a position between \r and \n names none.
  if (prefix > from && before.charCodeAt(prefix - 1) === 13 && (before.charCodeAt(prefix) === 10 || after.charCodeAt(prefix) === 10)) prefix--;
  if (oldEnd < beforeEnd && before.charCodeAt(oldEnd) === 10 && before.charCodeAt(oldEnd - 1) === 13) {
    oldEnd++;
    newEnd++;
  }
  // Line starts of the changed part only, from the region's first line.
  const starts = computeLineStarts(before.slice(from, oldEnd)).map((start) => start + from);
  const at = (offset: number): Position => {
    const position = positionAt(starts, offset);
    return { line: position.line + (region?.startLine ?? 0), character: position.character };
  };
  return { range: { start: at(prefix), end: at(oldEnd) }, text: after.slice(prefix, newEnd) };
}

/** Where two programs can differ: from `start` (a line start, on row `startLine`) to `beforeEnd` / `afterEnd`. */
export interface ChangedRegion {
  start: number;
  startLine: number;
  beforeEnd: number;
  afterEnd: number;
}

export class NotebookSync {
  private readonly notebooks = new Map<string, NotebookState>();
  private readonly cellOwners = new Map<string, string>();

  constructor(private readonly host: NotebookHost) {}

  /** Whether `uri` is an open notebook (its program is a document of the store). */
  has(uri: string): boolean {
    return this.notebooks.has(uri);
  }

  /** The notebook version last received: a program of an older one is about to be replaced (and published then). */
  versionOf(uri: string): number | undefined {
    return this.notebooks.get(uri)?.version;
  }

  /** The rows of the notebook's code cells in its program, for the rules (OOM118). */
  cellRowsOf(uri: string): CellRows[] | undefined {
    const notebook = this.notebooks.get(uri);
    return notebook && cellRows(notebook.program);
  }

  /** Where a request about `cellUri` goes, when it names a Python cell of an open notebook. */
  route(cellUri: string): CellRoute | undefined {
    const notebookUri = this.cellOwners.get(cellUri);
    const notebook = notebookUri !== undefined ? this.notebooks.get(notebookUri) : undefined;
    const cell = notebook?.spans.get(cellUri);
    const cells = notebook?.cells;
    return notebook && cell && cells && { notebookUri: notebook.uri, cellUri, cell, cells: notebook.program.cells, uriOf: (index) => cells[index]!.uri };
  }

  listen(connection: Connection): Disposable[] {
    const sync = connection.notebooks.synchronization;
    return [
      sync.onDidOpenNotebookDocument((params) => this.open(params)),
      sync.onDidChangeNotebookDocument((params) => this.change(params)),
      sync.onDidCloseNotebookDocument((params) => this.close(params)),
    ];
  }

  open({ notebookDocument, cellTextDocuments }: DidOpenNotebookDocumentParams): void {
    const documents = new Map(cellTextDocuments.map((document) => [document.uri, document]));
    const cells = notebookDocument.cells.map((cell) => cellState(cell, documents.get(cell.document)));
    const { program, spans } = buildProgram(cells);
    const notebook: NotebookState = { uri: notebookDocument.uri, version: notebookDocument.version, cells, program, spans, published: new Map() };
    this.notebooks.set(notebook.uri, notebook);
    for (const cell of cells) this.cellOwners.set(cell.uri, notebook.uri);
    this.host.enqueue(notebook.uri, () => this.host.open(notebook.uri, notebook.version, program.text));
    this.host.schedule(notebook.uri);
  }

  change({ notebookDocument, change }: DidChangeNotebookDocumentParams): void {
    const notebook = this.notebooks.get(notebookDocument.uri);
    if (!notebook) return;
    let layoutChanged = false;
    const structure = change.cells?.structure;
    if (structure) {
      const opened = new Map((structure.didOpen ?? []).map((document) => [document.uri, document]));
      const { start, deleteCount } = structure.array;
      // A moved cell is removed and inserted again without its text being sent: it keeps its state.
      const moved = new Map(notebook.cells.slice(start, start + deleteCount).map((cell) => [cell.uri, cell]));
      const added = (structure.array.cells ?? []).map((cell) => {
        const document = opened.get(cell.document);
        const previous = moved.get(cell.document);
        if (document || !previous) return cellState(cell, document);
        return { ...previous, python: cell.kind === CODE_CELL && isPython(previous.languageId) };
      });
      const removed = notebook.cells.splice(start, deleteCount, ...added);
      for (const cell of removed) if (!added.some((other) => other.uri === cell.uri)) this.cellOwners.delete(cell.uri);
      for (const cell of added) this.cellOwners.set(cell.uri, notebook.uri);
      layoutChanged = true;
    }
    for (const data of change.cells?.data ?? []) {
      const cell = notebook.cells.find((candidate) => candidate.uri === data.document);
      if (!cell) continue;
      const python = data.kind === CODE_CELL && isPython(cell.languageId);
      if (python !== cell.python) layoutChanged = true;
      cell.python = python;
    }
    for (const { document, changes } of change.cells?.textContent ?? []) {
      const cell = notebook.cells.find((candidate) => candidate.uri === document.uri);
      if (!cell) continue;
      cell.text = applyContentChanges(cell.text, changes);
      cell.version = document.version;
    }
    const before = notebook.program;
    Object.assign(notebook, buildProgram(notebook.cells), { version: notebookDocument.version });
    // Text changed in one cell and nothing else: only that cell's part of the program can differ.
    const changed = change.cells?.textContent ?? [];
    const only = !layoutChanged && changed.length === 1 ? notebook.spans.get(changed[0]!.document.uri) : undefined;
    const old = only && before.cells.find((span) => span.index === only.index && span.startOffset === only.startOffset);
    const region = old && only ? { start: old.startOffset, startLine: old.startLine, beforeEnd: old.startOffset + old.length, afterEnd: only.startOffset + only.length } : undefined;
    const edit = programEdit(before.text, notebook.program.text, region);
    const version = notebook.version;
    if (layoutChanged) this.host.layoutChanged(notebook.uri);
    this.host.enqueue(notebook.uri, () => this.host.change(notebook.uri, version, edit ? [edit] : []));
    this.host.schedule(notebook.uri);
  }

  close({ notebookDocument }: DidCloseNotebookDocumentParams): void {
    const notebook = this.notebooks.get(notebookDocument.uri);
    if (!notebook) return;
    this.notebooks.delete(notebook.uri);
    for (const cell of notebook.cells) this.cellOwners.delete(cell.uri);
    this.host.closed(notebook.uri, [...notebook.published.keys()]);
  }

  /**
   * The diagnostics to publish for a notebook's findings: each on the cell where it starts, in that cell's positions.
   * A cell is sent when its diagnostics or its version changed since the last time (an edited cell always: the client
   * has moved its markers with the edit), and a cell that had diagnostics and is gone or no longer Python gets an
   * empty list, so that no stale squiggle stays.
   */
  cellDiagnostics(uri: string, findings: readonly Finding[], toDiagnostic: (finding: Finding, range: Range) => Diagnostic): Array<{ uri: string; version?: number; diagnostics: Diagnostic[] }> {
    const notebook = this.notebooks.get(uri);
    if (!notebook) return [];
    const cells = notebook.program.cells;
    const byCell = new Map<number, Diagnostic[]>(cells.map((span) => [span.index, []]));
    for (const finding of findings) {
      const mapped = toCellRange(cells, finding.range) ?? startCellRange(cells, finding.range);
      if (mapped) byCell.get(mapped.cell.index)!.push(toDiagnostic(finding, mapped.range));
    }
    const out: Array<{ uri: string; version?: number; diagnostics: Diagnostic[] }> = [];
    const published = new Map<string, PublishedCell>();
    for (const [index, diagnostics] of byCell) {
      const cell = notebook.cells[index]!;
      const now: PublishedCell = { version: cell.version, diagnostics };
      const before = notebook.published.get(cell.uri);
      published.set(cell.uri, now);
      if (!before || before.version !== now.version || !sameJson(before.diagnostics, now.diagnostics)) out.push({ uri: cell.uri, version: cell.version, diagnostics });
    }
    for (const stale of notebook.published.keys()) if (!published.has(stale)) out.push({ uri: stale, diagnostics: [] });
    notebook.published = published;
    return out;
  }
}

/** What was last published on a cell. */
interface PublishedCell {
  version: number;
  diagnostics: Diagnostic[];
}

/**
 * Whether two JSON-like values would serialise to the same JSON (a property holding `undefined` counts as absent,
 * as JSON.stringify leaves it out). Comparing values, not their serialisations, keeps a notebook's publish from
 * writing out every cell's diagnostics on each keystroke.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let count = 0;
  for (const key in x) {
    if (x[key] === undefined) continue;
    count++;
    if (!sameJson(x[key], y[key])) return false;
  }
  for (const key in y) if (y[key] !== undefined) count--;
  return count === 0;
}

/** A finding's range that runs past its cell (only where a syntax error joins cells): it ends with its first cell. */
function startCellRange(cells: readonly CellSpan[], range: Range): { cell: CellSpan; range: Range } | undefined {
  const start = toCellPosition(cells, range.start);
  if (!start) return undefined;
  return { cell: start.cell, range: { start: start.position, end: { line: start.cell.lineCount - 1, character: start.cell.lastLineLength } } };
}

// ---------------------------------------------------------------- requests about a cell

/** The program edits of an action as edits of cells, or undefined where one cannot be made inside a cell. */
function cellWorkspaceEdit(route: CellRoute, edits: readonly TextEdit[]): Record<string, TextEdit[]> | undefined {
  const groups = toCellEdits(route.cells, edits);
  if (!groups) return undefined;
  return Object.fromEntries(groups.map((group) => [route.uriOf(group.cell.index), group.edits]));
}

/** Code action params about a cell, as params about its program. */
export function programCodeActionParams(params: CodeActionParams, route: CellRoute): CodeActionParams {
  return {
    ...params,
    textDocument: { uri: route.notebookUri },
    range: toProgramRange(route.cell, params.range),
    context: { ...params.context, diagnostics: params.context.diagnostics.map((diagnostic) => ({ ...diagnostic, range: toProgramRange(route.cell, diagnostic.range) })) },
  };
}

/**
 * The program's code actions as actions on cells: their edits go to the cells they touch (an import may go to the
 * first cell), an action with an edit that no cell can take is dropped, and the diagnostics they resolve are the
 * client's own (in cell positions).
 */
export function cellCodeActions(actions: readonly CodeAction[], route: CellRoute, original: CodeActionParams, asked: CodeActionParams): CodeAction[] {
  const out: CodeAction[] = [];
  for (const action of actions) {
    const edits = action.edit?.changes?.[route.notebookUri];
    const changes = edits ? cellWorkspaceEdit(route, edits) : undefined;
    if (edits && !changes) continue;
    // The diagnostics were given to the program in its positions; the client knows them in the cell's.
    const diagnostics = action.diagnostics
      ?.map((diagnostic) => original.context.diagnostics[asked.context.diagnostics.indexOf(diagnostic)])
      .filter((diagnostic): diagnostic is Diagnostic => !!diagnostic);
    out.push({ ...action, ...(diagnostics ? { diagnostics } : {}), ...(changes ? { edit: { changes } } : {}) });
  }
  return out;
}

/** Only the fixes that stay inside one cell, for "fix all" asked of that cell (each cell is asked on save). */
export function fixesWithinCell(route: CellRoute): (fix: Pick<Fix, 'edits'>) => boolean {
  return (fix) => toCellEdits(route.cells, fix.edits)?.every((group) => group.cell.index === route.cell.index) ?? false;
}

/** Lenses of the program that sit in the cell, in cell positions; their command names the cell. */
function cellLenses(lenses: readonly CodeLens[], route: CellRoute): CodeLens[] {
  const out: CodeLens[] = [];
  for (const lens of lenses) {
    const mapped = toCellRange(route.cells, lens.range);
    if (!mapped || mapped.cell.index !== route.cell.index) continue;
    const command = lens.command && {
      ...lens.command,
      arguments: lens.command.arguments?.map((argument) => (argument === route.notebookUri ? route.cellUri : argument)),
    };
    out.push({ ...lens, range: mapped.range, ...(command ? { command } : {}) });
  }
  return out;
}

function cellHover(hover: Hover, route: CellRoute): Hover {
  if (!hover.range) return hover;
  const mapped = toCellRange(route.cells, hover.range);
  const { range: _programRange, ...rest } = hover;
  return mapped && mapped.cell.index === route.cell.index ? { ...rest, range: mapped.range } : rest;
}

/**
 * The estimate of a notebook as the cell that asked sees it: the lines of its inputs and refactorings become lines
 * of that cell, or null (no link) where they are in another cell; a leak's line is given within its own cell.
 */
export function cellEstimate(response: EstimateResponse, route: CellRoute): EstimateResponse {
  const inCell = (line: number | null): number | null => {
    if (line === null) return null;
    const position = toCellPosition(route.cells, { line, character: 0 });
    return position && position.cell.index === route.cell.index ? position.position.line : null;
  };
  const growthCell = response.growth && toCellPosition(route.cells, { line: response.growth.line - 1, character: 0 });
  return {
    ...response,
    uri: route.cellUri,
    inputs: response.inputs.map((input) => ({ ...input, line: inCell(input.line) })),
    suggestions: response.suggestions.map((suggestion) => {
      const line = suggestion.refactor ? inCell(suggestion.refactor.line) : null;
      const { refactor, ...rest } = suggestion;
      return refactor && line !== null ? { ...rest, refactor: { ...refactor, line } } : rest;
    }),
    growth: response.growth && growthCell ? { ...response.growth, line: growthCell.position.line + 1 } : response.growth,
  };
}

type AnyHandler = (params: unknown, ...rest: unknown[]) => unknown;

/**
 * The connection the server's features register on: CodeLens, hover and custom requests (the estimate) that name a
 * notebook cell are answered from the notebook's program, their positions carried into and out of the cell.
 * Everything else is the connection itself.
 */
export function routeCellRequests(connection: Connection, notebooks: NotebookSync): Connection {
  const onCodeLens: Connection['onCodeLens'] = (handler) =>
    connection.onCodeLens(async (params, token, workDone, partial) => {
      // Malformed parameters are the handler's to refuse (with -32602).
      const route = typeof params?.textDocument?.uri === 'string' ? notebooks.route(params.textDocument.uri) : undefined;
      if (!route) return handler(params, token, workDone, partial);
      const lenses = await handler({ ...params, textDocument: { uri: route.notebookUri } }, token, workDone, partial);
      return Array.isArray(lenses) ? cellLenses(lenses, route) : lenses;
    });
  const onHover: Connection['onHover'] = (handler) =>
    connection.onHover(async (params, token, workDone, partial) => {
      const route = typeof params?.textDocument?.uri === 'string' && isPosition(params.position) ? notebooks.route(params.textDocument.uri) : undefined;
      if (!route) return handler(params, token, workDone, partial);
      const hover = await handler({ ...params, textDocument: { uri: route.notebookUri }, position: toProgramPosition(route.cell, params.position) }, token, workDone, partial);
      return hover && typeof hover === 'object' && 'contents' in hover ? cellHover(hover, route) : hover;
    });
  // Custom requests with a `textDocument` (oomguard/estimate): the cell's notebook answers, and says it is the cell.
  const register = connection.onRequest as unknown as (method: unknown, handler?: unknown) => Disposable;
  const onRequest = ((method: unknown, handler?: unknown) => {
    if (typeof method !== 'string' || typeof handler !== 'function') return register(method, handler);
    const wrapped: AnyHandler = async (params, ...rest) => {
      const uri = (params as { textDocument?: { uri?: unknown } } | undefined)?.textDocument?.uri;
      const route = typeof uri === 'string' ? notebooks.route(uri) : undefined;
      if (!route) return (handler as AnyHandler)(params, ...rest);
      const result = await (handler as AnyHandler)({ ...(params as object), textDocument: { uri: route.notebookUri } }, ...rest);
      if (method === ESTIMATE_REQUEST && result && typeof result === 'object' && 'inputs' in result) return cellEstimate(result as EstimateResponse, route);
      return result && typeof result === 'object' && (result as { uri?: unknown }).uri === route.notebookUri ? { ...result, uri: route.cellUri } : result;
    };
    return register(method, wrapped);
  }) as unknown as Connection['onRequest'];
  const overrides: Partial<Connection> = { onCodeLens, onHover, onRequest };
  return new Proxy(connection, {
    get: (target, key) => (key in overrides ? overrides[key as keyof typeof overrides] : Reflect.get(target, key, target)),
  });
}
