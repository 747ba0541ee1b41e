// Steps written by hand that hold memory a plain training loop does not (issue #13, held-out set 7): an optimizer
// over fp32 master copies of half-precision weights, a model made in fp32 and then cast, per-sample gradients from
// torch.func, and dropout masks a library model keeps when its builder is given a dropout rate. Every figure below is
// computed by hand in the comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

// Three linears of a 4096-wide MLP: 3 x 4096 x 4096 + 2 x 4096 + 10 x 4096 weights and 2 x 4096 + 10 biases.
const MLP_PARAMETERS = 2 * (4096 * 4096 + 4096) + 4096 * 10 + 10;

const handMixedPrecision = (copy: string) => `import torch
import torch.nn as nn

WIDTH = 4096
net = nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.GELU(), nn.Linear(WIDTH, WIDTH), nn.GELU(), nn.Linear(WIDTH, 10)).cuda().to(torch.bfloat16)
shadow = ${copy}
opt = torch.optim.Adam(shadow, lr=1e-4)

for step in range(10):
    x = torch.randn(64, WIDTH, device="cuda", dtype=torch.bfloat16)
    y = torch.randint(0, 10, (64,), device="cuda")
    loss = nn.functional.cross_entropy(net(x).float(), y)
    loss.backward()
    for w, s in zip(net.parameters(), shadow):
        s.grad = w.grad.float()
        w.grad = None
    opt.step()
    opt.zero_grad(set_to_none=True)
    with torch.no_grad():
        for w, s in zip(net.parameters(), shadow):
            w.copy_(s)
`;

test('an optimizer over fp32 copies of bf16 weights keeps fp32 master weights, fp32 states and fp32 gradients at the step', async () => {
  const r = await estimateText(handMixedPrecision('[w.detach().clone().to(torch.float32).requires_grad_() for w in net.parameters()]'), 'hand_master.py');
  assert.equal(r.detected.parameters, MLP_PARAMETERS);
  assert.equal(r.detected.weightDtype.value, 'bf16');
  // The model's own weights stay bf16: 2 bytes a parameter.
  assert.equal(r.breakdown.weights, 2 * MLP_PARAMETERS);
  // Adam's two moments of the fp32 copies (2 x 4 bytes) and the copies themselves (4 bytes): 12 bytes a parameter,
  // where states on the bf16 parameters would be 4.
  assert.equal(r.breakdown.optimizerStates, 12 * MLP_PARAMETERS);
  assert.equal(r.peakPhase, 'optimizer-step');
  // The step reads the fp32 gradients copied from the bf16 ones.
  assert.equal(r.breakdown.gradients, 4 * MLP_PARAMETERS);
  assert.ok(r.assumptions.some((a) => /fp32 copies of the bf16 parameters/.test(a)), r.assumptions.join('\n'));
});

test('the same optimizer given the parameters themselves keeps its states in the weights\' bf16', async () => {
  const r = await estimateText(handMixedPrecision('list(net.parameters())'), 'hand_no_master.py');
  assert.equal(r.breakdown.optimizerStates, 4 * MLP_PARAMETERS);
  assert.ok(!r.assumptions.some((a) => /fp32 copies/.test(a)), r.assumptions.join('\n'));
});

test('fp32 copies of fp32 weights are one more fp32 copy beside the states', async () => {
  const text = handMixedPrecision('[w.detach().float() for w in net.parameters()]').replace('.cuda().to(torch.bfloat16)', '.cuda()');
  const r = await estimateText(text, 'fp32_copies.py');
  assert.equal(r.detected.weightDtype.value, 'fp32');
  // Adam's two fp32 moments plus the copies: 12 bytes a parameter; the model's weights 4.
  assert.equal(r.breakdown.optimizerStates, 12 * MLP_PARAMETERS);
  assert.equal(r.breakdown.weights, 4 * MLP_PARAMETERS);
});

// A small decoder sampling with a cache it allocates itself: 6 blocks, each given a cache module in a loop after
// the model is built; each cache registers two bf16 buffers of 16 x 8 x 4096 x 64.
const cachedSampler = (slots: string) => `import torch
import torch.nn as nn

WIDTH = 512
BLOCKS = 6
BATCH = 16
SLOTS = ${slots}


class Slots(nn.Module):
    def __init__(self, rows, heads, length, dim):
        super().__init__()
        self.register_buffer("keys", torch.zeros(rows, heads, length, dim, dtype=torch.bfloat16), persistent=False)
        self.register_buffer("values", torch.zeros(rows, heads, length, dim, dtype=torch.bfloat16), persistent=False)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.store = None

    def forward(self, x):
        return x + self.proj(x)


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(1000, WIDTH)
        self.blocks = nn.ModuleList([Block() for _ in range(BLOCKS)])
        self.out = nn.Linear(WIDTH, 1000)

    def forward(self, ids):
        h = self.embed(ids)
        for block in self.blocks:
            h = block(h)
        return self.out(h)


net = Sampler().cuda().to(torch.bfloat16)
for block in net.blocks:
    block.store = Slots(BATCH, 8, SLOTS, 64).cuda()
ids = torch.randint(0, 1000, (BATCH, 128), device="cuda")
with torch.no_grad():
    for _ in range(32):
        logits = net(ids)
        ids = torch.cat([ids, logits[:, -1:].argmax(-1)], dim=1)
`;

test('buffers a module registers are counted at the size they are made, in every block the loop gives one', async () => {
  const small = await estimateText(cachedSampler('1024'), 'cache_small.py');
  const large = await estimateText(cachedSampler('4096'), 'cache_large.py');
  // 6 blocks x 2 buffers x 16 x 8 x 4096 x 64 x 2 bytes = 805,306,368 bytes; at 1024 slots a quarter of it.
  const cache = (slots: number) => 6 * 2 * 16 * 8 * slots * 64 * 2;
  assert.equal(large.peakAllocated - small.peakAllocated, cache(4096) - cache(1024));
  assert.ok(large.assumptions.some((a) => /buffers the script's modules register/.test(a)), large.assumptions.join('\n'));
  // The cache's (16, 8, 4096, 64) shape is no image: nothing is said about one.
  assert.ok(!large.assumptions.some((a) => /the images are/.test(a)), large.assumptions.join('\n'));
});

// Per-sample gradients with torch.func on an MLP of 784 -> 1024 -> 1024 -> 10: 784 x 1024 + 1024 + 1024 x 1024 +
// 1024 + 1024 x 10 + 10 = 1,863,690 parameters.
const MNIST_MLP = 784 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 * 10 + 10;
const perSampleStep = (apply: string, freed: boolean) => `import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.func as tf

ROWS = 256
net = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)).cuda()
weights = {k: v.detach() for k, v in net.named_parameters()}


def sample_loss(w, x, y):
    return F.cross_entropy(tf.functional_call(net, w, (x[None],)), y[None])


sample_grads = tf.vmap(tf.grad(sample_loss), in_dims=(None, 0, 0))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for it in range(100):
    x = torch.randn(ROWS, 784, device="cuda")
    y = torch.randint(0, 10, (ROWS,), device="cuda")
    per = ${apply}
    for name, p in net.named_parameters():
        p.grad = per[name].clamp(-1, 1).mean(0)
    opt.step()
    opt.zero_grad(set_to_none=True)
${freed ? '    del per\n' : ''}`;

test('per-sample gradients from vmap(grad(...)) train the model: batch x parameters of fp32 gradients, twice where the loop keeps the last step\'s', async () => {
  const freed = await estimateText(perSampleStep('sample_grads(weights, x, y)', true), 'per_sample_freed.py');
  assert.equal(freed.detected.mode.value, 'train');
  assert.equal(freed.detected.parameters, MNIST_MLP);
  assert.equal(freed.detected.trainableParameters, MNIST_MLP);
  // 256 samples x 1,863,690 parameters x 4 bytes. An MLP keeps little else in vmap, so the step peaks when it
  // clips: the per-sample gradients, the .grad made so far (all of them, 4 bytes a parameter, at the optimizer's
  // step) and one layer's per-sample product (the 1024 x 1024 linear: 256 x 1,049,600 x 4 bytes).
  const perSample = 256 * MNIST_MLP * 4;
  assert.equal(freed.peakPhase, 'optimizer-step');
  assert.equal(freed.breakdown.gradients, perSample + 4 * MNIST_MLP);
  assert.ok(freed.breakdown.other >= 256 * (1024 * 1024 + 1024) * 4, `${freed.breakdown.other}`);
  assert.ok(freed.assumptions.some((a) => /per-sample gradients/.test(a)), freed.assumptions.join('\n'));
  // Without `del per`, the last step's per-sample gradients live through the next vmap: that is the peak.
  const kept = await estimateText(perSampleStep('sample_grads(weights, x, y)', false), 'per_sample_kept.py');
  assert.equal(kept.peakPhase, 'backward');
  assert.equal(kept.breakdown.gradients, 2 * perSample);
});

test('vmap over grad called where it is made is found too', async () => {
  const direct = await estimateText(perSampleStep('tf.vmap(tf.grad(sample_loss), in_dims=(None, 0, 0))(weights, x, y)', true), 'per_sample_direct.py');
  assert.equal(direct.detected.mode.value, 'train');
  assert.equal(direct.breakdown.gradients, 256 * MNIST_MLP * 4 + 4 * MNIST_MLP);
});

const vitFinetune = (build: string) => `import torch
import torch.nn.functional as F
import torchvision

model = ${build}.cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for _ in range(10):
    images = torch.randn(16, 3, 224, 224, device="cuda")
    labels = torch.randint(0, 100, (16,), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(images), labels)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
`;

test('a library ViT given a dropout rate keeps its dropout masks; without one, none', async () => {
  const plain = await estimateText(vitFinetune('torchvision.models.vit_b_16(num_classes=100)'), 'vit_plain.py');
  const dropped = await estimateText(vitFinetune('torchvision.models.vit_b_16(num_classes=100, dropout=0.2)'), 'vit_dropout.py');
  const zero = await estimateText(vitFinetune('torchvision.models.vit_b_16(num_classes=100, dropout=0.0)'), 'vit_dropout_zero.py');
  // 16 images x 197 tokens; each of the 12 blocks masks its attention output (768), its MLP's GELU (3072) and its
  // MLP output (768), one byte an element; the embeddings' dropout masks 768 more.
  const masks = 16 * 197 * (12 * (768 + 3072 + 768) + 768);
  assert.equal(dropped.breakdown.activations - plain.breakdown.activations, masks);
  assert.equal(zero.breakdown.activations, plain.breakdown.activations);
  assert.equal(dropped.detected.parameters, plain.detected.parameters);
});

// LoRA written by hand on a hub model: the same adapters PEFT would add, so the same figures as PEFT's.
const handLora = `import torch
import torch.nn as nn
from transformers import AutoModelForCausalLM

ADAPT = ["q_proj", "v_proj"]
RANK = 8


class LowRank(nn.Module):
    def __init__(self, inner, rank, p_drop):
        super().__init__()
        self.inner = inner
        self.lora_down = nn.Parameter(torch.zeros(rank, inner.in_features))
        self.lora_up = nn.Parameter(torch.zeros(inner.out_features, rank))
        self.drop = nn.Dropout(p_drop)

    def forward(self, x):
        return self.inner(x) + self.drop(x) @ self.lora_down.t() @ self.lora_up.t()


lm = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", torch_dtype=torch.bfloat16)
lm.requires_grad_(False)
for block in lm.model.layers:
    for name in ADAPT:
        setattr(block.self_attn, name, LowRank(getattr(block.self_attn, name), rank=RANK, p_drop=0.1))
lm.cuda()
opt = torch.optim.AdamW([p for p in lm.parameters() if p.requires_grad], lr=1e-4)
for _ in range(10):
    ids = torch.randint(0, 1000, (4, 256), device="cuda")
    loss = lm(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
`;

const peftLora = `import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

lm = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", torch_dtype=torch.bfloat16)
lm = get_peft_model(lm, LoraConfig(r=8, lora_dropout=0.1, target_modules=["q_proj", "v_proj"]))
lm.cuda()
opt = torch.optim.AdamW([p for p in lm.parameters() if p.requires_grad], lr=1e-4)
for _ in range(10):
    ids = torch.randint(0, 1000, (4, 256), device="cuda")
    loss = lm(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
`;

test('LoRA written by hand is read as LoRA: rank, targets and dropout from the script, the figures PEFT\'s adapters give', async () => {
  const byHand = await estimateText(handLora, 'hand_lora.py');
  const peft = await estimateText(peftLora, 'peft_lora.py');
  assert.deepEqual(byHand.detected.lora && { rank: byHand.detected.lora.rank, targets: byHand.detected.lora.targetModules, dropout: byHand.detected.lora.dropout },
    { rank: 8, targets: ['q_proj', 'v_proj'], dropout: 0.1 });
  // Qwen2.5-0.5B: q_proj 896 -> 896 and v_proj 896 -> 128 in each of 24 layers: 8 x (896 + 896 + 896 + 128) x 24.
  assert.equal(byHand.detected.trainableParameters, 8 * (896 + 896 + 896 + 128) * 24);
  assert.equal(byHand.detected.trainableParameters, peft.detected.trainableParameters);
  assert.equal(byHand.peakAllocated, peft.peakAllocated);
  assert.ok(!byHand.assumptions.some((a) => /assumed 95%/.test(a)), byHand.assumptions.join('\n'));
});

// A BYOL-style pair: an online encoder trained, a target encoder of the same class frozen and run under no_grad.
const onlineAndTarget = `import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1024, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 256))

    def forward(self, x):
        return self.net(x)


online = Encoder(2048).cuda()
target = Encoder(2048).cuda()
target.load_state_dict(online.state_dict())
for w in target.parameters():
    w.requires_grad = False
opt = torch.optim.Adam(online.parameters(), lr=1e-3)
for _ in range(100):
    a = torch.randn(512, 1024, device="cuda")
    b = a + 0.1 * torch.randn_like(a)
    with torch.no_grad():
        goal = target(b)
    loss = 2 - 2 * F.cosine_similarity(online(a), goal, dim=-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;

test('a frozen copy run only under no_grad is a second model, not a frozen share of the trained one', async () => {
  const r = await estimateText(onlineAndTarget, 'online_target.py');
  // 1024 x 2048 + 2048 + 2048 x 2048 + 2048 + 2048 x 256 + 256 parameters, all trained.
  const parameters = 1024 * 2048 + 2048 + 2048 * 2048 + 2048 + 2048 * 256 + 256;
  assert.equal(r.detected.parameters, parameters);
  assert.equal(r.detected.trainableParameters, parameters);
  assert.ok(!r.assumptions.some((a) => /assumed 95%/.test(a)), r.assumptions.join('\n'));
  assert.ok(r.assumptions.some((a) => /^target \(line \d+\) is on the GPU but no optimizer updates it/.test(a)), r.assumptions.join('\n'));
  // Both encoders' fp32 weights.
  assert.equal(r.breakdown.weights, 2 * 4 * parameters);
});

test('a library model given to a module of the script beside its own layers: what is not counted is said', async () => {
  const text = `import timm
import torch
import torch.nn as nn


class WithProjection(nn.Module):
    def __init__(self, trunk, proj):
        super().__init__()
        self.trunk, self.proj = trunk, proj

    def forward(self, x):
        return self.proj(self.trunk(x))


trunk = timm.create_model("vit_base_patch16_224", num_classes=0)
model = WithProjection(trunk, nn.Linear(768, 128)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for _ in range(10):
    loss = model(torch.randn(32, 3, 224, 224, device="cuda")).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;
  const r = await estimateText(text, 'with_projection.py');
  assert.ok(r.assumptions.some((a) => /WithProjection \(line \d+\) holds vit_base_patch16_224 beside modules of its own \(proj\)/.test(a)), r.assumptions.join('\n'));
});

test('what these readings do not take: input derivatives through vmap, scalar A/B parameters, a frozen backbone before a trained head', async () => {
  // vmap over jacrev of the model's own call differentiates its inputs (a physics-informed residual): no
  // per-sample parameter gradients.
  const pinn = await estimateText(`import torch
import torch.nn as nn
from torch.func import jacrev, vmap

net = nn.Sequential(nn.Linear(2, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 1)).cuda()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for _ in range(1000):
    pts = torch.rand(4096, 2, device="cuda")
    du = vmap(jacrev(net))(pts)
    loss = (du.sum(-1) - 1).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`, 'pinn_jacrev.py');
  assert.ok(!pinn.assumptions.some((a) => /per-sample gradients/.test(a)), pinn.assumptions.join('\n'));
  assert.ok(pinn.breakdown.gradients <= pinn.detected.parameters * 4, `${pinn.breakdown.gradients}`);

  // Two learnable scalars named a and b in a class that is no adapter: no LoRA.
  const affine = await estimateText(`import torch
import torch.nn as nn
from transformers import AutoModelForCausalLM


class Rescale(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.ones(1))
        self.b = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return self.a * x + self.b


lm = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B").cuda()
scale = Rescale().cuda()
opt = torch.optim.AdamW(list(lm.parameters()) + list(scale.parameters()), lr=1e-5)
for _ in range(10):
    ids = torch.randint(0, 1000, (2, 128), device="cuda")
    loss = scale(lm(input_ids=ids, labels=ids).loss)
    loss.backward()
    opt.step()
    opt.zero_grad()
`, 'rescale.py');
  assert.equal(affine.detected.lora, null);

  // A frozen torchvision backbone run under no_grad, then a trained head: the backbone stays the frozen model.
  const probe = await estimateText(`import torch
import torch.nn as nn
import torchvision

backbone = torchvision.models.resnet50().cuda()
for p in backbone.parameters():
    p.requires_grad = False
head = nn.Linear(1000, 10).cuda()
opt = torch.optim.SGD(head.parameters(), lr=0.1)
for _ in range(10):
    x = torch.randn(64, 3, 224, 224, device="cuda")
    with torch.no_grad():
        feats = backbone(x)
    loss = nn.functional.cross_entropy(head(feats), torch.randint(0, 10, (64,), device="cuda"))
    opt.zero_grad()
    loss.backward()
    opt.step()
`, 'linear_probe.py');
  assert.ok(!probe.assumptions.some((a) => /^backbone \(line \d+\) is on the GPU but no optimizer updates it/.test(a)), probe.assumptions.join('\n'));
  assert.ok(probe.detected.trainableParameters < probe.detected.parameters / 2, `${probe.detected.trainableParameters}`);
});

test('image batches of two sizes in one call (multi-crop) count as the images of the larger size with the same tokens', async () => {
  const text = `import timm
import torch
import torch.nn as nn

BIG, SMALL = 224, 96


class Views(nn.Module):
    def __init__(self):
        super().__init__()
        self.vit = timm.create_model("vit_small_patch16_224", num_classes=0, dynamic_img_size=True)

    def forward(self, crops):
        return torch.cat([self.vit(c) for c in crops])


net = Views().cuda()
opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
for _ in range(10):
    crops = [torch.randn(64, 3, BIG, BIG, device="cuda") for _ in range(2)] + [torch.randn(64, 3, SMALL, SMALL, device="cuda") for _ in range(4)]
    loss = net(crops).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
`;
  const r = await estimateText(text, 'two_sizes.py');
  // 2 x 64 images of 196 patches + a class token, 4 x 64 of 36 + 1: 128 x 197 + 256 x 37 tokens, as many as
  // 128 + 256 x 37 / 197 = 176.1 images of 224 px.
  assert.equal(r.detected.batchSize.value, 176);
  assert.equal(r.detected.imageSize?.value, 224);
  assert.ok(r.assumptions.some((a) => /6 image batches of 224x224, 96x96 px in one call/.test(a)), r.assumptions.join('\n'));
});
