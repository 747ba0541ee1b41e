// Modules and tensors kept under keys: an nn.ModuleDict filled by `self.cells[f"c{r}_{k}"] = Cell(...)` in nested
// loops (a nested U-Net's grid of blocks), the class picked from a registry that a decorator fills, its activation
// by `getattr(nn, NAME)`; and a forward that keeps its outputs in a dict keyed by (row, column) tuples.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const WIDTHS = [8, 16, 32];

/** A triangular grid of cells: row r has len(WIDTHS) - r cells of WIDTHS[r] channels, each fed by the row below. */
const grid = (tupleKeys: boolean) => `import torch
import torch.nn as nn

WIDTHS = [${WIDTHS.join(', ')}]
NONLIN = "GELU"
NETS = {}


def registered(name):
    def wrap(cls):
        NETS[name] = cls
        return cls
    return wrap


class Cell(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.act = getattr(nn, NONLIN)()

    def forward(self, x):
        return self.act(self.conv(x))


@registered("grid")
class Grid(nn.Module):
    def __init__(self, widths=WIDTHS):
        super().__init__()
        self.rows = len(widths)
        self.cells = nn.ModuleDict()
        for r in range(self.rows):
            for k in range(self.rows - r):
                cin = (3 if r == 0 else widths[r - 1]) if k == 0 else widths[r] * k + widths[r + 1]
                self.cells[f"c{r}_{k}"] = Cell(cin, widths[r])
        self.down = nn.MaxPool2d(2)
        self.up = nn.Upsample(scale_factor=2)
        self.head = nn.Conv2d(widths[0], 1, 1)

    def forward(self, x):
${tupleKeys ? `        out = {}
        for r in range(self.rows):
            out[(r, 0)] = self.cells[f"c{r}_0"](x if r == 0 else self.down(out[(r - 1, 0)]))
        for k in range(1, self.rows):
            for r in range(self.rows - k):
                parts = [out[(r, m)] for m in range(k)] + [self.up(out[(r + 1, k - 1)])]
                out[(r, k)] = self.cells[f"c{r}_{k}"](torch.cat(parts, dim=1))
        return self.head(out[(0, self.rows - 1)])
` : `        return self.head(self.cells["c0_0"](x))
`}

model = NETS["grid"]().cuda()
opt = torch.optim.Adam(model.parameters())
for _ in range(3):
    x = torch.randn(4, 3, 64, 64, device="cuda")
    loss = model(x).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

/** The grid's parameters: each 3x3 conv with bias, and the 1x1 head. */
function gridParameters(): number {
  let total = WIDTHS[0]! + 1;
  for (let r = 0; r < WIDTHS.length; r++) {
    for (let k = 0; k < WIDTHS.length - r; k++) {
      const cin = k === 0 ? (r === 0 ? 3 : WIDTHS[r - 1]!) : WIDTHS[r]! * k + WIDTHS[r + 1]!;
      total += cin * WIDTHS[r]! * 9 + WIDTHS[r]!;
    }
  }
  return total;
}

test('modules set into an nn.ModuleDict by key in nested loops are all counted', async () => {
  const estimate = await estimateText(grid(false), 'module_dict_grid.py');
  assert.equal(estimate.detected.parameters, gridParameters());
});

test('a forward keeping its outputs in a dict under (row, column) tuples is followed to the head', async () => {
  const plain = await estimateText(grid(false), 'module_dict_grid.py');
  const keyed = await estimateText(grid(true), 'tuple_keyed_grid.py');
  assert.equal(keyed.detected.parameters, gridParameters());
  assert.ok(!keyed.assumptions.some((line) => /could not be followed/.test(line)), keyed.assumptions.join('\n'));
  // Every cell runs: each keeps its conv input and GELU input at its resolution, more than the first cell alone.
  assert.ok(keyed.breakdown.activations > 4 * plain.breakdown.activations, `${keyed.breakdown.activations} vs ${plain.breakdown.activations}`);
});
