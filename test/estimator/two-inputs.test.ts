// A forward of two inputs of different kinds (images and token ids, as a two-tower contrastive model takes them):
// each argument is traced with its own tensor from the data, so both towers' activations count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const script = (forward: string) => `import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

class Pairs(Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, i):
        return torch.randn(3, 128, 128), torch.randint(0, 30000, (96,))

class TwoTowers(nn.Module):
    def __init__(self):
        super().__init__()
        self.image = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU())
        self.image_head = nn.Linear(64, 256)
        self.embed = nn.Embedding(30000, 512)
        self.text = nn.TransformerEncoder(nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True), num_layers=4)
        self.text_head = nn.Linear(512, 256)

    def forward(self, images, tokens):
${forward}

model = TwoTowers().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for images, tokens in DataLoader(Pairs(), batch_size=64):
    images, tokens = images.cuda(), tokens.cuda()
    a, b = model(images, tokens)
    logits = a @ b.t()
    loss = F.cross_entropy(logits, torch.arange(64, device="cuda"))
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

const both = `        a = self.image_head(self.image(images).mean((2, 3)))
        b = self.text_head(self.text(self.embed(tokens))[:, 0])
        return F.normalize(a, dim=-1), F.normalize(b, dim=-1)`;
const imageOnly = `        a = self.image_head(self.image(images).mean((2, 3)))
        return F.normalize(a, dim=-1), F.normalize(a, dim=-1)`;
const textOnly = `        b = self.text_head(self.text(self.embed(tokens))[:, 0])
        return F.normalize(b, dim=-1), F.normalize(b, dim=-1)`;

test("both inputs of a two-tower forward are traced with their own data: the activations are both towers'", async () => {
  const [all, image, text] = await Promise.all([
    estimateText(script(both), 'both.py'), estimateText(script(imageOnly), 'image.py'), estimateText(script(textOnly), 'text.py'),
  ]);
  const sum = image.breakdown.activations + text.breakdown.activations;
  assert.ok(image.breakdown.activations > 0 && text.breakdown.activations > 0);
  assert.ok(Math.abs(all.breakdown.activations - sum) / sum < 0.15, `both ${all.breakdown.activations}, image ${image.breakdown.activations} + text ${text.breakdown.activations}`);
});
