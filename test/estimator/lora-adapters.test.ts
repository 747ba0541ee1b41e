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
