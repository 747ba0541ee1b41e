import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { findVisionModel } from '../../server/src/estimator/catalog/vision';
import { countTransformerParameters } from '../../server/src/estimator/transformer';

function parametersOf(name: string, numClasses = 1000): number | undefined {
  const model = findVisionModel(name);
  if (!model) return undefined;
  const spec = model.build(model.imageSize ?? 224, numClasses);
  return spec.kind === 'layers' ? spec.parameters : countTransformerParameters(spec).total;
}

test('timm and torchvision ViT names carry their size, patch and image size: the parameters follow (published counts)', () => {
  // timm's counts for these names (the position embedding grows with the image size).
  assert.equal(parametersOf('vit_base_patch16_384'), 86_859_496);
  assert.equal(parametersOf('timm/vit_large_patch16_384.augreg_in21k_ft_in1k'), 304_715_752);
  assert.equal(parametersOf('vit_small_patch16_384'), 22_196_584);
  assert.equal(parametersOf('deit_base_patch16_384'), 86_859_496);
  assert.equal(parametersOf('vit_base_patch8_224'), 86_576_872);
  // torchvision's constructors (built for 224).
  assert.equal(parametersOf('vit_l_32'), 306_535_400);
  assert.equal(parametersOf('vit_h_14'), 632_045_800);
  assert.equal(findVisionModel('vit_base_patch16_384')?.imageSize, 384);
  // Not a plain ViT name: not guessed.
  assert.equal(findVisionModel('vit_base_patch16_clip_224'), undefined);
  assert.equal(findVisionModel('deit_huge_patch16_224'), undefined);
});

test('EfficientNetV2, ResNeXt, VGG and MobileNetV3 are built from their architecture (torchvision\'s published counts)', () => {
  assert.equal(parametersOf('efficientnet_v2_s'), 21_458_488);
  assert.equal(parametersOf('efficientnet_v2_m'), 54_139_356);
  assert.equal(parametersOf('efficientnet_v2_l'), 118_515_272);
  assert.equal(parametersOf('resnext50_32x4d'), 25_028_904);
  assert.equal(parametersOf('resnext101_32x8d'), 88_791_336);
  assert.equal(parametersOf('resnext101_64x4d'), 83_455_272);
  assert.equal(parametersOf('vgg16_bn'), 138_365_992);
  assert.equal(parametersOf('mobilenet_v3_large'), 5_483_032);
  assert.equal(parametersOf('timm/tf_efficientnetv2_s.in1k'), 21_458_488);
  // VGG's adaptive pool makes 7x7 whatever the input: a CIFAR-sized image gives the same parameters, finite activations.
  const cifar = findVisionModel('vgg16')!.build(32, 10);
  assert.ok(cifar.kind === 'layers' && cifar.parameters === parametersOf('vgg16', 10) && Number.isFinite(cifar.savedElementsPerSample));
  // Activations scale with the image: four times the pixels, about four times what backward keeps.
  const small = findVisionModel('efficientnet_v2_s')!.build(192, 10);
  const large = findVisionModel('efficientnet_v2_s')!.build(384, 10);
  assert.ok(small.kind === 'layers' && large.kind === 'layers');
  if (small.kind === 'layers' && large.kind === 'layers') {
    assert.ok(Math.abs(large.savedElementsPerSample / small.savedElementsPerSample - 4) < 0.1);
  }
});

test('a torchvision model picked by name through models.__dict__[...] or vars(models)[...]', async () => {
  for (const lookup of ['models.__dict__[ARCH]', 'vars(models)[ARCH]']) {
    const text = [
      'import torch',
      'from torchvision import models',
      'ARCH = "resnext50_32x4d"',
      `net = ${lookup}(num_classes=10).cuda()`,
      'opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True)',
      'for _ in range(2):',
      '    x = torch.randn(8, 3, 160, 160, device="cuda")',
      '    loss = net(x).sum()',
      '    opt.zero_grad()',
      '    loss.backward()',
      '    opt.step()',
    ].join('\n');
    const r = await estimateText(text, '/tmp/arch_by_name.py');
    assert.equal(r.detected.model.name, 'resnext50_32x4d', lookup);
    assert.equal(r.detected.model.source, 'torchvision');
    assert.equal(r.detected.optimizer.value, 'sgd-momentum');
    assert.equal(r.detected.imageSize?.value, 160);
  }
});

test('the image transforms give the size the model sees, not the stored images\' size; a crop before a resize', async () => {
  const text = [
    'import torch',
    'import torchvision',
    'from torchvision.transforms import v2',
    'from torch.utils.data import DataLoader, Dataset',
    'class Images(Dataset):',
    '    def __init__(self, tf):',
    '        self.tf = tf',
    '    def __len__(self):',
    '        return 64',
    '    def __getitem__(self, i):',
    '        return self.tf(torch.randint(0, 256, (3, 320, 320), dtype=torch.uint8)), 0',
    'train_tf = v2.Compose([v2.Resize(288), v2.RandomCrop(256), v2.ToDtype(torch.float32, scale=True)])',
    'val_tf = v2.Compose([v2.Resize(300), v2.CenterCrop(288)])',
    'loader = DataLoader(Images(train_tf), batch_size=16)',
    'model = torchvision.models.resnet18().cuda()',
    'opt = torch.optim.SGD(model.parameters(), lr=0.1)',
    'for x, y in loader:',
    '    loss = model(x.cuda()).sum()',
    '    opt.zero_grad()',
    '    loss.backward()',
    '    opt.step()',
  ].join('\n');
  const r = await estimateText(text, '/tmp/transform_size.py');
  assert.equal(r.detected.imageSize?.value, 256);
  assert.equal(r.detected.imageSize?.line, 12);
  // A batch made as the model takes it (float, in the step) is what it sees, whatever transforms are defined.
  const fed = text.replace('for x, y in loader:', 'for _ in range(4):\n    x = torch.randn(16, 3, 160, 160)');
  assert.equal((await estimateText(fed, '/tmp/transform_unused.py')).detected.imageSize?.value, 160);
});

test('timm\'s data config gives the model\'s own input size where the transforms take theirs from it', async () => {
  const text = [
    'import timm',
    'import torch',
    'from timm.data import resolve_model_data_config',
    'from torchvision.transforms import v2',
    'model = timm.create_model("vit_small_patch16_384", num_classes=10).cuda()',
    'cfg = resolve_model_data_config(model)',
    'tf = v2.Compose([v2.RandomResizedCrop(cfg["input_size"][1:]), v2.ToDtype(torch.float32, scale=True)])',
    'opt = torch.optim.AdamW(model.parameters(), lr=1e-4)',
    'for _ in range(2):',
    '    img = torch.randint(0, 256, (3, 512, 512), dtype=torch.uint8)',
    '    x = torch.stack([tf(img) for _ in range(4)]).cuda()',
    '    loss = model(x).sum()',
    '    opt.zero_grad()',
    '    loss.backward()',
    '    opt.step()',
  ].join('\n');
  const r = await estimateText(text, '/tmp/timm_data_config.py');
  assert.equal(r.detected.model.name, 'vit_small_patch16_384');
  assert.equal(r.detected.imageSize?.value, 384);
  assert.equal(r.detected.imageSize?.line, 6);
  // 22,196,584 at 1000 classes; a 10-class head instead.
  assert.equal(r.detected.parameters, 22_196_584 - 990 * 384 - 990);
});

/** A small MLP trained with the given optimizer line: the estimate's optimizer-state bytes. */
async function optimizerRun(optimizer: string): Promise<{ kind: string; states: number; params: number; assumptions: string[] }> {
  const text = [
    'import torch',
    'import torch.nn as nn',
    'model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024)).cuda()',
    `opt = ${optimizer}`,
    'for _ in range(3):',
    '    opt.zero_grad()',
    '    x = torch.randn(32, 1024, device="cuda")',
    '    loss = model(x).pow(2).mean()',
    '    loss.backward()',
    '    opt.step()',
  ].join('\n');
  const r = await estimateText(text, '/tmp/optimizer_states.py');
  return { kind: r.detected.optimizer.value, states: r.breakdown!.optimizerStates, params: r.detected.parameters!, assumptions: r.assumptions };
}

test('RMSprop, Adagrad, SGD with Nesterov momentum and AMSGrad Adam are read, and their states sized from their arguments', async () => {
  const plain = await optimizerRun('torch.optim.RMSprop(model.parameters(), lr=1e-3)');
  assert.equal(plain.kind, 'rmsprop');
  assert.equal(plain.states, plain.params * 4); // square_avg
  const momentum = await optimizerRun('torch.optim.RMSprop(model.parameters(), lr=1e-3, alpha=0.9, momentum=0.9)');
  assert.equal(momentum.states, momentum.params * 8); // + momentum_buffer
  const centered = await optimizerRun('torch.optim.RMSprop(model.parameters(), momentum=0.9, centered=True)');
  assert.equal(centered.states, centered.params * 12); // + grad_avg
  const adagrad = await optimizerRun('torch.optim.Adagrad(model.parameters(), lr=1e-2)');
  assert.equal(adagrad.kind, 'adagrad');
  assert.equal(adagrad.states, adagrad.params * 4); // state_sum
  const nesterov = await optimizerRun('torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)');
  assert.equal(nesterov.kind, 'sgd-momentum');
  assert.equal(nesterov.states, nesterov.params * 4);
  const amsgrad = await optimizerRun('torch.optim.Adam(model.parameters(), amsgrad=True)');
  assert.equal(amsgrad.states, amsgrad.params * 12); // + max_exp_avg_sq
  for (const run of [plain, momentum, centered, adagrad, nesterov, amsgrad]) assert.deepEqual(run.assumptions, []);
});

test('an optimizer whose states are not modelled is named in the assumptions, not taken silently for AdamW', async () => {
  const run = await optimizerRun('torch.optim.Rprop(model.parameters())');
  assert.equal(run.kind, 'adamw');
  assert.ok(run.assumptions.some((a) => a.includes('Rprop') && a.includes('AdamW')), run.assumptions.join('\n'));
  assert.ok(!run.assumptions.some((a) => a.includes('not found')));
});
