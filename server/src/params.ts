// Checks of request and notification parameters from the client: a malformed one is answered with JSON-RPC's
// "invalid params" (-32602) and a plain message, never a JavaScript error from deep inside a handler.
import { ResponseError } from './lsp';
import { t } from './l10n';

export const INVALID_PARAMS = -32602;

function isIndex(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

export function isPosition(value: unknown): value is { line: number; character: number } {
  const p = value as { line?: unknown; character?: unknown } | null;
  return typeof p === 'object' && p !== null && isIndex(p.line) && isIndex(p.character);
}

export function isRange(value: unknown): value is { start: { line: number; character: number }; end: { line: number; character: number } } {
  const r = value as { start?: unknown; end?: unknown } | null;
  if (typeof r !== 'object' || r === null || !isPosition(r.start) || !isPosition(r.end)) return false;
  return r.start.line < r.end.line || (r.start.line === r.end.line && r.start.character <= r.end.character);
}

function hasUri(params: unknown): boolean {
  return typeof (params as { textDocument?: { uri?: unknown } } | null)?.textDocument?.uri === 'string';
}

/** A ResponseError for `method` when its params lack a document, or `field` is not a valid position or range. */
export function invalidParams(method: string, params: unknown, field?: 'position' | 'range'): ResponseError<void> | undefined {
  const bad = !hasUri(params)
    || (field === 'position' && !isPosition((params as { position?: unknown }).position))
    || (field === 'range' && !isRange((params as { range?: unknown }).range));
  return bad ? new ResponseError(INVALID_PARAMS, t('{0}: invalid parameters (a text document and a valid {1} are required)', method, field ?? 'uri')) : undefined;
}

/** Whether every content change of a didChange is a full text or has a valid range (no negative or reversed one). */
export function validChanges(changes: unknown): boolean {
  if (!Array.isArray(changes)) return false;
  return changes.every((change: { text?: unknown; range?: unknown }) =>
    typeof change?.text === 'string' && (change.range === undefined || isRange(change.range)));
}
