// Findings are sorted by position, then by code, with a plain comparison of the codes (engine/analyze.ts
// compareCodes) rather than localeCompare, whose first call loads ICU's collation into the process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareCodes, compareFindings } from '../../server/src/engine/analyze';
import type { Finding } from '../../server/src/engine/types';
import { RULE_CODES } from '../../server/src/rules/codes';

test('every pair of rule codes compares as localeCompare orders them', () => {
  const codes = RULE_CODES.map((rule) => rule.code as string);
  for (const a of codes) {
    for (const b of codes) assert.equal(compareCodes(a, b), Math.sign(a.localeCompare(b)), `${a} against ${b}`);
  }
});

test('findings at one position are ordered by code, and by position first', () => {
  const at = (line: number, character: number, code: string) => ({ code, range: { start: { line, character }, end: { line, character: character + 1 } } }) as Finding;
  const sorted = [at(3, 0, 'OOM104'), at(1, 4, 'OOM110'), at(3, 0, 'OOM101'), at(1, 2, 'OOM117')].sort(compareFindings);
  assert.deepEqual(sorted.map((finding) => `${finding.range.start.line}:${finding.range.start.character} ${finding.code}`), ['1:2 OOM117', '1:4 OOM110', '3:0 OOM101', '3:0 OOM104']);
});
