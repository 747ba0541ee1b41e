// A document's text as the pieces its edits left (engine/piece-text.ts) must read exactly as the string it stands
// for: every slice, every character, its length and its carriage returns, after any sequence of edits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PieceText } from '../../server/src/engine/piece-text';
import { lineEnding } from '../../server/src/fixes/edits';

const carriageReturns = (text: string) => text.split('\r').length - 1;

test('after each of 2,000 random edits, pieces read as the string they stand for, and the whole text is made only when asked', () => {
  let seed = 17;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  // Two-byte text (CJK, an emoji's surrogate pair), line endings of every kind, and inserts of every size.
  const base = 'import torch\r\nx = 1\n生成的测试代码 🧪\rdef f():\n    return x\n'.repeat(40);
  const insertions = ['', 'a', '\n', '\r', '\r\n', '生', '🧪', 'word', 'a longer line of code\n'.repeat(20)];
  let expected = base;
  let text = PieceText.of(base);
  let sawPieces = false;
  for (let edit = 0; edit < 2000; edit++) {
    const start = random(expected.length + 1);
    const end = Math.min(expected.length, start + random(edit % 50 === 0 ? 400 : 4));
    const inserted = insertions[random(insertions.length)]!;
    const before = text;
    const expectedBefore = expected;
    text = text.replaced(start, end, inserted);
    expected = expected.slice(0, start) + inserted + expected.slice(end);
    sawPieces ||= !text.isWhole;
    assert.equal(text.length, expected.length, `length after edit ${edit}`);
    assert.equal(text.carriageReturns, carriageReturns(expected), `carriage returns after edit ${edit}`);
    for (let probe = 0; probe < 8; probe++) {
      const from = random(expected.length + 2) - 1;
      const to = from + random(120) - 10;
      assert.equal(text.slice(from, to), expected.slice(from, to), `slice(${from}, ${to}) after edit ${edit}`);
      const at = random(expected.length + 2) - 1;
      assert.ok(Object.is(text.charCodeAt(at), expected.charCodeAt(at)), `charCodeAt(${at}) after edit ${edit}`);
    }
    assert.equal(text.slice(), expected);
    // The version an edit started from stays as it was.
    assert.equal(before.slice(), expectedBefore);
    if (edit % 97 === 0) {
      assert.equal(text.text, expected);
      assert.ok(text.isWhole);
    }
  }
  assert.ok(sawPieces, 'no edit left the text in pieces');
  assert.equal(text.text, expected);
});

test('a text without a carriage return ends its lines with \\n, known without making it whole', () => {
  const text = PieceText.of('a\nb\n'.repeat(1000)).replaced(10, 11, 'x').replaced(100, 100, 'y\n');
  assert.ok(!text.isWhole);
  assert.equal(lineEnding(text), '\n');
  assert.ok(!text.isWhole);
  assert.equal(lineEnding(text.replaced(3, 3, '\r\n')), '\r\n');
  assert.equal(lineEnding(PieceText.of('a\rb\r').replaced(1, 1, 'z')), '\r');
});
