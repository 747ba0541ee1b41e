// Shared by the estimator tests: paths, truth data and parsing fixture scripts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parsePython } from '../../server/src/engine/parser';
import { estimateScript, type EstimateOverrides, type EstimateResult } from '../../server/src/estimator/index';
import type { TruthRecord } from '../../server/src/estimator/calibration';

export const repoRoot = path.resolve(__dirname, '..', '..');
export const fixturesDir = path.join(repoRoot, 'test', 'fixtures', 'estimator');
/** The H200 measurements the estimator is calibrated against (provenance: test/estimator/data/README.md). */
export const truthPath = path.join(repoRoot, 'test', 'estimator', 'data', 'h200-truth.json');
export const ownMeasurementsPath = path.join(repoRoot, 'test', 'gpu', 'estimator', 'results', 'more.json');
/** Validation runs (test/gpu/estimator/validate.py), one per script in test/fixtures/estimator/validation/. */
export const validationPath = path.join(repoRoot, 'test', 'gpu', 'estimator', 'results', 'validate.json');
/** Second round (test/gpu/estimator/validate2.py): families and settings the first round did not measure. */
export const validation2Path = path.join(repoRoot, 'test', 'gpu', 'estimator', 'results', 'validate2.json');
export const validationScriptsDir = path.join(fixturesDir, 'validation');
/** The multi-GPU scripts' world-size-1 dry run (test/gpu/multi/run_all.py --nproc 1). */
export const multiWs1Path = path.join(repoRoot, 'test', 'gpu', 'multi', 'results', 'ws1.json');

export function loadTruth(): TruthRecord[] {
  return (JSON.parse(fs.readFileSync(truthPath, 'utf8')) as { runs: TruthRecord[] }).runs;
}

export async function estimateText(text: string, filePath: string, overrides: EstimateOverrides = {}): Promise<EstimateResult> {
  const tree = await parsePython(text);
  if (!tree) throw new Error(`tree-sitter could not parse ${filePath}`);
  try {
    return estimateScript(tree, text, filePath, overrides);
  } finally {
    tree.delete();
  }
}

export async function estimateFixture(name: string, overrides: EstimateOverrides = {}): Promise<EstimateResult> {
  const file = path.join(fixturesDir, name);
  return estimateText(fs.readFileSync(file, 'utf8'), file, overrides);
}

export const MIB = 1024 * 1024;
