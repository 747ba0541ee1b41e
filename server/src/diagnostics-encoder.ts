// The JSON encoder of the Node server's messages over stdio. A keystroke in a long script republishes all of its
// diagnostics (a 20,000-line script: 702 of them, 351 KB of JSON), almost all of them the same objects as before
// (server.ts makes one per finding and keeps it while the finding stands). Each such diagnostic is encoded once and
// its bytes reused: a publish is then one copy of bytes, not a JSON.stringify of the whole list and a UTF-8 encoding
// of the resulting string (2-3 ms a keystroke at 20,000 lines, and a 351 KB string left to the garbage collector).
import type { ContentTypeEncoder, Message } from 'vscode-languageserver/node';

/** Bytes of a frozen diagnostic: it can no longer change, so its JSON stays true. */
const encodedDiagnostics = new WeakMap<object, Buffer>();

const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}}');

function encodedDiagnostic(diagnostic: unknown): Buffer {
  if (typeof diagnostic !== 'object' || diagnostic === null || !Object.isFrozen(diagnostic)) return Buffer.from(JSON.stringify(diagnostic) ?? 'null');
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
  const parts: Buffer[] = [Buffer.from(`${head.slice(0, -2)},"diagnostics":[`, 'utf8')];
  diagnostics.forEach((diagnostic, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(encodedDiagnostic(diagnostic));
  });
  parts.push(CLOSE);
  return Buffer.concat(parts);
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
