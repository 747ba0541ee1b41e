// Every shipped query compiles against the Python grammar (a wrong node type or field name fails here, not
// silently at match time), and each is used by a rule.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { loadPython, compileQuerySync } from '../../server/src/engine/parser';
import { queryNames, querySource } from '../../server/src/engine/queries';
import { repoRoot } from '../helpers/analysis';

test('every rule query compiles and is used by its rule', async () => {
  await loadPython();
  const names = queryNames();
  assert.ok(names.length >= 3, `only ${names.length} queries`);
  for (const name of names) {
    const query = compileQuerySync(querySource(name));
    assert.ok(query.captureNames.includes('call'), `${name}.scm has no @call capture`);
    const rule = fs.readFileSync(path.join(repoRoot, 'server', 'src', 'rules', `${name}.ts`), 'utf8');
    assert.ok(rule.includes(`queryMatches('${name}'`), `${name}.scm is not used by server/src/rules/${name}.ts`);
  }
});

test('a query with an unknown node type is refused', async () => {
  await loadPython();
  assert.throws(() => compileQuerySync('(no_such_node) @x'));
});
