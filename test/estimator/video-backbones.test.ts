// torchvision video classifiers held by a module of the script (a LightningModule's `self.net = r3d_18(...)`, a
// wrapper adding its own head): the video model is found, built for the clips the step gives it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import { findVideoModel } from '../../server/src/estimator/catalog/vision';

const parametersOf = (name: string, classes: number): number => findVideoModel(name)!.build(16)(112, classes).parameters;

test('a LightningModule that holds a torchvision video model whole is that model, at the classes it is given', async () => {
  const script = `
import lightning as L
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torchvision.models.video import r3d_18

class Clips(L.LightningModule):
    def __init__(self, classes):
        super().__init__()
        self.backbone = r3d_18(weights=None, num_classes=classes)
    def forward(self, x):
        return self.backbone(x)
    def training_step(self, batch, i):
        x, y = batch
        return F.cross_entropy(self(x), y)
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01, momentum=0.9)

data = TensorDataset(torch.randn(64, 3, 8, 112, 112), torch.randint(0, 51, (64,)))
trainer = L.Trainer(accelerator="gpu", devices=1, max_steps=4)
trainer.fit(Clips(51), DataLoader(data, batch_size=4))
`;
  const result = await estimateText(script, '/tmp/oomguard-video-none/train.py');
  assert.equal(result.unresolved, undefined, result.assumptions.join('; '));
  assert.equal(result.detected.model?.name, 'r3d_18');
  assert.equal(result.detected.parameters, parametersOf('r3d_18', 51));
  assert.equal(result.detected.batchSize.value, 4);
});

test("a module that adds its own head to a video model's logits is traced through it, clip by clip", async () => {
  const script = (frames: number) => `
import torch, torch.nn as nn
from torchvision.models.video import mc3_18

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.video = mc3_18(num_classes=64)
        self.head = nn.Linear(64, 10)
    def forward(self, clips):
        return self.head(torch.relu(self.video(clips)))

model = Net().cuda()
opt = torch.optim.AdamW(model.parameters())
for _ in range(3):
    x = torch.randn(4, 3, ${frames}, 112, 112, device="cuda")
    loss = model(x).logsumexp(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;
  const short = await estimateText(script(8), '/tmp/oomguard-video-none/train.py');
  assert.equal(short.unresolved, undefined, short.assumptions.join('; '));
  assert.equal(short.detected.parameters, parametersOf('mc3_18', 64) + 64 * 10 + 10);
  const long = await estimateText(script(16), '/tmp/oomguard-video-none/train.py');
  // Twice the frames, about twice what the video model keeps.
  assert.ok(long.breakdown.activations > 1.6 * short.breakdown.activations, `${long.breakdown.activations} / ${short.breakdown.activations}`);
});
