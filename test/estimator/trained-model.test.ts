// Which model the step trains, and what the script's own program decides about it: the model whose parameters reach
// the optimizer (not the first one built), layers a module makes through setattr, torch.nn's composite Transformer,
// and model configurations a script reads from a Python file. Figures are computed by hand in the comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { estimateText } from './helpers';

test('distillation between Hugging Face models: the one the optimizer holds is trained, the frozen one costs its weights', async () => {
  const script = (teacherFirst: boolean) => {
    const teacher = [
      'big = AutoModelForCausalLM.from_pretrained("gpt2").to("cuda")',
      'big.eval()',
      'big.requires_grad_(False)',
    ];
    const student = ['small = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=256, n_head=4)).to("cuda")'];
    return [
      'import torch',
      'from transformers import AutoModelForCausalLM, GPT2Config, GPT2LMHeadModel',
      ...(teacherFirst ? [...teacher, ...student] : [...student, ...teacher]),
      'optim = torch.optim.AdamW(small.parameters(), lr=3e-4)',
      'for _ in range(4):',
      '    ids = torch.randint(0, 50257, (8, 128), device="cuda")',
      '    with torch.no_grad():',
      '        soft = big(ids).logits.softmax(-1)',
      '    out = small(ids).logits.log_softmax(-1)',
      '    loss = torch.nn.functional.kl_div(out, soft, reduction="batchmean")',
      '    optim.zero_grad()',
      '    loss.backward()',
      '    optim.step()',
    ].join('\n');
  };
  for (const teacherFirst of [true, false]) {
    const result = await estimateText(script(teacherFirst), '/tmp/hf_distill.py');
    // The student: token table 50,257 x 256 = 12,865,792, positions 1,024 x 256 = 262,144, two blocks of
    // 12 x 256^2 + 13 x 256 = 789,760 each, the final norm 512 (the head shares the token table): 14,707,968.
    assert.equal(result.detected.parameters, 14_707_968, `teacher first: ${teacherFirst}`);
    // Freezing the teacher freezes nothing the optimizer updates.
    assert.equal(result.detected.trainableParameters, 14_707_968);
    // gpt2 (124,439,808 parameters) stays on the GPU beside it: its weights count, in units of the student's.
    assert.equal(result.config.modelCopies, 124_439_808 / 14_707_968);
  }
  // The teacher loaded in bf16: the student keeps its fp32 weights, and the teacher costs 2 bytes a parameter.
  const bf16Teacher = await estimateText(script(true).replace('from_pretrained("gpt2")', 'from_pretrained("gpt2", torch_dtype=torch.bfloat16)'), '/tmp/hf_distill_bf16.py');
  assert.equal(bf16Teacher.config.weightDtype, 'fp32');
  assert.equal(bf16Teacher.config.modelCopies, (124_439_808 / 2) / 14_707_968);
});

const seq2seq = (core: string, call: string) => `import torch
import torch.nn as nn

class Translator(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(1000, 64)
${core}
        self.out = nn.Linear(64, 1000)

    def forward(self, src, tgt):
        a, b = self.embed(src), self.embed(tgt)
        return self.out(${call})

net = Translator().cuda()
opt = torch.optim.Adam(net.parameters())
for _ in range(3):
    src = torch.randint(0, 1000, (32, 48), device="cuda")
    tgt = torch.randint(0, 1000, (32, 48), device="cuda")
    loss = nn.functional.cross_entropy(net(src, tgt).flatten(0, 1), tgt.flatten())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('nn.Transformer is its encoder and decoder stacks: parameters and activations as the two stacks written out', async () => {
  const composite = await estimateText(seq2seq(
    '        self.core = nn.Transformer(d_model=64, nhead=4, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=128, batch_first=True)',
    'self.core(a, b)'), '/tmp/composite.py');
  // Encoder layer: attention 4 x 64^2 + 4 x 64 = 16,640, feed-forward 64 x 128 + 128 + 128 x 64 + 64 = 16,576, two
  // norms 256: 33,472. Decoder layer: two attentions 33,280, feed-forward 16,576, three norms 384: 50,240. The two
  // final norms 256. With the table (64,000) and the head (65,000): 2 x 33,472 + 50,240 + 256 + 129,000 = 246,440.
  assert.equal(composite.detected.parameters, 246_440);
  assert.ok(!composite.assumptions.some((line) => /not modelled/.test(line)), composite.assumptions.join('\n'));
  const written = await estimateText(seq2seq([
    '        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, 128, batch_first=True), 2, norm=nn.LayerNorm(64))',
    '        self.dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(64, 4, 128, batch_first=True), 1, norm=nn.LayerNorm(64))',
  ].join('\n'), 'self.dec(b, self.enc(a))'), '/tmp/written.py');
  assert.equal(written.detected.parameters, 246_440);
  assert.equal(composite.peakAllocated, written.peakAllocated);
  assert.equal(composite.breakdown.activations, written.breakdown.activations);
});

const spectrogramNet = (build: string, use: string) => `import torch
import torch.nn as nn
import torch.nn.functional as F

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        cin = 1
        for i, cout in enumerate([16, 32, 32]):
${build}
            cin = cout
        self.rnn = nn.GRU(32 * 8, 64, batch_first=True)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        for i in range(3):
${use}
        b, c, f, t = x.shape
        x, _ = self.rnn(x.permute(0, 3, 1, 2).reshape(b, t, c * f))
        return self.head(x).mean(1)

net = Tagger().cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    x = torch.randn(16, 1, 64, 1024, device="cuda")
    loss = F.cross_entropy(net(x), torch.randint(0, 10, (16,), device="cuda"))
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('layers registered with setattr and called through getattr are traced; a pooling window per dimension pools each its own', async () => {
  const viaSetattr = await estimateText(spectrogramNet(
    '            setattr(self, f"conv{i}", nn.Conv2d(cin, cout, 3, padding=1))\n            setattr(self, f"pool{i}", nn.MaxPool2d((2, 1)))',
    '            x = getattr(self, f"pool{i}")(F.relu(getattr(self, f"conv{i}")(x)))'), '/tmp/setattr.py');
  const viaList = await estimateText(spectrogramNet(
    '            if i == 0:\n                self.convs = nn.ModuleList()\n            self.convs.append(nn.Conv2d(cin, cout, 3, padding=1))',
    '            x = F.max_pool2d(F.relu(self.convs[i](x)), (2, 1))'), '/tmp/modulelist.py');
  // Convolutions 160 + 4,640 + 9,248; the GRU 3 x 64 x (256 + 64) + 6 x 64 = 61,824; the head 650: 76,522.
  assert.equal(viaSetattr.detected.parameters, 76_522);
  assert.equal(viaList.detected.parameters, 76_522);
  // The same layers, the same shapes: the same activations whichever way the layers are registered and pooled.
  assert.equal(viaSetattr.breakdown.activations, viaList.breakdown.activations);
  // Pooling (2, 1) halves the frequencies only: the 1,024 frames reach the GRU (8 x 1,024 steps of 256 features).
  // A square window of 2 would leave 128 frames; the activations after each pool would be half as large or less.
  const square = await estimateText(spectrogramNet(
    '            setattr(self, f"conv{i}", nn.Conv2d(cin, cout, 3, padding=1))\n            setattr(self, f"pool{i}", nn.MaxPool2d(2))',
    '            x = getattr(self, f"pool{i}")(F.relu(getattr(self, f"conv{i}")(x)))'), '/tmp/square.py');
  assert.ok(viaSetattr.breakdown.activations > 1.5 * square.breakdown.activations,
    `${viaSetattr.breakdown.activations} vs ${square.breakdown.activations}`);
});

test('a model built through a registry from a config the estimator cannot read is unresolved, never the default backbone of one of its parts', async () => {
  const script = (build: string) => `import importlib
import sys
import torch
import torch.nn as nn
import torchvision

PARTS = {}

def register(cls):
    PARTS[cls.__name__] = cls
    return cls

@register
class Encoder(nn.Module):
    def __init__(self, arch="resnet18"):
        super().__init__()
        self.net = getattr(torchvision.models, arch)(weights=None)

    def forward(self, x):
        return self.net(x)

${build}
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 3, 224, 224, device="cuda")
loss = model(x).mean()
loss.backward()
opt.step()
`;
  // The settings come from a Python module named on the command line: nothing the source determines builds the model.
  const unreadable = await estimateText(script([
    'settings = importlib.import_module(sys.argv[1])',
    'spec = dict(settings.MODEL)',
    'model = PARTS[spec.pop("type")](**spec).cuda()',
  ].join('\n')), '/tmp/registry_unreadable.py');
  assert.ok(unreadable.unresolved, `resolved as ${unreadable.detected.model.name}`);
  assert.match(unreadable.unresolved.reason, /optimizer gets \(model, line \d+\)/);
  // Built from values the script gives, the same registry resolves: the module around the library model is traced.
  const readable = await estimateText(script('model = PARTS["Encoder"](arch="resnet50").cuda()'), '/tmp/registry_readable.py');
  assert.equal(readable.unresolved, undefined);
  // resnet50 with its 1,000 classes: 25,557,032 parameters.
  assert.equal(readable.detected.parameters, 25_557_032);
});

test('a library model named by the default of a builder nothing the script determines calls is unresolved, not that default', async () => {
  const script = (call: string) => `import json
import sys
import torch
import torchvision

def make_net(arch="resnet18", classes=10):
    return getattr(torchvision.models, arch)(weights=None, num_classes=classes)

FACTORIES = {"net": make_net}
${call}
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss = model(torch.randn(8, 3, 224, 224, device="cuda")).mean()
loss.backward()
opt.step()
`;
  // The factory and its arguments come from a JSON file named on the command line: make_net runs with no value
  // the script determines, and its default architecture is not the script's.
  const unknown = await estimateText(script('cfg = json.load(open(sys.argv[1]))\nmodel = FACTORIES[cfg["factory"]](**cfg["args"]).cuda()'), '/tmp/factory_unknown.py');
  assert.ok(unknown.unresolved, `resolved as ${unknown.detected.model.name}`);
  assert.match(unknown.unresolved.reason, /make_net\(\) from its parameter arch/);
  // Called with its defaults by the script itself: resnet18 with 10 classes, 11,181,642 parameters.
  const defaults = await estimateText(script('model = FACTORIES["net"]().cuda()'), '/tmp/factory_defaults.py');
  assert.equal(defaults.unresolved, undefined);
  assert.equal(defaults.detected.parameters, 11_181_642);
});

/** A folder with the script's settings files, as a user's project keeps them beside the script. */
function projectWith(files: Record<string, string>): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-settings-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(folder, name)), { recursive: true });
    fs.writeFileSync(path.join(folder, name), text);
  }
  return folder;
}

const mlpScript = (header: string, width: string, batch: string, optimizer = 'torch.optim.Adam(net.parameters())') => `import os
import torch
import torch.nn as nn
${header}

net = nn.Sequential(nn.Linear(512, ${width}), nn.ReLU(), nn.Linear(${width}, 10)).cuda()
opt = ${optimizer}
for _ in range(3):
    x = torch.randn(${batch}, 512, device="cuda")
    loss = nn.functional.cross_entropy(net(x), torch.randint(0, 10, (${batch},), device="cuda"))
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a Python settings file the script imports or runs is read as Python runs it', async () => {
  const folder = projectWith({
    'settings.py': 'import math\nWIDTH = 2 ** 11\nBATCH = int(math.sqrt(4096))\n',
    'configs/__init__.py': '',
    'configs/small.py': 'model = dict(width=1024)\ndata = dict(batch=32)\noptimizer = dict(type="SGD", lr=0.1, momentum=0.9)\n',
  });
  const script = path.join(folder, 'train.py');
  // 512 x 2,048 + 2,048 + 2,048 x 10 + 10 = 1,071,114 parameters; batch 64.
  for (const [header, width, batch] of [
    ['import settings', 'settings.WIDTH', 'settings.BATCH'],
    ['import settings as S', 'S.WIDTH', 'S.BATCH'],
    ['from settings import WIDTH, BATCH', 'WIDTH', 'BATCH'],
    ['from settings import *', 'WIDTH', 'BATCH'],
  ] as const) {
    const result = await estimateText(mlpScript(header, width, batch), script);
    assert.equal(result.detected.parameters, 1_071_114, header);
    assert.equal(result.detected.batchSize.value, 64, header);
  }
  // 512 x 1,024 + 1,024 + 1,024 x 10 + 10 = 535,562 parameters; batch 32; SGD with momentum, named by the config.
  const ran = [
    ['import runpy\ncfg = runpy.run_path(os.path.join(os.path.dirname(__file__), "configs", "small.py"))', 'cfg["model"]["width"]', 'cfg["data"]["batch"]', 'cfg["optimizer"]'],
    ['import importlib\nmod = importlib.import_module("configs.small")\ncfg = {"model": mod.model, "data": mod.data, "optimizer": mod.optimizer}', 'cfg["model"]["width"]', 'cfg["data"]["batch"]', 'cfg["optimizer"]'],
    ['from configs import small\ncfg = {"model": small.model, "data": small.data, "optimizer": small.optimizer}', 'cfg["model"]["width"]', 'cfg["data"]["batch"]', 'cfg["optimizer"]'],
  ] as const;
  for (const [header, width, batch, optimizer] of ran) {
    const result = await estimateText(mlpScript(`${header}\noptim_cfg = dict(${optimizer})`, width, batch,
      'getattr(torch.optim, optim_cfg.pop("type"))(net.parameters(), **optim_cfg)'), script);
    assert.equal(result.detected.parameters, 535_562, header);
    assert.equal(result.detected.batchSize.value, 32, header);
    assert.equal(result.detected.optimizer.value, 'sgd-momentum', header);
  }
});

test('a settings file with functions or classes of its own is not run: what it would give stays undetermined', async () => {
  const folder = projectWith({ 'helpers.py': 'WIDTH = 2048\n\ndef width():\n    return WIDTH\n' });
  const result = await estimateText(mlpScript('from helpers import WIDTH', 'WIDTH', '64'), path.join(folder, 'train.py'));
  assert.ok(result.unresolved, `resolved with ${result.detected.parameters} parameters`);
  assert.match(result.unresolved.reason, /layer sizes of nn\.Sequential are not values the script determines/);
});

test('a module holding parts of a library model (its stem, its stages) is sized from the catalog; a block inside a stage is unresolved', async () => {
  const script = `import torch
import torch.nn as nn
import torchvision

class Features(nn.Module):
    def __init__(self):
        super().__init__()
        net = torchvision.models.resnet50(weights=None)
        self.stem = nn.Sequential(net.conv1, net.bn1, net.relu, net.maxpool)
        self.stage1, self.stage2 = net.layer1, net.layer2
        self.head = nn.Conv2d(512, 19, 1)

    def forward(self, x):
        return self.head(self.stage2(self.stage1(self.stem(x))))

model = Features().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss = model(torch.randn(4, 3, 256, 256, device="cuda")).mean()
loss.backward()
opt.step()
`;
  const result = await estimateText(script, '/tmp/library_parts.py');
  // ResNet-50's conv1, bn1 and layer1..layer2 (9,536 + 215,808 + 1,219,584), and the script's 1x1 head.
  assert.equal(result.unresolved, undefined);
  assert.equal(result.detected.parameters, 1_444_928 + 512 * 19 + 19);
  const block = await estimateText(script.replace('net.layer1, net.layer2', 'net.layer1, net.layer2[0]'), '/tmp/library_block.py');
  assert.ok(block.unresolved, `resolved with ${block.detected.parameters} parameters`);
  assert.match(block.unresolved.reason, /Features holds parts of a library model that the catalog cannot size \(resnet50\.layer2\.0/);
});
