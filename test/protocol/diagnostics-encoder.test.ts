// The Node server's message encoder over stdio (server/src/diagnostics-encoder.ts): every message is the JSON that
// JSON.stringify writes of it, and a frozen diagnostic's bytes are made once and reused while it is published.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Message } from 'vscode-languageserver/node';
import { encodeMessage } from '../../server/src/diagnostics-encoder';

function publish(diagnostics: unknown[], version?: number): Message {
  const params = version === undefined ? { uri: 'file:///a "b".py', diagnostics } : { uri: 'file:///a.py', version, diagnostics };
  return { jsonrpc: '2.0', method: 'textDocument/publishDiagnostics', params } as Message;
}

const diagnostic = (line: number, message: string) => ({
  range: { start: { line, character: 4 }, end: { line, character: 9 } },
  severity: 2,
  code: 'OOM101',
  source: 'oomguard',
  message,
  codeDescription: { href: 'https://example.org/OOM101.md' },
});

const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) deepFreeze(item);
  return Object.freeze(value);
};

test('a publishDiagnostics message encodes to the JSON of the same value, frozen diagnostics or not', () => {
  const frozen = deepFreeze(diagnostic(3, 'kept «loss» — 1,2 GB ✓'));
  for (const message of [publish([]), publish([frozen]), publish([frozen, diagnostic(7, 'plain "quoted"\n')], 12), publish([diagnostic(1, 'x')], 0)]) {
    const encoded = encodeMessage(message).toString('utf8');
    assert.deepEqual(JSON.parse(encoded), JSON.parse(JSON.stringify(message)));
    assert.equal(encoded, JSON.stringify(message));
  }
});

test('other messages are JSON.stringify written as UTF-8', () => {
  const request = { jsonrpc: '2.0', id: 4, method: 'window/showMessage', params: { type: 1, message: 'é ✓' } } as Message;
  assert.equal(encodeMessage(request).toString('utf8'), JSON.stringify(request));
  const notification = { jsonrpc: '2.0', method: 'textDocument/publishDiagnostics', params: { uri: 'file:///a.py' } } as Message;
  assert.equal(encodeMessage(notification).toString('utf8'), JSON.stringify(notification));
});

test('a frozen diagnostic is encoded once: the next publish reuses its bytes', () => {
  const frozen = deepFreeze(diagnostic(3, 'first'));
  const first = encodeMessage(publish([frozen], 1)).toString('utf8');
  const stringify = JSON.stringify;
  let calls = 0;
  JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
    calls++;
    return stringify(...args);
  }) as typeof JSON.stringify;
  try {
    const second = encodeMessage(publish([frozen, frozen], 2)).toString('utf8');
    assert.equal(calls, 1, 'only the envelope is stringified again');
    assert.deepEqual(JSON.parse(second).params.diagnostics, [JSON.parse(first).params.diagnostics[0], JSON.parse(first).params.diagnostics[0]]);
  } finally {
    JSON.stringify = stringify;
  }
});

test('lists that share their start and end with the last one encoded for the document encode as JSON.stringify writes them', () => {
  let seed = 5;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  const pool = Array.from({ length: 40 }, (_, i) => (i % 7 === 3 ? diagnostic(i, `plain ${i}`) : deepFreeze(diagnostic(i, `kept ${'✓'.repeat(i % 4)} "${i}"`))));
  for (const uri of ['file:///one.py', 'file:///two.py']) {
    let list: unknown[] = [];
    for (let round = 0; round < 300; round++) {
      // A keystroke: a few diagnostics replaced, added or removed somewhere; now and then an empty or a whole new list.
      const next = list.slice();
      const at = random(next.length + 1);
      next.splice(at, random(3), ...Array.from({ length: random(3) }, () => pool[random(pool.length)]!));
      list = round % 50 === 49 ? [] : round % 37 === 36 ? pool.slice(random(10)) : next;
      // A diagnostic that is not frozen may change between publishes: its bytes must not be reused.
      (pool[3] as { message: string }).message = `plain ${round}`;
      const message = { jsonrpc: '2.0', method: 'textDocument/publishDiagnostics', params: { uri, version: round, diagnostics: list } } as Message;
      assert.equal(encodeMessage(message).toString('utf8'), JSON.stringify(message), `round ${round}`);
    }
  }
});
