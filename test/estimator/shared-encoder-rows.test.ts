// A library encoder shared by two inputs concatenated on the batch axis (a Siamese change detector's two dates, one
// pass) keeps what it saves for every row it is given: twice a batch's, not one batch's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const siamese = (create: string, together: boolean) => `import timm
import torch
import torch.nn as nn


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = timm.create_model("resnet18", pretrained=False${create})
        self.head = nn.Conv2d(512, 1, 1)

    def forward(self, a, b):
        x = ${together ? 'torch.cat([a, b], dim=0)' : 'a'}
        return self.head(self.encoder(x)${create.includes('features_only') ? '[-1]' : ''})


model = Pair().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(3):
    a = torch.randn(8, 3, 256, 256, device="cuda")
    b = torch.randn(8, 3, 256, 256, device="cuda")
    loss = model(a, b).float().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

for (const [what, create] of [['a features_only encoder', ', features_only=True, out_indices=(1, 2, 3, 4)'], ['a whole backbone', ', num_classes=0, global_pool=""']] as const) {
  test(`${what} run on two batches concatenated keeps twice what it keeps for one`, async () => {
    const one = await estimateText(siamese(create, false), 'one_batch.py');
    const two = await estimateText(siamese(create, true), 'two_batches.py');
    const ratio = two.breakdown.activations / one.breakdown.activations;
    assert.ok(ratio > 1.9 && ratio < 2.1, `${two.breakdown.activations} / ${one.breakdown.activations} = ${ratio}`);
  });
}
