// torchvision / timm image models, built layer by layer so that parameters and what backward keeps per image
// follow from the architecture at any input size (the figures are derived, not tabulated).
import { NetBuilder } from '../layers';
import { makeSpec } from './models';
import type { LayerNetSpec, TransformerSpec } from '../types';

/** `widthFactor`: Wide ResNet's wider inner 3x3 convolutions (wide_resnet50_2: 2). */
function resnet(blocks: number[], bottleneck: boolean, imageSize: number, numClasses: number, widthFactor = 1): LayerNetSpec {
  const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
  net.conv(64, 7, 2, 1, false, 3).batchNorm().relu().maxPool(3, 2, 1);
  const widths = [64, 128, 256, 512];
  let inChannels = 64;
  blocks.forEach((count, stage) => {
    for (let b = 0; b < count; b++) {
      const stride = stage > 0 && b === 0 ? 2 : 1;
      const width = widths[stage] * widthFactor;
      const out = bottleneck ? widths[stage] * 4 : width;
      const needsDownsample = b === 0 && (stride !== 1 || inChannels !== out);
      net.beginBlock();
      if (bottleneck) {
        net.conv(width, 1).batchNorm().relu().conv(width, 3, stride).batchNorm().relu().conv(out, 1, 1, 1, false, 0).batchNorm();
      } else {
        net.conv(width, 3, stride).batchNorm().relu().conv(out, 3).batchNorm();
      }
      if (needsDownsample) {
        // 1x1 strided conv + BatchNorm on the block input: its conv output is kept by that BatchNorm.
        net.parameters += inChannels * out + 2 * out;
        net.castParameters += inChannels * out;
        net.saved += net.elements;
      }
      net.addResidual().relu();
      net.endBlock();
      inChannels = out;
    }
  });
  net.globalPool().linear(numClasses);
  return net.build(true);
}

function mobilenetV2(imageSize: number, numClasses: number): LayerNetSpec {
  const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
  net.conv(32, 3, 2).batchNorm().relu6();
  const settings: Array<[number, number, number, number]> = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]];
  let inC = 32;
  for (const [expand, out, repeats, firstStride] of settings) {
    for (let r = 0; r < repeats; r++) {
      const stride = r === 0 ? firstStride : 1;
      const hidden = inC * expand;
      net.beginBlock();
      if (expand !== 1) net.conv(hidden, 1, 1, 1, false, 0).batchNorm().relu6();
      net.conv(hidden, 3, stride, hidden).batchNorm().relu6().conv(out, 1, 1, 1, false, 0).batchNorm();
      if (stride === 1 && inC === out) net.addResidual();
      net.endBlock();
      inC = out;
    }
  }
  net.conv(1280, 1, 1, 1, false, 0).batchNorm().relu6().globalPool().dropout(0.2).linear(numClasses);
  return net.build(true);
}

function efficientnetB0(imageSize: number, numClasses: number): LayerNetSpec {
  const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
  net.conv(32, 3, 2).batchNorm().activation();
  const stages: Array<[number, number, number, number, number]> = [
    [1, 3, 1, 16, 1], [6, 3, 2, 24, 2], [6, 5, 2, 40, 2], [6, 3, 2, 80, 3], [6, 5, 1, 112, 3], [6, 5, 2, 192, 4], [6, 3, 1, 320, 1]];
  let inC = 32;
  for (const [expand, kernel, firstStride, out, repeats] of stages) {
    for (let r = 0; r < repeats; r++) {
      const stride = r === 0 ? firstStride : 1;
      const hidden = inC * expand;
      net.beginBlock();
      if (expand !== 1) net.conv(hidden, 1, 1, 1, false, 0).batchNorm().activation();
      net.conv(hidden, kernel, stride, hidden).batchNorm().activation().squeezeExcite(Math.max(1, Math.floor(inC / 4)));
      net.conv(out, 1, 1, 1, false, 0).batchNorm();
      if (stride === 1 && inC === out) net.addResidual();
      net.endBlock();
      inC = out;
    }
  }
  net.conv(1280, 1, 1, 1, false, 0).batchNorm().activation().globalPool().dropout(0.2).linear(numClasses);
  return net.build(true);
}

function convnextTiny(imageSize: number, numClasses: number): LayerNetSpec {
  const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
  const depths = [3, 3, 9, 3];
  const dims = [96, 192, 384, 768];
  net.conv(96, 4, 4, 1, true, 0).layerNorm();
  depths.forEach((depth, stage) => {
    if (stage > 0) net.layerNorm().conv(dims[stage], 2, 2, 1, true, 0);
    const c = dims[stage];
    for (let b = 0; b < depth; b++) {
      net.beginBlock();
      // 7x7 depthwise conv, LayerNorm, two pointwise linears around a GELU, layer scale (keeps its input).
      net.conv(c, 7, 1, c, true).layerNorm().conv(4 * c, 1, 1, 1, true, 0).activation().conv(c, 1, 1, 1, true, 0).activation();
      net.parameters += c; // layer-scale gamma
      net.addResidual();
      net.endBlock();
    }
  });
  net.globalPool().layerNorm(768).linear(numClasses);
  return net.build(true);
}

export interface VisionCatalogModel {
  /** Names a script uses: torchvision constructor names and timm model names. */
  names: string[];
  publishedParameters: number;
  /** Layer-built CNNs are rebuilt for the image size; ViTs map to a transformer spec. */
  build: (imageSize: number, numClasses: number) => LayerNetSpec | TransformerSpec;
}

function vitSpec(hidden: number, layers: number, heads: number, patch: number, imageSize: number, numClasses: number): TransformerSpec {
  const positions = (imageSize / patch) ** 2 + 1;
  return makeSpec('vit', { hidden, layers, heads, intermediate: 4 * hidden, vocab: 0, maxPositions: positions, patchSize: patch,
    imageSize, numLabels: numClasses, qkvFused: true });
}

export const VISION_CATALOG: VisionCatalogModel[] = [
  { names: ['resnet18'], publishedParameters: 11_689_512, build: (s, n) => resnet([2, 2, 2, 2], false, s, n) },
  { names: ['resnet34'], publishedParameters: 21_797_672, build: (s, n) => resnet([3, 4, 6, 3], false, s, n) },
  { names: ['resnet50'], publishedParameters: 25_557_032, build: (s, n) => resnet([3, 4, 6, 3], true, s, n) },
  { names: ['resnet101'], publishedParameters: 44_549_160, build: (s, n) => resnet([3, 4, 23, 3], true, s, n) },
  { names: ['resnet152'], publishedParameters: 60_192_808, build: (s, n) => resnet([3, 8, 36, 3], true, s, n) },
  { names: ['mobilenet_v2', 'mobilenetv2_100'], publishedParameters: 3_504_872, build: mobilenetV2 },
  { names: ['efficientnet_b0'], publishedParameters: 5_288_548, build: efficientnetB0 },
  { names: ['convnext_tiny'], publishedParameters: 28_589_128, build: convnextTiny },
  { names: ['wide_resnet50_2'], publishedParameters: 68_883_240, build: (s, n) => resnet([3, 4, 6, 3], true, s, n, 2) },
  { names: ['wide_resnet101_2'], publishedParameters: 126_886_696, build: (s, n) => resnet([3, 4, 23, 3], true, s, n, 2) },
  { names: ['vit_tiny_patch16_224', 'deit_tiny_patch16_224'], publishedParameters: 5_717_416, build: (s, n) => vitSpec(192, 12, 3, 16, s, n) },
  { names: ['vit_small_patch16_224', 'deit_small_patch16_224'], publishedParameters: 22_050_664, build: (s, n) => vitSpec(384, 12, 6, 16, s, n) },
  { names: ['vit_b_16', 'vit_base_patch16_224', 'deit_base_patch16_224'], publishedParameters: 86_567_656, build: (s, n) => vitSpec(768, 12, 12, 16, s, n) },
  { names: ['vit_b_32', 'vit_base_patch32_224'], publishedParameters: 88_224_232, build: (s, n) => vitSpec(768, 12, 12, 32, s, n) },
  { names: ['vit_l_16', 'vit_large_patch16_224'], publishedParameters: 304_326_632, build: (s, n) => vitSpec(1024, 24, 16, 16, s, n) },
];

export function findVisionModel(name: string): VisionCatalogModel | undefined {
  const key = name.trim().toLowerCase().replace(/^timm\//, '').replace(/\.[a-z0-9_]+$/, '');
  return VISION_CATALOG.find((m) => m.names.includes(key));
}
