// What one training step keeps alive when the forward is written by hand: attention as einsum, a model returning
// its attention map beside the logits, a decoder unrolled in Python with a recurrent cell and cross-attention.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runEstimate } from '../../server/src/cli/estimate';
import { estimateText } from './helpers';

const attentionScript = (scores: string, mix: string, returned: string, call: string) => `import torch
import torch.nn as nn
import torch.nn.functional as F

class Attention(nn.Module):
    def __init__(self, d=256, h=8):
        super().__init__()
        self.h, self.dk = h, d // h
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        B, S, _ = x.shape
        q, k, v = self.qkv(x).view(B, S, 3, self.h, self.dk).unbind(dim=2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        attn = (${scores} / self.dk ** 0.5).softmax(dim=-1)
        out = ${mix}.transpose(1, 2).reshape(B, S, -1)
        return self.proj(out), attn

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 256)
        self.blocks = nn.ModuleList([Attention() for _ in range(4)])
        self.head = nn.Linear(256, 10)

    def forward(self, ids):
        x = self.emb(ids)
        for blk in self.blocks:
            a, attn = blk(x)
            x = x + a
        return ${returned}

model = Classifier().cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(10):
    ids = torch.randint(0, 1000, (16, 512), device="cuda")
    y = torch.randint(0, 10, (16,), device="cuda")
    ${call}
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('einsum attention keeps what the same attention written with matmul keeps (its maps included)', async () => {
  const matmul = await estimateText(attentionScript('(q @ k.transpose(-2, -1))', '(attn @ v)', 'self.head(x.mean(1))', 'logits = model(ids)'), '/tmp/attn_matmul.py');
  const einsum = await estimateText(attentionScript('torch.einsum("bhqd,bhkd->bhqk", q, k)', 'torch.einsum("bhqk,bhkd->bhqd", attn, v)', 'self.head(x.mean(1))', 'logits = model(ids)'), '/tmp/attn_einsum.py');
  const maps = 4 * 16 * 8 * 512 * 512 * 4;
  assert.ok(matmul.breakdown.activations > maps, `${matmul.breakdown.activations}`);
  assert.equal(einsum.breakdown.activations, matmul.breakdown.activations);
});

test('a forward returning (logits, attention map): the loss reads the logits, not the larger map', async () => {
  const alone = await estimateText(attentionScript('(q @ k.transpose(-2, -1))', '(attn @ v)', 'self.head(x.mean(1))', 'logits = model(ids)'), '/tmp/attn_alone.py');
  const paired = await estimateText(attentionScript('(q @ k.transpose(-2, -1))', '(attn @ v)', 'self.head(x.mean(1)), attn', 'logits, attn = model(ids)'), '/tmp/attn_paired.py');
  const ratio = paired.peakAllocated / alone.peakAllocated;
  assert.ok(Math.abs(ratio - 1) < 0.01, `paired / alone ${ratio}`);
});

const decoderScript = (srcLen: number, steps: number) => `import torch
import torch.nn as nn
import torch.nn.functional as F

class Decoder(nn.Module):
    def __init__(self, vocab=8000, emb=256, hidden=512):
        super().__init__()
        self.src_emb = nn.Embedding(vocab, hidden)
        self.embedding = nn.Embedding(vocab, emb)
        self.cell = nn.GRUCell(emb + hidden, hidden)
        self.attn = nn.MultiheadAttention(hidden, 8, batch_first=True)
        self.out = nn.Linear(2 * hidden, vocab)

    def forward(self, src, tgt):
        memory = self.src_emb(src)
        hidden = memory.mean(1)
        context = torch.zeros_like(hidden)
        logits = []
        for t in range(tgt.size(1)):
            hidden = self.cell(torch.cat([self.embedding(tgt[:, t]), context], dim=-1), hidden)
            ctx, _ = self.attn(hidden.unsqueeze(1), memory, memory, need_weights=False)
            context = ctx.squeeze(1)
            logits.append(self.out(torch.cat([hidden, context], dim=-1)))
        return torch.stack(logits, dim=1)

model = Decoder().cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(3):
    src = torch.randint(0, 8000, (64, ${srcLen}), device="cuda")
    tgt = torch.randint(0, 8000, (64, ${steps}), device="cuda")
    logits = model(src, tgt)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a decoder unrolled in Python: GRUCell counted, each step keeps its cell and its cross-attention at the keys\' length', async () => {
  const base = await estimateText(decoderScript(100, 20), '/tmp/dec_base.py');
  const cell = 3 * 512 * (256 + 512 + 512) + 2 * 3 * 512;
  const attention = 4 * 512 * 512 + 4 * 512;
  assert.equal(base.detected.parameters, 8000 * 512 + 8000 * 256 + cell + attention + 1024 * 8000 + 8000);
  assert.ok(!JSON.stringify(base).includes('GRUCell'), 'GRUCell is a modelled layer');
  // Twice the keys: what every step keeps over them (3 key-sized tensors, measured on the H200) twice as long.
  const longer = await estimateText(decoderScript(200, 20), '/tmp/dec_longer.py');
  const perStepKeys = 64 * 3 * 100 * 512 * 4;
  const grown = longer.breakdown.activations - base.breakdown.activations;
  assert.ok(grown >= 20 * perStepKeys && grown < 20 * perStepKeys * 1.3, `${grown} vs ${20 * perStepKeys}`);
});

test('a training loop that keeps the attention map a forward returns beside its logits grows by that map, in fp32 under autocast', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-kept-map-'));
  const script = path.join(dir, 'kept_map.py');
  const autocastForward = 'with torch.autocast("cuda", dtype=torch.float16):\n        logits, attn = model(ids)';
  const kept = attentionScript('(q @ k.transpose(-2, -1))', '(attn @ v)', 'self.head(x.mean(1)), attn', autocastForward);
  fs.writeFileSync(script, kept.replace('for step in range(10):', 'maps = []\nfor step in range(10):') + '    maps.append(attn)\n');
  const stdout: string[] = [];
  await runEstimate([script, '--json'], { stdout: (s: string) => void stdout.push(s), stderr: () => undefined });
  const json = JSON.parse(stdout.join('')) as { growth?: { bytesPerBatch: number } };
  // The last block's softmax output: 16 x 8 x 512 x 512, fp32 (softmax runs in fp32 under autocast).
  assert.equal(json.growth?.bytesPerBatch, 16 * 8 * 512 * 512 * 4);
});

const rolloutScript = (update: string) => `import torch
import torch.nn as nn
from dataclasses import dataclass

@dataclass
class Config:
    envs: int = 512
    steps: int = 64
    obs_dim: int = 128
    minibatches: int = 4

    @property
    def batch_size(self):
        return self.envs * self.steps

    @property
    def minibatch_size(self):
        return self.batch_size // self.minibatches

class Agent(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(cfg.obs_dim, 512), nn.Tanh(), nn.Linear(512, 6))
        self.critic = nn.Sequential(nn.Linear(cfg.obs_dim, 512), nn.Tanh(), nn.Linear(512, 1))

    def act(self, obs, action=None):
        logits = self.actor(obs)
        return logits.log_softmax(-1), self.critic(obs).squeeze(-1)

cfg = Config()
agent = Agent(cfg).cuda()
opt = torch.optim.Adam(agent.parameters())
obs = torch.zeros(cfg.steps, cfg.envs, cfg.obs_dim, device="cuda")
with torch.no_grad():
    agent.act(obs[0])
flat = obs.reshape(-1, cfg.obs_dim)
perm = torch.randperm(cfg.batch_size, device="cuda")
for start in range(0, cfg.batch_size, cfg.minibatch_size):
    mb = perm[start:start + cfg.minibatch_size]
${update}
    loss = logp.mean() + value.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a module without forward() trained through a method: its rows picked from a buffer give the batch, a @property the sizes', async () => {
  const result = await estimateText(rolloutScript('    logp, value = agent.act(flat[mb], mb)'), '/tmp/rollout.py');
  // minibatch_size = 512 * 64 // 4, read through two properties; the update's call (two arguments), not the rollout's.
  assert.equal(result.detected.batchSize.value, 8192);
  assert.equal(result.detected.model?.name, 'Agent');
  // Each branch keeps its input and its tanh output (512) per row.
  assert.ok(result.breakdown.activations >= 8192 * 2 * 512 * 4, String(result.breakdown.activations));
});

test('tensors a plain object keeps on the GPU (a rollout buffer) are alive in every phase; a module\'s own are not counted again', async () => {
  const withBuffer = rolloutScript('    logp, value = agent.act(flat[mb], mb)').replace('obs = torch.zeros(cfg.steps, cfg.envs, cfg.obs_dim, device="cuda")', [
    'class Buffer:',
    '    def __init__(self, cfg):',
    '        self.obs = torch.zeros(cfg.steps, cfg.envs, cfg.obs_dim, device="cuda")',
    '        self.actions = torch.zeros(cfg.steps, cfg.envs, dtype=torch.long, device="cuda")',
    '        self.cpu_copy = torch.zeros(cfg.steps, cfg.envs, cfg.obs_dim)',
    'buf = Buffer(cfg)',
    'obs = buf.obs',
  ].join('\n'));
  const plain = await estimateText(rolloutScript('    logp, value = agent.act(flat[mb], mb)'), '/tmp/rollout_plain.py');
  const buffered = await estimateText(withBuffer, '/tmp/rollout_buffer.py');
  const held = 64 * 512 * 128 * 4 + 64 * 512 * 8;
  assert.equal(buffered.config.residentDataBytes, held);
  assert.equal(buffered.peakAllocated - plain.peakAllocated, held);
  assert.equal(plain.config.residentDataBytes, undefined);
});

const graphScript = (collate: string) => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

class Graphs(Dataset):
    def __len__(self):
        return 256

    def __getitem__(self, i):
        x = torch.randn(1000, 32)
        edge_index = torch.randint(0, 1000, (2, 8000))
        return x, edge_index, torch.randn(1)

def collate(items):
    xs, eis, ys, batch = [], [], [], []
    offset = 0
    for g, (x, ei, y) in enumerate(items):
        xs.append(x)
        eis.append(ei + offset)
        ys.append(y)
        batch.append(torch.full((x.size(0),), g, dtype=torch.long))
        offset += x.size(0)
    return ${collate}

class Net(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.embed = nn.Linear(32, hidden)
        self.msg = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.SiLU())
        self.head = nn.Linear(hidden, 1)

    def forward(self, x, edge_index, batch, num_graphs):
        h = self.embed(x)
        src, dst = edge_index
        m = self.msg(torch.cat([h[dst], h[src]], dim=-1))
        h = h + torch.zeros_like(h).index_add_(0, dst, m)
        pooled = torch.zeros(num_graphs, h.size(1), device=h.device).index_add_(0, batch, h)
        return self.head(pooled).squeeze(-1)

model = Net().cuda()
opt = torch.optim.Adam(model.parameters())
loader = DataLoader(Graphs(), batch_size=16, collate_fn=collate)
for x, edge_index, y, batch in loader:
    x, edge_index, y, batch = x.cuda(), edge_index.cuda(), y.cuda(), batch.cuda()
    loss = (model(x, edge_index, batch, 16) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('graph batching: a collate_fn that concatenates samples feeds the forward one sample\'s nodes and edges, no batch axis', async () => {
  const result = await estimateText(graphScript('torch.cat(xs), torch.cat(eis, dim=1), torch.cat(ys), torch.cat(batch)'), '/tmp/graphs.py');
  assert.equal(result.detected.batchSize.value, 16);
  // Per graph: the message MLP keeps the edge features it is given (8,000 x 128) and its SiLU input (8,000 x 64).
  const perEdge = 16 * 8000 * (128 + 64) * 4;
  assert.ok(result.breakdown.activations >= perEdge && result.breakdown.activations < 1.5 * perEdge, `${result.breakdown.activations} vs ${perEdge}`);
});
