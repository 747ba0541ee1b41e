// Hugging Face vision and audio encoders built in the script from their config classes: SwinConfig, ConvNextConfig
// and ConvNextV2Config (the catalog's layer nets at the config's sizes) and ASTConfig (a ViT over a spectrogram).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

/** A training loop over random batches of `input`, the model's own loss, trained by AdamW. */
function script(imports: string, build: string[], input: string, labels = 'torch.randint(0, 10, (16,), device="cuda")'): string {
  return [
    'import torch',
    imports,
    ...build,
    'optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)',
    'for step in range(3):',
    `    x = ${input}`,
    `    loss = model(x, labels=${labels}).loss`,
    '    optimizer.zero_grad()',
    '    loss.backward()',
    '    optimizer.step()',
  ].join('\n');
}

const IMAGES = 'torch.randn(16, 3, 224, 224, device="cuda")';

/** transformers' Swin: patch embedding, blocks (12C^2 + 13C + a bias table a head), patch merging, final norm, classifier. */
function swinParameters(embed: number, depths: number[], heads: number[], window: number, labels: number, patch = 4, channels = 3): number {
  let total = channels * patch * patch * embed + embed + 2 * embed;
  let c = embed;
  depths.forEach((depth, stage) => {
    if (stage > 0) {
      total += 2 * 4 * c + 4 * c * 2 * c; // norm over the 4C concatenation, reduction without bias
      c *= 2;
    }
    total += depth * (12 * c * c + 13 * c + (2 * window - 1) ** 2 * heads[stage]!);
  });
  return total + 2 * c + (labels > 0 ? c * labels + labels : 0);
}

/** transformers' ConvNeXt: stem, downsampling (norm, 2x2 conv), blocks (7x7 depthwise, norm, MLP 4C, layer scale), final norm. */
function convnextParameters(dims: number[], depths: number[], labels: number, layerScale = true, grn = false): number {
  let total = 3 * 16 * dims[0]! + dims[0]! + 2 * dims[0]!;
  depths.forEach((depth, stage) => {
    const c = dims[stage]!;
    if (stage > 0) total += 2 * dims[stage - 1]! + 4 * dims[stage - 1]! * c + c;
    total += depth * (49 * c + c + 2 * c + 4 * c * c + 4 * c + 4 * c * c + c + (layerScale ? c : 0) + (grn ? 2 * 4 * c : 0));
  });
  const last = dims[dims.length - 1]!;
  return total + 2 * last + last * labels + labels;
}

test('SwinConfig: the layer net at the config\'s sizes, the parameters transformers builds; the ...Model class has no classifier', async () => {
  const imports = 'from transformers import SwinConfig, SwinForImageClassification, SwinModel';
  const build = (options: string, cls = 'SwinForImageClassification'): string[] =>
    [`config = SwinConfig(${options})`, `model = ${cls}(config).cuda()`];
  // SwinConfig's defaults are Swin-T: with 1,000 labels, timm's and torchvision's published 28,288,354.
  const tiny = await estimateText(script(imports, build('num_labels=1000'), IMAGES), '/tmp/swin_config_tiny.py');
  assert.equal(tiny.detected.model.source, 'from-config');
  assert.equal(tiny.detected.parameters, 28_288_354);
  assert.equal(tiny.detected.parameters, swinParameters(96, [2, 2, 6, 2], [3, 6, 12, 24], 7, 1000));
  const small = 'embed_dim=64, depths=[2, 2, 4, 2], num_heads=[2, 4, 8, 16], window_size=7, num_labels=37';
  const custom = await estimateText(script(imports, build(small), IMAGES), '/tmp/swin_config_small.py');
  assert.equal(custom.detected.parameters, swinParameters(64, [2, 2, 4, 2], [2, 4, 8, 16], 7, 37));
  assert.ok(custom.peakAllocated! > 0 && custom.peakAllocated! < tiny.peakAllocated!);
  // The same sizes in an Enum's members, read through a property (`Size.SMALL.depths`).
  const sizes = [
    'import enum',
    'class Size(enum.Enum):',
    '    SMALL = (64, (2, 2, 4, 2), (2, 4, 8, 16))',
    '    @property',
    '    def depths(self):',
    '        return list(self.value[1])',
    'SIZE = Size.SMALL',
    'config = SwinConfig(embed_dim=SIZE.value[0], depths=SIZE.depths, num_heads=list(SIZE.value[2]), num_labels=37)',
    'model = SwinForImageClassification(config).cuda()',
  ];
  const enumSized = await estimateText(script(imports, sizes, IMAGES), '/tmp/swin_config_enum.py');
  assert.equal(enumSized.detected.parameters, custom.detected.parameters);
  // SwinModel ends at the pooled features (no classifier): trained here through a loss on them.
  const backbone = await estimateText([
    'import torch', imports, ...build(small, 'SwinModel'),
    'optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)',
    'for step in range(3):',
    `    loss = model(${IMAGES}).pooler_output.pow(2).mean()`,
    '    optimizer.zero_grad()', '    loss.backward()', '    optimizer.step()',
  ].join('\n'), '/tmp/swin_model.py');
  assert.equal(backbone.detected.parameters, swinParameters(64, [2, 2, 4, 2], [2, 4, 8, 16], 7, 0));
  // A size the estimator cannot read, and an option it does not model, are said so.
  const unknown = await estimateText(script(imports, build('depths=[2, 2, int(input()), 2], num_labels=3'), IMAGES), '/tmp/swin_config_unknown.py');
  assert.equal(unknown.detected.model.source, 'unresolved');
  assert.match(unknown.unresolved?.reason ?? '', /depths/);
  const absolute = await estimateText(script(imports, build('use_absolute_embeddings=True, num_labels=3'), IMAGES), '/tmp/swin_config_absolute.py');
  assert.equal(absolute.detected.model.source, 'unresolved');
  assert.match(absolute.unresolved?.reason ?? '', /use_absolute_embeddings/);
});

test('ConvNextConfig and ConvNextV2Config: the layer nets at the config\'s sizes; layer_scale_init_value 0 drops the layer scales', async () => {
  const imports = 'from transformers import ConvNextConfig, ConvNextForImageClassification, ConvNextV2Config, ConvNextV2ForImageClassification';
  const build = (cls: string, options: string): string[] => [`model = ${cls}ForImageClassification(${cls}Config(${options})).cuda()`];
  // ConvNextConfig's defaults are ConvNeXt-T: with 1,000 labels, torchvision's published 28,589,128.
  const tiny = await estimateText(script(imports, build('ConvNext', 'num_labels=1000'), IMAGES), '/tmp/convnext_config_tiny.py');
  assert.equal(tiny.detected.model.source, 'from-config');
  assert.equal(tiny.detected.parameters, 28_589_128);
  const sizes = 'hidden_sizes=[48, 96, 192, 384], depths=[2, 2, 4, 2], num_labels=10';
  const small = await estimateText(script(imports, build('ConvNext', sizes), IMAGES), '/tmp/convnext_config_small.py');
  assert.equal(small.detected.parameters, convnextParameters([48, 96, 192, 384], [2, 2, 4, 2], 10));
  const unscaled = await estimateText(script(imports, build('ConvNext', `${sizes}, layer_scale_init_value=0.0`), IMAGES), '/tmp/convnext_config_unscaled.py');
  assert.equal(unscaled.detected.parameters, convnextParameters([48, 96, 192, 384], [2, 2, 4, 2], 10, false));
  assert.ok(small.peakAllocated! > 0 && small.peakAllocated! < tiny.peakAllocated!);
  // ConvNeXt V2: no layer scale, a global response norm (2 x 4C) in each block.
  const v2 = await estimateText(script(imports, build('ConvNextV2', sizes), IMAGES), '/tmp/convnextv2_config.py');
  assert.equal(v2.detected.parameters, convnextParameters([48, 96, 192, 384], [2, 2, 4, 2], 10, false, true));
  // A layer net rebuilt at the images' size: larger images, more activations.
  const large = await estimateText(script(imports, build('ConvNext', sizes), 'torch.randn(16, 3, 320, 320, device="cuda")'), '/tmp/convnext_config_320.py');
  assert.equal(large.detected.imageSize?.value, 320);
  assert.ok(large.peakAllocated! > small.peakAllocated!);
});

test('ASTConfig: a ViT over the spectrogram\'s overlapping patches and two prefix tokens, one classifier behind a LayerNorm', async () => {
  const imports = 'from transformers import ASTConfig, ASTForAudioClassification';
  const labels = '(torch.rand(16, 527, device="cuda") < 0.01).float()';
  const build = (options: string): string[] => [`model = ASTForAudioClassification(ASTConfig(${options})).cuda()`];
  /** Patch convolution (one channel), two tokens, positions, layers, final norm, LayerNorm and classifier. */
  const parameters = (h: number, layers: number, intermediate: number, patches: number, classes: number): number =>
    16 * 16 * h + h + 2 * h + (patches + 2) * h + layers * (4 * (h * h + h) + h * intermediate + intermediate + intermediate * h + h + 4 * h) +
    2 * h + 2 * h + h * classes + classes;
  // The defaults (ViT-B over 1,024 frames x 128 mel bins, 12 x 101 patches): 86,594,063 with 527 labels, as measured.
  const base = await estimateText(script(imports, build('num_labels=527'), 'torch.randn(16, 1024, 128, device="cuda")', labels), '/tmp/ast_config.py');
  assert.equal(base.detected.model.source, 'from-config');
  assert.equal(base.detected.parameters, 86_594_063);
  assert.equal(base.detected.parameters, parameters(768, 12, 3072, 12 * 101, 527));
  // Half the frames: 12 x 50 patches, fewer positions and activations; a spectrogram is no image.
  const short = await estimateText(script(imports, build('num_labels=527, max_length=512'), 'torch.randn(16, 512, 128, device="cuda")', labels), '/tmp/ast_config_short.py');
  assert.equal(short.detected.parameters, parameters(768, 12, 3072, 12 * 50, 527));
  assert.equal(short.detected.imageSize, null);
  assert.ok(short.peakAllocated! < base.peakAllocated!);
  const narrow = await estimateText(script(imports, build('hidden_size=384, num_hidden_layers=6, num_attention_heads=6, intermediate_size=1536, num_labels=50'),
    'torch.randn(16, 1024, 128, device="cuda")', '(torch.rand(16, 50, device="cuda") < 0.1).float()'), '/tmp/ast_config_narrow.py');
  assert.equal(narrow.detected.parameters, parameters(384, 6, 1536, 12 * 101, 50));
});

test('DeiTConfig: ViT-B with a distillation token; one classifier, a second on the teacher class; ViTModel and DeiTModel keep their pooler', async () => {
  const build = (config: string, cls: string, options = ''): string => [
    'import torch',
    `from transformers import ${config}, ${cls}`,
    `model = ${cls}(${config}(${options})).cuda()`,
    'optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)',
    'for step in range(3):',
    `    loss = model(pixel_values=${IMAGES})[0].float().mean()`,
    '    optimizer.zero_grad()', '    loss.backward()', '    optimizer.step()',
  ].join('\n');
  const count = async (config: string, cls: string, options = ''): Promise<number | undefined> =>
    (await estimateText(build(config, cls, options), `/tmp/${cls}.py`)).detected.parameters;
  // ViT-B/16 at 224: 86,567,656 with 1,000 labels (google/vit-base-patch16-224); DeiT adds a token and its position.
  const vit = 86_567_656;
  assert.equal(await count('ViTConfig', 'ViTForImageClassification', 'num_labels=1000'), vit);
  assert.equal(await count('DeiTConfig', 'DeiTForImageClassification', 'num_labels=1000'), vit + 2 * 768);
  // With the teacher's head: timm's deit_base_distilled_patch16_224, 87,338,192.
  assert.equal(await count('DeiTConfig', 'DeiTForImageClassificationWithTeacher', 'num_labels=1000'), 87_338_192);
  // The base models: no classifier, a 768 x 768 pooler (google/vit-base-patch16-224-in21k: 86,389,248).
  assert.equal(await count('ViTConfig', 'ViTModel'), 86_389_248);
  assert.equal(await count('DeiTConfig', 'DeiTModel'), 86_389_248 + 2 * 768);
});

test('ResNetConfig: torchvision\'s ResNet at its widths (ResNet-50 by default, "basic" layers for ResNet-18/34); other widths are said to be unmodelled', async () => {
  const imports = 'from transformers import ResNetConfig, ResNetForImageClassification';
  const build = (options: string): string[] => [`model = ResNetForImageClassification(ResNetConfig(${options})).cuda()`];
  // microsoft/resnet-50 and torchvision's resnet50: 25,557,032 with 1,000 labels; resnet18: 11,689,512.
  const r50 = await estimateText(script(imports, build('num_labels=1000'), IMAGES), '/tmp/resnet_config_50.py');
  assert.equal(r50.detected.model.source, 'from-config');
  assert.equal(r50.detected.parameters, 25_557_032);
  const r18 = await estimateText(script(imports, build('layer_type="basic", depths=[2, 2, 2, 2], hidden_sizes=[64, 128, 256, 512], num_labels=1000'), IMAGES),
    '/tmp/resnet_config_18.py');
  assert.equal(r18.detected.parameters, 11_689_512);
  assert.ok(r18.peakAllocated! < r50.peakAllocated!);
  // Ten classes: the head's 2,048 x 990 weights and 990 biases fewer.
  const ten = await estimateText(script(imports, build('num_labels=10'), IMAGES), '/tmp/resnet_config_10.py');
  assert.equal(ten.detected.parameters, 25_557_032 - 990 * 2049);
  const narrow = await estimateText(script(imports, build('hidden_sizes=[128, 256, 512, 1024], num_labels=10'), IMAGES), '/tmp/resnet_config_narrow.py');
  assert.equal(narrow.detected.model.source, 'unresolved');
  assert.match(narrow.unresolved?.reason ?? '', /hidden_sizes/);
});
