// The program-model mechanisms the held-out sets pointed at (test/gpu/holdout, test/gpu/refactor-holdout): frozen
// layers, autocast's fp32 operations, autocast's weight cache in inference, checkpointing plans, and traces that
// cannot be sized. Each test states a figure that follows from the script, computed by hand in the comment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const mlp = (freeze: string) => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(1024, 1024), nn.ReLU()) for _ in range(4)])
        self.head = nn.Linear(1024, 10)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)

model = Net().cuda()
${freeze}
optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-3)
loader = DataLoader(TensorDataset(torch.randn(4096, 1024), torch.randint(0, 10, (4096,))), batch_size=256)
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
`;

test('frozen layers: requires_grad_(False) on a slice of a ModuleList is counted, and frozen layers keep no activations', async () => {
  // A large batch, so that backward (where activations count) is the peak phase.
  const frozen = await estimateText(mlp('for block in model.blocks[:2]:\n    block.requires_grad_(False)'), 'frozen.py', { batchSize: 16384 });
  const whole = await estimateText(mlp(''), 'whole.py', { batchSize: 16384 });
  // Each block: 1024 x 1024 + 1024 = 1,049,600 parameters; the head 10,250. Two blocks frozen.
  assert.equal(frozen.detected.parameters, 4 * 1_049_600 + 10_250);
  assert.equal(frozen.detected.trainableParameters, 2 * 1_049_600 + 10_250);
  assert.ok(!frozen.assumptions.some((a) => /assumed \d+% of them frozen/.test(a)), 'the frozen share is counted, not assumed');
  // The frozen blocks see the data, which has no history: they record nothing, so fewer activations are kept.
  assert.ok(frozen.breakdown!.activations < whole.breakdown!.activations, `${frozen.breakdown!.activations} < ${whole.breakdown!.activations}`);
});

test('freezing through parameters(): p.requires_grad = False freezes that module', async () => {
  const r = await estimateText(mlp('for p in model.blocks[0].parameters():\n    p.requires_grad = False'), 'frozen2.py');
  assert.equal(r.detected.trainableParameters, 3 * 1_049_600 + 10_250);
});

const convNet = (norm: string) => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), ${norm}, nn.SiLU(),
            nn.Conv2d(64, 64, 3, padding=1), ${norm}, nn.SiLU(),
        )
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))

model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(1024, 3, 64, 64), torch.randint(0, 10, (1024,))), batch_size=64)
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
`;

test('autocast: GroupNorm runs in fp32 (keeping an fp32 copy of its input), BatchNorm in half precision', async () => {
  const group = await estimateText(convNet('nn.GroupNorm(8, 64)'), 'gn.py');
  const batch = await estimateText(convNet('nn.BatchNorm2d(64)'), 'bn.py');
  const groupFp32 = await estimateText(convNet('nn.GroupNorm(8, 64)'), 'gn.py', { precision: 'fp32' });
  const batchFp32 = await estimateText(convNet('nn.BatchNorm2d(64)'), 'bn.py', { precision: 'fp32' });
  // The same layers in fp32 keep the same elements; under autocast GroupNorm keeps fp32 copies and fp32 outputs.
  assert.equal(groupFp32.breakdown!.activations, batchFp32.breakdown!.activations);
  assert.ok(group.breakdown!.activations > batch.breakdown!.activations * 1.3, `${group.breakdown!.activations} vs ${batch.breakdown!.activations}`);
  assert.ok(group.breakdown!.activations < groupFp32.breakdown!.activations);
});

test('autocast in no-grad inference keeps a half copy of the weights that still require grad', async () => {
  const script = (extra: string) => `import torch
import torchvision
model = torchvision.models.vit_b_16().cuda().eval()
${extra}
with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
    for _ in range(4):
        logits = model(torch.randn(64, 3, 224, 224, device="cuda"))
`;
  const cached = await estimateText(script(''), 'infer.py');
  const plain = await estimateText(script(''), 'infer.py', { precision: 'fp32' });
  assert.equal(cached.detected.mode.value, 'infer-no-grad');
  // ViT-B/16 casts its linear and convolution weights: at least 2 bytes x 85M of its 86.6M parameters.
  assert.ok(cached.breakdown!.weights - plain.breakdown!.weights >= 2 * 85e6, `${cached.breakdown!.weights - plain.breakdown!.weights}`);
});

test('a model whose sizes cannot be computed gives a number or says it is unresolved, never NaN', async () => {
  const r = await estimateText(`import torch
import torch.nn as nn
class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.n_head = config.n_head
    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        return q.view(B, T, self.n_head, C // self.n_head)
model = Attention(cfg).cuda()
with torch.no_grad():
    for x in data:
        out = model(x)
`, 'nan.py');
  assert.ok(r.detected.model === null || r.peakAllocated === null || Number.isFinite(r.peakAllocated), String(r.peakAllocated));
});

const gan = `import torch
import torch.nn as nn

class G(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(128, 4096), nn.ReLU(), nn.Linear(4096, 3 * 32 * 32), nn.Tanh())

    def forward(self, z):
        return self.main(z)

class D(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(3 * 32 * 32, 2048), nn.LeakyReLU(0.2), nn.Linear(2048, 1))

    def forward(self, x):
        return self.main(x)

netG = G().cuda()
netD = D().cuda()
optG = torch.optim.Adam(netG.parameters(), lr=2e-4)
optD = torch.optim.Adam(netD.parameters(), lr=2e-4)
crit = nn.BCEWithLogitsLoss()
for step in range(10):
    real = torch.randn(512, 3 * 32 * 32).cuda()
    optD.zero_grad()
    crit(netD(real), torch.ones(512, 1, device="cuda")).backward()
    fake = netG(torch.randn(512, 128, device="cuda"))
    crit(netD(fake.detach()), torch.zeros(512, 1, device="cuda")).backward()
    optD.step()
    optG.zero_grad()
    crit(netD(fake), torch.ones(512, 1, device="cuda")).backward()
    optG.step()
with torch.no_grad():
    samples = netG(torch.randn(64, 128, device="cuda"))
`;

test('two models trained in one step (a GAN): both sets of weights, gradients and Adam states, in data-flow order', async () => {
  const r = await estimateText(gan, 'gan.py');
  // G: 128x4096 + 4096 + 4096x3072 + 3072 = 13,114,368; D: 3072x2048 + 2048 + 2048 + 1 = 6,295,553.
  assert.equal(r.detected.parameters, 13_114_368 + 6_295_553);
  // The generator feeds the discriminator (its last call before backward is netD(fake)), though the script samples
  // from the generator last.
  assert.equal(r.detected.model.name, 'G + D');
  // fp32 Adam: two states per parameter of both models.
  assert.equal(r.breakdown!.optimizerStates, 2 * 4 * (13_114_368 + 6_295_553));
});

const convLeaky = (inplace: string) => `import torch
import torch.nn as nn

model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.LeakyReLU(0.2${inplace}),
                      nn.Conv2d(64, 64, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(64, 3, 128, 128).cuda()
    loss = nn.functional.cross_entropy(model(x), torch.randint(0, 10, (64,)).cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('LeakyReLU out of place keeps its input beside the output the next convolution keeps; in place, one tensor', async () => {
  const outOfPlace = await estimateText(convLeaky(''), 'leaky.py');
  const inPlace = await estimateText(convLeaky(', inplace=True'), 'leaky_inplace.py');
  // One 64x128x128 fp32 tensor per sample more: 64 samples x 1,048,576 elements x 4 bytes.
  assert.equal(outOfPlace.breakdown!.activations - inPlace.breakdown!.activations, 64 * 64 * 128 * 128 * 4);
});

const gruScript = (bidirectional: string) => `import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(64, 256, num_layers=2, batch_first=True${bidirectional})
        self.head = nn.Linear(256${bidirectional ? ' * 2' : ''}, 1)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])

model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(128, 200, 64).cuda()
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a cuDNN GRU keeps its measured reserve and takes a workspace in backward', async () => {
  const one = await estimateText(gruScript(''), 'gru.py');
  // Reserve (test/gpu/estimator/results/rnn.json): 6 hidden vectors per step, layer and direction, plus the lower
  // layer's output: 128 x 200 steps x 256 x (6 x 2 + 1) x 4 bytes.
  const reserve = 128 * 200 * 256 * 13 * 4;
  assert.ok(one.breakdown!.activations >= reserve, `${one.breakdown!.activations} >= ${reserve}`);
  // Backward takes a workspace on top: 6 hidden vectors per step one way, at least 3,000 values: 128 x 200 x 3,000 x 4 bytes.
  assert.equal(one.peakPhase, 'backward');
  assert.ok(one.breakdown!.activations + one.breakdown!.other >= reserve + 128 * 200 * 3000 * 4, JSON.stringify(one.breakdown));
});

const lm = (step: string) => `import torch
import torch.nn as nn

class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(8000, 256)
        self.head = nn.Linear(256, 8000)

    def forward(self, x):
        return self.head(self.emb(x))

model = LM().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randint(0, 8000, (16, 256)).cuda()
    opt.zero_grad()
${step}
    loss.backward()
    opt.step()
`;

test('a model output bound to a name in the step stays alive through backward; passed straight to the loss it does not', async () => {
  const kept = await estimateText(lm('    logits = model(x)\n    loss = nn.functional.cross_entropy(logits.reshape(-1, 8000), x.reshape(-1))'), 'kept.py');
  const passed = await estimateText(lm('    loss = nn.functional.cross_entropy(model(x).reshape(-1, 8000), x.reshape(-1))'), 'passed.py');
  // The fp32 logits: 16 x 256 x 8,000 x 4 bytes.
  assert.equal(kept.breakdown!.activations - passed.breakdown!.activations, 16 * 256 * 8000 * 4);
});

const hub = (step: string) => `import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("gpt2").cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(10):
    input_ids = torch.randint(0, 50257, (4, 512)).cuda()
${step}
    loss.backward()
    opt.step()
    opt.zero_grad()
`;

test('a Hub model whose loss alone is taken (model(...).loss) frees its logits before backward', async () => {
  const dropped = await estimateText(hub('    loss = model(input_ids=input_ids, labels=input_ids).loss'), 'dropped.py');
  const kept = await estimateText(hub('    outputs = model(input_ids=input_ids, labels=input_ids)\n    loss = outputs.loss'), 'kept.py');
  // GPT-2's fp32 logits: 4 x 512 x 50,257 x 4 bytes, held by the outputs object in the second script only.
  assert.equal(kept.breakdown!.activations - dropped.breakdown!.activations, 4 * 512 * 50257 * 4);
});

test('checkpointed transformer: backward recomputes the last block while every kept block input is alive', async () => {
  const script = `import timm
import torch
import torch.nn.functional as F

model = timm.create_model("vit_base_patch16_224", num_classes=10).cuda()
model.set_grad_checkpointing(True)
opt = torch.optim.AdamW(model.parameters())
for step in range(10):
    x = torch.randn(128, 3, 224, 224).cuda()
    loss = F.cross_entropy(model(x), torch.randint(0, 10, (128,)).cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;
  const r = await estimateText(script, 'ckpt.py');
  assert.equal(r.peakPhase, 'backward');
  // The 12 kept fp32 block inputs (128 x 197 x 768 x 4 bytes each) and, on top, at least the recomputed block's
  // widest pair of gradients (2 x 128 x 197 x 3,072 x 4 bytes).
  const keptInputs = 12 * 128 * 197 * 768 * 4;
  assert.ok(r.breakdown!.activations + r.breakdown!.other >= keptInputs + 2 * 128 * 197 * 3072 * 4, JSON.stringify(r.breakdown));
});

test('the data the step feeds the model: a slice of a token stream viewed as (B, T) gives the batch and the sequence', async () => {
  const script = `import torch
import torch.nn as nn

B = 4
T = 768

class Stream:
    def __init__(self, tokens, B, T):
        self.tokens, self.B, self.T, self.pos = tokens, B, T, 0

    def next_batch(self):
        buf = self.tokens[self.pos : self.pos + self.B * self.T + 1]
        self.pos += self.B * self.T
        return buf[:-1].view(self.B, self.T), buf[1:].view(self.B, self.T)

class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.head = nn.Linear(64, 1000)

    def forward(self, idx):
        return self.head(self.emb(idx))

model = LM().cuda()
opt = torch.optim.AdamW(model.parameters())
loader = Stream(torch.randint(0, 1000, (100000,)), B=B, T=T)
for it in range(10):
    x, y = loader.next_batch()
    loss = nn.functional.cross_entropy(model(x.cuda()).view(-1, 1000), y.cuda().view(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
`;
  const r = await estimateText(script, 'stream.py');
  // Found through the loader's constructor arguments (B=B, T=T), at the lines that set them.
  assert.deepEqual(r.detected.batchSize, { value: 4, line: 4, how: 'call-argument' });
  assert.deepEqual(r.detected.seqLen, { value: 768, line: 5, how: 'call-argument' });
});

test('torchvision.models.get_model(name) is the catalog model of that name', async () => {
  const r = await estimateText(`import torch, torchvision
model = torchvision.models.get_model("resnet50", weights=None, num_classes=10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(32, 3, 224, 224).cuda()
    loss = torch.nn.functional.cross_entropy(model(x), torch.randint(0, 10, (32,)).cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()
`, 'get_model.py');
  assert.equal(r.detected.model.name, 'resnet50');
  // torchvision's ResNet-50 with a 10-class head: 25,557,032 - 2048 x 990 - 990.
  assert.equal(r.detected.parameters, 25_557_032 - 2048 * 990 - 990);
});

test('a parameter-heavy net peaks late in backward, with most gradients made and the first layers\' activations and gradients still alive', async () => {
  const script = `import torch
import torch.nn as nn

model = nn.Sequential(*[m for _ in range(6) for m in (nn.Linear(4096, 4096), nn.ReLU())], nn.Linear(4096, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(2048, 4096).cuda()
    loss = nn.functional.cross_entropy(model(x), torch.randint(0, 10, (2048,)).cuda())
    opt.zero_grad()
    loss.backward()
    opt.step()
`;
  const r = await estimateText(script, 'wide.py');
  assert.equal(r.peakPhase, 'backward');
  // Not the end of backward (every gradient, no activation): the first layer's backward still holds its input and
  // its gradients while the other layers' gradients (5 of 6 linears of 4096 x 4096) exist.
  assert.ok(r.breakdown!.activations > 0, JSON.stringify(r.breakdown));
  assert.ok(r.breakdown!.gradients >= 5 * 4096 * 4097 * 4, JSON.stringify(r.breakdown));
  assert.ok(r.peakAllocated > r.breakdown!.weights + r.gradientsAfterBackward, `${r.peakAllocated}`);
});

test('zero_grad() between forward and backward: the previous step\'s gradients live through forward, and the estimate says where', async () => {
  const loop = (body: string) => `import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(4096, 2048).cuda()
${body}
`;
  const late = await estimateText(loop('    out = model(x)\n    loss = out.sum()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()'), 'late.py');
  const early = await estimateText(loop('    opt.zero_grad()\n    out = model(x)\n    loss = out.sum()\n    loss.backward()\n    opt.step()'), 'early.py');
  assert.ok(late.assumptions.some((a) => a.startsWith('zero_grad() (line 10) runs after the forward')), late.assumptions.join('\n'));
  assert.ok(!early.assumptions.some((a) => a.startsWith('zero_grad() (line')));
  assert.ok(late.peakAllocated > early.peakAllocated, `${late.peakAllocated} > ${early.peakAllocated}`);
});

test('T5 under SDPA runs its attention in SDPA\'s fp32 math path (float position bias): more than its eager attention keeps under bf16 autocast', async () => {
  const t5 = (attention: string) => `import torch
from transformers import T5ForConditionalGeneration
model = T5ForConditionalGeneration.from_pretrained("t5-small", attn_implementation="${attention}").cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(10):
    ids = torch.randint(0, 32000, (16, 512)).cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        outputs = model(input_ids=ids, labels=ids)
    outputs.loss.backward()
    opt.step()
    opt.zero_grad()
`;
  const sdpa = await estimateText(t5('sdpa'), 'sdpa.py');
  const eager = await estimateText(t5('eager'), 'eager.py');
  // Per head and token pair: fp32 softmax, bool dropout mask, fp32 dropped probabilities (9 bytes) against eager's
  // fp32 softmax, mask and bf16 copy (7 bytes); t5-small: 8 heads, 6 encoder and 6 decoder layers.
  const pairs = 16 * 8 * 512 * 512 * (6 + 6 + 6); // encoder self, decoder self and cross attention
  assert.equal(sdpa.breakdown!.activations - eager.breakdown!.activations, pairs * 2);
});
