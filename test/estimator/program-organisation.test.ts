// How public repositories organise a training program: argparse sub-commands, model registries with a config file,
// several models in one script. The estimate must read the model the script builds from these.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { estimateText } from './helpers';

/** A Llama trained through an argparse `train` sub-command whose sizes come from a shared parent parser. */
function subcommandScript(parseCall: string, hiddenDefault = '512'): string {
  return [
    'import argparse, sys',
    'import torch',
    'from transformers import LlamaConfig, LlamaForCausalLM',
    'def cmd_train(args):',
    '    config = LlamaConfig(vocab_size=args.vocab_size, hidden_size=args.hidden_size, intermediate_size=1376,',
    '                         num_hidden_layers=args.num_layers, num_attention_heads=8, num_key_value_heads=2)',
    '    model = LlamaForCausalLM(config).cuda()',
    '    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)',
    '    for _ in range(3):',
    '        ids = torch.randint(0, args.vocab_size, (args.batch_size, args.seq_len), device="cuda")',
    '        loss = model(input_ids=ids, labels=ids).loss',
    '        loss.backward()',
    '        opt.step()',
    '        opt.zero_grad()',
    'def cmd_eval(args):',
    '    print(args.ckpt)',
    'def main(argv=None):',
    '    parser = argparse.ArgumentParser()',
    '    sub = parser.add_subparsers(dest="command", required=True)',
    '    common = argparse.ArgumentParser(add_help=False)',
    '    common.add_argument("--vocab-size", type=int, default=8000)',
    `    common.add_argument("--hidden-size", type=int, default=${hiddenDefault})`,
    '    common.add_argument("--num-layers", type=int, default=4)',
    '    p_eval = sub.add_parser("eval", parents=[common])',
    '    p_eval.add_argument("--ckpt", default="x.pt")',
    '    p_eval.add_argument("--batch-size", type=int, default=64)',
    '    p_eval.set_defaults(func=cmd_eval)',
    '    p_train = sub.add_parser("train", parents=[common])',
    '    p_train.add_argument("--batch-size", type=int, default=6)',
    '    p_train.add_argument("--seq-len", type=int, default=256)',
    '    p_train.set_defaults(func=cmd_train)',
    `    args = ${parseCall}`,
    '    args.func(args)',
    'if __name__ == "__main__":',
    '    main()',
  ].join('\n');
}

test('argparse sub-commands: the named sub-command\'s parser (with its parents\' arguments) gives the values', async () => {
  const result = await estimateText(subcommandScript('parser.parse_args(sys.argv[1:] or ["train"])'), '/tmp/llama_sub.py');
  assert.equal(result.detected.model.source, 'from-config');
  const spec = result.config.model;
  assert.ok(spec.kind === 'transformer');
  if (spec.kind !== 'transformer') return;
  assert.equal(spec.hidden, 512);
  assert.equal(spec.layers, 4);
  assert.equal(spec.vocab, 8000);
  assert.equal(spec.kvHeads, 2);
  // The train parser's batch size (6), not the eval parser's (64).
  assert.equal(result.detected.batchSize.value, 6);
  assert.equal(result.detected.seqLen?.value, 256);
});

test('argparse sub-commands, none named: the first declared sub-command is the one read', async () => {
  const result = await estimateText(subcommandScript('parser.parse_args()'), '/tmp/llama_sub_first.py');
  // "eval" comes first here: its function builds no model, so nothing is resolved rather than a 7B default.
  assert.notEqual(result.detected.model.source, 'from-config');
});

test('a config size the script does not determine leaves the model unresolved, never the base checkpoint\'s size', async () => {
  const result = await estimateText(subcommandScript('parser.parse_args(["train"])', 'int(open("h.txt").read())'), '/tmp/llama_sub_unknown.py');
  assert.equal(result.detected.model.source, 'unresolved');
  assert.match(result.unresolved?.reason ?? "", /hidden_size/);
});

test('a model registry filled by a decorator, the class chosen by a string from a JSON file read through pathlib', async () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'oomguard-registry-'));
  fs.mkdirSync(path.join(folder, 'configs'));
  fs.writeFileSync(path.join(folder, 'configs', 'model.json'), JSON.stringify({ arch: 'mlp', model_kwargs: { width: 384, depth: 3 }, data: { batch_size: 12 } }));
  const script = [
    'import json',
    'from pathlib import Path',
    'import torch, torch.nn as nn',
    'REGISTRY = {}',
    'def register(name):',
    '    def deco(cls):',
    '        REGISTRY[name] = cls',
    '        return cls',
    '    return deco',
    '@register("mlp")',
    'class MLP(nn.Module):',
    '    def __init__(self, width, depth):',
    '        super().__init__()',
    '        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])',
    '        self.heads = nn.ModuleDict({"a": nn.Linear(width, 10), "b": nn.Linear(width, 2)})',
    '    def forward(self, x):',
    '        for layer in self.layers:',
    '            x = torch.relu(layer(x))',
    '        return {k: head(x) for k, head in self.heads.items()}',
    '@register("tiny")',
    'class Tiny(nn.Module):',
    '    def __init__(self, width, depth):',
    '        super().__init__()',
    '        self.fc = nn.Linear(width, 1)',
    'def build_model(cfg):',
    '    return REGISTRY[cfg["arch"]](**cfg["model_kwargs"])',
    'cfg = json.loads((Path(__file__).parent / "configs" / "model.json").read_text())',
    'model = build_model(cfg).cuda()',
    'opt = torch.optim.Adam(model.parameters())',
    'for _ in range(3):',
    '    x = torch.randn(cfg["data"]["batch_size"], 384, device="cuda")',
    '    out = model(x)',
    '    loss = out["a"].sum() + out["b"].sum()',
    '    loss.backward()',
    '    opt.step()',
    '    opt.zero_grad()',
  ].join('\n');
  const result = await estimateText(script, path.join(folder, 'train.py'));
  assert.equal(result.detected.model.name, 'MLP');
  assert.equal(result.detected.parameters, 3 * (384 * 384 + 384) + (384 * 10 + 10) + (384 * 2 + 2));
  assert.equal(result.detected.batchSize.value, 12);
  fs.rmSync(folder, { recursive: true });
});

test('a Trainer class that picks its optimizer by a config value: the branch taken, not the last optimizer written', async () => {
  const script = (name: string) => [
    'import torch, torch.nn as nn',
    `CFG = {"optim": {"name": "${name}", "lr": 0.1}, "batch_size": 16}`,
    'class Trainer:',
    '    def __init__(self, cfg):',
    '        self.cfg = cfg',
    '        self.model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).cuda()',
    '        self.optimizer = self.build_optimizer(cfg["optim"])',
    '    def build_optimizer(self, ocfg):',
    '        params = [p for p in self.model.parameters() if p.requires_grad]',
    '        if ocfg["name"] == "adamw":',
    '            return torch.optim.AdamW(params, lr=ocfg["lr"])',
    '        if ocfg["name"] == "sgd":',
    '            return torch.optim.SGD(params, lr=ocfg["lr"])',
    '        raise ValueError(ocfg["name"])',
    '    def fit(self):',
    '        for _ in range(3):',
    '            x = torch.randn(self.cfg["batch_size"], 256, device="cuda")',
    '            self.model(x).sum().backward()',
    '            self.optimizer.step()',
    '            self.optimizer.zero_grad()',
    'Trainer(CFG).fit()',
  ].join('\n');
  assert.equal((await estimateText(script('adamw'), '/tmp/trainer_adamw.py')).detected.optimizer.value, 'adamw');
  assert.equal((await estimateText(script('sgd'), '/tmp/trainer_sgd.py')).detected.optimizer.value, 'sgd');
});

test('distillation: the library model the optimizer holds is the trained one; the frozen teacher costs its weights', async () => {
  const script = (teacherFirst: boolean) => {
    const teacher = ['    teacher = make("resnet50").cuda().eval()', '    for p in teacher.parameters():', '        p.requires_grad_(False)'];
    const student = ['    student = make("resnet18").cuda()'];
    return [
      'import torch, torch.nn.functional as F',
      'from torchvision import models',
      'def make(arch):',
      '    return getattr(models, arch)(weights=None, num_classes=100)',
      'def main():',
      ...(teacherFirst ? [...teacher, ...student] : [...student, ...teacher]),
      '    opt = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)',
      '    for _ in range(3):',
      '        x = torch.randn(32, 3, 224, 224, device="cuda")',
      '        with torch.no_grad():',
      '            t = teacher(x)',
      '        loss = F.kl_div(F.log_softmax(student(x), 1), F.softmax(t, 1))',
      '        opt.zero_grad()',
      '        loss.backward()',
      '        opt.step()',
      'main()',
    ].join('\n');
  };
  for (const teacherFirst of [true, false]) {
    const result = await estimateText(script(teacherFirst), '/tmp/distill.py');
    assert.equal(result.detected.model.name, 'resnet18');
    // resnet18 with 100 classes: 11,227,812 parameters, all trained (the freezing loop is the teacher's).
    assert.equal(result.detected.parameters, 11_227_812);
    assert.equal(result.detected.trainableParameters, 11_227_812);
    if (teacherFirst) {
      // The teacher (resnet50, 100 classes: 23,712,932) is on the GPU: its weights are counted beside the student's.
      assert.equal(result.config.modelCopies, 23_712_932 / 11_227_812);
    }
  }
});

test('a CTC model from a configuration class the estimator does not model is unresolved, and says which class', async () => {
  const script = [
    'import torch',
    'from transformers import Data2VecAudioConfig, Data2VecAudioForCTC',
    'model = Data2VecAudioForCTC(Data2VecAudioConfig(vocab_size=32)).cuda()',
    'opt = torch.optim.AdamW(model.parameters())',
    'loss = model(input_values=torch.randn(4, 16000, device="cuda"), labels=torch.randint(1, 32, (4, 20), device="cuda")).loss',
    'loss.backward()',
    'opt.step()',
  ].join('\n');
  const result = await estimateText(script, '/tmp/ctc.py');
  assert.equal(result.detected.model.source, 'unresolved');
  assert.match(result.unresolved?.reason ?? '', /Data2VecAudioConfig/);
});

test('a conditional GAN: spectral_norm keeps the layer it wraps, and the discriminator is traced with one class label per sample', async () => {
  const script = [
    'import torch, torch.nn as nn, torch.nn.functional as F',
    'from torch.nn.utils import spectral_norm',
    'class Images(torch.utils.data.Dataset):',
    '    def __init__(self, n):',
    '        self.x = torch.rand(n, 3, 32, 32)',
    '        self.y = torch.randint(0, 10, (n,))',
    '    def __len__(self):',
    '        return len(self.x)',
    '    def __getitem__(self, i):',
    '        return self.x[i], self.y[i]',
    'class G(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.embed = nn.Embedding(10, 64)',
    '        self.fc = nn.Linear(128, 3 * 32 * 32)',
    '    def forward(self, z, y):',
    '        return torch.tanh(self.fc(torch.cat([z, self.embed(y)], 1))).view(-1, 3, 32, 32)',
    'class D(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.conv = spectral_norm(nn.Conv2d(3, 256, 3, padding=1))',
    '        self.linear = spectral_norm(nn.Linear(256, 1))',
    '        self.proj = spectral_norm(nn.Embedding(10, 256))',
    '    def forward(self, x, y):',
    '        h = F.leaky_relu(self.conv(x), 0.1).sum(dim=(2, 3))',
    '        return self.linear(h).squeeze(1) + (self.proj(y) * h).sum(1)',
    'g = G().cuda()',
    'd = D().cuda()',
    'opt_g = torch.optim.Adam(g.parameters())',
    'opt_d = torch.optim.Adam(d.parameters())',
    'loader = torch.utils.data.DataLoader(Images(512), batch_size=64)',
    'for real, y in loader:',
    '    real, y = real.cuda(), y.cuda()',
    '    z = torch.randn(64, 64, device="cuda")',
    '    with torch.no_grad():',
    '        fake = g(z, y)',
    '    d_loss = F.relu(1 - d(real, y)).mean() + F.relu(1 + d(fake, y)).mean()',
    '    opt_d.zero_grad()',
    '    d_loss.backward()',
    '    opt_d.step()',
    '    g_loss = -d(g(z, y), y).mean()',
    '    opt_g.zero_grad()',
    '    g_loss.backward()',
    '    opt_g.step()',
  ].join('\n');
  const result = await estimateText(script, '/tmp/cgan.py');
  const generator = 10 * 64 + 128 * 3072 + 3072;
  const discriminator = 3 * 256 * 9 + 256 + 256 + 1 + 10 * 256;
  assert.equal(result.detected.parameters, generator + discriminator);
  const spec = result.config.model;
  assert.ok(spec.kind === 'layers');
  // Class labels as the discriminator's images would embed 3 x 32 x 32 ids into 256 values each.
  if (spec.kind === 'layers') assert.ok(spec.savedElementsPerSample < 3 * 32 * 32 * 256, `saved ${spec.savedElementsPerSample}`);
});

test('two models built in one unpacking assignment (`g, d = G().cuda(), D().cuda()`) are both the trained models', async () => {
  const classes = [
    'import torch, torch.nn as nn',
    'class G(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.net = nn.Sequential(nn.Linear(128, 1024), nn.ReLU(), nn.Linear(1024, 784))',
    '    def forward(self, z):',
    '        return self.net(z)',
    'class D(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.net = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1))',
    '    def forward(self, x):',
    '        return self.net(x)',
  ];
  const loop = [
    'opt_g = torch.optim.Adam(g.parameters())',
    'opt_d = torch.optim.Adam(d.parameters())',
    'for step in range(100):',
    '    z = torch.randn(64, 128, device="cuda")',
    '    fake = g(z)',
    '    loss_d = d(fake.detach()).mean() - d(torch.randn(64, 784, device="cuda")).mean()',
    '    opt_d.zero_grad(); loss_d.backward(); opt_d.step()',
    '    loss_g = -d(fake).mean()',
    '    opt_g.zero_grad(); loss_g.backward(); opt_g.step()',
  ];
  const unpacked = await estimateText([...classes, 'g, d = G().cuda(), D().cuda()', ...loop].join('\n'), '/tmp/gan-unpacked.py');
  const separate = await estimateText([...classes, 'g = G().cuda()', 'd = D().cuda()', ...loop].join('\n'), '/tmp/gan-separate.py');
  const generator = 128 * 1024 + 1024 + 1024 * 784 + 784;
  const discriminator = 784 * 1024 + 1024 + 1024 + 1;
  assert.equal(unpacked.detected.parameters, generator + discriminator);
  assert.equal(unpacked.detected.model.name, separate.detected.model.name);
  assert.equal(unpacked.peakAllocated, separate.peakAllocated);
});

test('a module of the script around a library backbone: its head replaced, the feature width read from the catalog, both traced', async () => {
  const script = [
    'import torch, torch.nn as nn, torchvision',
    'class Embedder(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.backbone = torchvision.models.resnet18(weights=None)',
    '        width = self.backbone.fc.in_features',
    '        self.backbone.fc = nn.Identity()',
    '        self.head = nn.Sequential(nn.Linear(width, 256), nn.ReLU(), nn.Linear(256, 64))',
    '    def forward(self, x):',
    '        return self.head(self.backbone(x))',
    'class Images(torch.utils.data.Dataset):',
    '    def __len__(self):',
    '        return 64',
    '    def __getitem__(self, i):',
    '        return torch.rand(3, 160, 160)',
    'model = Embedder().cuda()',
    'opt = torch.optim.SGD(model.parameters(), lr=0.1)',
    'for x in torch.utils.data.DataLoader(Images(), batch_size=32):',
    '    loss = model(x.cuda()).pow(2).mean()',
    '    opt.zero_grad()',
    '    loss.backward()',
    '    opt.step()',
  ].join('\n');
  const result = await estimateText(script, '/tmp/embedder.py');
  assert.equal(result.detected.model.name, 'Embedder');
  // resnet18 without its classifier (11,176,512) and the head on its 512 features.
  assert.equal(result.detected.parameters, 11_176_512 + (512 * 256 + 256) + (256 * 64 + 64));
  const spec = result.config.model;
  assert.ok(spec.kind === 'layers');
  // What backward keeps is the backbone's at 160 px (its catalog build), not nothing.
  if (spec.kind === 'layers') assert.ok(spec.savedElementsPerSample > 1_000_000, `saved ${spec.savedElementsPerSample}`);
});

test('T5Config(tie_word_embeddings=False): transformers 5 ties the head to the shared embedding all the same', async () => {
  const script = [
    'import torch',
    'from transformers import T5Config, T5ForConditionalGeneration',
    'config = T5Config(vocab_size=32128, d_model=256, d_kv=32, d_ff=512, num_layers=2, num_decoder_layers=2, num_heads=8,',
    '                  feed_forward_proj="gated-gelu", tie_word_embeddings=False)',
    'model = T5ForConditionalGeneration(config).cuda()',
    'opt = torch.optim.AdamW(model.parameters())',
    'ids = torch.randint(0, 32128, (4, 64), device="cuda")',
    'model(input_ids=ids, labels=ids).loss.backward()',
    'opt.step()',
  ].join('\n');
  const result = await estimateText(script, '/tmp/t5_untied.py');
  // Measured with transformers 5.17 (test/gpu/probe-res, H200 session of 2026-12-02): 11,374,080 parameters.
  assert.equal(result.detected.parameters, 11_374_080);
});

test('gradient accumulation read from the guard around the optimizer step (`if (i + 1) % self.accum == 0:`)', async () => {
  const script = [
    'import torch, torch.nn as nn',
    'CFG = {"trainer": {"accumulate": 4}}',
    'class Trainer:',
    '    def __init__(self, cfg):',
    '        self.model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).cuda()',
    '        self.opt = torch.optim.AdamW(self.model.parameters())',
    '        self.accum = cfg["trainer"]["accumulate"]',
    '    def fit(self):',
    '        for i in range(16):',
    '            x = torch.randn(32, 512, device="cuda")',
    '            (self.model(x).sum() / self.accum).backward()',
    '            if (i + 1) % self.accum == 0:',
    '                self.opt.step()',
    '                self.opt.zero_grad(set_to_none=True)',
    'Trainer(CFG).fit()',
  ].join('\n');
  const result = await estimateText(script, '/tmp/trainer_accum.py');
  assert.equal(result.detected.accumulation, 4);
});
