// Keyword arguments unpacked from a dict (`TrainingArguments(**cfg["training"])`) are read like written ones,
// wherever the dict comes from: a TOML or JSON file the script names, or a dict the script builds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { estimateText } from './helpers';
import { parsePython } from '../../server/src/engine/parser';
import { ProgramModel } from '../../server/src/engine/program/interpreter';
import type { EstimateResult } from '../../server/src/estimator/index';

/** A Trainer fine-tune of BERT whose TrainingArguments are built by `args` (the lines that make `args`). */
function trainerScript(imports: string[], args: string[]): string {
  return [
    'import torch',
    ...imports,
    'from torch.utils.data import Dataset',
    'from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments',
    'class Rows(Dataset):',
    '    def __len__(self):',
    '        return 512',
    '    def __getitem__(self, i):',
    '        ids = torch.randint(1000, 30000, (192,))',
    '        return {"input_ids": ids, "labels": torch.tensor(1)}',
    'def main():',
    '    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=4)',
    ...args.map((line) => `    ${line}`),
    '    trainer = Trainer(model=model, args=args, train_dataset=Rows())',
    '    trainer.train()',
    'if __name__ == "__main__":',
    '    main()',
  ].join('\n');
}

const WRITTEN_OUT = ['args = TrainingArguments(output_dir="/tmp/out", per_device_train_batch_size=12, gradient_accumulation_steps=3,',
  '                         bf16=True, optim="adafactor", gradient_checkpointing=True, max_steps=4)'];

/** What the estimate read from the TrainingArguments. */
function trainerSettings(result: EstimateResult): unknown[] {
  const { detected } = result;
  return [detected.batchSize.value, detected.precision.value, detected.optimizer.value, detected.checkpointing, detected.accumulation];
}

async function inFolder<T>(files: Record<string, string>, script: string, run: (file: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-unpacked-'));
  try {
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    const file = path.join(dir, 'train.py');
    fs.writeFileSync(file, script);
    return await run(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('TrainingArguments(**cfg["training"]) from a TOML file (tomllib) reads the batch, bf16, optim, checkpointing and accumulation', async () => {
  const written = await estimateText(trainerScript([], WRITTEN_OUT), '/tmp/trainer_written.py');
  assert.deepEqual(trainerSettings(written), [12, 'bf16-amp', 'adafactor', true, 3]);
  const toml = [
    '[training]',
    'output_dir = "/tmp/out"',
    'per_device_train_batch_size = 12',
    'gradient_accumulation_steps = 3',
    'bf16 = true',
    'optim = "adafactor"',
    'gradient_checkpointing = true',
    'max_steps = 4',
  ].join('\n');
  const script = trainerScript(['import tomllib', 'from pathlib import Path'], [
    'with open(Path(__file__).parent / "settings" / "run.toml", "rb") as fh:',
    '    cfg = tomllib.load(fh)',
    'args = TrainingArguments(**cfg["training"])',
  ]);
  const unpacked = await inFolder({ 'settings/run.toml': toml }, script, (file) => estimateText(script, file));
  assert.deepEqual(trainerSettings(unpacked), trainerSettings(written));
  // The batch size says where it was found: the config file, at the script's load call (line 15, counted from 1).
  assert.deepEqual([unpacked.detected.batchSize.how, unpacked.detected.batchSize.line], ['config', 15]);
  assert.equal(unpacked.peakAllocated, written.peakAllocated);
});

test('TrainingArguments(**cfg["training_args"]) from a JSON file the script names as a default path', async () => {
  const json = JSON.stringify({ training_args: { output_dir: '/tmp/out', per_device_train_batch_size: 12, gradient_accumulation_steps: 3, bf16: true,
    optim: 'adafactor', gradient_checkpointing: true, max_steps: 4 } });
  const script = trainerScript(['import json', 'import os', 'import sys'], [
    'path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "run.json")',
    'with open(path) as fh:',
    '    cfg = json.load(fh)',
    'args = TrainingArguments(**cfg["training_args"])',
  ]);
  const written = await estimateText(trainerScript([], WRITTEN_OUT), '/tmp/trainer_written.py');
  const unpacked = await inFolder({ 'run.json': json }, script, (file) => estimateText(script, file));
  assert.deepEqual(trainerSettings(unpacked), [12, 'bf16-amp', 'adafactor', true, 3]);
  assert.equal(unpacked.peakAllocated, written.peakAllocated);
});

test('A dict the script builds, unpacked beside written keywords: both are read', async () => {
  const result = await estimateText(trainerScript([], [
    'common = dict(per_device_train_batch_size=12, optim="adafactor")',
    'extra = {"gradient_accumulation_steps": 3, "gradient_checkpointing": True}',
    'args = TrainingArguments("/tmp/out", bf16=True, max_steps=4, **common, **extra)',
  ]), '/tmp/trainer_dict_splat.py');
  assert.deepEqual(trainerSettings(result), [12, 'bf16-amp', 'adafactor', true, 3]);
  // Without the dicts, nothing of theirs is read: the Trainer's defaults.
  const without = await estimateText(trainerScript([], ['args = TrainingArguments("/tmp/out", bf16=True, max_steps=4)']), '/tmp/trainer_no_splat.py');
  assert.deepEqual(trainerSettings(without), [8, 'bf16-amp', 'adamw', false, 1]);
});

test('The program model binds a keyword unpacked from **d, a written one read from its expression', async () => {
  const text = [
    'def f(**kw):',
    '    return kw',
    'opts = {"width": 64, "heads": 4}',
    'r = f(depth=3, **opts)',
  ].join('\n');
  const tree = await parsePython(text);
  assert.ok(tree);
  try {
    const program = new ProgramModel(tree.rootNode);
    const call = tree.rootNode.descendantsOfType('call').find((node) => node?.text.startsWith('f('));
    assert.ok(call);
    const number = (key: string): unknown => { const v = program.keywordOf(call, key); return v?.kind === 'number' ? v.value : v?.kind; };
    assert.deepEqual([number('width'), number('depth'), number('missing')], [64, 3, undefined]);
    assert.deepEqual([...(program.unpackedKeywords(call)?.keys() ?? [])], ['width', 'heads']);
  } finally {
    tree.delete();
  }
});
