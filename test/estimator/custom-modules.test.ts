// Custom modules as scripts build and run them: while loops with a known condition, ModuleDict read as a dict in
// forward, models frozen and unfrozen in turn (a GAN), the order of nested model calls, and the optimizers whose
// state is one or two buffers per parameter (Adagrad, RMSprop). Each figure follows from the script by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { NetBuilder } from '../../server/src/estimator/layers';

test('a while loop with a known condition runs as Python runs it: the layers it counts are built', async () => {
  const r = await estimateText(`import torch
import torch.nn as nn

class Tower(nn.Module):
    def __init__(self, width=256, size=64):
        super().__init__()
        depth, s = 0, 1
        while s < size:          # 1, 2, 4, ..., 32: six passes
            s = s * 2
            depth += 1
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.ReLU()]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)

model = Tower().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 256).cuda()
loss = model(x).sum()
loss.backward()
opt.step()
`, 'tower.py');
  // Six Linear(256, 256): 6 x (256 x 256 + 256).
  assert.equal(r.detected.parameters, 6 * (256 * 256 + 256));
});

const heads = (forward: string) => `import torch
import torch.nn as nn

class MultiHead(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(64, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU())
        self.heads = nn.ModuleDict({name: nn.Linear(2048, n) for name, n in tasks.items()})

    def forward(self, x):
        h = self.trunk(x)
${forward}

model = MultiHead({"a": 1, "b": 50}).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(4096, 64).cuda()
    out = model(x)
    loss = out["a"].mean() + out["b"].mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('ModuleDict read as a dict in forward (items(), values()): the trace runs every head', async () => {
  const byItems = await estimateText(heads('        return {name: head(h) for name, head in self.heads.items()}'), 'items.py');
  const byValues = await estimateText(heads('        return [head(h) for head in self.heads.values()]'), 'values.py');
  const explicit = await estimateText(heads('        return {"a": self.heads["a"](h), "b": self.heads["b"](h)}'), 'explicit.py');
  // The input is a vector of 64 features, not a token sequence of an assumed length.
  assert.ok(!byItems.assumptions.some((a) => /seq_len/.test(a)), byItems.assumptions.join('; '));
  assert.equal(byItems.breakdown!.activations, explicit.breakdown!.activations);
  assert.equal(byValues.breakdown!.activations, explicit.breakdown!.activations);
  // Kept per sample: 64 (first linear's input) + 2 x 2048 (GELU inputs) + 2048 (second linear's input) + 2048 (the
  // heads' shared input, kept once) = 8256 fp32 values; batch 4096.
  assert.ok(explicit.breakdown!.activations >= 4096 * 8256 * 4, `${explicit.breakdown!.activations}`);
  assert.ok(explicit.breakdown!.activations < 4096 * 8256 * 4 * 1.2, `${explicit.breakdown!.activations}`);
});

const optimizerScript = (optimizer: string) => `import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(1000, 1000), nn.ReLU(), nn.Linear(1000, 1000)).cuda()
optimizer = ${optimizer}
for step in range(3):
    x = torch.randn(8, 1000).cuda()
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
`;

test('Adagrad keeps one buffer per parameter (its sum), RMSprop one (square_avg) and two with momentum', async () => {
  const params = 2 * (1000 * 1000 + 1000);
  const adagrad = await estimateText(optimizerScript('torch.optim.Adagrad(model.parameters(), lr=0.01)'), 'adagrad.py');
  const rmsprop = await estimateText(optimizerScript('torch.optim.RMSprop(model.parameters(), lr=1e-4)'), 'rmsprop.py');
  const momentum = await estimateText(optimizerScript('torch.optim.RMSprop(model.parameters(), lr=1e-4, momentum=0.9)'), 'rmsprop_m.py');
  assert.equal(adagrad.detected.optimizer.value, 'adagrad');
  assert.equal(rmsprop.detected.optimizer.value, 'rmsprop');
  assert.equal(momentum.detected.optimizer.value, 'rmsprop');
  assert.ok(!adagrad.assumptions.some((a) => /optimizer not found/.test(a)));
  // Small activations: the optimizer step is the peak, whose breakdown shows the states.
  assert.equal(adagrad.breakdown!.optimizerStates, params * 4);
  assert.equal(rmsprop.breakdown!.optimizerStates, params * 4);
  assert.equal(momentum.breakdown!.optimizerStates, params * 8);
});

const gan = `import torch
import torch.nn as nn

class Gen(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.ConvTranspose2d(64, 128, 4, 1, 0), nn.BatchNorm2d(128), nn.ReLU(True),
                                  nn.ConvTranspose2d(128, 64, 4, 2, 1), nn.BatchNorm2d(64), nn.ReLU(True),
                                  nn.ConvTranspose2d(64, 3, 4, 2, 1), nn.Tanh())

    def forward(self, z):
        return self.main(z)

class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2, True),
                                  nn.Conv2d(64, 128, 4, 2, 1), nn.BatchNorm2d(128), nn.LeakyReLU(0.2, True),
                                  nn.Conv2d(128, 1, 4, 1, 0))

    def forward(self, x):
        return self.main(x).view(-1)

G = Gen().cuda()
D = Critic().cuda()
optD = torch.optim.RMSprop(D.parameters(), lr=5e-5)
optG = torch.optim.RMSprop(G.parameters(), lr=5e-5)
for it in range(4):
    for p in D.parameters():
        p.requires_grad = True
    real = torch.randn(512, 3, 16, 16, device="cuda")
    with torch.no_grad():
        fake = G(torch.randn(512, 64, 1, 1, device="cuda"))
    optD.zero_grad()
    lossD = D(fake).mean() - D(real).mean()
    lossD.backward()
    optD.step()
    for p in D.parameters():
        p.requires_grad = False
    optG.zero_grad()
    lossG = -D(G(torch.randn(512, 64, 1, 1, device="cuda"))).mean()
    lossG.backward()
    optG.step()
`;

test('a critic frozen for the generator\'s step and unfrozen for its own is trained; netD(netG(z)) runs the generator first', async () => {
  const r = await estimateText(gan, 'wgan.py');
  const g = (64 * 128 * 16 + 128) + 2 * 128 + (128 * 64 * 16 + 64) + 2 * 64 + (64 * 3 * 16 + 3);
  const d = (3 * 64 * 16 + 64) + (64 * 128 * 16 + 128) + 2 * 128 + (128 * 16 + 1);
  assert.equal(r.detected.parameters, g + d);
  assert.equal(r.detected.trainableParameters, g + d);
  assert.ok(!r.assumptions.some((a) => /frozen/.test(a)), r.assumptions.join('; '));
  // The critic is declared (and optimised) first, but the generator's output is what the critic reads.
  assert.equal(r.detected.model?.name, 'Gen + Critic');
});

test('a model frozen once and never unfrozen stays frozen (freezing in turn needs both calls in one loop)', async () => {
  const once = gan.replace('    for p in D.parameters():\n        p.requires_grad = True\n', '');
  const r = await estimateText(once, 'frozen_critic.py');
  const d = (3 * 64 * 16 + 64) + (64 * 128 * 16 + 128) + 2 * 128 + (128 * 16 + 1);
  assert.equal(r.detected.trainableParameters, r.detected.parameters - d);
});

const segScript = (crop: string, fit: string) => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
import lightning as L

class Patches(Dataset):
    def __init__(self, n, side, crop):
        self.n, self.side, self.crop = n, side, crop

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.randn(3, self.side, self.side)
        y = torch.randint(0, 5, (self.side, self.side))
        t = torch.randint(0, self.side - self.crop + 1, (1,)).item()
${crop}
        return img, y

class Seg(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True), nn.Conv2d(32, 5, 1))

    def forward(self, x):
        return self.body(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)

loader = DataLoader(Patches(64, 192, 128), batch_size=16)
trainer = L.Trainer(max_steps=4)
${fit}
`;

test('a model handed straight to a call (trainer.fit(Model(), ...)) is the model the script trains', async () => {
  const r = await estimateText(segScript('', 'trainer.fit(Seg(), loader)'), 'fit_inline.py');
  assert.equal(r.unresolved, undefined);
  assert.equal(r.detected.parameters, (3 * 32 * 9 + 32) + 2 * 32 + (32 * 5 + 5));
});

test('a made tensor cropped by slicing (img[:, t:t + crop, t:t + crop]) gives the input size the model sees', async () => {
  const cropped = await estimateText(segScript('        img, y = img[:, t:t + self.crop, t:t + self.crop], y[t:t + self.crop, t:t + self.crop]', 'trainer.fit(Seg(), loader)'), 'crop.py');
  const whole = await estimateText(segScript('', 'trainer.fit(Seg(), loader)'), 'whole_tile.py');
  assert.equal(whole.detected.imageSize?.value, 192);
  assert.equal(cropped.detected.imageSize?.value, 128);
  // What forward keeps per sample scales with the pixels: (128 / 192)^2 of the whole tile's.
  const saved = (r: typeof whole): number => (r.config?.model.kind === 'layers' ? r.config.model.savedElementsPerSample : NaN);
  assert.equal(saved(cropped) / saved(whole), (128 / 192) ** 2);
});

test('LayerNorm under autocast keeps an fp32 copy of a half input in layer-by-layer nets too (a ConvNeXt block)', () => {
  const block = (norm: boolean) => {
    const net = new NetBuilder({ kind: 'image', channels: 64, size: 32 });
    net.conv(64, 7, 1, 64, true);
    if (norm) net.layerNorm();
    net.conv(256, 1, 1, 1, true, 0).activation().conv(64, 1, 1, 1, true, 0);
    return net.build(true);
  };
  const withNorm = block(true);
  const without = block(false);
  // The norm keeps the depthwise convolution's output (64 x 32 x 32 values), the pointwise convolution the norm's
  // output: one more tensor, and under autocast the first is fp32 (2 bytes a value more than a half tensor).
  assert.equal(withNorm.savedElementsPerSample, without.savedElementsPerSample + 64 * 32 * 32);
  assert.equal(withNorm.autocastSavedBytesPerSample, 2 * withNorm.savedElementsPerSample + 2 * 64 * 32 * 32);
  assert.equal(without.autocastSavedBytesPerSample, undefined);
});
