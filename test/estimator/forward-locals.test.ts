// What a training forward holds at once beside what it keeps for backward: the temporaries its locals keep alive
// until the function returns (int64 coordinates hashed into table keys, at 8 bytes an element), freed early by
// `del`; and a step whose loop hands forward's returned memory back to the next call (`logits, mems = model(x,
// mems)`), so that later calls attend over that memory as well as their own tokens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const ROWS = 65536;
const LEVELS = 4;

/** A hashed-table lookup whose int64 corner coordinates stay in locals unless `freed` deletes them. */
const hashed = (freed: boolean) => `import torch
import torch.nn as nn


class CornerHash(nn.Module):
    def __init__(self, levels=${LEVELS}, rows=2 ** 15):
        super().__init__()
        self.rows = rows
        self.table = nn.Parameter(torch.zeros(levels, rows, 2))
        self.register_buffer("bits", torch.tensor([[(c >> 2) & 1, (c >> 1) & 1, c & 1] for c in range(8)]))
        self.register_buffer("mult", torch.tensor([1, 19349663, 83492791]))
        self.out = nn.Linear(levels * 8 * 2, 1)

    def forward(self, p):
        n = p.size(0)
        scaled = p * 32
        lattice = scaled.floor().long()
        offset = scaled - lattice
        corners = lattice[:, :, None, :] + self.bits
        spread = corners * self.mult
        key = (spread[..., 0] ^ spread[..., 1] ^ spread[..., 2]) % self.rows
${freed ? '        del corners, spread\n' : ''}        level = torch.arange(self.table.size(0), device=p.device)[None, :, None]
        found = self.table[level, key]
        b = self.bits.float()
        weight = (b * offset[:, :, None, :] + (1 - b) * (1 - offset[:, :, None, :])).prod(-1)
        return self.out((weight.unsqueeze(-1) * found).reshape(n, -1))


def main():
    net = CornerHash().cuda()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for _ in range(5):
        p = torch.rand(${ROWS}, ${LEVELS}, 3, device="cuda")
        loss = net(p).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


main()
`;

test('int64 corner coordinates held by locals are alive at the forward peak, at 8 bytes an element', async () => {
  const estimate = await estimateText(hashed(false), 'corner_hash.py');
  assert.equal(estimate.detected.batchSize.value, ROWS);
  // Alive while the corner weights are summed, in bytes: corners and spread, (rows, levels, 8, 3) int64 each; the
  // keys, (rows, levels, 8) int64; the rows found, (rows, levels, 8, 2) fp32; the weights' three (rows, levels, 8, 3)
  // fp32 temporaries; the scaled points, their lattice (int64) and offsets, (rows, levels, 3).
  const corner = ROWS * LEVELS * 8 * 3;
  const alive = 2 * corner * 8 + (corner / 3) * 8 + (2 * corner / 3) * 4 + 3 * corner * 4 + (corner / 8) * (4 + 8 + 4);
  assert.equal(estimate.peakPhase, 'forward');
  assert.ok(estimate.breakdown.other > alive, `${estimate.breakdown.other} vs ${alive}`);
  assert.ok(estimate.breakdown.other < 1.2 * alive, `${estimate.breakdown.other} vs ${alive}`);
});

test('`del` of those locals frees them before the weights are made', async () => {
  const [kept, freed] = [await estimateText(hashed(false), 'kept.py'), await estimateText(hashed(true), 'freed.py')];
  // Kept, the corner weights' three (rows, levels, 8, 3) fp32 temporaries are made beside both int64 locals; freed,
  // the peak is where the locals were made (with the xor's temporaries), a third of the weights' (rows, levels, 8, 3)
  // elements short of it at 12 bytes each... at least one int64 local's worth less.
  const local = ROWS * LEVELS * 8 * 3 * 8;
  assert.ok(kept.peakAllocated - freed.peakAllocated > local, `${kept.peakAllocated - freed.peakAllocated} vs ${local}`);
  assert.ok(kept.peakAllocated - freed.peakAllocated < 2 * local, `${kept.peakAllocated - freed.peakAllocated} vs ${local}`);
});

const BATCH = 8;
const SEGMENT = 256;
const WIDTH = 512;
const DEPTH = 4;

/** A segment-recurrent LM; `carried`: the loop gives the memory forward returned back to the next call. */
const recurrent = (carried: boolean) => `import torch
import torch.nn as nn
import torch.nn.functional as F


class Layer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * d)
        self.proj = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, memory):
        b, t, d = x.shape
        context = torch.cat([memory, x], dim=1) if memory is not None else x
        s = context.size(1)
        q = self.q(x).view(b, t, self.heads, -1).transpose(1, 2)
        k, v = self.kv(context).view(b, s, 2, self.heads, -1).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v)
        x = self.norm(x + self.proj(a.transpose(1, 2).reshape(b, t, d)))
        return x + self.mlp(x)


class SegmentLM(nn.Module):
    def __init__(self, vocab=8000, d=${WIDTH}, depth=${DEPTH}, heads=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([Layer(d, heads) for _ in range(depth)])
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens, memories):
        h = self.embed(tokens)
        states = []
        for layer, memory in zip(self.layers, memories):
            states.append(h)
            h = layer(h, memory)
        return self.head(h), [s.detach() for s in states]


def main():
    model = SegmentLM().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    stream = torch.randint(0, 8000, (${BATCH}, ${SEGMENT} * 6 + 1), device="cuda")
    memories = [None] * len(model.layers)
    for i in range(6):
        tokens = stream[:, i * ${SEGMENT}:(i + 1) * ${SEGMENT}]
        target = stream[:, i * ${SEGMENT} + 1:(i + 1) * ${SEGMENT} + 1]
        ${carried ? 'logits, memories' : 'logits, _'} = model(tokens, memories)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), target.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()


main()
`;

test('a memory the loop hands back to the model is attended over and alive through the step', async () => {
  const [first, later] = [await estimateText(recurrent(false), 'segments_uncarried.py'), await estimateText(recurrent(true), 'segments_carried.py')];
  // The memory itself: one (batch, segment, width) fp32 state per layer, held from one step to the next.
  const memory = DEPTH * BATCH * SEGMENT * WIDTH * 4;
  // Each layer's key/value projection then reads twice the tokens, and keeps its doubled input and output.
  const keysAndValues = DEPTH * BATCH * SEGMENT * (WIDTH + 2 * WIDTH) * 4;
  assert.ok(later.peakAllocated - first.peakAllocated > memory + keysAndValues, `${later.peakAllocated - first.peakAllocated} vs ${memory + keysAndValues}`);
  assert.ok(later.peakAllocated - first.peakAllocated < 3 * (memory + keysAndValues), `${later.peakAllocated - first.peakAllocated} vs ${memory + keysAndValues}`);
});
