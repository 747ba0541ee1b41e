// LoRA adapters by where they sit: peft on timm's fused attention projections.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

const timmLora = (targets: string): string => [
  'import timm, torch',
  'from peft import LoraConfig, get_peft_model',
  'model = timm.create_model("vit_small_patch16_224", num_classes=10)',
  `model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, target_modules=[${targets}])).cuda()`,
  'opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)',
  'for _ in range(3):',
  '    x = torch.randn(32, 3, 224, 224, device="cuda")',
  '    loss = model(x).logsumexp(-1).mean()',
  '    opt.zero_grad()',
  '    loss.backward()',
  '    opt.step()',
].join('\n');

test("peft targets timm's fused attention projections by their names (qkv, proj)", async () => {
  const attention = await estimateText(timmLora('"qkv", "proj"'), '/tmp/timm_lora_attention.py');
  const mlp = await estimateText(timmLora('"fc1"'), '/tmp/timm_lora_mlp.py');
  // ViT-S/16: width 384, 12 blocks; rank 8 adds r x (in + out) per adapted linear: qkv 384 -> 1152, proj 384 -> 384.
  const blocks = 12;
  assert.equal(attention.detected.trainableParameters, blocks * 8 * ((384 + 1152) + (384 + 384)));
  assert.equal(mlp.detected.trainableParameters, blocks * 8 * (384 + 1536));
});

const qwenStep = [
  'opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)',
  'for _ in range(3):',
  '    ids = torch.randint(0, 1000, (4, 512), device="cuda")',
  '    loss = model(input_ids=ids, labels=ids).loss',
  '    loss.backward()',
  '    opt.step()',
  '    opt.zero_grad()',
];

const parametrizedLora = [
  'import torch, torch.nn as nn',
  'import torch.nn.utils.parametrize as P',
  'from transformers import AutoModelForCausalLM',
  'class LowRankDelta(nn.Module):',
  '    def __init__(self, out_f, in_f, r):',
  '        super().__init__()',
  '        self.lora_A = nn.Parameter(torch.randn(r, in_f) * 0.01)',
  '        self.lora_B = nn.Parameter(torch.zeros(out_f, r))',
  '    def forward(self, weight):',
  '        return weight + (self.lora_B @ self.lora_A).to(weight.dtype)',
  'model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", torch_dtype=torch.bfloat16).cuda()',
  'model.requires_grad_(False)',
  'for name, mod in model.named_modules():',
  '    if isinstance(mod, nn.Linear) and name.split(".")[-1] in ("q_proj", "v_proj"):',
  '        delta = LowRankDelta(mod.out_features, mod.in_features, 8).cuda()',
  '        P.register_parametrization(mod, "weight", delta)',
  ...qwenStep,
].join('\n');

const peftLora = [
  'import torch',
  'from peft import LoraConfig, get_peft_model',
  'from transformers import AutoModelForCausalLM',
  'model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", torch_dtype=torch.bfloat16)',
  'model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=["q_proj", "v_proj"])).cuda()',
  ...qwenStep,
].join('\n');

test('a LoRA registered as a weight parametrization keeps the linears\' shared input and the weight it makes, not adapter copies', async () => {
  const parametrized = await estimateText(parametrizedLora, '/tmp/parametrized_lora.py');
  const peft = await estimateText(peftLora, '/tmp/peft_lora.py');
  // Qwen2.5-0.5B: width 896, 24 layers, k/v 128 wide; rank 8 on q_proj (896 -> 896) and v_proj (896 -> 128).
  const layers = 24;
  const h = 896;
  const tokens = 4 * 512;
  assert.equal(parametrized.detected.trainableParameters, peft.detected.trainableParameters);
  assert.equal(parametrized.detected.trainableParameters, layers * 8 * ((h + h) + (h + 128)));
  // peft's adapters each keep an fp32 copy of their bf16 input; the parametrized linears keep the norm's bf16
  // output once (q, k and v read it), and each keeps its bf16 weight W + B @ A.
  const adapterCopies = layers * tokens * 2 * 4 * h;
  const sharedInput = layers * tokens * 2 * h;
  const madeWeights = layers * (h * h + h * 128) * 2;
  assert.equal(peft.breakdown.activations - parametrized.breakdown.activations, adapterCopies - sharedInput - madeWeights);
});
