import * as fs from 'node:fs';
import { parsePython } from './server/src/engine/parser';
import { SemanticModel } from './server/src/engine/semantic/model';
import { gradientCheckpointing } from './server/src/fixes/refactorings/checkpointing';
import { trainingLoopAt } from './server/src/fixes/refactorings/training-loop';
(async () => {
  const text = fs.readFileSync(process.argv[2]!, 'utf8');
  const tree = (await parsePython(text))!;
  const model = new SemanticModel(tree, text);
  const loop = trainingLoopAt(model, text, { line: Number(process.argv[3]) - 1, character: 4 })!;
  console.log(gradientCheckpointing({ model, text, loop }).map((r) => r.title));
})();
