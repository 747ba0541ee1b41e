// Windows of a fixed length cut from one long series and stacked into a TensorDataset (`torch.stack([series[i:i + W]
// for i in torch.arange(n)])`), a forecaster's usual data: the step's input is (batch, W, features), so what the
// recurrent layers keep follows the window's length, however many windows there are to unroll.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const forecaster = (window: number, iterable: string): string => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

WINDOW = ${window}
AHEAD = 24
CHANNELS = 16


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(CHANNELS, 512, num_layers=2, batch_first=True)
        self.head = nn.Linear(512, AHEAD * CHANNELS)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1]).view(-1, AHEAD, CHANNELS)


def windows(count):
    series = torch.randn(count + WINDOW + AHEAD, CHANNELS).cumsum(0)
    starts = ${iterable}
    inputs = torch.stack([series[s:s + WINDOW] for s in starts])
    targets = torch.stack([series[s + WINDOW:s + WINDOW + AHEAD] for s in starts])
    return TensorDataset(inputs, targets)


model = Forecaster().cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for inputs, targets in DataLoader(windows(4096), batch_size=128, shuffle=True):
    inputs, targets = inputs.cuda(), targets.cuda()
    loss = nn.functional.mse_loss(model(inputs), targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('stacked windows of a series give the recurrent layers a sequence of the window\'s length', async () => {
  const [short, long] = [await estimateText(forecaster(96, 'torch.arange(count)'), 'short.py'), await estimateText(forecaster(192, 'torch.arange(count)'), 'long.py')];
  const ratio = long.breakdown.activations / short.breakdown.activations;
  assert.ok(ratio > 1.8 && ratio < 2.2, `window 192 / window 96 ${ratio}`);
  // Per sample at least the GRU's two layers of 512 over every step of the window, fp32.
  assert.ok(short.breakdown.activations > 128 * 96 * 2 * 512 * 4, `${short.breakdown.activations}`);
});

test('windows started from a range longer than the unrolling bound are sized the same way', async () => {
  const [fromRange, fromTensor] = [await estimateText(forecaster(96, 'range(count)'), 'range.py'), await estimateText(forecaster(96, 'torch.arange(count)'), 'arange.py')];
  assert.equal(fromRange.breakdown.activations, fromTensor.breakdown.activations);
  assert.ok(fromRange.breakdown.activations > 128 * 96 * 2 * 512 * 4, `${fromRange.breakdown.activations}`);
});
