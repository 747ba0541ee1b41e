// An encoder-decoder the script writes itself takes each side's length from the data its step receives: the
// source's and the decoder input's (`tgt[:, :-1]`, BOS + `tgt[:, :-1]`), as the loader's dataset or its collate_fn
// make them, and the estimate says where each was found.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parsePython } from '../../server/src/engine/parser';
import { ProgramModel } from '../../server/src/engine/program/interpreter';
import { isIntegerTensor } from '../../server/src/engine/program/values';
import { toEstimateJson } from '../../server/src/estimator/index';
import type { LayerNetSpec } from '../../server/src/estimator/types';
import { estimateFixture, fixturesDir } from './helpers';

/** The 1-based line of the first line of a fixture that holds `text`. */
function lineOf(fixture: string, text: string): number {
  const lines = fs.readFileSync(path.join(fixturesDir, fixture), 'utf8').split('\n');
  const index = lines.findIndex((line) => line.includes(text));
  assert.ok(index >= 0, `${text} not in ${fixture}`);
  return index + 1;
}

test('a Dataset padding sources and targets to lengths of their own: the decoder runs over tgt[:, :-1], not the source\'s length', async () => {
  const fixture = 'seq2seq-lengths/dataset_teacher_forcing.py';
  const r = await estimateFixture(fixture);
  const json = toEstimateJson(r).detected;
  assert.equal(json.seqLen?.value, 192);
  assert.equal(json.seqLen?.how, 'config');
  // 48 target tokens, the last dropped by the step's slice.
  assert.equal(json.targetLen?.value, 47);
  assert.equal(json.targetLen?.how, 'config');
  const [configStart, configEnd] = [lineOf(fixture, 'CONFIG = {'), lineOf(fixture, '"batch": 16')];
  for (const line of [json.seqLen?.line, json.targetLen?.line]) assert.ok(line !== null && line !== undefined && line >= configStart && line <= configEnd, `line ${line}`);
  const spec = r.config.model as LayerNetSpec;
  assert.equal(spec.targetTokens, 47);
  // The logits are the decoder's: 47 positions of the 8,000-word vocabulary a sample.
  assert.equal(spec.outputElementsPerSample, 47 * 8000);
});

test('a collate_fn padding to two lengths from argparse: each side traced at its own, BOS + tgt[:, :-1] as long as the targets', async () => {
  const fixture = 'seq2seq-lengths/collate_padding.py';
  const r = await estimateFixture(fixture);
  const json = toEstimateJson(r).detected;
  assert.deepEqual(json.seqLen, { value: 160, line: lineOf(fixture, '"--src-pad-to"'), how: 'argparse-default' });
  assert.deepEqual(json.targetLen, { value: 40, line: lineOf(fixture, '"--tgt-pad-to"'), how: 'argparse-default' });
  const spec = r.config.model as LayerNetSpec;
  assert.equal(spec.outputElementsPerSample, 40 * 6000);
});

test('torch.full takes its dtype from the fill value: a Python int makes int64 ids, a float (or a dtype) says otherwise', async () => {
  const tree = await parsePython([
    'import torch',
    'PAD = 0',
    'ids = torch.full((16,), PAD)',
    'negative = torch.full((16,), -100)',
    'mask = torch.full((16,), -1e9)',
    'ones = torch.full((16,), 1.0)',
    'halves = torch.full((16,), PAD / 2)',
    'typed = torch.full((16,), 0, dtype=torch.float32)',
  ].join('\n'));
  assert.ok(tree);
  try {
    const program = new ProgramModel(tree.rootNode);
    const integer = (name: string): boolean | undefined => {
      const value = program.assigned.get(name)?.[0];
      return value?.kind === 'call' ? isIntegerTensor(value) : undefined;
    };
    assert.equal(integer('ids'), true);
    assert.equal(integer('negative'), true);
    assert.equal(integer('mask'), false);
    assert.equal(integer('ones'), false);
    assert.equal(integer('halves'), false);
    assert.equal(integer('typed'), false);
  } finally {
    tree.delete();
  }
});
