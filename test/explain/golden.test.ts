// Golden tests of `oomguard explain`: realistic CUDA OOM messages (test/explain/golden/*.log) and the plain text the
// command prints for each (golden/*.txt, the repository's path written as <repo>). Each case also asserts what must
// come first, so that a regenerated golden file cannot silently change the verdict.
// Regenerate after an intended change of wording or estimate: UPDATE_FIXTURES=1 node scripts/run-tests.mjs test/explain/golden
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { runExplain } from '../../server/src/cli/explain';
import type { Explanation } from '../../server/src/explain/index';

const repoRoot = path.resolve(__dirname, '..', '..');
const goldenDir = path.join(__dirname, 'golden');
const update = process.env.UPDATE_FIXTURES === '1';
/** The LoRA script whose fp32 logits copy the logits case's request matches (4 × 1024 × 128256 × 4 bytes). */
const LORA_SCRIPT = path.join(repoRoot, 'test', 'fixtures', 'estimator', 'validation', 'llama32_1b_lora_r8_all.py');
const GiB = 1024 ** 3;

async function explain(name: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runExplain([path.join(goldenDir, `${name}.log`), ...args], { stdout: (s) => { stdout += s; }, stderr: (s) => { stderr += s; } }, async () => '');
  return { code, stdout, stderr };
}

interface Case {
  name: string;
  args?: string[];
  /** What the explanation must say, whatever the golden text. */
  check: (e: Explanation) => void;
}

const cases: Case[] = [
  {
    name: 'current_fragmentation_decisive',
    check: (e) => {
      assert.equal(e.message.format, 'current');
      assert.equal(e.causes[0]!.kind, 'fragmentation');
      assert.equal(e.causes[0]!.decisive, true);
      assert.match(e.causes[0]!.tryThis.join(' '), /expandable_segments:True/);
    },
  },
  {
    name: 'current_fragmentation_irrelevant_full_card',
    check: (e) => {
      // 508.81 MiB free plus 211.43 MiB cached could never have served 1.96 GiB: the job does not fit.
      assert.equal(e.causes[0]!.kind, 'live-tensors');
      assert.equal(e.causes[0]!.decisive, true);
      const fragmentation = e.causes.find((c) => c.kind === 'fragmentation');
      assert.equal(fragmentation?.decisive, false);
      assert.equal(e.causes.at(-1)!.kind, 'fragmentation', 'the smallest use of the card comes last');
    },
  },
  {
    name: 'current_other_process',
    check: (e) => {
      assert.equal(e.causes[0]!.kind, 'other-processes');
      assert.equal(e.causes[0]!.decisive, true);
      assert.equal(e.causes[0]!.bytes, Math.round(10.5 * GiB));
      assert.ok(!e.causes.some((c) => c.kind === 'fragmentation' && c.decisive), '1.02 GiB free + 645.20 MiB cached < 2.00 GiB');
    },
  },
  {
    name: 'current_logits_request',
    args: ['--script', LORA_SCRIPT],
    check: (e) => {
      assert.equal(e.script?.matchingTensor?.formula, '4 × 1024 × 128256 × 4 bytes');
      assert.equal(e.script?.matchingTensor?.bytes, 4 * 1024 * 128256 * 4);
      const request = e.causes.find((c) => c.kind === 'request')!;
      assert.match(request.tryThis.join(' '), /fp32 copy of the logits/);
    },
  },
  {
    name: 'pytorch_2.1_colab_t4',
    check: (e) => {
      assert.equal(e.message.format, 'pytorch-2.1');
      assert.equal(e.causes[0]!.kind, 'fragmentation');
      assert.match(e.causes[0]!.tryThis.join(' '), /max_split_size_mb/);
    },
  },
  {
    name: 'legacy_1.13_fragmentation',
    check: (e) => {
      assert.equal(e.message.format, 'legacy');
      assert.equal(e.causes[0]!.kind, 'fragmentation');
      // The legacy wording prints no unallocated figure: reserved − allocated, computed.
      assert.equal(e.figures.find((f) => f.key === 'fragmentation')?.computed, true);
    },
  },
];

test('every golden log has a case', () => {
  const logs = fs.readdirSync(goldenDir).filter((f) => f.endsWith('.log')).map((f) => f.slice(0, -4)).sort();
  assert.deepEqual(logs, cases.map((c) => c.name).sort());
});

for (const c of cases) {
  test(`oomguard explain ${c.name}.log`, async () => {
    const text = await explain(c.name, c.args ?? []);
    assert.equal(text.code, 0, text.stderr);
    const printed = text.stdout.split(repoRoot).join('<repo>');
    const goldenFile = path.join(goldenDir, `${c.name}.txt`);
    if (update) fs.writeFileSync(goldenFile, printed);
    assert.ok(fs.existsSync(goldenFile), `golden/${c.name}.txt is missing: write it with UPDATE_FIXTURES=1`);
    assert.equal(printed, fs.readFileSync(goldenFile, 'utf8'), `${c.name}: the output differs from golden/${c.name}.txt`);
    const json = await explain(c.name, [...(c.args ?? []), '--json']);
    const explanations = JSON.parse(json.stdout) as Explanation[];
    assert.equal(explanations.length, 1);
    c.check(explanations[0]!);
  });
}
