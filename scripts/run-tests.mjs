// Runs every test/**/*.test.ts with Node's own test runner (TypeScript through tsx).
// Usage: node scripts/run-tests.mjs [substring filter ...]
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const filters = process.argv.slice(2);

function collect(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...collect(full));
    else if (entry.name.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

// The end-to-end suite needs its clients installed first, so it runs only when named (npm run test:e2e).
const e2e = path.join(root, 'test', 'e2e') + path.sep;
const files = collect(path.join(root, 'test'))
  .filter((file) => (filters.length === 0 ? !file.startsWith(e2e) : filters.some((f) => file.includes(f))))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter', 'spec', ...files],
  { stdio: 'inherit', cwd: root },
);
process.exit(result.status ?? 1);
