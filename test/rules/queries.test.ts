// Every shipped query compiles against the Python grammar (a wrong node type or field name fails here, not
// silently at match time), and each is used by a rule.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { loadPython, compileQuerySync, parsePython } from '../../server/src/engine/parser';
import { queryMatches, queryNames, querySource } from '../../server/src/engine/queries';
import { copyTree } from '../../server/src/engine/syntax-tree';
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

test('the queries run as one give each query the matches it gives alone, on a whole file and per statement', async () => {
  await loadPython();
  const text = fs.readFileSync(path.join(repoRoot, 'examples', 'train_gpt2.py'), 'utf8') +
    '\nfor x, y in loader:\n    out = model(x, labels=y, output_hidden_states=True)\n    out.loss.backward(retain_graph=True)\n' +
    '    out.loss.backward(create_graph=True)\n    torch.cuda.empty_cache()\ntrainer = Trainer(model=model, compute_metrics=metrics)\n';
  const tree = (await parsePython(text))!;
  try {
    const describe = (captures: Map<string, { startIndex: number; endIndex: number; type: string }>) =>
      [...captures].map(([name, node]) => `${name}:${node.type}@${node.startIndex}-${node.endIndex}`).sort().join(' ');
    for (const name of queryNames()) {
      const alone = compileQuerySync(querySource(name)).matches(tree.rootNode)
        .map((match) => match.captures.map((capture) => `${capture.name}:${capture.node.type}@${capture.node.startIndex}-${capture.node.endIndex}`).sort().join(' '));
      const wholeFile = queryMatches(() => tree, copyTree(tree, text), name).map(describe);
      assert.deepEqual(wholeFile, alone, name);
      const root = copyTree(tree, text);
      const perStatement = root.children.flatMap((statement) => queryMatches(() => tree, root, name, statement)).map(describe);
      assert.deepEqual(perStatement, alone, name);
      assert.ok(alone.length > 0, `${name} matches nothing in the sample`);
    }
  } finally {
    tree.delete();
  }
});
