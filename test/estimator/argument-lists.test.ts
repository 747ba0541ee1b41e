// Argument lists a script hands to argparse itself (`parse_args(["--arch", ...])`, `parse_args(sys.argv[1:] or
// ["@run.args"])` with fromfile_prefix_chars): read as argparse reads them, the CLI running the script with an empty
// command line; a list the script does not determine leaves the defaults, and the estimate says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { estimateText } from './helpers';

/** A torchvision classifier named by `--arch`, trained on random images at `--batch-size` x `--img-size`. */
function script(parse: string, parserArgs = ''): string {
  return [
    'import argparse, sys',
    'import torch',
    'import torch.nn.functional as F',
    'from torchvision import models',
    'def get_args():',
    `    p = argparse.ArgumentParser(${parserArgs})`,
    '    p.add_argument("--arch", default="resnet18")',
    '    p.add_argument("-b", "--batch-size", type=int, default=64, dest="batch_size")',
    '    p.add_argument("--img-size", type=int, default=224)',
    '    p.add_argument("--classes", type=int, default=1000)',
    '    p.add_argument("--amp", action="store_true")',
    `    return ${parse}`,
    'args = get_args()',
    'model = getattr(models, args.arch)(weights=None, num_classes=args.classes).cuda()',
    'opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)',
    'for _ in range(3):',
    '    x = torch.randn(args.batch_size, 3, args.img_size, args.img_size, device="cuda")',
    '    y = torch.randint(0, args.classes, (args.batch_size,), device="cuda")',
    '    with torch.autocast("cuda", enabled=args.amp):',
    '        loss = F.cross_entropy(model(x), y)',
    '    opt.zero_grad()',
    '    loss.backward()',
    '    opt.step()',
  ].join('\n');
}

function folderWith(files: Record<string, string>): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-argv-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(folder, name)), { recursive: true });
    fs.writeFileSync(path.join(folder, name), text);
  }
  return folder;
}

test('a literal argument list given to parse_args sets the values it names, by flag, prefix, short flag and =', async () => {
  const result = await estimateText(script('p.parse_args(["--arch", "mobilenet_v2", "-b", "32", "--img=160", "--classes", "10", "--amp"])'), '/tmp/oomguard-argv-none/train.py');
  assert.equal(result.detected.model?.name, 'mobilenet_v2');
  assert.equal(result.detected.model?.how, 'call-argument');
  assert.equal(result.detected.batchSize.value, 32);
  assert.equal(result.detected.batchSize.how, 'call-argument');
  assert.equal(result.detected.imageSize?.value, 160);
  assert.equal(result.detected.precision.value, 'fp16-amp');
});

test('`sys.argv[1:] or ["@file"]` reads the arguments file beside the script, one argument a line', async () => {
  const folder = folderWith({ 'configs/small.args': '--arch\nshufflenet_v2_x1_0\n--batch-size\n128\n--classes\n200\n' });
  const result = await estimateText(script('p.parse_args(sys.argv[1:] or ["@configs/small.args"])', 'fromfile_prefix_chars="@"'), path.join(folder, 'train.py'));
  assert.equal(result.detected.model?.name, 'shufflenet_v2_x1_0');
  assert.equal(result.detected.model?.how, 'config');
  assert.equal(result.detected.batchSize.value, 128);
  assert.equal(result.detected.batchSize.how, 'config');
  assert.equal(result.detected.imageSize?.value, 224);
  assert.equal(result.detected.imageSize?.how, 'argparse-default');
  assert.ok(!result.assumptions.some((a) => /parse_args/.test(a)), result.assumptions.join('; '));
});

test('without fromfile_prefix_chars, "@file" is an ordinary positional argument the parser rejects: defaults, said', async () => {
  const folder = folderWith({ 'small.args': '--arch\nshufflenet_v2_x1_0\n' });
  const result = await estimateText(script('p.parse_args(["@small.args"])'), path.join(folder, 'train.py'));
  assert.equal(result.detected.model?.name, 'resnet18');
  assert.equal(result.detected.model?.how, 'argparse-default');
  assert.equal(result.detected.batchSize.how, 'argparse-default');
  assert.ok(result.assumptions.some((a) => /parse_args \(line 12\).*"@small\.args".*argparse defaults/.test(a)), result.assumptions.join('; '));
});

test('an arguments file that is not found, or a list the script does not determine, leaves the defaults and says so', async () => {
  const missing = await estimateText(script('p.parse_args(["@nowhere.args"])', 'fromfile_prefix_chars="@"'), path.join(folderWith({}), 'train.py'));
  assert.equal(missing.detected.batchSize.value, 64);
  assert.equal(missing.detected.batchSize.how, 'argparse-default');
  assert.ok(missing.assumptions.some((a) => /"@nowhere\.args" could not be read/.test(a)), missing.assumptions.join('; '));
  const opaque = await estimateText(script('p.parse_args(open("argv.txt").read().split())'), '/tmp/oomguard-argv-none/train.py');
  assert.equal(opaque.detected.model?.name, 'resnet18');
  assert.ok(opaque.assumptions.some((a) => /does not determine: the argparse defaults are used/.test(a)), opaque.assumptions.join('; '));
});

test('parse_args() and parse_args(None) read the empty command line: the defaults, nothing to say', async () => {
  for (const parse of ['p.parse_args()', 'p.parse_args(None)', 'p.parse_args(sys.argv[1:])', 'p.parse_known_args()[0]']) {
    const result = await estimateText(script(parse), '/tmp/oomguard-argv-none/train.py');
    assert.equal(result.detected.model?.name, 'resnet18', parse);
    assert.equal(result.detected.batchSize.value, 64, parse);
    assert.ok(!result.assumptions.some((a) => /parse_args/.test(a)), `${parse}: ${result.assumptions.join('; ')}`);
  }
});

test('parse_known_args keeps arguments it does not know as extras and reads the rest', async () => {
  const result = await estimateText(script('p.parse_known_args(["--local-rank=0", "--batch-size", "16"])[0]'), '/tmp/oomguard-argv-none/train.py');
  assert.equal(result.detected.batchSize.value, 16);
  assert.ok(!result.assumptions.some((a) => /parse_args/.test(a)), result.assumptions.join('; '));
});
