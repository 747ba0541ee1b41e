// Unit tests of the typed messages between the extension, the language server and the panel's webview.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeOverrides, normalizeSettings, parseWebviewMessage } from '../../server/src/protocol';
import { makeNonce, panelHtml } from '../../extension/src/panel/html';

test('what-if values from outside are kept only when well formed', () => {
  assert.deepEqual(normalizeOverrides({ batchSize: 16, seqLen: 1024, precision: 'bf16-amp', optimizer: 'sgd', checkpointing: true, accumulation: 4, gpus: 8, strategy: 'fsdp', gpu: ' A100 80GB ' }),
    { batchSize: 16, seqLen: 1024, precision: 'bf16-amp', optimizer: 'sgd', checkpointing: true, accumulation: 4, gpus: 8, strategy: 'fsdp', gpu: 'A100 80GB' });
  assert.deepEqual(normalizeOverrides({ batchSize: 0, seqLen: 1.5, imageSize: '224', precision: 'int4', optimizer: null, checkpointing: 'yes', gpus: -1, strategy: 'ddp2', gpu: '' }), {});
  assert.deepEqual(normalizeOverrides(null), {});
  assert.deepEqual(normalizeOverrides('batchSize=8'), {});
  assert.deepEqual(normalizeOverrides({ batchSize: 2 ** 21 }), {}, 'an absurd batch size is refused, not estimated');
});

test('webview messages are parsed into the typed union or refused', () => {
  assert.deepEqual(parseWebviewMessage({ type: 'ready' }), { type: 'ready' });
  assert.deepEqual(parseWebviewMessage({ type: 'recompute', overrides: { batchSize: 4, evil: 1 } }), { type: 'recompute', overrides: { batchSize: 4 } });
  assert.deepEqual(parseWebviewMessage({ type: 'reveal', line: 12 }), { type: 'reveal', line: 12 });
  assert.equal(parseWebviewMessage({ type: 'reveal', line: -1 }), undefined);
  assert.equal(parseWebviewMessage({ type: 'reveal', line: '3' }), undefined);
  assert.deepEqual(parseWebviewMessage({ type: 'applySuggestion', id: 'amp', kind: 'refactor.rewrite', line: 50, title: 'Enable mixed precision' }),
    { type: 'applySuggestion', id: 'amp', kind: 'refactor.rewrite', line: 50, title: 'Enable mixed precision' });
  assert.deepEqual(parseWebviewMessage({ type: 'applySuggestion', id: 'fix-leak', kind: 'quickfix', line: 3, title: 'Append x.detach()' })?.type, 'applySuggestion');
  // Only code action kinds are asked for: not an arbitrary command.
  assert.equal(parseWebviewMessage({ type: 'applySuggestion', id: 'amp', kind: 'workbench.action.terminal.new', line: 1, title: 'x' }), undefined);
  assert.equal(parseWebviewMessage({ type: 'applySuggestion', id: 'rm -rf', kind: 'refactor.rewrite', line: 1, title: 'x' }), undefined);
  assert.equal(parseWebviewMessage({ type: 'applySuggestion', id: 'amp', kind: 'refactor.rewrite', line: 1 }), undefined);
  assert.equal(parseWebviewMessage({ type: 'eval', code: 'alert(1)' }), undefined);
  assert.equal(parseWebviewMessage(undefined), undefined);
});

test('the gpu setting defaults to a catalog GPU and takes what the user typed', () => {
  assert.equal(normalizeSettings({}).gpu, 'RTX 4090');
  assert.equal(normalizeSettings({ gpu: ' A100 80GB ' }).gpu, 'A100 80GB');
  assert.equal(normalizeSettings({ gpu: 42 }).gpu, 'RTX 4090');
});

test('the panel page allows only its nonce-carrying script and styles from the webview origin', () => {
  const nonce = makeNonce((bytes) => bytes.map((_, i) => i * 7));
  assert.match(nonce, /^[A-Za-z0-9]{32}$/);
  const html = panelHtml({ cspSource: 'https://x.vscode-cdn.net', nonce, scriptUri: 'https://x.vscode-cdn.net/dist/webview.js', styleUri: 'https://x.vscode-cdn.net/dist/webview.css', lang: 'en" onload="x', title: 'Memory <b>' });
  const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)?.[1];
  assert.equal(csp, `default-src 'none'; style-src https://x.vscode-cdn.net; script-src 'nonce-${nonce}'; img-src 'none'; font-src 'none'`);
  assert.equal((html.match(/<script /g) ?? []).length, 1);
  assert.ok(html.includes(`<script nonce="${nonce}" src="https://x.vscode-cdn.net/dist/webview.js">`));
  assert.ok(html.includes('lang="en&quot; onload=&quot;x"'), 'attributes are escaped');
  assert.ok(html.includes('<title>Memory &lt;b&gt;</title>'), 'the title is escaped');
});
