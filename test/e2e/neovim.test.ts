// Neovim end to end: a headless Neovim 0.7 runs the README's start_client set-up against `node dist/server.js
// --stdio`, opens an example script, reads the published diagnostics, asks for code actions on a flagged line and
// applies the quick fix; the test then checks the file on disk and what Neovim saw.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { applyCliEdits, failIfMissing, findNeovim, missingClients, repoRoot, skipUnlessCI } from './clients';
import type { CliFinding } from './clients';

const nvim = findNeovim();
const missing = missingClients([['nvim', nvim, 'apt-get install -y neovim']]);
const SCRIPT = 'leaky_train.py';

/** The ```lua blocks of the README's Neovim section that contain `needle`. */
function readmeLua(needle: string): string {
  const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const block = [...readme.matchAll(/```lua\n([\s\S]*?)```/g)].map((m) => m[1]!).find((code) => code.includes(needle));
  assert.ok(block, `README.md has no lua block with ${needle}`);
  return block;
}

interface NeovimDiagnostic {
  code: string;
  lnum: number;
  col: number;
  message: string;
  source: string;
}

interface NeovimResult {
  ok: boolean;
  error?: string;
  filetype?: string;
  before?: NeovimDiagnostic[];
  titles?: string[];
  after?: NeovimDiagnostic[];
  steps: Array<{ name: string; ms: number }>;
}

let tmp: string;

describe('Neovim (headless, LSP over stdio)', { skip: skipUnlessCI(missing), timeout: 120_000 }, () => {
  before(() => {
    failIfMissing(missing);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-e2e-nvim-'));
  });

  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the README snippets are valid Lua', () => {
    // Neovim 0.7 cannot run the 0.8+ snippet (no vim.lsp.start), but its Lua must at least parse. An error in a
    // -c command does not change Neovim's exit status, hence the explicit cquit.
    for (const needle of ['vim.lsp.start(', 'vim.lsp.start_client(']) {
      const check = path.join(tmp, 'syntax.lua');
      fs.writeFileSync(check, readmeLua(needle));
      const run = spawnSync(nvim!, ['--headless', '--clean', '-u', 'NONE', '-c', `lua local ok, e = loadfile(${JSON.stringify(check)}) if not ok then io.stderr:write(e) vim.cmd('cquit 3') end`, '-c', 'qall!'], { encoding: 'utf8', timeout: 20_000 });
      assert.equal(run.status, 0, `the README's ${needle} snippet does not parse: ${run.stderr}`);
    }
  });

  test('diagnostics, code actions and a quick fix through the README set-up', (t) => {
    const file = path.join(tmp, SCRIPT);
    fs.copyFileSync(path.join(repoRoot, 'examples', SCRIPT), file);
    const original = fs.readFileSync(file, 'utf8');
    const check = spawnSync(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), 'check', file, '--output-format', 'json'], { encoding: 'utf8' });
    const findings = JSON.parse(check.stdout) as CliFinding[];
    const target = findings.find((f) => f.code === 'OOM102' && f.fix);
    assert.ok(target?.fix, `oomguard check reports no OOM102 with a fix in ${SCRIPT}`);

    const server = path.join(repoRoot, 'dist', 'server.js');
    assert.ok(fs.existsSync(server), 'dist/server.js is missing: run "npm run build" first');
    const init = path.join(tmp, 'init.lua');
    const snippet = readmeLua('vim.lsp.start_client(');
    assert.ok(snippet.includes('/path/to/oomguard/dist/server.js'));
    fs.writeFileSync(init, snippet.replace('/path/to/oomguard/dist/server.js', server));
    const resultFile = path.join(tmp, 'result.json');

    const started = Date.now();
    // Without g:loaded_python3_provider=0, opening a .py file spends seconds probing for a Python provider.
    const run = spawnSync(
      nvim!,
      ['--headless', '--clean', '-u', 'NONE', '--cmd', 'let g:loaded_python3_provider=0', '-c', `luafile ${path.join(__dirname, 'neovim-client.lua')}`],
      {
        cwd: tmp,
        encoding: 'utf8',
        timeout: 60_000,
        env: {
          ...process.env,
          OOMGUARD_E2E_INIT: init,
          OOMGUARD_E2E_FILE: file,
          OOMGUARD_E2E_RESULT: resultFile,
          OOMGUARD_E2E_LINE: String(target.line),
          OOMGUARD_E2E_COL: String(target.column),
          OOMGUARD_E2E_CODE: target.code,
          OOMGUARD_E2E_FIX: target.fix.title,
        },
      },
    );
    const wall = Date.now() - started;
    assert.ok(fs.existsSync(resultFile), `nvim wrote no result (exit ${run.status}, signal ${run.signal}):\n${run.stdout}\n${run.stderr}`);
    const result = JSON.parse(fs.readFileSync(resultFile, 'utf8')) as NeovimResult;
    t.diagnostic(`nvim run ${wall} ms; ${result.steps.map((s) => `${s.name} at ${s.ms} ms`).join(', ')}`);
    assert.ok(result.ok, `the Neovim session failed: ${result.error}\n${run.stderr}`);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(result.filetype, 'python');

    // Neovim shows what `oomguard check` finds: same codes at the same places (0-based there, 1-based in the CLI).
    const want = findings.map((f) => `${f.code}@${f.line - 1}:${f.column - 1}`).sort();
    assert.deepEqual(result.before!.map((d) => `${d.code}@${d.lnum}:${d.col}`).sort(), want);
    assert.ok(result.before!.every((d) => d.source === 'oomguard'));
    assert.ok(result.before!.some((d) => d.message === target.message), 'the OOM102 message differs from the CLI');

    assert.ok(result.titles!.includes(target.fix.title), `code actions offered: ${JSON.stringify(result.titles)}`);
    assert.ok(result.titles!.includes(`Disable ${target.code} for this line`), `code actions offered: ${JSON.stringify(result.titles)}`);

    const fixed = fs.readFileSync(file, 'utf8');
    assert.equal(fixed, applyCliEdits(original, target.fix.edits));
    assert.ok(!result.after!.some((d) => d.code === target.code && d.lnum === target.line - 1), 'the fixed finding is still reported');
    assert.equal(result.after!.length, result.before!.length - 1);
  });
});
