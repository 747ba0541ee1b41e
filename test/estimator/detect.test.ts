import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { estimateFixture, estimateText, repoRoot } from './helpers';

// Lines in the results are 1-based, as the CLI prints them.

test('Hugging Face classifier with autocast and GradScaler', async () => {
  const r = await estimateFixture('hf_bert_amp.py');
  const d = r.detected;
  assert.deepEqual(d.model, { name: 'bert-base-uncased', source: 'catalog', line: 9 });
  assert.equal(d.parameters, 109_483_778); // base model + 2-label classifier
  // Lines point at where the value is written (the constants), not where it is used.
  assert.deepEqual(d.batchSize, { value: 32, line: 5, how: 'literal' });
  assert.deepEqual(d.seqLen, { value: 128, line: 6, how: 'literal' });
  assert.deepEqual(d.precision, { value: 'fp16-amp', line: 21, how: 'literal' });
  assert.deepEqual(d.optimizer, { value: 'adamw', line: 10, how: 'literal' });
  assert.equal(r.config.optimizerImpl, 'fused');
  assert.equal(d.mode.value, 'train');
  assert.deepEqual(r.assumptions, []);
});

test('torchvision ViT cast to bf16, argparse defaults, Resize', async () => {
  const d = (await estimateFixture('torchvision_vit.py')).detected;
  assert.deepEqual(d.model, { name: 'vit_b_16', source: 'torchvision', line: 14 });
  assert.equal(d.parameters, 85_806_346); // 10 classes instead of 1000
  assert.deepEqual(d.batchSize, { value: 16, line: 8, how: 'argparse-default' }); // the argparse default
  assert.deepEqual(d.imageSize, { value: 224, line: 9, how: 'argparse-default' });
  assert.equal(d.precision.value, 'bf16');
  assert.equal(d.weightDtype.value, 'bf16');
  assert.equal(d.optimizer.value, 'sgd');
  assert.equal(d.seqLen, null);
});

test('custom nn.Module CNN counted from its layers', async () => {
  const r = await estimateFixture('custom_cnn.py');
  assert.equal(r.detected.model.name, 'SmallCNN');
  assert.equal(r.detected.model.source, 'custom');
  assert.equal(r.detected.parameters, 1_070_986); // what PyTorch counts for this module
  assert.deepEqual(r.detected.imageSize, { value: 32, line: 20, how: 'literal' });
  assert.deepEqual(r.detected.batchSize, { value: 128, line: 21, how: 'literal' });
  assert.equal(r.detected.optimizer.value, 'sgd-momentum');
});

test('custom modules: Sequential MLP, LSTM language model, TransformerEncoder with repeats', async () => {
  assert.equal((await estimateFixture('custom_mlp.py')).detected.parameters, 1_863_690);
  const lstm = await estimateFixture('custom_lstm.py');
  assert.equal(lstm.detected.parameters, 11_368_208);
  assert.deepEqual(lstm.detected.seqLen, { value: 128, line: 5, how: 'literal' });
  const encoder = await estimateFixture('custom_encoder.py');
  assert.equal(encoder.detected.parameters, 34_275_330);
  // [Block() for _ in range(n)] repeats
  const text = [
    'import torch.nn as nn',
    'class Block(nn.Module):',
    '    def __init__(self, d):',
    '        super().__init__()',
    '        self.fc = nn.Linear(d, d)',
    '        self.norm = nn.LayerNorm(d)',
    'class Net(nn.Module):',
    '    def __init__(self, depth=4):',
    '        super().__init__()',
    '        self.blocks = nn.ModuleList([Block(256) for _ in range(depth)])',
    '        self.out = nn.Linear(256, 10)',
    'model = Net().cuda()',
    'loss.backward()',
  ].join('\n');
  const r = await estimateText(text, 'repeat.py');
  assert.equal(r.detected.parameters, 4 * (256 * 256 + 256 + 2 * 256) + 256 * 10 + 10);
});

test('LoRA on a bf16 checkpoint: trainable subset and the checkpoint dtype', async () => {
  const r = await estimateFixture('lora_llama.py');
  const d = r.detected;
  assert.equal(d.model.name, 'TinyLlama/TinyLlama-1.1B-Chat-v1.0');
  assert.equal(d.trainableParameters, 2_252_800); // r=16 on q_proj and v_proj, as PEFT counts
  assert.deepEqual(d.lora, { rank: 16, targetModules: ['q_proj', 'v_proj'], dropout: 0, line: 8 }); // no lora_dropout: PEFT's 0
  assert.equal(d.weightDtype.value, 'bf16');
  assert.deepEqual(d.seqLen, { value: 512, line: 14, how: 'literal' });
  assert.equal(d.batchSize.value, 4);
  assert.ok(r.breakdown.optimizerStates < 20e6);
});

test('Trainer script: TrainingArguments batch, accumulation, bf16, fused AdamW default', async () => {
  const r = await estimateFixture('trainer_bert.py');
  const d = r.detected;
  assert.deepEqual(d.batchSize, { value: 32, line: 13, how: 'literal' });
  assert.equal(d.accumulation, 2);
  assert.deepEqual(d.precision, { value: 'bf16-amp', line: 15, how: 'literal' });
  assert.equal(d.optimizer.value, 'adamw');
  assert.equal(r.config.optimizerImpl, 'fused');
  assert.equal(d.mode.value, 'train');
});

test('from_config with XxxConfig kwargs; eval under no_grad; eager attention', async () => {
  const qwen = await estimateFixture('qwen_from_config.py');
  assert.equal(qwen.detected.model.source, 'from-config');
  assert.equal(qwen.detected.parameters, 494_032_768);
  assert.equal(qwen.detected.weightDtype.value, 'fp32'); // from_config builds fp32 weights
  const evalOnly = await estimateFixture('eval_gpt2.py');
  assert.equal(evalOnly.detected.mode.value, 'infer-no-grad');
  assert.equal(evalOnly.detected.attention, 'eager');
  assert.equal(evalOnly.breakdown.gradients, 0);
  assert.ok(evalOnly.assumptions.some((a) => a.includes('seq_len')));
});

test('transformers 5 loads a checkpoint in its stored dtype unless told otherwise', async () => {
  const text = 'from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")\nloss.backward()\n';
  const r = await estimateText(text, 'x.py');
  assert.equal(r.detected.weightDtype.value, 'bf16');
  assert.ok(r.assumptions.some((a) => a.includes('bf16')));
  const fp32 = await estimateText(text.replace('")', '", torch_dtype=torch.float32)'), 'x.py');
  assert.equal(fp32.detected.weightDtype.value, 'fp32');
});

test('config.json next to the script', async () => {
  const dir = fs.mkdtempSync(path.join(repoRoot, '.tmp-estimator-'));
  try {
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_type: 'llama', hidden_size: 512, num_hidden_layers: 4,
      num_attention_heads: 8, num_key_value_heads: 8, intermediate_size: 1376, vocab_size: 32000, max_position_embeddings: 1024,
      tie_word_embeddings: false, torch_dtype: 'float32' }));
    const text = 'from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(".")\nloss.backward()\n';
    const r = await estimateText(text, path.join(dir, 'train.py'));
    assert.equal(r.detected.model.source, 'config-json');
    assert.equal(r.detected.parameters, 2 * 32000 * 512 + 4 * (4 * 512 * 512 + 3 * 512 * 1376 + 2 * 512) + 512);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('checkpointing, accumulation constants, DeepSpeed ZeRO stage, 8-bit Adam, frozen backbone', async () => {
  const text = [
    'import bitsandbytes as bnb',
    'model = AutoModelForCausalLM.from_pretrained("gpt2")',
    'model.gradient_checkpointing_enable()',
    'accumulation_steps = 4',
    'opt = bnb.optim.AdamW8bit(model.parameters())',
    'ds_config = {"zero_optimization": {"stage": 3}}',
    'for p in model.transformer.parameters():',
    '    p.requires_grad = False',
    'loss.backward()',
  ].join('\n');
  const r = await estimateText(text, 'x.py');
  assert.equal(r.detected.checkpointing, true);
  assert.equal(r.detected.accumulation, 4);
  assert.equal(r.detected.optimizer.value, 'adam-8bit');
  assert.equal(r.detected.strategy, 'zero3');
  assert.ok(r.detected.trainableParameters < r.detected.parameters);
  // The snippet never calls zero_grad(): gradients live through the next forward, and that is said.
  assert.equal(r.config.gradsKeptAcrossSteps, true);
  assert.ok(r.assumptions.some((a) => a.includes('zero_grad')));
});

test('no model in the script: assumed, and said so', async () => {
  const r = await estimateText('print("hello")\n', 'x.py');
  assert.equal(r.detected.model.line, null);
  assert.ok(r.assumptions.length >= 2);
});

test('FSDP SHARD_GRAD_OP is found in FSDP1, FSDP2 and Trainer spellings; FULL_SHARD and DDP are not it', async () => {
  const model = ['from transformers import AutoModelForCausalLM', 'model = AutoModelForCausalLM.from_pretrained("gpt2").cuda()'];
  const loop = ['for x in loader:', '    model(x).loss.backward()', '    opt.step()', '    opt.zero_grad()'];
  const cases: Array<[string[], boolean]> = [
    [['from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy',
      'model = FSDP(model, sharding_strategy=ShardingStrategy.SHARD_GRAD_OP)'], true],
    [['from torch.distributed.fsdp import fully_shard', 'fully_shard(model, reshard_after_forward=False)'], true],
    [['from transformers import TrainingArguments', 'args = TrainingArguments("out", fsdp="shard_grad_op auto_wrap")'], true],
    [['from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy',
      'model = FSDP(model, sharding_strategy=ShardingStrategy.FULL_SHARD)'], false],
    [['from torch.distributed.fsdp import fully_shard', 'fully_shard(model)'], false],
  ];
  for (const [wrap, gradOp] of cases) {
    const r = await estimateText([...model, ...wrap, 'opt = torch.optim.AdamW(model.parameters())', ...loop].join('\n'), 'x.py');
    assert.equal(r.detected.strategy, 'fsdp', wrap.join('; '));
    assert.equal(r.config.shardGradOp, gradOp, wrap.join('; '));
    assert.equal(r.assumptions.some((a) => a.includes('SHARD_GRAD_OP')), gradOp, wrap.join('; '));
  }
});

test('a custom module built from a config the script never defines is unresolved, never a NaN estimate', async () => {
  // Found by test/engine/fuzz.test.ts: a nanoGPT block made at module level from an undefined `config`.
  const text = [
    'import torch', 'import torch.nn as nn', 'import torch.nn.functional as F',
    'class CausalSelfAttention(nn.Module):',
    '    def __init__(self, config):', '        super().__init__()',
    '        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)', '        self.n_embd = config.n_embd', '        self.n_head = config.n_head',
    '    def forward(self, x):', '        B, T, C = x.size()', '        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)',
    '        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)',
    '        return F.scaled_dot_product_attention(q, q, q, is_causal=True)',
    'model = CausalSelfAttention(config).cuda()',
    'for x in loader:', '    model(x).sum().backward()',
  ].join('\n');
  const r = await estimateText(text, 'x.py');
  assert.ok(Number.isFinite(r.peakAllocated), `peak allocated is ${r.peakAllocated}`);
  assert.equal(r.unresolved?.reason, 'the layer sizes of CausalSelfAttention are not values the script determines');
  assert.equal(r.unresolved?.line, 14);
});
