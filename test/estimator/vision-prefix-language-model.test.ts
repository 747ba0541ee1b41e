// A frozen library ViT encodes the images under no_grad, a projector of the script maps its patch tokens into a hub
// language model's embedding space, and the language model (frozen too) takes them before the caption's own token
// embeddings as `inputs_embeds`: the loss flows back through the language model to the projector. The language
// model is the step's model, over the image tokens and the text tokens together; the ViT costs its weights.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

/** The step, with `imageTokens` the expression that picks the ViT's tokens (`feats[:, 1:]`). */
function prefixScript(imageTokens: string, grad = true, projector = 'nn.Sequential(nn.Linear(384, 768), nn.GELU(), nn.Linear(768, 768))'): string {
  return [
    'import timm',
    'import torch',
    'import torch.nn as nn',
    'from torch.utils.data import DataLoader, Dataset',
    'from transformers import AutoModelForCausalLM',
    'class Pairs(Dataset):',
    '    def __len__(self):',
    '        return 256',
    '    def __getitem__(self, i):',
    '        return torch.randn(3, 224, 224), torch.randint(0, 50257, (64,))',
    'vision = timm.create_model("vit_small_patch16_224", pretrained=False, num_classes=0)',
    'vision.cuda().eval().requires_grad_(False)',
    'lm = AutoModelForCausalLM.from_pretrained("gpt2")',
    'lm.cuda().requires_grad_(False)',
    `projector = ${projector}.cuda()`,
    'optimizer = torch.optim.AdamW(projector.parameters(), lr=1e-3)',
    'embed = lm.get_input_embeddings()',
    'for images, captions in DataLoader(Pairs(), batch_size=8):',
    '    images, captions = images.cuda(), captions.cuda()',
    ...(grad ? ['    with torch.no_grad():', `        feats = ${imageTokens}`] : [`    feats = ${imageTokens}`]),
    '    prefix = projector(feats)',
    '    inputs = torch.cat([prefix, embed(captions)], dim=1)',
    '    labels = torch.cat([torch.full(prefix.shape[:2], -100, device="cuda"), captions], dim=1)',
    '    loss = lm(inputs_embeds=inputs, labels=labels).loss',
    '    optimizer.zero_grad()',
    '    loss.backward()',
    '    optimizer.step()',
  ].join('\n');
}

const VIT_SMALL = 21_665_664;
/** The projector's parameters: 384 -> 768 -> 768. */
const PROJECTOR = 384 * 768 + 768 + 768 * 768 + 768;
const GPT2 = 124_439_808;

test('A frozen ViT under no_grad feeding a hub LM through a projector: the LM is the model, over image and text tokens', async () => {
  const result = await estimateText(prefixScript('vision.forward_features(images)[:, vision.num_prefix_tokens:]'), '/tmp/vision_prefix_lm.py');
  assert.equal(result.detected.model.name, 'gpt2');
  assert.equal(result.detected.parameters, GPT2);
  // 196 patch tokens (the class token sliced off) before the caption's 64.
  assert.equal(result.detected.seqLen?.value, 196 + 64);
  // The ViT's weights are on the GPU beside the language model's (fp32 both).
  assert.ok(Math.abs(result.breakdown.weights - (GPT2 + VIT_SMALL) * 4) < 1e6, `weights ${result.breakdown.weights}`);
  // Only the projector trains: the language model is frozen whole.
  assert.equal(result.detected.trainableParameters, PROJECTOR);
  // Without the slice, the class token is one more token; a slice by a number is read as well.
  const whole = await estimateText(prefixScript('vision.forward_features(images)'), '/tmp/vision_prefix_lm_whole.py');
  assert.equal(whole.detected.seqLen?.value, 197 + 64);
  const numbered = await estimateText(prefixScript('vision.forward_features(images)[:, 1:]'), '/tmp/vision_prefix_lm_numbered.py');
  assert.equal(numbered.detected.seqLen?.value, 196 + 64);
});

test('A ViT run with grad is not a tower beside the LM: the estimate does not switch models', async () => {
  const result = await estimateText(prefixScript('vision.forward_features(images)[:, 1:]', false), '/tmp/vision_prefix_lm_grad.py');
  assert.notEqual(result.detected.model.name, 'gpt2');
});

test('The projector sized from the tower and the LM (vision.num_features, lm.config.hidden_size): the same parameters', async () => {
  const read = await estimateText(prefixScript('vision.forward_features(images)[:, 1:]', true,
    'nn.Sequential(nn.Linear(vision.num_features, lm.config.hidden_size), nn.GELU(), nn.Linear(lm.config.hidden_size, lm.config.hidden_size))'), '/tmp/vision_prefix_lm_read.py');
  assert.equal(read.detected.trainableParameters, PROJECTOR);
  assert.equal(read.detected.seqLen?.value, 196 + 64);
});
