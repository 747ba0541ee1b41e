// Models defined the way Python lets scripts write them, read as Python runs them: classes that extend torch.nn
// containers and layers (`class Stage(nn.Sequential)`, `class LayerNorm2d(nn.LayerNorm)`), cooperative
// `super().__init__(...)` through a diamond, overridden builder methods, `nn.Sequential(OrderedDict(...))`,
// `functools.partial` as a layer factory, a model zoo of lambdas and partials, `isinstance` in forward, and a deep
// copy of the model kept on the GPU (an EMA model). Each figure follows from the script by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { parsePython } from '../../server/src/engine/parser';
import { ProgramModel } from '../../server/src/engine/program/interpreter';
import type { Value } from '../../server/src/engine/program/values';

const loop = (call: string, batch: string) => `
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    ${batch}
    loss = ${call}.float().pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a subclass of nn.Sequential that passes its layers to super().__init__(*layers) holds them', async () => {
  const script = (stage: string) => `import torch
import torch.nn as nn

${stage}

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.Sequential(Stage(3, 32, 2), Stage(32, 64, 2))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc(self.pool(self.stages(x)).flatten(1))

model = Net().cuda()
${loop('model(x)', 'x = torch.randn(16, 3, 32, 32, device="cuda")')}`;
  const subclass = await estimateText(script(`class Stage(nn.Sequential):
    def __init__(self, cin, cout, depth):
        layers = []
        for i in range(depth):
            layers += [nn.Conv2d(cin if i == 0 else cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
        super().__init__(*layers)`), 'stage_class.py');
  const helper = await estimateText(script(`def Stage(cin, cout, depth):
    layers = []
    for i in range(depth):
        layers += [nn.Conv2d(cin if i == 0 else cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
    return nn.Sequential(*layers)`), 'stage_function.py');
  // 3x32x9 + 64 + 32x32x9 + 64, then 32x64x9 + 128 + 64x64x9 + 128, and the head 64x10 + 10.
  const parameters = 864 + 64 + 9216 + 64 + 18432 + 128 + 36864 + 128 + 650;
  assert.equal(subclass.detected.parameters, parameters);
  assert.equal(helper.detected.parameters, parameters);
  // The subclass's forward is nn.Sequential's: the trace runs the same layers as the helper's Sequential.
  assert.equal(subclass.breakdown.activations, helper.breakdown.activations);
});

test('a subclass of nn.Sequential and a base class, iterated in forward with isinstance (a diffusion U-Net)', async () => {
  const header = `import torch
import torch.nn as nn

class TimestepBlock(nn.Module):
    def forward(self, x, emb):
        raise NotImplementedError

class Res(TimestepBlock):
    def __init__(self, ch, emb_dim):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.emb = nn.Linear(emb_dim, ch)

    def forward(self, x, emb):
        return x + self.conv(x) + self.emb(emb)[:, :, None, None]
`;
  const batch = 'x, e = torch.randn(8, 3, 32, 32, device="cuda"), torch.randn(8, 128, device="cuda")';
  const inherited = await estimateText(`${header}
class TimestepSequential(nn.Sequential, TimestepBlock):
    def forward(self, x, emb):
        for layer in self:
            x = layer(x, emb) if isinstance(layer, TimestepBlock) else layer(x)
        return x

class Net(nn.Module):
    def __init__(self, ch=64, emb_dim=128):
        super().__init__()
        self.time = nn.Linear(emb_dim, emb_dim)
        self.blocks = nn.ModuleList([TimestepSequential(nn.Conv2d(3, ch, 3, padding=1))])
        self.blocks.append(TimestepSequential(Res(ch, emb_dim), nn.SiLU(), Res(ch, emb_dim)))
        self.out = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, x, t_emb):
        emb = self.time(t_emb)
        for blk in self.blocks:
            x = blk(x, emb)
        return self.out(x)

model = Net().cuda()
${loop('model(x, e)', batch)}`, 'timestep_sequential.py');
  const explicit = await estimateText(`${header}
class Net(nn.Module):
    def __init__(self, ch=64, emb_dim=128):
        super().__init__()
        self.time = nn.Linear(emb_dim, emb_dim)
        self.stem = nn.Conv2d(3, ch, 3, padding=1)
        self.res1 = Res(ch, emb_dim)
        self.act = nn.SiLU()
        self.res2 = Res(ch, emb_dim)
        self.out = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, x, t_emb):
        emb = self.time(t_emb)
        x = self.res2(self.act(self.res1(self.stem(x), emb)), emb)
        return self.out(x)

model = Net().cuda()
${loop('model(x, e)', batch)}`, 'timestep_explicit.py');
  // time 128x128 + 128, stem 3x64x9 + 64, two Res blocks of 64x64x9 + 64 and 128x64 + 64, out 64x3x9 + 3.
  const parameters = 16512 + 1792 + 2 * (36928 + 8256) + 1731;
  assert.equal(inherited.detected.parameters, parameters);
  assert.equal(explicit.detected.parameters, parameters);
  // isinstance picks the same calls as the explicit forward: the same tensors are kept.
  assert.equal(inherited.breakdown.activations, explicit.breakdown.activations);
});

test('cooperative super().__init__ through a diamond follows the MRO, and a subclass overrides a builder method', async () => {
  const r = await estimateText(`import torch
import torch.nn as nn

class Base(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.base = nn.Linear(dim, dim)

class WithNorm(Base):
    def __init__(self, dim):
        super().__init__(dim)
        self.norm = nn.LayerNorm(dim)

class WithFfn(Base):
    def __init__(self, dim):
        super(WithFfn, self).__init__(dim)
        self.ffn = self.build_ffn(dim)

    def build_ffn(self, dim):
        return nn.Linear(dim, 4 * dim)

class Block(WithNorm, WithFfn):
    def build_ffn(self, dim):
        return nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        return self.ffn(self.norm(self.base(x)))

model = Block(256).cuda()
${loop('model(x)', 'x = torch.randn(32, 256, device="cuda")')}`, 'diamond.py');
  // Block -> WithNorm -> WithFfn -> Base: WithNorm's super() is WithFfn, not Base, so the FFN is built (Block's).
  assert.equal(r.detected.parameters, (256 * 256 + 256) + (256 * 512 + 512) + (512 * 256 + 256) + 2 * 256);
});

test('nn.Sequential(OrderedDict(...)) built in a loop, with a functools.partial norm-layer factory', async () => {
  const r = await estimateText(`from collections import OrderedDict
from functools import partial
import torch
import torch.nn as nn

Norm = partial(nn.BatchNorm1d, eps=1e-3, momentum=0.01)

def mlp(dims, prefix):
    layers = OrderedDict()
    for i in range(len(dims) - 1):
        layers[f"{prefix}_fc{i}"] = nn.Linear(dims[i], dims[i + 1])
        layers[f"{prefix}_bn{i}"] = Norm(dims[i + 1])
        layers[f"{prefix}_act{i}"] = nn.ReLU()
    return nn.Sequential(layers)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = mlp([64, 256, 256], "body")
        self.head = nn.Sequential(OrderedDict([("fc", nn.Linear(256, 10)), ("out", nn.LogSoftmax(dim=1))]))
        nn.init.zeros_(self.head.fc.weight)

    def forward(self, x):
        return self.head(self.body(x))

model = Net().cuda()
${loop('model(x)', 'x = torch.randn(64, 64, device="cuda")')}`, 'ordered_dict.py');
  // 64x256 + 256 and BatchNorm1d(256), 256x256 + 256 and BatchNorm1d(256), the head 256x10 + 10.
  assert.equal(r.detected.parameters, 16640 + 512 + 65792 + 512 + 2570);
});

test('classes that extend a torch.nn layer (LayerNorm2d, a Linear with its own __init__) hold its parameters', async () => {
  const r = await estimateText(`import torch
import torch.nn as nn

class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = super().forward(x)
        return x.permute(0, 3, 1, 2)

class Proj(nn.Linear):
    def __init__(self, dim):
        super().__init__(dim, dim, bias=False)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 96, 4, stride=4)
        self.norm = LayerNorm2d(96, eps=1e-6)
        self.proj = Proj(96)
        self.head = nn.Linear(96, 10)

    def forward(self, x):
        x = self.norm(self.conv(x))
        return self.head(self.proj(x.mean((2, 3))))

model = Net().cuda()
${loop('model(x)', 'x = torch.randn(16, 3, 64, 64, device="cuda")')}`, 'layer_subclass.py');
  // conv 3x96x16 + 96, LayerNorm 2x96, Proj 96x96 without bias, head 96x10 + 10.
  assert.equal(r.detected.parameters, 4704 + 192 + 9216 + 970);
});

test('a subclass of nn.ModuleList grows by append and is iterated in forward', async () => {
  const r = await estimateText(`import torch
import torch.nn as nn

class Blocks(nn.ModuleList):
    pass

class Net(nn.Module):
    def __init__(self, depth=4):
        super().__init__()
        self.blocks = Blocks()
        for _ in range(depth):
            self.blocks.append(nn.Linear(128, 128))

    def forward(self, x):
        for block in self.blocks:
            x = torch.relu(block(x))
        return x

model = Net().cuda()
${loop('model(x)', 'x = torch.randn(32, 128, device="cuda")')}`, 'module_list_subclass.py');
  assert.equal(r.detected.parameters, 4 * (128 * 128 + 128));
});

const zoo = (arch: string) => `from functools import partial
import timm
import torch
import torch.nn as nn

NUM_CLASSES = 200
MODEL_ZOO = {
    "r50": lambda nc: timm.create_model("resnet50", num_classes=nc),
    "seresnext50": partial(timm.create_model, "seresnext50_32x4d", drop_path_rate=0.1),
    "nope": lambda nc: timm.create_model("not_a_model_anyone_has", num_classes=nc),
}
ARCH = "${arch}"

def build(arch):
    factory = MODEL_ZOO[arch]
    if isinstance(factory, partial):
        return factory(num_classes=NUM_CLASSES)
    return factory(NUM_CLASSES)

model = build(ARCH).cuda()
${loop('model(x)', 'x = torch.randn(16, 3, 256, 256, device="cuda")')}`;

test('a model zoo of lambdas and partial(timm.create_model, ...): the entry the script picks, with its arguments', async () => {
  const partialEntry = await estimateText(zoo('seresnext50'), 'zoo_partial.py');
  assert.equal(partialEntry.unresolved, undefined);
  assert.equal(partialEntry.detected.model.name, 'seresnext50_32x4d');
  // timm's seresnext50_32x4d (27,559,896 with 1000 classes) with a 200-class head: 800 x 2049 fewer.
  assert.equal(partialEntry.detected.parameters, 27_559_896 - 800 * 2049);
  const lambdaEntry = await estimateText(zoo('r50'), 'zoo_lambda.py');
  assert.equal(lambdaEntry.unresolved, undefined);
  assert.equal(lambdaEntry.detected.model.name, 'resnet50');
  assert.equal(lambdaEntry.detected.parameters, 25_557_032 - 800 * 2049);
});

test('a zoo of Hugging Face lambdas: the model the picked lambda loads, not the first one written', async () => {
  const r = await estimateText(`import torch
from transformers import AutoModelForCausalLM

ZOO = {
    "small": lambda: AutoModelForCausalLM.from_pretrained("gpt2"),
    "medium": lambda: AutoModelForCausalLM.from_pretrained("gpt2-medium"),
}
model = ZOO["medium"]().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(3):
    ids = torch.randint(0, 50257, (4, 256), device="cuda")
    loss = model(input_ids=ids, labels=ids).loss
    opt.zero_grad()
    loss.backward()
    opt.step()
`, 'hf_zoo.py');
  assert.equal(r.detected.model.name, 'gpt2-medium');
});

const emaScript = (copy: string) => `import copy
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(1024, 1024)
        self.fc2 = nn.Linear(1024, 1024)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))

device = "cuda"
${copy}
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(3):
    x = torch.randn(8, 1024, device=device)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for pe, p in zip(ema.parameters(), model.parameters()):
            pe.mul_(0.999).add_(p.detach(), alpha=0.001)
`;

test('an EMA copy of the model (copy.deepcopy, AveragedModel) on the GPU: its weights once more, nothing frozen', async () => {
  const parameters = 2 * (1024 * 1024 + 1024);
  const plain = await estimateText(emaScript('model = Net().to(device)\nema = model'), 'no_ema.py');
  const deep = await estimateText(emaScript('model = Net().to(device)\nema = copy.deepcopy(model).eval().requires_grad_(False)'), 'ema_deepcopy.py');
  const loopFrozen = await estimateText(emaScript(`model = Net().to(device)
ema = copy.deepcopy(model)
for p in ema.parameters():
    p.requires_grad = False`), 'ema_loop.py');
  const swa = await estimateText(emaScript('model = Net().to(device)\nema = torch.optim.swa_utils.AveragedModel(model)'), 'ema_swa.py');
  const cpu = await estimateText(emaScript('model = Net()\nema = copy.deepcopy(model).requires_grad_(False)\nmodel.to(device)'), 'ema_cpu.py');
  const moved = await estimateText(emaScript('model = Net()\nema = copy.deepcopy(model).requires_grad_(False)\nmodel.to(device)\nema.to(device)'), 'ema_moved.py');
  for (const r of [plain, deep, loopFrozen, swa, cpu, moved]) {
    assert.equal(r.detected.parameters, parameters);
    // Freezing the copy freezes nothing that is trained: no share of the model is assumed frozen.
    assert.equal(r.detected.trainableParameters, parameters);
    assert.ok(!r.assumptions.some((a) => /frozen/.test(a)), r.assumptions.join('; '));
  }
  for (const r of [deep, loopFrozen, swa, moved]) {
    assert.equal(r.config.modelCopies, 1);
    assert.equal(r.breakdown.weights, 2 * parameters * 4);
    assert.equal(r.breakdown.gradients, plain.breakdown.gradients);
    assert.equal(r.breakdown.optimizerStates, plain.breakdown.optimizerStates);
    assert.equal(r.peakAllocated - plain.peakAllocated, parameters * 4);
  }
  // Copied before the model went to the GPU and never moved: the copy stays in host memory.
  assert.equal(cpu.config.modelCopies, undefined);
  assert.equal(cpu.breakdown.weights, parameters * 4);
  assert.equal(plain.config.modelCopies, undefined);
});

test('a deep copy is a separate model: freezing it leaves the original trainable, and a copy of a copy is counted', async () => {
  const r = await estimateText(emaScript(`model = Net().to(device)
ema = copy.deepcopy(model).requires_grad_(False)
slow = copy.deepcopy(ema)`), 'two_copies.py');
  assert.equal(r.detected.trainableParameters, r.detected.parameters);
  assert.equal(r.config.modelCopies, 2);
});

async function program(source: string): Promise<{ model: ProgramModel; value: (name: string) => Value | undefined; dispose: () => void }> {
  const tree = await parsePython(source);
  if (!tree) throw new Error('parse failed');
  const model = new ProgramModel(tree.rootNode);
  return { model, value: (name) => model.assigned.get(name)?.[0], dispose: () => tree.delete() };
}

test('isinstance, functools.partial and super() evaluate as Python does', async () => {
  const { value, dispose } = await program(`from functools import partial
import torch.nn as nn

class A:
    def __init__(self, n):
        self.n = n

class B(A):
    def __init__(self):
        super().__init__(5)

class C(nn.Sequential):
    pass

f = partial(max, 3)
r1 = isinstance(B(), A)
r2 = isinstance(A(1), B)
r3 = isinstance(f, partial)
r4 = isinstance(nn.Linear(2, 2), nn.Module)
r5 = isinstance("x", (list, str))
r6 = f(7)
r7 = B().n
r8 = isinstance(C(nn.ReLU()), nn.Sequential)
r9 = isinstance(nn.ReLU(), nn.Linear)
r10 = len(C(nn.ReLU(), nn.Tanh(), nn.GELU()))
r11 = partial(partial(min, 9), 4)(6)
`);
  try {
    const bool = (name: string) => { const v = value(name); return v?.kind === 'bool' ? v.value : v?.kind; };
    const num = (name: string) => { const v = value(name); return v?.kind === 'number' ? v.value : v?.kind; };
    assert.equal(bool('r1'), true);
    assert.equal(bool('r2'), false);
    assert.equal(bool('r3'), true);
    assert.equal(bool('r4'), true);
    assert.equal(bool('r5'), true);
    assert.equal(num('r6'), 7);
    assert.equal(num('r7'), 5);
    assert.equal(bool('r8'), true);
    assert.equal(bool('r9'), false);
    assert.equal(num('r10'), 3);
    assert.equal(num('r11'), 4);
  } finally {
    dispose();
  }
});

test('copy.deepcopy makes new containers: changing the copy leaves the original as it was', async () => {
  const { value, dispose } = await program(`import copy
base = {"layers": [1, 2], "width": 64}
other = copy.deepcopy(base)
other["layers"].append(3)
other["width"] = 128
n = len(base["layers"])
w = base["width"]
shallow = copy.copy(base)
shallow["width"] = 32
w2 = base["width"]
`);
  try {
    assert.deepEqual([value('n'), value('w'), value('w2')].map((v) => (v?.kind === 'number' ? v.value : v?.kind)), [2, 64, 64]);
  } finally {
    dispose();
  }
});
