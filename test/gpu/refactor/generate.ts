// Applies each refactoring through the real engine to the GPU training scripts beside this file and writes the
// results to generated/ (committed; test/refactorings/gpu-scripts.test.ts checks they are up to date).
// Usage: node --import tsx test/gpu/refactor/generate.ts
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parsePython } from '../../../server/src/engine/parser';
import { SemanticModel } from '../../../server/src/engine/semantic/model';
import { applyEdits } from '../../../server/src/fixes/apply';
import { refactoringsAt } from '../../../server/src/fixes/refactorings';

export const SCRIPTS = ['train_gpt2.py', 'train_resnet50.py'];

/** Which refactoring each generated file gets, by the start of its title. */
export const VARIANTS: Record<string, string> = {
  amp_bf16: 'Enable mixed precision (AMP, bfloat16)',
  amp_fp16: 'Enable mixed precision (AMP, float16',
  checkpointing: 'Enable gradient checkpointing',
  accumulation4: 'Add gradient accumulation (4 steps',
};

export const here = __dirname;

/** The generated scripts: file name → text. */
export async function generate(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const script of SCRIPTS) {
    const text = fs.readFileSync(path.join(here, script), 'utf8');
    const tree = await parsePython(text);
    if (!tree) throw new Error(`cannot parse ${script}`);
    const model = new SemanticModel(tree, text);
    tree.delete();
    // The cursor on the training loop's `for`, as a user would put it.
    const line = text.split('\n').findIndex((l) => l.startsWith('for step in range(steps):'));
    if (line < 0) throw new Error(`${script}: no training loop`);
    const offered = refactoringsAt(model, text, { line, character: 0 });
    for (const [name, title] of Object.entries(VARIANTS)) {
      const refactoring = offered.find((r) => r.title.startsWith(title));
      // Not offered (a loop that slices its data by its own index cannot be stretched to micro-batches): recorded
      // as such, so the GPU run and the docs show the refusal rather than an old rewrite.
      if (!refactoring) out.set(`${path.basename(script, '.py')}_${name}.refused.txt`, `not offered; offered: ${offered.map((r) => r.title).join(' | ')}\n`);
      else out.set(`${path.basename(script, '.py')}_${name}.py`, applyEdits(text, refactoring.edits));
    }
  }
  return out;
}

if (require.main === module) {
  void generate().then((files) => {
    const folder = path.join(here, 'generated');
    for (const name of fs.readdirSync(folder)) if (!files.has(name)) fs.rmSync(path.join(folder, name));
    for (const [name, text] of files) fs.writeFileSync(path.join(folder, name), text);
    console.log(`wrote ${files.size} scripts to ${path.join(here, 'generated')}`);
  });
}
