// A learned table looked up by several index tensors at once (`table[level, hashed]`, a multiresolution hash
// encoding), its scales kept as a registered buffer, and the model (a name of main()) called by a helper on points
// folded from rays: the lookup has the indices' joint shape, the buffer its own, and the rays the loop draws are
// the batch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const script = (levels: number) => `import torch
import torch.nn as nn

RAYS = 2048
POINTS = 64


class GridField(nn.Module):
    def __init__(self, levels, rows=2 ** 16, width=4):
        super().__init__()
        self.rows = rows
        self.table = nn.Parameter(torch.zeros(levels, rows, width))
        self.register_buffer("scales", torch.tensor([2 ** (3 + l) for l in range(levels)]))
        self.mlp = nn.Sequential(nn.Linear(levels * width, 64), nn.ReLU(), nn.Linear(64, 4))

    def forward(self, xy):
        cells = (xy[:, None, :] * self.scales[None, :, None]).floor().long()
        key = (cells[..., 0] * 73856093 + cells[..., 1]) % self.rows
        level = torch.arange(self.table.size(0), device=xy.device)[None, :]
        feats = self.table[level, key]
        return self.mlp(feats.reshape(xy.size(0), -1))


def render(field, origins):
    steps = torch.linspace(0, 1, POINTS, device=origins.device)
    points = origins[:, None, :] + steps[None, :, None]
    return field(points.reshape(-1, 2)).view(origins.size(0), POINTS, 4).mean(1)


def draw(n):
    return torch.rand(n, 2, device="cuda")


def main():
    field = GridField(${levels}).cuda()
    opt = torch.optim.Adam(field.parameters(), lr=1e-2)
    for it in range(10):
        origins = draw(RAYS)
        loss = render(field, origins).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
`;

test('points folded from the rays a helper renders make the rays the batch', async () => {
  const estimate = await estimateText(script(8), 'grid.py');
  assert.equal(estimate.detected.batchSize.value, 2048);
  assert.equal(estimate.detected.batchSize.how, 'loop');
  assert.ok(!estimate.assumptions.some((a) => a.startsWith('operations in forward() not modelled')), estimate.assumptions.join('\n'));
});

test('a table looked up by level and hashed cell keeps what the lookup\'s joint shape makes', async () => {
  const [few, many] = [await estimateText(script(4), 'four.py'), await estimateText(script(8), 'eight.py')];
  // At least the lookup itself (rays x points x levels x width, fp32), and more with more levels.
  const lookup = (levels: number): number => 2048 * 64 * levels * 4 * 4;
  assert.ok(few.breakdown.activations > lookup(4), `${few.breakdown.activations} vs ${lookup(4)}`);
  assert.ok(many.breakdown.activations > few.breakdown.activations + lookup(4) / 4, `${many.breakdown.activations} vs ${few.breakdown.activations}`);
  assert.ok(many.breakdown.activations < 20 * lookup(8), `${many.breakdown.activations}`);
});
