// The GPU measurement scripts under test/gpu/refactor/generated/ are what the engine produces today from the
// "before" scripts beside them (regenerate with `node --import tsx test/gpu/refactor/generate.ts`), so the
// measured table in docs/refactoring-measurements.md describes the refactorings as they are.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { generate, here } from '../gpu/refactor/generate';

test('the generated GPU scripts match what the refactorings produce', async () => {
  const files = await generate();
  assert.equal(files.size, 8);
  for (const [name, text] of files) {
    assert.equal(fs.readFileSync(path.join(here, 'generated', name), 'utf8'), text, `${name} is stale: regenerate it`);
  }
});
