// A teacher-forced decoder's input, shifted from the target in the dataset (`torch.cat([torch.tensor([bos]),
// target[:-1]])`) and moved to the GPU by a generator the loop unpacks (`src, dec_in, tgt = (t.to(device) for t in
// batch)`): the step's arguments have the dataset's shapes, so the decoder loop runs the target's length, not the
// source's. The fixture is a small script of its own; the figures are worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const decoderScript = `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

SRC_LEN = 200
TGT_LEN = 20


class Pairs(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        src = torch.randint(2, 1000, (SRC_LEN,))
        target = torch.randint(2, 1000, (TGT_LEN,))
        dec_in = torch.cat([torch.tensor([1]), target[:-1]])
        return src, dec_in, target


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.proj = nn.Linear(64, 64)

    def forward(self, src, dec_in):
        ctx = self.emb(src).mean(1)
        outs = []
        for t in range(dec_in.size(1)):
            outs.append(torch.tanh(self.proj(self.emb(dec_in[:, t]) + ctx)))
        return torch.stack(outs, 1)


device = torch.device("cuda")
model = Decoder().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(Pairs(), batch_size=16)
for step, batch in enumerate(loader):
    src, dec_in, target = (t.to(device) for t in batch)
    out = model(src, dec_in)
    loss = out.square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a decoder input shifted in the dataset and unpacked from a generator has the target\'s length', async () => {
  const r = await estimateText(decoderScript, 'shifted.py');
  const spec = r.config.model as LayerNetSpec;
  // 20 decoding steps (not the source's 200), each keeping the projection's input and tanh's output, 64 wide.
  assert.equal(spec.savedElementsPerSample, 20 * 2 * 64);
  assert.equal(spec.outputElementsPerSample, 20 * 64);
});
