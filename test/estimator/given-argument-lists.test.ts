// A script that hands argparse its own argument list (the run it keeps, overridable from the environment) runs with
// those values, not the parser's defaults: `parse_args(shlex.split(os.environ.get("RUN_ARGS", "...")))` and a list
// literal, with `--opt=value`, short options, `dest=`, store_true and nargs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { shellWords } from '../../server/src/engine/program/argv';

const script = (given: string) => `import argparse
import os
import shlex

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--width", type=int, default=64)
parser.add_argument("-n", "--rows", type=int, default=8, dest="batch_size")
parser.add_argument("--size", type=int, default=32)
parser.add_argument("--hidden", type=int, nargs="+", default=[16])
parser.add_argument("--deep", action="store_true")
args = parser.parse_args(${given})

layers = [nn.Conv2d(3, args.width, 3, padding=1), nn.ReLU()]
for h in args.hidden:
    layers += [nn.Conv2d(args.width, h, 1), nn.ReLU()]
    args.width = h
if args.deep:
    layers += [nn.Conv2d(args.width, args.width, 3, padding=1)]
model = nn.Sequential(*layers).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x = torch.randn(args.batch_size, 3, args.size, args.size, device="cuda")
    loss = model(x).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

/** Conv parameters for the given widths: the stem, the 1x1 stages, the optional 3x3. */
function parameters(width: number, hidden: number[], deep: boolean): number {
  let total = 3 * width * 9 + width;
  let cin = width;
  for (const h of hidden) {
    total += cin * h + h;
    cin = h;
  }
  return deep ? total + cin * cin * 9 + cin : total;
}

test('shell words split as shlex does: quotes group, backslashes escape', () => {
  assert.deepEqual(shellWords(`--name "two words" -x=1  'a b'\\ c`), ['--name', 'two words', '-x=1', 'a b c']);
  assert.deepEqual(shellWords('  '), []);
});

test('the arguments a script splits from an environment default replace the parser defaults', async () => {
  const estimate = await estimateText(script(`shlex.split(os.environ.get("RUN_ARGS", "--width 48 -n 24 --size=96 --hidden 32 40 --deep"))`), 'given_args_env.py');
  assert.equal(estimate.detected.batchSize.value, 24);
  assert.equal(estimate.detected.imageSize?.value, 96);
  assert.equal(estimate.detected.parameters, parameters(48, [32, 40], true));
});

test('a list literal handed to parse_args sets only the options it names', async () => {
  const estimate = await estimateText(script(`["-n", "12"]`), 'given_args_list.py');
  assert.equal(estimate.detected.batchSize.value, 12);
  assert.equal(estimate.detected.imageSize?.value, 32);
  assert.equal(estimate.detected.parameters, parameters(64, [16], false));
});

test('parse_args() with no list keeps the defaults', async () => {
  const estimate = await estimateText(script(''), 'given_args_none.py');
  assert.equal(estimate.detected.batchSize.value, 8);
  assert.equal(estimate.detected.parameters, parameters(64, [16], false));
});
