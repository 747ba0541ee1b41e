// Helpers the tests share: analyse a file through the real engine, and read `# expect: CODE` labels.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { analyze } from '../../server/src/engine/analyze';
import type { AnalysisOptions } from '../../server/src/engine/analyze';
import { parsePython } from '../../server/src/engine/parser';
import { recoverTree } from '../../server/src/engine/recovery';
import { SemanticModel } from '../../server/src/engine/semantic/model';
import type { Finding } from '../../server/src/engine/types';

export const repoRoot = path.resolve(__dirname, '..', '..');

export async function analyzeText(text: string, options: AnalysisOptions = {}): Promise<Finding[]> {
  const tree = await parsePython(text);
  if (!tree) throw new Error('tree-sitter returned no tree');
  const recovered = await recoverTree(text, tree);
  try {
    return analyze(new SemanticModel(recovered.tree, recovered.text), text, options);
  } finally {
    if (recovered.tree !== tree) recovered.tree.delete();
    tree.delete();
  }
}

export interface Label {
  line: number; // 1-based
  code: string;
}

/** `# expect: OOM101, OOM104` at the end of a line labels the findings reported at that line. */
export function readLabels(text: string): Label[] {
  const labels: Label[] = [];
  text.split(/\r\n|\r|\n/).forEach((line, index) => {
    const match = /#\s*expect:\s*((?:OOM\d{3}\s*,?\s*)+)/.exec(line);
    if (!match) return;
    for (const code of match[1]!.split(',').map((c) => c.trim()).filter(Boolean)) labels.push({ line: index + 1, code });
  });
  return labels;
}

export function findingLines(findings: Finding[]): Label[] {
  return findings.map((finding) => ({ line: finding.range.start.line + 1, code: finding.code }));
}

export function formatSnapshot(findings: Finding[]): string {
  return findings
    .map((f) => `${f.range.start.line + 1}:${f.range.start.character + 1}-${f.range.end.line + 1}:${f.range.end.character + 1} ${f.code} ${f.name} [${f.severity}] ${f.message}` +
      f.fixes.map((fix) => `\n    fix${fix.safe ? '' : ' (unsafe)'}: ${fix.title}`).join(''))
    .join('\n') + '\n';
}

export function listFiles(dir: string, suffix: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(full, suffix));
    else if (entry.name.endsWith(suffix)) out.push(full);
  }
  return out.sort();
}
