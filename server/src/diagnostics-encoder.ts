// The JSON encoder of the Node server's messages over stdio. A keystroke in a long script republishes all of its
// diagnostics (a 20,000-line script: 702 of them, 351 KB of JSON), almost all of them the same objects as before
// (server.ts makes one per finding and keeps it while the finding stands). Each such diagnostic is encoded once and
// its bytes reused, and the bytes of the list are made from the last list's where the two share their ends: a publish
// is a few copies of bytes, not a JSON.stringify of the whole list and a UTF-8 encoding of the resulting string (2-3
// ms a keystroke at 20,000 lines, and a 351 KB string left to the garbage collector).
import type { ContentTypeEncoder, Message } from 'vscode-languageserver/node';

/** Bytes of a frozen diagnostic: it can no longer change, so its JSON stays true. */
const encodedDiagnostics = new WeakMap<object, Buffer>();

const COMMA_BYTE = 0x2c;
const CLOSE = Buffer.from(']}}');

function isFrozenObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && Object.isFrozen(value);
}

function encodedDiagnostic(diagnostic: unknown): Buffer {
  if (!isFrozenObject(diagnostic)) return Buffer.from(JSON.stringify(diagnostic) ?? 'null');
  let bytes = encodedDiagnostics.get(diagnostic);
  if (!bytes) encodedDiagnostics.set(diagnostic, (bytes = Buffer.from(JSON.stringify(diagnostic))));
  return bytes;
}

interface PublishDiagnosticsMessage {
  jsonrpc: string;
  method: 'textDocument/publishDiagnostics';
  params: { uri: string; version?: number; diagnostics: unknown[] };
}

function isPublishDiagnostics(message: Message): message is PublishDiagnosticsMessage & Message {
  const candidate = message as Partial<PublishDiagnosticsMessage>;
  return candidate.method === 'textDocument/publishDiagnostics' && typeof candidate.params?.uri === 'string' && Array.isArray(candidate.params.diagnostics);
}

/**
 * The last diagnostics list encoded for a document: its JSON between the brackets (the diagnostics joined by commas)
 * and where each diagnostic's bytes end in it. A keystroke changes a few diagnostics in the middle of the list: the
 * next list's bytes are this one's before and after them, with the new ones between (a few copies, where a list of
 * 702 diagnostics was 1,400 parts to join).
 */
interface EncodedList {
  /** The diagnostics, with NOT_REUSED in place of those not frozen (their bytes are made again next time). */
  diagnostics: readonly unknown[];
  body: Buffer;
  ends: Uint32Array;
}

const lastEncoded = new Map<string, EncodedList>();

/** Stands for a diagnostic that may change (not frozen): no diagnostic is this object, so its bytes are never reused. */
const NOT_REUSED = Symbol('not reused');

/**
 * A message whose diagnostics list is encoded from the bytes of the last one encoded for the same document where they
 * share ends: `head` before the list's bytes and `tail` after them, in one buffer.
 */
function withEncodedList(uri: string, diagnostics: readonly unknown[], head: Buffer, tail: Buffer): Buffer {
  const last = lastEncoded.get(uri);
  const old = last?.diagnostics ?? [];
  // The diagnostics the lists share at their start and at their end (the same frozen objects, so the same bytes).
  let prefix = 0;
  while (prefix < diagnostics.length && prefix < old.length && diagnostics[prefix] === old[prefix]) prefix++;
  let suffix = 0;
  while (suffix < diagnostics.length - prefix && suffix < old.length - prefix && diagnostics[diagnostics.length - 1 - suffix] === old[old.length - 1 - suffix]) suffix++;
  const kept = diagnostics.slice();
  const middle: Buffer[] = [];
  for (let i = prefix; i < diagnostics.length - suffix; i++) {
    middle.push(encodedDiagnostic(diagnostics[i]));
    if (!isFrozenObject(diagnostics[i])) kept[i] = NOT_REUSED;
  }
  const ends = new Uint32Array(diagnostics.length);
  let length = 0;
  const place = (i: number, bytes: number) => {
    length += (i > 0 ? 1 : 0) + bytes;
    ends[i] = length;
  };
  const oldStart = (i: number) => (i === 0 ? 0 : last!.ends[i - 1]! + 1);
  for (let i = 0; i < prefix; i++) ends[i] = last!.ends[i]!;
  length = prefix > 0 ? ends[prefix - 1]! : 0;
  middle.forEach((bytes, k) => place(prefix + k, bytes.length));
  for (let k = suffix; k > 0; k--) place(diagnostics.length - k, last!.ends[old.length - k]! - oldStart(old.length - k));
  const message = Buffer.allocUnsafe(head.length + length + tail.length);
  head.copy(message, 0);
  // The list's bytes, kept for the next list as a view of the message (which nothing writes once it is sent).
  const body = message.subarray(head.length, head.length + length);
  let at = prefix > 0 ? last!.body.copy(body, 0, 0, ends[prefix - 1]) : 0;
  for (const bytes of middle) {
    if (at > 0) body[at++] = COMMA_BYTE;
    at += bytes.copy(body, at);
  }
  if (suffix > 0) {
    if (at > 0) body[at++] = COMMA_BYTE;
    last!.body.copy(body, at, oldStart(old.length - suffix));
  }
  tail.copy(message, head.length + length);
  // Nothing to keep for a document without diagnostics (a closed one is sent none).
  if (diagnostics.length > 0) lastEncoded.set(uri, { diagnostics: kept, body, ends });
  else lastEncoded.delete(uri);
  return message;
}

/**
 * The JSON of a message, as JSON.stringify writes it (the same value, its keys in the same order but `diagnostics`
 * last): a publishDiagnostics message from the frozen diagnostics' saved bytes.
 */
export function encodeMessage(message: Message): Buffer {
  if (!isPublishDiagnostics(message)) return Buffer.from(JSON.stringify(message), 'utf8');
  const { params: _all, ...envelope } = message;
  const { diagnostics, ...params } = message.params;
  // `{"jsonrpc":"2.0","method":…,"params":{"uri":…}}` (params last, never empty) less its last two braces, then the
  // diagnostics.
  const head = JSON.stringify({ ...envelope, params });
  return withEncodedList(params.uri, diagnostics, Buffer.from(`${head.slice(0, -2)},"diagnostics":[`, 'utf8'), CLOSE);
}

/** The encoder for StreamMessageWriter (UTF-8, the only charset LSP allows). */
export const messageEncoder: ContentTypeEncoder = {
  name: 'application/json',
  encode: (message) => {
    try {
      return Promise.resolve(encodeMessage(message));
    } catch (error) {
      return Promise.reject(error);
    }
  },
};
