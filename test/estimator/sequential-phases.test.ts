// Scripts that train library models one after the other, each by an optimizer of its own (a teacher trained first,
// then frozen and distilled into a student): the estimate is of the phase of the larger model, with the weights of
// the models trained before it; freezing a model once its phase is over freezes nothing of that phase.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const batch = [
  '    x = torch.randn(64, 3, 96, 96, device="cuda")',
  '    y = torch.randint(0, 10, (64,), device="cuda")',
];
const head = (first: string, second: string): string[] => [
  'import torch',
  'import torch.nn.functional as F',
  'import torchvision',
  '',
  `net_a = torchvision.models.${first}(num_classes=10).cuda()`,
  'opt_a = torch.optim.SGD(net_a.parameters(), lr=0.1, momentum=0.9)',
];
const sequential = (first: string, second: string): string => [
  ...head(first, second),
  'for _ in range(5):',
  ...batch,
  '    loss = F.cross_entropy(net_a(x), y)',
  '    opt_a.zero_grad()',
  '    loss.backward()',
  '    opt_a.step()',
  '',
  'net_a.eval()',
  'for p in net_a.parameters():',
  '    p.requires_grad = False',
  `net_b = torchvision.models.${second}(num_classes=10).cuda()`,
  'opt_b = torch.optim.Adam(net_b.parameters(), lr=1e-3)',
  'for _ in range(5):',
  ...batch,
  '    with torch.no_grad():',
  '        soft = net_a(x).softmax(-1)',
  '    loss = F.kl_div(net_b(x).log_softmax(-1), soft, reduction="batchmean")',
  '    opt_b.zero_grad()',
  '    loss.backward()',
  '    opt_b.step()',
].join('\n');
const together = (first: string, second: string): string => [
  ...head(first, second),
  `net_b = torchvision.models.${second}(num_classes=10).cuda()`,
  'opt_b = torch.optim.Adam(net_b.parameters(), lr=1e-3)',
  'for _ in range(5):',
  ...batch,
  '    loss = F.cross_entropy(net_a(x), y) + F.cross_entropy(net_b(x), y)',
  '    opt_a.zero_grad()',
  '    opt_b.zero_grad()',
  '    loss.backward()',
  '    opt_a.step()',
  '    opt_b.step()',
].join('\n');

test('models trained in sequence: the larger phase is estimated, with the models trained before it', async () => {
  // The larger model trained first: its own phase, trained whole by SGD with momentum, though frozen afterwards.
  const first = await estimateText(sequential('resnet50', 'resnet18'), '/tmp/phases_first.py');
  assert.equal(first.detected.model.name, 'resnet50');
  assert.equal(first.detected.optimizer.value, 'sgd-momentum');
  assert.equal(first.detected.trainableParameters, first.detected.parameters);
  assert.equal(first.config.modelCopies ?? 0, 0);
  assert.ok(first.assumptions.some((line) => /one after the other/.test(line)), first.assumptions.join('\n'));
  // The larger model trained second: its phase, with the weights of the model trained (and frozen) before it.
  const second = await estimateText(sequential('resnet18', 'resnet50'), '/tmp/phases_second.py');
  assert.equal(second.detected.model.name, 'resnet50');
  assert.equal(second.detected.optimizer.value, 'adam');
  assert.equal(second.detected.parameters, first.detected.parameters);
  assert.equal(second.detected.trainableParameters, second.detected.parameters);
  // resnet18 with 10 classes: 11,181,642 parameters, in units of resnet50's.
  assert.equal(second.config.modelCopies, 11_181_642 / second.detected.parameters);
  // Trained in one step (mutual learning): no phases.
  const joint = await estimateText(together('resnet50', 'resnet18'), '/tmp/phases_joint.py');
  assert.ok(!joint.assumptions.some((line) => /one after the other/.test(line)), joint.assumptions.join('\n'));
});
