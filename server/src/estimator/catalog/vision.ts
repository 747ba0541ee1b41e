// torchvision / timm image models, built layer by layer so that parameters and what backward keeps per image
// follow from the architecture at any input size (the figures are derived, not tabulated).
import { NetBuilder, POOL_PART, type BranchPoint } from '../layers';
import { makeSpec } from './models';
import { hrnet, hrnetWide, type HrnetShape } from './hrnet';
import type { LayerNetSpec, TransformerSpec } from '../types';

/**
 * The stages of a torchvision ResNet after its stem, on `net`. `widthFactor`: Wide ResNet's wider inner 3x3
 * convolutions (wide_resnet50_2: 2); `groups`: ResNeXt's grouped 3x3 convolutions, whose bottleneck width is
 * planes x widthFactor x groups (resnext50_32x4d: 32 groups, 4/64 each). `dilated`: stages 3 and 4 trade their
 * stride for dilation (replace_stride_with_dilation=[False, True, True], the segmentation models' output stride 8):
 * the features stay at 1/8 of the input; a list gives each of stages 2..4 its own choice, as torchvision's
 * `replace_stride_with_dilation` does. `squeezeExcite`: timm's SE-ResNet / SE-ResNeXt, a squeeze-and-excitation
 * module on each bottleneck's output (before the residual add), squeezed to 1/16 of its channels rounded to a
 * multiple of 8 (timm's SEModule); `'eca'`: timm's ECA-ResNet, an efficient channel attention there instead (see
 * ecaKernel). Returns the third stage's output, which an auxiliary head reads; `stageOutputs`
 * collects every stage's (a detector's FPN reads them).
 */
export function resnetStages(net: NetBuilder, blocks: number[], bottleneck: boolean, widthFactor = 1, groups = 1, dilated: boolean | readonly boolean[] = false,
  squeezeExcite: boolean | 'eca' = false, stageOutputs?: BranchPoint[], stem: ResNetStem = {}, variantD = false): BranchPoint | undefined {
  // Each of torchvision's top-level children is a part, so that a script's slice of them is sized (see library-models).
  const { kernel = 7, stride = 2, padding = 3 } = stem.conv ?? {};
  net.part('conv1');
  // timm's ResNet-D: a deep stem of three 3x3 convolutions (32, 32, 64 wide) in place of the 7x7.
  if (variantD) net.conv(32, 3, 2).batchNorm().relu().conv(32, 3).batchNorm().relu().conv(64, 3);
  else net.conv(64, kernel, stride, 1, false, padding);
  net.part('bn1').batchNorm().part('relu').relu().part('maxpool');
  if (stem.maxPool !== false) net.maxPool(3, 2, 1);
  const dilatedStage = (stage: number): boolean => (typeof dilated === 'boolean' ? dilated && stage >= 2 : dilated[stage - 1] === true);
  const widths = [64, 128, 256, 512];
  let inChannels = 64;
  let third: BranchPoint | undefined;
  blocks.forEach((count, stage) => {
    net.part(`layer${stage + 1}`);
    net.beginStage();
    for (let b = 0; b < count; b++) {
      const stride = stage > 0 && b === 0 && !dilatedStage(stage) ? 2 : 1;
      const width = Math.floor(widths[stage]! * widthFactor) * groups;
      const out = bottleneck ? widths[stage]! * 4 : width;
      const needsDownsample = b === 0 && (stride !== 1 || inChannels !== out);
      net.beginBlock();
      if (bottleneck) {
        net.conv(width, 1).batchNorm().relu().conv(width, 3, stride, groups).batchNorm().relu().conv(out, 1, 1, 1, false, 0).batchNorm();
        if (squeezeExcite === 'eca') net.efficientChannelAttention(ecaKernel(out));
        else if (squeezeExcite) net.squeezeExcite(Math.max(8, Math.floor((out / 16 + 4) / 8) * 8));
      } else {
        net.conv(width, 3, stride).batchNorm().relu().conv(out, 3).batchNorm();
      }
      if (needsDownsample) {
        // 1x1 strided conv + BatchNorm on the block input: its conv output is kept by that BatchNorm (not by a
        // FrozenBatchNorm2d). ResNet-D averages the input over 2x2 first (a new map, kept by the 1x1 convolution).
        net.parameters += inChannels * out + 2 * out;
        net.normParameters += 2 * out;
        net.castParameters += inChannels * out;
        if (!net.frozenNorms) net.saved += net.elements;
        if (variantD && stride > 1) net.saved += (inChannels * net.elements) / out;
      }
      net.addResidual().relu();
      net.endBlock();
      inChannels = out;
    }
    net.endStage();
    net.name(`layer${stage + 1}`);
    if (stage === 2) third = net.mark();
    stageOutputs?.push(stage === 2 && third ? third : net.mark());
  });
  return third;
}

export function resnet(blocks: number[], bottleneck: boolean, imageSize: number, numClasses: number, widthFactor = 1, groups = 1, squeezeExcite: boolean | 'eca' = false,
  options: VisionOptions = {}, variantD = false): LayerNetSpec {
  const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
  resnetStages(net, blocks, bottleneck, widthFactor, groups, options.dilation ?? false, squeezeExcite, undefined, options.resnetStem, variantD);
  net.part('avgpool').globalPool().part('fc').linear(numClasses);
  return net.build(true);
}

/** torchvision's MobileNetV2; `width_mult` scales every stage's channels (rounded to multiples of 8), and widens the last conv above 1. */
function mobilenetV2(imageSize: number, numClasses: number, options: VisionOptions = {}): LayerNetSpec {
  const width = options.widthMult ?? 1;
  const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
  const stem = makeDivisible(32 * width);
  net.part('features').conv(stem, 3, 2).batchNorm().relu6();
  const settings: Array<[number, number, number, number]> = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]];
  let inC = stem;
  for (const [expand, baseOut, repeats, firstStride] of settings) {
    const out = makeDivisible(baseOut * width);
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
  net.conv(makeDivisible(1280 * Math.max(1, width)), 1, 1, 1, false, 0).batchNorm().relu6().part(POOL_PART).globalPool().part('classifier').dropout(0.2).linear(numClasses);
  return net.build(true);
}

/** Channels rounded as EfficientNet rounds them (to a multiple of 8, never below 90% of the scaled value). */
function makeDivisible(value: number, divisor = 8): number {
  const rounded = Math.max(divisor, Math.floor((value + divisor / 2) / divisor) * divisor);
  return rounded < 0.9 * value ? rounded + divisor : rounded;
}

/** torchvision's EfficientNet-B0..B7: B0's stages scaled in width and depth (compound scaling). */
function efficientnet(width: number, depth: number): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    const stem = makeDivisible(32 * width);
    net.part('features').conv(stem, 3, 2).batchNorm().activation();
    const stages: Array<[number, number, number, number, number]> = [
      [1, 3, 1, 16, 1], [6, 3, 2, 24, 2], [6, 5, 2, 40, 2], [6, 3, 2, 80, 3], [6, 5, 1, 112, 3], [6, 5, 2, 192, 4], [6, 3, 1, 320, 1]];
    let inC = stem;
    for (const [expand, kernel, firstStride, baseOut, baseRepeats] of stages) {
      const out = makeDivisible(baseOut * width);
      const repeats = Math.ceil(baseRepeats * depth);
      net.beginStage();
      for (let r = 0; r < repeats; r++) {
        const stride = r === 0 ? firstStride : 1;
        const hidden = makeDivisible(inC * expand);
        net.beginBlock();
        if (expand !== 1) net.conv(hidden, 1, 1, 1, false, 0).batchNorm().activation();
        net.conv(hidden, kernel, stride, hidden).batchNorm().activation().squeezeExcite(Math.max(1, Math.floor(inC / 4)));
        net.conv(out, 1, 1, 1, false, 0).batchNorm();
        if (stride === 1 && inC === out) net.addResidual();
        net.endBlock();
        inC = out;
      }
      net.endStage();
    }
    net.conv(4 * makeDivisible(320 * width), 1, 1, 1, false, 0).batchNorm().activation().part('avgpool').globalPool().part('classifier').dropout(0.2).linear(numClasses);
    return net.build(true);
  };
}

const efficientnetB0 = efficientnet(1.0, 1.0);

/**
 * torchvision's EfficientNetV2 (s/m/l): Fused-MBConv stages (one full 3x3 convolution expands, a 1x1 projects; a
 * single 3x3 where the expansion is 1), then MBConv stages with squeeze-and-excitation, as `_efficientnet_conf`
 * lists them: [fused, expand, kernel, stride, in, out, layers].
 */
type V2Stage = [boolean, number, number, number, number, number, number];
function efficientnetV2(stages: V2Stage[]): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.part('features').conv(stages[0]![4], 3, 2).batchNorm().activation();
    for (const [fused, expand, kernel, firstStride, firstIn, out, layers] of stages) {
      net.beginStage();
      for (let r = 0; r < layers; r++) {
        const inC = r === 0 ? firstIn : out;
        const stride = r === 0 ? firstStride : 1;
        const hidden = makeDivisible(inC * expand);
        net.beginBlock();
        if (fused) {
          if (hidden !== inC) net.conv(hidden, kernel, stride).batchNorm().activation().conv(out, 1, 1, 1, false, 0).batchNorm();
          else net.conv(out, kernel, stride).batchNorm().activation();
        } else {
          if (hidden !== inC) net.conv(hidden, 1, 1, 1, false, 0).batchNorm().activation();
          net.conv(hidden, kernel, stride, hidden).batchNorm().activation().squeezeExcite(Math.max(1, Math.floor(inC / 4)));
          net.conv(out, 1, 1, 1, false, 0).batchNorm();
        }
        if (stride === 1 && inC === out) net.addResidual();
        net.endBlock();
      }
      net.endStage();
    }
    net.conv(1280, 1, 1, 1, false, 0).batchNorm().activation().globalPool().dropout(0.2).linear(numClasses);
    return net.build(true);
  };
}

const EFFICIENTNET_V2_S: V2Stage[] = [[true, 1, 3, 1, 24, 24, 2], [true, 4, 3, 2, 24, 48, 4], [true, 4, 3, 2, 48, 64, 4],
  [false, 4, 3, 2, 64, 128, 6], [false, 6, 3, 1, 128, 160, 9], [false, 6, 3, 2, 160, 256, 15]];
const EFFICIENTNET_V2_M: V2Stage[] = [[true, 1, 3, 1, 24, 24, 3], [true, 4, 3, 2, 24, 48, 5], [true, 4, 3, 2, 48, 80, 5],
  [false, 4, 3, 2, 80, 160, 7], [false, 6, 3, 1, 160, 176, 14], [false, 6, 3, 2, 176, 304, 18], [false, 6, 3, 1, 304, 512, 5]];
const EFFICIENTNET_V2_L: V2Stage[] = [[true, 1, 3, 1, 32, 32, 4], [true, 4, 3, 2, 32, 64, 7], [true, 4, 3, 2, 64, 96, 7],
  [false, 4, 3, 2, 96, 192, 10], [false, 6, 3, 1, 192, 224, 19], [false, 6, 3, 2, 224, 384, 25], [false, 6, 3, 1, 384, 640, 7]];

/** torchvision's VGG: 3x3 convolutions (with bias; BatchNorm in the _bn models) and max-pools, a 7x7 average pool, three linears. */
function vgg(config: Array<number | 'M'>, batchNorm: boolean): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.part('features');
    for (const item of config) {
      if (item === 'M') {
        net.maxPool(2, 2);
        continue;
      }
      net.conv(item, 3, 1, 1, true, 1);
      if (batchNorm) net.batchNorm();
      net.relu();
    }
    net.part('avgpool').adaptiveAvgPool(7).part('classifier').linear(4096).relu().dropout(0.5).linear(4096).relu().dropout(0.5).linear(numClasses);
    return net.build(true);
  };
}

/**
 * The first `count` modules of a torchvision VGG's `features` (all of them where undefined): `vgg19().features[:36]`,
 * a perceptual loss's feature extractor up to relu5_4. Each convolution is one module, its BatchNorm one more, its
 * ReLU one more, each max-pool one. Undefined for a name that is no VGG.
 */
export function vggFeatures(name: string, count: number | undefined, imageSize: number): LayerNetSpec | undefined {
  const config = VGG_CONFIGS[name.replace(/_bn$/, '')];
  if (!config) return undefined;
  const batchNorm = name.endsWith('_bn');
  const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
  net.part('features');
  let left = count ?? Infinity;
  for (const item of config) {
    if (left <= 0) break;
    if (item === 'M') {
      net.maxPool(2, 2);
      left -= 1;
      continue;
    }
    net.conv(item, 3, 1, 1, true, 1);
    left -= 1;
    if (batchNorm && left > 0) net.batchNorm(), left -= 1;
    if (left > 0) net.relu(), left -= 1;
  }
  return net.build(true);
}

const VGG_A: Array<number | 'M'> = [64, 'M', 128, 'M', 256, 256, 'M', 512, 512, 'M', 512, 512, 'M'];
const VGG_B: Array<number | 'M'> = [64, 64, 'M', 128, 128, 'M', 256, 256, 'M', 512, 512, 'M', 512, 512, 'M'];
const VGG_D: Array<number | 'M'> = [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512, 'M', 512, 512, 512, 'M'];
const VGG_E: Array<number | 'M'> = [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 256, 'M', 512, 512, 512, 512, 'M', 512, 512, 512, 512, 'M'];
const VGG_CONFIGS: Record<string, Array<number | 'M'>> = { vgg11: VGG_A, vgg13: VGG_B, vgg16: VGG_D, vgg19: VGG_E };

/**
 * torchvision's MobileNetV3 features: inverted residuals as `_mobilenet_v3_conf` lists them [in, kernel, expanded,
 * out, squeeze-excite, hardswish, stride], then a 1x1 convolution to 6x the last width. `dilated` (the segmentation
 * backbones): the last stage dilates instead of striding, output stride 16. `markAfter`: the block whose output a
 * segmentation head reads again. `markExpansionOf`: the block whose expansion (its first 1x1 convolution and
 * activation) SSDlite reads as its first feature map.
 */
export type V3Block = [number, number, number, number, boolean, boolean, number];
export function mobilenetV3Features(net: NetBuilder, blocks: V3Block[], dilated = false, markAfter = -1, markExpansionOf = -1): BranchPoint | undefined {
  // Named as torchvision's `features[i]`: a detector's trainable_backbone_layers freezes a prefix of them.
  net.part('features.0').conv(16, 3, 2).batchNorm().activation();
  const act = (hardswish: boolean): NetBuilder => (hardswish ? net.activation() : net.relu());
  let marked: BranchPoint | undefined;
  blocks.forEach(([inC, kernel, expanded, out, se, hardswish, configStride], index) => {
    const stride = dilated && index >= blocks.length - 3 ? 1 : configStride;
    net.part(`features.${index + 1}`);
    net.beginBlock();
    if (expanded !== inC) {
      net.conv(expanded, 1, 1, 1, false, 0).batchNorm();
      act(hardswish);
      if (index === markExpansionOf) marked = net.mark();
    }
    net.conv(expanded, kernel, stride, expanded).batchNorm();
    act(hardswish);
    if (se) net.squeezeExcite(makeDivisible(Math.floor(expanded / 4)));
    net.conv(out, 1, 1, 1, false, 0).batchNorm();
    if (stride === 1 && inC === out) net.addResidual();
    net.endBlock();
    if (index === markAfter) marked = net.mark();
  });
  const last = blocks[blocks.length - 1]![3];
  net.part(`features.${blocks.length + 1}`).conv(6 * last, 1, 1, 1, false, 0).batchNorm().activation();
  return marked;
}

/** MobileNetV3 for classification: the features, then two linears around a Hardswish. */
function mobilenetV3(blocks: V3Block[], lastChannel: number): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    mobilenetV3Features(net.part('features'), blocks);
    net.part('avgpool').globalPool().part('classifier').linear(lastChannel).activation().dropout(0.2).linear(numClasses);
    return net.build(true);
  };
}

export const MOBILENET_V3_LARGE: V3Block[] = [
  [16, 3, 16, 16, false, false, 1], [16, 3, 64, 24, false, false, 2], [24, 3, 72, 24, false, false, 1],
  [24, 5, 72, 40, true, false, 2], [40, 5, 120, 40, true, false, 1], [40, 5, 120, 40, true, false, 1],
  [40, 3, 240, 80, false, true, 2], [80, 3, 200, 80, false, true, 1], [80, 3, 184, 80, false, true, 1],
  [80, 3, 184, 80, false, true, 1], [80, 3, 480, 112, true, true, 1], [112, 3, 672, 112, true, true, 1],
  [112, 5, 672, 160, true, true, 2], [160, 5, 960, 160, true, true, 1], [160, 5, 960, 160, true, true, 1]];
/**
 * `reduced_tail=True` (SSDlite without ImageNet backbone weights, Table 6 of the MobileNetV3 paper): the last
 * stage's widths halved, so the final 1x1 convolution makes 6 x 80 channels.
 */
export function reducedTail(blocks: V3Block[]): V3Block[] {
  return blocks.map((block, i): V3Block => {
    if (i < blocks.length - 3) return block;
    const [inC, kernel, expanded, out, se, hardswish, stride] = block;
    return [i === blocks.length - 3 ? inC : inC / 2, kernel, i === blocks.length - 3 ? expanded : expanded / 2, out / 2, se, hardswish, stride];
  });
}
const MOBILENET_V3_SMALL: V3Block[] = [
  [16, 3, 16, 16, true, false, 2], [16, 3, 72, 24, false, false, 2], [24, 3, 88, 24, false, false, 1],
  [24, 5, 96, 40, true, true, 2], [40, 5, 240, 40, true, true, 1], [40, 5, 240, 40, true, true, 1],
  [40, 5, 120, 48, true, true, 1], [48, 5, 144, 48, true, true, 1], [48, 5, 288, 96, true, true, 2],
  [96, 5, 576, 96, true, true, 1], [96, 5, 576, 96, true, true, 1]];

/** torchvision's DenseNet: dense layers whose outputs are concatenated, transitions halve channels and size. */
function densenet(blocks: number[], growth = 32, initial = 64): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.part('features').conv(initial, 7, 2, 1, false, 3).batchNorm().relu().maxPool(3, 2, 1);
    let channels = initial;
    blocks.forEach((layers, index) => {
      for (let l = 0; l < layers; l++) {
        net.beginBlock();
        // Without grad, the block's earlier outputs (a list), their concatenation and norm1's output are alive
        // together while conv1 makes the bottleneck: 3 x the features so far, plus 4 x growth.
        const pixels = net.elements / net.channels;
        net.noteLive((3 * channels + 4 * growth) * pixels);
        // BN-ReLU-1x1 conv to 4*growth, BN-ReLU-3x3 conv to growth, then concatenated to the block's features.
        net.batchNorm(channels).relu(false).conv(4 * growth, 1, 1, 1, false, 0).batchNorm().relu(false).conv(growth, 3, 1, 1, false, 1);
        channels += growth;
        net.concatTo(channels);
        net.endBlock();
      }
      if (index < blocks.length - 1) {
        net.batchNorm(channels).relu(false).conv(Math.floor(channels / 2), 1, 1, 1, false, 0).avgPool(2, 2);
        channels = Math.floor(channels / 2);
      }
    });
    net.batchNorm(channels).part(POOL_PART).relu(false).globalPool().part('classifier').linear(numClasses);
    return net.build(true);
  };
}

/** A convolution, BatchNorm and in-place ReLU (torchvision's BasicConv2d in Inception v3 and GoogLeNet). */
function basicConv(net: NetBuilder, out: number, kernel: number, stride = 1, padding = 0): NetBuilder {
  return net.conv(out, kernel, stride, 1, false, padding).batchNorm().relu();
}

/** BasicConv2d with a rectangular kernel, padded to keep the size (Inception v3's factorised 1x7 / 7x1, 1x3 / 3x1). */
function basicConvRect(net: NetBuilder, out: number, kernelHeight: number, kernelWidth: number): NetBuilder {
  return net.convRect(out, kernelHeight, kernelWidth).batchNorm().relu();
}

/**
 * Parallel branches read one input and their outputs are concatenated: each branch's last ReLU keeps its output,
 * the concatenation is a new tensor that the next convolutions keep. A branch that ends in a pooling (Inception's
 * reductions) leaves an output nothing else keeps.
 */
function concatBranches(net: NetBuilder, branches: Array<(net: NetBuilder) => void>, outChannels: number): void {
  const inputElements = net.elements;
  const input = net.mark();
  branches.forEach((branch, index) => {
    if (index > 0) net.branchFrom(input);
    branch(net);
  });
  // Without grad, the module's input and every branch's output are alive until the concatenation is made.
  const pixels = net.elements / net.channels;
  net.noteLive(inputElements + 2 * outChannels * pixels);
  net.concatTo(outChannels);
}

/** torchvision's Inception v3 at `imageSize` (299 as trained); `auxLogits` (its default): the auxiliary classifier on Mixed_6e. */
function inceptionV3(imageSize: number, numClasses: number, options: VisionOptions = {}): LayerNetSpec {
  const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
  basicConv(net, 32, 3, 2);
  basicConv(net, 32, 3);
  basicConv(net, 64, 3, 1, 1).maxPool(3, 2);
  basicConv(net, 80, 1);
  basicConv(net, 192, 3).maxPool(3, 2);
  const inceptionA = (poolFeatures: number) => {
    net.beginBlock();
    concatBranches(net, [
      (n) => basicConv(n, 64, 1),
      (n) => basicConv(basicConv(n, 48, 1), 64, 5, 1, 2),
      (n) => basicConv(basicConv(basicConv(n, 64, 1), 96, 3, 1, 1), 96, 3, 1, 1),
      (n) => basicConv(n.avgPool(3, 1, 1), poolFeatures, 1),
    ], 224 + poolFeatures);
    net.endBlock();
  };
  inceptionA(32);
  inceptionA(64);
  inceptionA(64);
  const inChannelsB = net.channels;
  net.beginBlock();
  concatBranches(net, [
    (n) => basicConv(n, 384, 3, 2),
    (n) => basicConv(basicConv(basicConv(n, 64, 1), 96, 3, 1, 1), 96, 3, 2),
    (n) => n.maxPool(3, 2),
  ], 384 + 96 + inChannelsB);
  net.endBlock();
  for (const c7 of [128, 160, 160, 192]) {
    net.beginBlock();
    concatBranches(net, [
      (n) => basicConv(n, 192, 1),
      (n) => basicConvRect(basicConvRect(basicConv(n, c7, 1), c7, 1, 7), 192, 7, 1),
      (n) => basicConvRect(basicConvRect(basicConvRect(basicConvRect(basicConv(n, c7, 1), c7, 7, 1), c7, 1, 7), c7, 7, 1), 192, 1, 7),
      (n) => basicConv(n.avgPool(3, 1, 1), 192, 1),
    ], 768);
    net.endBlock();
  }
  if (options.auxLogits ?? true) {
    // InceptionAux: a 5x5 stride-3 average pool, a 1x1 BasicConv2d to 128, a 5x5 one to 768, pooled, a linear.
    const mixed6e = net.mark();
    net.avgPool(5, 3);
    basicConv(net, 128, 1);
    basicConv(net, 768, 5).globalPool().linear(numClasses);
    net.addOutput().branchFrom(mixed6e);
  }
  const inChannelsD = net.channels;
  net.beginBlock();
  concatBranches(net, [
    (n) => basicConv(basicConv(n, 192, 1), 320, 3, 2),
    (n) => basicConv(basicConvRect(basicConvRect(basicConv(n, 192, 1), 192, 1, 7), 192, 7, 1), 192, 3, 2),
    (n) => n.maxPool(3, 2),
  ], 320 + 192 + inChannelsD);
  net.endBlock();
  for (let e = 0; e < 2; e++) {
    net.beginBlock();
    let split: ReturnType<NetBuilder['mark']> | undefined;
    concatBranches(net, [
      (n) => basicConv(n, 320, 1),
      (n) => { split = basicConv(n, 384, 1).mark(); basicConvRect(n, 384, 1, 3); },
      (n) => basicConvRect(n.branchFrom(split!), 384, 3, 1),
      (n) => { split = basicConv(basicConv(n, 448, 1), 384, 3, 1, 1).mark(); basicConvRect(n, 384, 1, 3); },
      (n) => basicConvRect(n.branchFrom(split!), 384, 3, 1),
      (n) => basicConv(n.avgPool(3, 1, 1), 192, 1),
    ], 2048);
    net.endBlock();
  }
  net.globalPool().dropout(0.5).linear(numClasses);
  return net.build(true);
}

/**
 * torchvision's GoogLeNet: max-pools in ceil mode, Inception modules of four branches (its "5x5" branch is a 3x3
 * convolution in torchvision), and with `auxLogits` (its default without weights) two auxiliary classifiers, on
 * inception4a and inception4d: a 4x4 adaptive pool, a 1x1 BasicConv2d to 128, linears to 1,024 and the classes.
 */
function googlenet(imageSize: number, numClasses: number, options: VisionOptions = {}): LayerNetSpec {
  const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
  basicConv(net, 64, 7, 2, 3).maxPool(3, 2, 0, true);
  basicConv(net, 64, 1);
  basicConv(net, 192, 3, 1, 1).maxPool(3, 2, 0, true);
  const aux = options.auxLogits ?? !options.pretrained;
  const inception = (c1: number, c3r: number, c3: number, c5r: number, c5: number, pool: number) => {
    net.beginBlock();
    concatBranches(net, [
      (n) => basicConv(n, c1, 1),
      (n) => basicConv(basicConv(n, c3r, 1), c3, 3, 1, 1),
      (n) => basicConv(basicConv(n, c5r, 1), c5, 3, 1, 1),
      (n) => basicConv(n.maxPool(3, 1, 1, true), pool, 1),
    ], c1 + c3 + c5 + pool);
    net.endBlock();
  };
  const auxiliary = () => {
    if (!aux) return;
    const features = net.mark();
    net.adaptiveAvgPool(4);
    basicConv(net, 128, 1).linear(1024).relu().dropout(0.7).linear(numClasses);
    net.addOutput().branchFrom(features);
  };
  inception(64, 96, 128, 16, 32, 32);
  inception(128, 128, 192, 32, 96, 64);
  net.maxPool(3, 2, 0, true);
  inception(192, 96, 208, 16, 48, 64);
  auxiliary();
  inception(160, 112, 224, 24, 64, 64);
  inception(128, 128, 256, 24, 64, 64);
  inception(112, 144, 288, 32, 64, 64);
  auxiliary();
  inception(256, 160, 320, 32, 128, 128);
  net.maxPool(2, 2, 0, true);
  inception(256, 160, 320, 32, 128, 128);
  inception(384, 192, 384, 48, 128, 128);
  net.globalPool().dropout(0.2).linear(numClasses);
  return net.build(true);
}

/**
 * torchvision's MaxViT: a stem (a strided 3x3 conv-BN-GELU and a 3x3 conv), then per stage layers of an MBConv (a
 * BatchNorm, a 1x1 expansion to 4x, a depthwise 3x3 that strides in the stage's first layer, squeeze-and-excitation
 * to a quarter of the output width, a 1x1 projection; the input through a strided average pool and a 1x1 conv
 * where the shape changes) followed by window and grid attention over 7x7 partitions, each a transformer layer of
 * heads of 32 channels with a relative position bias: the same layers, parameters and saved tensors as a Swin
 * block on 7x7 windows. Head: pooled, LayerNorm, a linear and Tanh, a linear without bias.
 */
function maxvit(channels: number[], layers: number[], stem: number): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.conv(stem, 3, 2, 1, false, 1).batchNorm().activation().conv(stem, 3, 1, 1, true, 1);
    let inChannels = stem;
    channels.forEach((out, stage) => {
      net.beginStage();
      for (let layer = 0; layer < layers[stage]!; layer++) {
        const stride = layer === 0 ? 2 : 1;
        const mid = 4 * out;
        net.beginBlock();
        const input = net.mark();
        if (stride !== 1 || inChannels !== out) {
          if (stride === 2) net.avgPool(3, 2, 1);
          net.conv(out, 1, 1, 1, true, 0);
          net.branchFrom(input, false);
        }
        net.batchNorm().conv(mid, 1, 1, 1, false, 0).batchNorm().activation().conv(mid, 3, stride, mid, false, 1).batchNorm().activation()
          .squeezeExcite(Math.floor(out / 4)).conv(out, 1, 1, 1, true, 0);
        net.endBlock();
        net.swinBlock(out / 32, 7).swinBlock(out / 32, 7);
        inChannels = out;
      }
      net.endStage();
    });
    net.globalPool().layerNorm().linear(channels[channels.length - 1]!).activation().linear(numClasses, false);
    return net.build(true);
  };
}

/** The 3-D convolutions torchvision's VideoResNet builds its blocks from (torchvision.models.video.resnet). */
type VideoConv = 'full' | 'spatial' | 'factorised';

/**
 * torchvision's VideoResNet (r3d_18, mc3_18, r2plus1d_18) on clips of `frames` frames: a stem, four stages of two
 * basic blocks (64 to 512 channels; the later stages stride frames, height and width by 2, or only height and width
 * where the convolutions are spatial), a global 3-D average pool and a linear. `convs`: each stage's convolution:
 * full 3x3x3 (Conv3DSimple), spatial 1x3x3 (Conv3DNoTemporal), or a 1x3x3 then a 3x1x1 through a BatchNorm and a
 * ReLU at the width that keeps the parameters of a 3x3x3 (Conv2Plus1D).
 */
function videoResnet(convs: VideoConv[], factorisedStem: boolean): (frames: number) => (imageSize: number, numClasses: number) => LayerNetSpec {
  return (frames) => (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize, frames });
    if (factorisedStem) {
      net.conv3d(45, [1, 7, 7], [1, 2, 2], [0, 3, 3]).batchNorm().relu();
      net.conv3d(64, [3, 1, 1], [1, 1, 1], [1, 0, 0]).batchNorm().relu();
    } else {
      net.conv3d(64, [3, 7, 7], [1, 2, 2], [1, 3, 3]).batchNorm().relu();
    }
    let inChannels = 64;
    convs.forEach((conv, stage) => {
      const planes = 64 * 2 ** stage;
      const s = stage === 0 ? 1 : 2;
      const stride: [number, number, number] = conv === 'spatial' ? [1, s, s] : [s, s, s];
      net.beginStage();
      for (let b = 0; b < 2; b++) {
        const blockIn = b === 0 ? inChannels : planes;
        const blockStride: [number, number, number] = b === 0 ? stride : [1, 1, 1];
        const mid = Math.floor((blockIn * planes * 27) / (blockIn * 9 + 3 * planes));
        const convolution = (out: number, st: [number, number, number]) => {
          if (conv === 'full') net.conv3d(out, [3, 3, 3], st, [1, 1, 1]);
          else if (conv === 'spatial') net.conv3d(out, [1, 3, 3], st, [0, 1, 1]);
          else net.conv3d(mid, [1, 3, 3], [1, st[1], st[2]], [0, 1, 1]).batchNorm().relu().conv3d(out, [3, 1, 1], [st[0], 1, 1], [1, 0, 0]);
        };
        net.beginBlock();
        convolution(planes, blockStride);
        net.batchNorm().relu();
        convolution(planes, [1, 1, 1]);
        net.batchNorm();
        if (b === 0 && (s !== 1 || blockIn !== planes)) {
          // 1x1x1 strided conv + BatchNorm on the block input: its conv output is kept by that BatchNorm.
          net.parameters += blockIn * planes + 2 * planes;
          net.normParameters += 2 * planes;
          net.castParameters += blockIn * planes;
          net.saved += net.elements;
        }
        net.addResidual().relu();
        net.endBlock();
      }
      net.endStage();
      inChannels = planes;
    });
    net.globalPool().linear(numClasses);
    return net.build(true);
  };
}

/** Conv3d + BatchNorm3d + in-place ReLU (torchvision's Conv3dNormActivation, no bias). */
function conv3dBnRelu(net: NetBuilder, out: number, kernel: [number, number, number], stride: [number, number, number] = [1, 1, 1], padding: [number, number, number] = [0, 0, 0]): NetBuilder {
  return net.conv3d(out, kernel, stride, padding).batchNorm().relu();
}

/** S3D's TemporalSeparableConv: a 1 x k x k convolution, then a k x 1 x 1 one, each with BatchNorm and ReLU. */
function temporalSeparable(net: NetBuilder, out: number, kernel: number, stride: number, padding: number): NetBuilder {
  conv3dBnRelu(net, out, [1, kernel, kernel], [1, stride, stride], [0, padding, padding]);
  return conv3dBnRelu(net, out, [kernel, 1, 1], [stride, 1, 1], [padding, 0, 0]);
}

/**
 * torchvision's S3D: separable 3-D convolutions and GoogLeNet's Inception modules made separable in time
 * (SepInceptionBlock3D), 3-D max-pools, a (2, 7, 7) average pool, dropout and a 1x1x1 convolution to the classes,
 * averaged over what remains of frames and space.
 */
function s3d(frames: number): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize, frames });
    temporalSeparable(net, 64, 7, 2, 3).maxPool3d([1, 3, 3], [1, 2, 2], [0, 1, 1]);
    conv3dBnRelu(net, 64, [1, 1, 1]);
    temporalSeparable(net, 192, 3, 1, 1).maxPool3d([1, 3, 3], [1, 2, 2], [0, 1, 1]);
    const inception = (b0: number, b1Mid: number, b1: number, b2Mid: number, b2: number, b3: number) => {
      net.beginBlock();
      concatBranches(net, [
        (n) => conv3dBnRelu(n, b0, [1, 1, 1]),
        (n) => temporalSeparable(conv3dBnRelu(n, b1Mid, [1, 1, 1]), b1, 3, 1, 1),
        (n) => temporalSeparable(conv3dBnRelu(n, b2Mid, [1, 1, 1]), b2, 3, 1, 1),
        (n) => conv3dBnRelu(n.maxPool3d([3, 3, 3], [1, 1, 1], [1, 1, 1]), b3, [1, 1, 1]),
      ], b0 + b1 + b2 + b3);
      net.endBlock();
    };
    inception(64, 96, 128, 16, 32, 32);
    inception(128, 128, 192, 32, 96, 64);
    net.maxPool3d([3, 3, 3], [2, 2, 2], [1, 1, 1]);
    inception(192, 96, 208, 16, 48, 64);
    inception(160, 112, 224, 24, 64, 64);
    inception(128, 128, 256, 24, 64, 64);
    inception(112, 144, 288, 32, 64, 64);
    inception(256, 160, 320, 32, 128, 128);
    net.maxPool3d([2, 2, 2], [2, 2, 2]);
    inception(256, 160, 320, 32, 128, 128);
    inception(384, 192, 384, 48, 128, 128);
    // The (2, 7, 7) average pool keeps nothing; dropout's output is what the classifier keeps; the mean over the rest
    // keeps only its shape.
    net.globalPool().dropout(0.2).linear(numClasses);
    return net.build(true);
  };
}

/**
 * torchvision's Swin3D: a (2, 4, 4) patch embedding (a strided 3-D convolution with bias, LayerNorm), Swin blocks
 * over 8 x 7 x 7 windows of the clip's tokens, patch merging in space only, a final LayerNorm, a pool and a linear.
 */
function swin3d(depths: number[], embed: number, heads: number[]): (frames: number) => (imageSize: number, numClasses: number) => LayerNetSpec {
  return (frames) => (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize, frames });
    net.conv3d(embed, [2, 4, 4], [2, 4, 4]).addParameters(embed, 0).layerNorm();
    depths.forEach((depth, stage) => {
      if (stage > 0) net.patchMerging();
      for (let b = 0; b < depth; b++) net.swinBlock(heads[stage]!, 7, 8);
    });
    net.layerNorm().globalPool().linear(numClasses);
    return net.build(true);
  };
}

/** One MViT's blocks, as torchvision's builder lists them (MSBlockConfig): heads, input and output widths, q's and k/v's spatial strides. */
interface MvitConfig {
  heads: number[];
  inputs: number[];
  outputs: number[];
  qStrides: number[];
  kvStrides: number[];
  /** V2: relative positions, every q pooled, the width changed before attention; V1: absolute position tables. */
  v2: boolean;
}

const MVIT_HEADS = [1, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 8, 8];
const MVIT_Q_STRIDES = [1, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1];
const MVIT_KV_STRIDES = [8, 4, 4, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1];
const MVIT_V1_B: MvitConfig = { heads: MVIT_HEADS, qStrides: MVIT_Q_STRIDES, kvStrides: MVIT_KV_STRIDES, v2: false,
  inputs: [96, 192, 192, 384, 384, 384, 384, 384, 384, 384, 384, 384, 384, 384, 768, 768],
  outputs: [192, 192, 384, 384, 384, 384, 384, 384, 384, 384, 384, 384, 384, 768, 768, 768] };
const MVIT_V2_S: MvitConfig = { heads: MVIT_HEADS, qStrides: MVIT_Q_STRIDES, kvStrides: MVIT_KV_STRIDES, v2: true,
  inputs: [96, 96, 192, 192, 384, 384, 384, 384, 384, 384, 384, 384, 384, 384, 384, 768],
  outputs: [96, 192, 192, 384, 384, 384, 384, 384, 384, 384, 384, 384, 384, 384, 768, 768] };

/**
 * torchvision's MViT (mvit_v1_b, mvit_v2_s), built for 16 x 224 x 224 clips (its position tables are sized for
 * them): a (3, 7, 7) patch embedding strided (2, 4, 4) to 96 channels, a class token, 16 multiscale blocks (see
 * NetBuilder.multiscaleBlock) whose pooled attention shrinks the map by 2 in space at blocks 1, 3 and 14, a
 * LayerNorm, the class token's features through dropout (0.5, in place) and a linear.
 */
function mvit(config: MvitConfig): (frames: number) => (imageSize: number, numClasses: number) => LayerNetSpec {
  return (frames) => (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize, frames });
    const embed = config.inputs[0]!;
    net.part('conv_proj').conv3d(embed, [3, 7, 7], [2, 4, 4], [1, 3, 3]).addParameters(embed, 0);
    // The class token; V1's absolute positions are tables over the built-for map (56 x 56, 8 frames) and its class token.
    net.part('pos_encoding').addParameters(embed + (config.v2 ? 0 : (56 * 56 + 8 + 1) * embed), 0);
    net.part('blocks');
    config.heads.forEach((heads, i) => {
      net.multiscaleBlock({ heads, out: config.outputs[i]!, qStride: config.qStrides[i]!, kvStride: config.kvStrides[i]!,
        poolsQ: config.v2 || config.qStrides[i]! > 1, relPos: config.v2, projectAfterAttention: config.v2 });
    });
    net.part('norm').layerNorm().part('head').flattenTo(net.channels).dropout(0.5).linear(numClasses);
    return net.build(true);
  };
}

/** Video classifiers: built for a clip's frames as well as its size. */
export interface VideoModel {
  names: string[];
  publishedParameters: number;
  /** The clip length assumed where the script gives none (an assumption says so), and the size built for by default. */
  frames: number;
  imageSize: number;
  build: (frames: number) => (imageSize: number, numClasses: number) => LayerNetSpec;
}

/** torchvision.models.video's ResNets; num_classes defaults to 400 (Kinetics-400). */
export const VIDEO_CATALOG: VideoModel[] = [
  { names: ['r3d_18'], publishedParameters: 33_371_472, frames: 16, imageSize: 112, build: videoResnet(['full', 'full', 'full', 'full'], false) },
  { names: ['mc3_18'], publishedParameters: 11_695_440, frames: 16, imageSize: 112, build: videoResnet(['full', 'spatial', 'spatial', 'spatial'], false) },
  { names: ['r2plus1d_18'], publishedParameters: 31_505_325, frames: 16, imageSize: 112, build: videoResnet(['factorised', 'factorised', 'factorised', 'factorised'], true) },
  // S3D: 8,320,048 parameters with 400 classes (measured, test/gpu/estimator/results/cat6.json); it needs 14 frames or more.
  { names: ['s3d'], publishedParameters: 8_320_048, frames: 16, imageSize: 224, build: s3d },
  // Swin3D-T: 28,158,070 parameters with 400 classes (measured, results/cat6.json).
  { names: ['swin3d_t'], publishedParameters: 28_158_070, frames: 16, imageSize: 224, build: swin3d([2, 2, 6, 2], 96, [3, 6, 12, 24]) },
  // Swin3D-S and -B: 49,816,678 and 88,048,984 parameters with 400 classes (measured, results/probe_cat12.jsonl).
  { names: ['swin3d_s'], publishedParameters: 49_816_678, frames: 16, imageSize: 224, build: swin3d([2, 2, 18, 2], 96, [3, 6, 12, 24]) },
  { names: ['swin3d_b'], publishedParameters: 88_048_984, frames: 16, imageSize: 224, build: swin3d([2, 2, 18, 2], 128, [4, 8, 16, 32]) },
  // MViT: 36,610,672 and 34,537,744 parameters with 400 classes (measured, results/cat6.json).
  { names: ['mvit_v1_b'], publishedParameters: 36_610_672, frames: 16, imageSize: 224, build: mvit(MVIT_V1_B) },
  { names: ['mvit_v2_s'], publishedParameters: 34_537_744, frames: 16, imageSize: 224, build: mvit(MVIT_V2_S) },
];

export function findVideoModel(name: string): VideoModel | undefined {
  const key = name.trim().toLowerCase();
  return VIDEO_CATALOG.find((m) => m.names.includes(key));
}

/**
 * How a network built from a Hugging Face config differs from the published one: its patch (the stem's kernel and
 * stride), input channels, and whether it has a classifier (the `…Model` classes end at the pooled features).
 */
export interface HierarchicalOptions {
  patch?: number;
  channels?: number;
  classifier?: boolean;
  /** ConvNeXt's layer scale (ConvNextConfig's layer_scale_init_value > 0). */
  layerScale?: boolean;
  /** Swin built by transformers (SwinConfig): its SwinLayer keeps other tensors than timm's block (see transformersSwinLayer). */
  swinLayer?: 'transformers';
}

/** ConvNeXt (torchvision, timm and transformers' ConvNextConfig): depths and widths per stage. */
export function convnext(depths: number[], dims: number[], options: HierarchicalOptions = {}): (imageSize: number, numClasses: number) => LayerNetSpec {
  const { patch = 4, channels = 3, classifier = true, layerScale = true } = options;
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels, size: imageSize });
    // torchvision's children: features.0 the stem, then each stage's blocks (features.1, .3, .5, .7) after its
    // downsampling (features.2, .4, .6); timm's features_only returns each stage's output (CONVNEXT_FEATURES).
    net.part('features.0').conv(dims[0]!, patch, patch, 1, true, 0).layerNorm();
    depths.forEach((depth, stage) => {
      if (stage > 0) net.part(`features.${2 * stage}`).layerNorm().conv(dims[stage]!, 2, 2, 1, true, 0);
      net.part(`features.${2 * stage + 1}`);
      const c = dims[stage]!;
      for (let b = 0; b < depth; b++) {
        net.beginBlock();
        // 7x7 depthwise conv, LayerNorm, two pointwise linears around a GELU, layer scale (keeps its input).
        net.conv(c, 7, 1, c, true).layerNorm().conv(4 * c, 1, 1, 1, true, 0).activation().conv(c, 1, 1, 1, true, 0).activation();
        if (layerScale) net.parameters += c; // layer-scale gamma
        net.addResidual();
        net.endBlock();
      }
    });
    net.part('avgpool').globalPool().part('classifier').layerNorm(dims[dims.length - 1]);
    if (classifier) net.linear(numClasses);
    return net.build(true);
  };
}

const convnextTiny = convnext([3, 3, 9, 3], [96, 192, 384, 768]);

/**
 * timm's ConvNeXt V2: ConvNeXt's stem, downsampling and head; each block a 7x7 depthwise conv, LayerNorm, a
 * pointwise linear to 4C, GELU, global response normalisation and a pointwise linear back, without layer scale.
 */
export function convnextV2(depths: number[], dims: number[], options: HierarchicalOptions = {}): (imageSize: number, numClasses: number) => LayerNetSpec {
  const { patch = 4, channels = 3, classifier = true } = options;
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels, size: imageSize });
    net.part('stem').conv(dims[0]!, patch, patch, 1, true, 0).layerNorm();
    net.part('stages');
    depths.forEach((depth, stage) => {
      if (stage > 0) net.layerNorm().conv(dims[stage]!, 2, 2, 1, true, 0);
      const c = dims[stage]!;
      for (let b = 0; b < depth; b++) {
        net.beginBlock();
        net.conv(c, 7, 1, c, true).layerNorm().conv(4 * c, 1, 1, 1, true, 0).activation().globalResponseNorm().conv(c, 1, 1, 1, true, 0);
        net.addResidual();
        net.endBlock();
      }
    });
    net.part('head').globalPool().layerNorm(dims[dims.length - 1]);
    if (classifier) net.linear(numClasses);
    return net.build(true);
  };
}

/** timm's EdgeNeXt: widths and depths per stage, and the heads of its split-transpose attention (4 or 8). */
interface EdgeNextShape {
  dims: number[];
  depths: number[];
  heads: number;
}

/**
 * timm's EdgeNeXt (`edgenext_xx_small` .. `edgenext_base`): ConvNeXt's patchify stem and downsampling (LayerNorm, a
 * 2x2 strided convolution; none before the first stage), ConvNeXt-like blocks with 3/5/7/9 depthwise kernels per
 * stage, and, ending stages 2-4, one split-transpose block: the channels split into 2/3/4 groups, each but the last
 * through a 3x3 depthwise convolution (the next group added to the previous one's output first), concatenated;
 * Fourier positions through a 1x1 convolution added in stage 2; cross-covariance attention (C x C per head, over the
 * L2-normalised q and k) and an inverted-bottleneck MLP, both layer-scaled.
 */
function edgenext(shape: EdgeNextShape): (imageSize: number, numClasses: number) => LayerNetSpec {
  const kernels = [3, 5, 7, 9];
  const scales = [2, 2, 3, 4];
  return (imageSize, numClasses) => {
    const { dims, depths, heads } = shape;
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.part('stem').conv(dims[0]!, 4, 4, 1, true, 0).layerNorm();
    net.part('stages');
    depths.forEach((depth, stage) => {
      const c = dims[stage]!;
      if (stage > 0) net.layerNorm().conv(c, 2, 2, 1, true, 0);
      const globalBlocks = stage > 0 ? 1 : 0;
      for (let b = 0; b < depth; b++) {
        net.beginBlock();
        if (b < depth - globalBlocks) {
          // Depthwise conv, LayerNorm, two pointwise linears around a GELU, layer scale (keeps its input).
          net.conv(c, kernels[stage]!, 1, c, true);
        } else {
          edgenextSplitTranspose(net, c, scales[stage]!, heads, stage === 1);
        }
        net.layerNorm().conv(4 * c, 1, 1, 1, true, 0).activation().conv(c, 1, 1, 1, true, 0).activation();
        net.parameters += c; // layer-scale gamma
        net.addResidual();
        net.endBlock();
      }
    });
    net.part('head').globalPool().layerNorm(dims[dims.length - 1]).linear(numClasses);
    return net.build(true);
  };
}

/** The split-transpose block's convolutions and attention, up to its MLP's LayerNorm (see edgenext). */
function edgenextSplitTranspose(net: NetBuilder, c: number, scales: number, heads: number, positions: boolean): void {
  const width = Math.ceil(c / scales);
  const mapArea = net.elements / c;
  for (let i = 0; i < Math.max(1, scales - 1); i++) {
    // The first group is a view of the block input (its convolution keeps all of it); each next one a new sum.
    if (i === 0) net.chunkChannels(width);
    else net.concatTo(width);
    net.conv(width, 3, 1, width, true);
  }
  net.concatTo(c);
  if (positions) {
    net.addParameters(64 * c + c, 64 * c);
    net.concatTo(c);
  }
  // LayerNorm, the qkv linear (kept whole: normalize and attn @ v read views of it), the normalised q and k (kept by
  // their matmul), the C x C maps (the matmul's output kept by the temperature, the softmax's), the heads' output
  // reshaped into a new tensor the projection keeps, and the projection's output the layer scale keeps.
  net.layerNorm().conv(3 * c, 1, 1, 1, true, 0);
  net.addParameters(heads + c, 0); // temperature, layer-scale gamma
  net.saved += 3 * c * mapArea + 2 * c * mapArea + (2 * c * c) / heads;
  net.concatTo(c).conv(c, 1, 1, 1, true, 0).activation();
  net.addResidual();
  net.concatTo(c);
}

/**
 * timm's pre-activation ResNet (`resnetv2_18` .. `resnetv2_152`, `resnetv2_18d`/`34d`/`50d`/`101d`; BatchNorm, not
 * BiT's GroupNorm): each block normalises (BatchNorm + ReLU) its input first and feeds that to its convolutions and
 * to its shortcut's 1x1 convolution (no norm after it; the D variants average-pool before it where the block
 * strides, on a deep stem of three 3x3 convolutions, 32/32/64); the residual sum is a new map; a final BatchNorm +
 * ReLU before the pooled classifier (a 1x1 convolution with a bias).
 */
function resnetV2(blocks: number[], bottleneck: boolean, deep = false): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.part('stem');
    if (deep) net.conv(32, 3, 2).batchNorm().relu().conv(32, 3).batchNorm().relu().conv(64, 3);
    else net.conv(64, 7, 2);
    net.maxPool(3, 2, 1);
    net.part('stages');
    let inChannels = 64;
    blocks.forEach((count, stage) => {
      const out = (bottleneck ? 256 : 64) * 2 ** stage;
      const mid = bottleneck ? out / 4 : out;
      net.beginStage();
      for (let b = 0; b < count; b++) {
        const stride = stage > 0 && b === 0 ? 2 : 1;
        net.beginBlock();
        const input = net.elements;
        net.batchNorm().relu();
        if (b === 0 && (stride !== 1 || inChannels !== out)) {
          // The shortcut's 1x1 convolution reads the normalised input (already kept); the D variants' pooled copy
          // of it is a new map that convolution keeps.
          net.addParameters(inChannels * out, inChannels * out);
          if (deep && stride > 1) net.saved += input / 4;
        }
        if (bottleneck) net.conv(mid, 1, 1, 1, false, 0).batchNorm().relu().conv(mid, 3, stride).batchNorm().relu().conv(out, 1, 1, 1, false, 0);
        else net.conv(mid, 3, stride).batchNorm().relu().conv(out, 3);
        net.addResidual();
        net.concatTo(out);
        net.endBlock();
        inChannels = out;
      }
      net.endStage();
    });
    net.part('norm').batchNorm().relu().part('head').globalPool().linear(numClasses);
    return net.build(true);
  };
}

/**
 * timm's BiT (`resnetv2_50x1_bit` .. `resnetv2_152x4_bit`): the pre-activation ResNet above, `widthFactor` times as
 * wide (stem and every stage), with GroupNorm (32 groups, then ReLU in place) where it has BatchNorm, weight-
 * standardized convolutions (StdConv2d: each call makes a standardized copy of its weight, which the convolution
 * keeps for backward whatever the batch), and the 'fixed' stem: the 7x7 convolution, a zero pad of 1 (a new map, which
 * the 3x3 max pool without padding keeps).
 */
function resnetV2Bit(blocks: number[], widthFactor: number): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    const groupNorm = (): NetBuilder => net.groupNormAct();
    const stem = 64 * widthFactor;
    net.part('stem').conv(stem, 7, 2);
    net.concatTo(stem);
    net.maxPool(3, 2, 1);
    net.part('stages');
    let inChannels = stem;
    let convWeights = 3 * stem * 49;
    blocks.forEach((count, stage) => {
      const out = 256 * widthFactor * 2 ** stage;
      const mid = out / 4;
      net.beginStage();
      for (let b = 0; b < count; b++) {
        const stride = stage > 0 && b === 0 ? 2 : 1;
        net.beginBlock();
        groupNorm();
        if (b === 0) {
          // The shortcut's 1x1 convolution reads the normalised input (already kept).
          net.addParameters(inChannels * out, inChannels * out);
          convWeights += inChannels * out;
        }
        net.conv(mid, 1, 1, 1, false, 0);
        groupNorm();
        net.conv(mid, 3, stride);
        groupNorm();
        net.conv(out, 1, 1, 1, false, 0);
        convWeights += inChannels * mid + 9 * mid * mid + mid * out;
        net.addResidual();
        net.concatTo(out);
        net.endBlock();
        inChannels = out;
      }
      net.endStage();
    });
    net.part('norm');
    groupNorm();
    net.part('head').globalPool().linear(numClasses);
    return { ...net.build(true), reparametrizedWeightElements: convWeights };
  };
}

/** timm's two small HRNets: fewer blocks and modules than the `hrnet_wN` family (w18_small's branches 16 to 128 wide). */
const HRNET_W18_SMALL: HrnetShape = {
  stage1: { blocks: 1, channels: 32 },
  stages: [
    { modules: 1, blocks: [2, 2], channels: [16, 32] },
    { modules: 1, blocks: [2, 2, 2], channels: [16, 32, 64] },
    { modules: 1, blocks: [2, 2, 2, 2], channels: [16, 32, 64, 128] },
  ],
};
const HRNET_W18_SMALL_V2: HrnetShape = {
  stage1: { blocks: 2, channels: 64 },
  stages: [
    { modules: 1, blocks: [2, 2], channels: [18, 36] },
    { modules: 3, blocks: [2, 2, 2], channels: [18, 36, 72] },
    { modules: 2, blocks: [2, 2, 2, 2], channels: [18, 36, 72, 144] },
  ],
};

/** Python's round(): halves to the even neighbour (timm's depth rounding). */
function pythonRound(value: number): number {
  const floor = Math.floor(value);
  const fraction = value - floor;
  if (fraction !== 0.5) return Math.round(value);
  return floor % 2 === 0 ? floor : floor + 1;
}

/** How timm scales and builds one of its EfficientNet-B0-shaped nets (`efficientnet_lite*`, `tinynet_*`). */
interface TimmEfficientNetShape {
  width: number;
  depth: number;
  /**
   * EfficientNet-Lite: ReLU6, no squeeze-excite, the first and last stages kept at one block. Else (TinyNet) SiLU,
   * squeeze-excite to a quarter of the block's input, and each stage's blocks rounded (not ceiled) after scaling.
   */
  lite: boolean;
}

/**
 * timm's EfficientNet-Lite and TinyNet: EfficientNet-B0's seven stages (a depthwise-separable block, then inverted
 * residuals), scaled in width (channels to multiples of 8) and depth, behind a fixed 32-channel stem and a
 * 1280-channel head convolution; no dropout before the classifier (timm's default drop_rate).
 */
function timmEfficientNet(shape: TimmEfficientNetShape): (imageSize: number, numClasses: number) => LayerNetSpec {
  const stages: Array<[number, number, number, number, number]> = [
    [1, 3, 1, 16, 1], [6, 3, 2, 24, 2], [6, 5, 2, 40, 2], [6, 3, 2, 80, 3], [6, 5, 1, 112, 3], [6, 5, 2, 192, 4], [6, 3, 1, 320, 1]];
  return (imageSize, numClasses) => {
    const { width, depth, lite } = shape;
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    const act = () => (lite ? net.relu6() : net.activation());
    net.part('conv_stem').conv(32, 3, 2).part('bn1').batchNorm();
    act();
    net.part('blocks');
    let inC = 32;
    stages.forEach(([expand, kernel, firstStride, baseOut, baseRepeats], stage) => {
      const out = makeDivisible(baseOut * width);
      const fixed = lite && (stage === 0 || stage === stages.length - 1);
      const repeats = fixed ? baseRepeats : lite ? Math.ceil(baseRepeats * depth) : Math.max(1, pythonRound(baseRepeats * depth));
      net.beginStage();
      for (let r = 0; r < repeats; r++) {
        const stride = r === 0 ? firstStride : 1;
        const hidden = expand === 1 ? inC : makeDivisible(inC * expand);
        net.beginBlock();
        if (expand !== 1) {
          net.conv(hidden, 1, 1, 1, false, 0).batchNorm();
          act();
        }
        net.conv(hidden, kernel, stride, hidden).batchNorm();
        act();
        if (!lite) net.squeezeExcite(Math.round(inC / 4));
        net.conv(out, 1, 1, 1, false, 0).batchNorm();
        if (stride === 1 && inC === out) net.addResidual();
        net.endBlock();
        inC = out;
      }
      net.endStage();
    });
    net.part('conv_head').conv(1280, 1, 1, 1, false, 0).part('bn2').batchNorm();
    act();
    net.part('global_pool').globalPool().part('classifier').linear(numClasses);
    return net.build(true);
  };
}

/**
 * timm's MLP-Mixer (`mixer_s16_224` .. `mixer_l16_224`): a patchify convolution, then blocks that mix across patches
 * (LayerNorm, an MLP over the patch axis to half the width, on the transposed map) and across channels (LayerNorm,
 * an MLP to four times the width), both residual; a final LayerNorm and the patches' mean into the classifier.
 */
function mlpMixer(width: number, layers: number, patch: number): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.part('stem').conv(width, patch, patch, 1, true, 0);
    const patches = net.elements / width;
    const tokenHidden = Math.floor(width / 2);
    net.part('blocks');
    for (let b = 0; b < layers; b++) {
      net.beginBlock();
      // Token mixing: the norm's input and output (its transpose a view the first linear keeps), the first linear's
      // output (kept by the GELU) and the GELU's (kept by the second linear); the residual sum is a new map.
      net.layerNorm();
      net.addParameters(2 * patches * tokenHidden + tokenHidden + patches, 2 * patches * tokenHidden);
      net.saved += width * patches + 2 * width * tokenHidden;
      net.addResidual();
      net.concatTo(width);
      net.layerNorm().conv(4 * width, 1, 1, 1, true, 0).activation().conv(width, 1, 1, 1, true, 0);
      net.addResidual();
      net.endBlock();
    }
    net.part('norm').layerNorm().part('head').globalPool().linear(numClasses);
    return net.build(true);
  };
}

/** timm's make_divisible: the nearest multiple of `divisor` (never below `least`, nor below 90% of the value). */
function timmDivisible(value: number, divisor = 8, least = divisor): number {
  const rounded = Math.max(least, Math.floor((value + divisor / 2) / divisor) * divisor);
  return rounded < 0.9 * value ? rounded + divisor : rounded;
}

/**
 * timm's ResNeSt (`resnest50d` and kin): a ResNet-D (a deep stem of three 3x3 convolutions, 32/32/64 wide; an
 * average pool before each strided shortcut's 1x1 convolution) whose bottleneck 3x3 is a split attention over
 * `radix` 2 groups: a grouped convolution to twice the width (BatchNorm, ReLU), the splits summed and pooled, two 1x1
 * convolutions (the first to a quarter of the doubled width, at least 32) and a softmax over the splits weigh them;
 * the weighted sum is pooled by a 3x3 average pool where the block strides (avd). The product keeps the doubled map
 * (the ReLU's output), the sum makes a map of the width the 1x1 convolution after it keeps.
 */
function resnest(blocks: number[], radix = 2): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.part('conv1').conv(32, 3, 2).batchNorm().relu().conv(32, 3).batchNorm().relu().conv(64, 3);
    net.part('bn1').batchNorm().part('relu').relu().part('maxpool').maxPool(3, 2, 1);
    let inChannels = 64;
    blocks.forEach((count, stage) => {
      net.part(`layer${stage + 1}`);
      net.beginStage();
      const width = 64 * 2 ** stage;
      const out = 4 * width;
      const attention = timmDivisible(width * radix * 0.25, 8, 32);
      for (let b = 0; b < count; b++) {
        const stride = stage > 0 && b === 0 ? 2 : 1;
        net.beginBlock();
        net.conv(width, 1).batchNorm().relu();
        net.conv(width * radix, 3, 1, radix).batchNorm().relu();
        // The attention's two 1x1 convolutions (with biases) and its BatchNorm, on pooled vectors (kept, small).
        net.addParameters(width * attention + attention + 2 * attention + attention * width * radix + width * radix, width * attention + attention * width * radix);
        net.saved += 2 * width + 2 * attention + 2 * width * radix;
        net.concatTo(width);
        if (stride > 1) net.avgPool(3, stride, 1);
        net.conv(out, 1).batchNorm();
        if (b === 0) {
          // The shortcut: (a 2x2 average pool where it strides, whose output the conv keeps) a 1x1 conv and a BatchNorm.
          net.parameters += inChannels * out + 2 * out;
          net.normParameters += 2 * out;
          net.castParameters += inChannels * out;
          net.saved += net.elements + (stride > 1 ? (net.elements / out) * inChannels : 0);
        }
        net.addResidual().relu();
        net.endBlock();
        inChannels = out;
      }
      net.endStage();
      net.name(`layer${stage + 1}`);
    });
    net.part('avgpool').globalPool().part('fc').linear(numClasses);
    return net.build(true);
  };
}

/** ECA's 1-D convolution over the pooled channels: its kernel grows with log2 of the channels, odd (timm's EcaModule). */
function ecaKernel(channels: number): number {
  const k = Math.trunc(Math.abs((Math.log2(channels) + 1) / 2));
  return k % 2 === 1 ? k : k + 1;
}

/**
 * timm's NFNet-L / ECA-NFNet (`eca_nfnet_l0`..`l2`): a normalizer-free ResNet. Weight-standardized convolutions
 * (ScaledStdConv2d: a bias and a gain per output channel), no norms; a deep stem of four 3x3 convolutions to 128
 * channels (stride 4 in all); pre-activation bottlenecks (SiLU, whose input is kept, scaled by beta) of a 1x1, two
 * grouped 3x3 (group width 64) and a 1x1 convolution, efficient channel attention at the end of each (its product
 * keeps the last convolution's output), an average-pooled 1x1 shortcut where the width or stride changes; a 1x1
 * convolution to 1.5 x the last width before the pooled head.
 */
function ecaNfnet(depths: number[], channels = [256, 512, 1536, 1536]): (imageSize: number, numClasses: number) => LayerNetSpec {
  const features = channels[channels.length - 1]! * 1.5;
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    const standardized = (out: number, kernel: number, stride = 1, groups = 1): NetBuilder =>
      net.conv(out, kernel, stride, groups, true).addParameters(out, 0);
    net.part('stem');
    standardized(16, 3, 2).activation();
    standardized(32, 3).activation();
    standardized(64, 3).activation();
    standardized(128, 3, 2);
    let inChannels = 128;
    depths.forEach((depth, stage) => {
      net.part(`stages.${stage}`);
      net.beginStage();
      const out = channels[stage]!;
      const mid = out / 4;
      const groups = mid / 64;
      for (let b = 0; b < depth; b++) {
        const stride = stage > 0 && b === 0 ? 2 : 1;
        net.beginBlock();
        net.activation();
        if (b === 0) {
          // The shortcut reads the activated input (a 2x2 average pool of it where the block strides, which its conv keeps).
          net.addParameters(inChannels * out + 2 * out, inChannels * out);
          if (stride > 1) net.saved += net.elements / (stride * stride);
        }
        standardized(mid, 1).activation();
        standardized(mid, 3, stride, groups).activation();
        standardized(mid, 3, 1, groups).activation();
        standardized(out, 1);
        // ECA: the pooled channels through a 1-D convolution and a sigmoid; the product keeps the map.
        net.addParameters(ecaKernel(out), 0);
        net.saved += net.elements + 3 * out;
        net.concatTo(out);
        net.addResidual();
        net.endBlock();
        inChannels = out;
      }
      net.endStage();
      net.name(`stages.${stage}`);
    });
    net.part('final_conv');
    standardized(features, 1);
    net.part('final_act').activation();
    net.part('head').globalPool().linear(numClasses);
    return net.build(true);
  };
}

/**
 * timm's Twins-SVT (`twins_svt_small` / `base` / `large`): four stages, each a patch embedding (a strided conv and
 * a LayerNorm: 4 then 2), then blocks alternating locally grouped attention (7x7 windows, Swin's block without
 * shift or bias table) and global sub-sampled attention (keys and values from a map reduced by sr 8/4/2/1, as in
 * PVT), both through F.scaled_dot_product_attention (the local one on 5-D inputs, which only the math kernel takes;
 * the global one fused), with plain 4x MLPs; a position generator (a 3x3 depthwise
 * conv with a residual) after each stage's first block; a final LayerNorm, pooled tokens and a linear head.
 */
function twinsSvt(depths: number[], dims: number[], heads: number[]): (imageSize: number, numClasses: number) => LayerNetSpec {
  const reductions = [8, 4, 2, 1];
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    depths.forEach((depth, stage) => {
      const patch = stage === 0 ? 4 : 2;
      net.part(`patch_embeds.${stage}`).conv(dims[stage]!, patch, patch, 1, true, 0).layerNorm();
      net.part(`blocks.${stage}`);
      for (let b = 0; b < depth; b++) {
        // A locally grouped block's output is read by the position generator after the first block, else by the
        // next (sub-sampled attention) block's norm.
        if (b % 2 === 0) net.swinBlock(heads[stage]!, 7, undefined, { biasTable: false, kernel: 'math' }).readByOtherLayer();
        else net.segformerBlock(heads[stage]!, reductions[stage]!, 4, true, false);
        if (b === 0) net.conv(dims[stage]!, 3, 1, dims[stage]!, true).addResidual();
      }
    });
    net.part('norm').layerNorm().globalPool().part('head').linear(numClasses);
    return net.build(true);
  };
}

/**
 * timm's PVT v2 (`pvt_v2_b0`..`b5`): SegFormer's Mix Transformer encoder (overlapping patch embeddings, attention
 * over keys and values from a map reduced by sr_ratios 8/4/2/1, the Mix-FFN's depthwise convolution) with its own
 * MLP ratios, each stage ending in a LayerNorm, then global average pooling and a linear head. Its attention is
 * fused (scaled_dot_product_attention), so no probabilities are kept. `patch_embed` is the first stage's embedding,
 * `stages.i` a stage (the later ones with their own embedding), as timm names its modules.
 */
function pvtV2(depths: number[], dims: number[], mlpRatios: number[]): (imageSize: number, numClasses: number) => LayerNetSpec {
  const heads = [1, 2, 5, 8];
  const reductions = [8, 4, 2, 1];
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.part('patch_embed').conv(dims[0]!, 7, 4, 1, true, 3).layerNorm();
    depths.forEach((depth, stage) => {
      net.part(`stages.${stage}`);
      if (stage > 0) net.conv(dims[stage]!, 3, 2, 1, true, 1).layerNorm();
      for (let b = 0; b < depth; b++) net.segformerBlock(heads[stage]!, reductions[stage]!, mlpRatios[stage]!, true);
      net.layerNorm();
    });
    net.globalPool().part('head').linear(numClasses);
    return net.build(true);
  };
}

const PVT_V2_FEATURES = ['stages.0', 'stages.1', 'stages.2', 'stages.3'];
const PVT_V2_WIDE = [64, 128, 320, 512];

/**
 * Swin Transformer (timm `swin_*_patch4_window7_224`, torchvision `swin_t/s/b`, transformers' SwinConfig): the three
 * build the same network (SwinForImageClassification: 49,117,943 parameters for swin_s's sizes and 365 labels, timm's
 * swin_s less 635 classes of its head; measured, test/gpu/holdout12/results/h200.json); transformers' layers keep
 * other tensors for backward (`swinLayer`).
 */
export function swin(depths: number[], embed: number, heads: number[], window = 7, options: HierarchicalOptions = {}): (imageSize: number, numClasses: number) => LayerNetSpec {
  const { patch = 4, channels = 3, classifier = true } = options;
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels, size: imageSize });
    // Patch embedding: a patch x patch convolution of that stride and a LayerNorm (which keeps the convolution's output).
    net.conv(embed, patch, patch, 1, true, 0).layerNorm();
    depths.forEach((depth, stage) => {
      if (stage > 0) net.patchMerging();
      for (let b = 0; b < depth; b++) {
        if (options.swinLayer === 'transformers') net.transformersSwinLayer(heads[stage]!, window, b % 2 === 1);
        else net.swinBlock(heads[stage]!, window);
      }
    });
    net.layerNorm().globalPool();
    if (classifier) net.linear(numClasses);
    return net.build(true);
  };
}

/**
 * torchvision's Swin Transformer V2 (`swin_v2_t/s/b`, 8x8 windows, built for 256 px): V1's stages with V2's blocks
 * (cosine attention, a log-spaced position-bias MLP, norms after attention and MLP) and patch merging that reduces
 * before its norm.
 */
function swinV2(depths: number[], embed: number, heads: number[], window = 8): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.conv(embed, 4, 4, 1, true, 0).layerNorm();
    depths.forEach((depth, stage) => {
      if (stage > 0) net.patchMerging(true);
      for (let b = 0; b < depth; b++) net.swinV2Block(heads[stage]!, window);
    });
    net.layerNorm().globalPool().linear(numClasses);
    return net.build(true);
  };
}

/** Rounds to a multiple of `divisor`, never below 90% of the value (torchvision's _make_divisible). */
function divisible(value: number, divisor: number): number {
  const rounded = Math.max(divisor, Math.floor(Math.trunc(value + divisor / 2) / divisor) * divisor);
  return rounded < 0.9 * value ? rounded + divisor : rounded;
}

/** torch.round: halves go to the even neighbour (RegNet-X 1.6GF's 22.5 is 22). */
function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (Math.abs(diff - 0.5) > 1e-9) return Math.round(x);
  return floor % 2 === 0 ? floor : floor + 1;
}

/**
 * How a RegNet makes each stage's width a multiple of its group width: torchvision's _make_divisible (never below
 * 90%), or timm's quantize_float (the nearest multiple, halves to even), which gives some timm models other widths
 * than their torchvision namesakes (timm keeps the former as its `*_tv` models).
 */
type RegNetRounding = 'torchvision' | 'timm';

/**
 * RegNet (torchvision `regnet_x_*` / `regnet_y_*`, timm `regnetx_*` / `regnety_*`): the stage widths and depths
 * follow from the design space's parameters as torchvision's BlockParams.from_init_params and timm's
 * generate_regnet compute them (a quantized linear function of the block index), then bottleneck blocks with
 * grouped 3x3 convolutions, and squeeze-and-excitation on the Y models.
 */
function regnet(depth: number, w0: number, wa: number, wm: number, groupWidth: number, seRatio = 0,
  rounding: RegNetRounding = 'torchvision'): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const blockWidths: number[] = [];
    for (let i = 0; i < depth; i++) {
      const capacity = roundHalfEven(Math.log((i * wa + w0) / w0) / Math.log(wm));
      blockWidths.push(roundHalfEven((w0 * wm ** capacity) / 8) * 8);
    }
    const stages: Array<{ width: number; depth: number }> = [];
    for (const width of blockWidths) {
      const last = stages[stages.length - 1];
      if (last && last.width === width) last.depth++;
      else stages.push({ width, depth: 1 });
    }
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.part('stem').conv(32, 3, 2).batchNorm().relu();
    net.part('trunk_output');
    let widthIn = 32;
    for (const stage of stages) {
      const group = Math.min(groupWidth, stage.width);
      const width = rounding === 'timm' ? roundHalfEven(stage.width / group) * group : divisible(stage.width, group);
      for (let b = 0; b < stage.depth; b++) {
        const stride = b === 0 ? 2 : 1;
        net.beginBlock();
        net.conv(width, 1, 1, 1, false, 0).batchNorm().relu().conv(width, 3, stride, width / group).batchNorm().relu();
        if (seRatio > 0) net.squeezeExcite(Math.round(seRatio * widthIn));
        net.conv(width, 1, 1, 1, false, 0).batchNorm();
        if (widthIn !== width || stride !== 1) {
          // 1x1 strided projection + BatchNorm on the block input: its conv output is kept by that BatchNorm.
          net.parameters += widthIn * width + 2 * width;
          net.castParameters += widthIn * width;
          net.saved += net.elements;
        }
        net.addResidual().relu();
        net.endBlock();
        widthIn = width;
      }
    }
    net.part('avgpool').globalPool().part('fc').linear(numClasses);
    return net.build(true);
  };
}

/** torchvision's FCNHead: a 3x3 convolution to a quarter of the channels, BatchNorm, ReLU, dropout 0.1, a 1x1 classifier. */
function fcnHead(net: NetBuilder, numClasses: number): void {
  net.conv(Math.floor(net.channels / 4), 3).batchNorm().relu().dropout(0.1).conv(numClasses, 1, 1, 1, true, 0);
}

/**
 * torchvision's DeepLabHead: ASPP (a 1x1 branch, three dilated 3x3 branches at rates 12/24/36 and an image-pooling
 * branch, 256 channels each, concatenated and projected to 256 with dropout 0.5), then a 3x3 convolution and a 1x1
 * classifier. ASPP's ReLUs are not in place: each keeps its own output.
 */
function deepLabHead(net: NetBuilder, numClasses: number): void {
  const features = net.mark();
  for (let branch = 0; branch < 4; branch++) {
    net.branchFrom(features).conv(256, branch === 0 ? 1 : 3, 1, 1, false, branch === 0 ? 0 : 1).batchNorm().relu(false);
  }
  net.branchFrom(features).globalPool().conv(256, 1, 1, 1, false, 0).batchNorm().relu(false);
  net.branchFrom(features).concatTo(5 * 256);
  net.conv(256, 1, 1, 1, false, 0).batchNorm().relu(false).dropout(0.5);
  net.conv(256, 3).batchNorm().relu().conv(numClasses, 1, 1, 1, true, 0);
}

/**
 * torchvision's AlexNet: five convolutions with biases and in-place ReLUs (11x11 stride 4, 5x5, three 3x3s),
 * three max-pools, a 6x6 average pool, and a classifier of three linears with dropout before the first two.
 */
function alexnet(imageSize: number, numClasses: number): LayerNetSpec {
  const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
  net.part('features').conv(64, 11, 4, 1, true, 2).relu().maxPool(3, 2).conv(192, 5, 1, 1, true, 2).relu().maxPool(3, 2);
  net.conv(384, 3, 1, 1, true).relu().conv(256, 3, 1, 1, true).relu().conv(256, 3, 1, 1, true).relu().maxPool(3, 2);
  net.part('avgpool').adaptiveAvgPool(6).part('classifier').dropout(0.5).linear(4096).relu().dropout(0.5).linear(4096).relu().linear(numClasses);
  return net.build(true);
}

/**
 * SqueezeNet's Fire module: a 1x1 squeeze convolution, then 1x1 and 3x3 expand convolutions that both read it,
 * concatenated; every convolution has a bias and an in-place ReLU.
 */
function fire(net: NetBuilder, squeeze: number, expand: number): void {
  net.conv(squeeze, 1, 1, 1, true, 0).relu();
  const squeezed = net.mark();
  net.conv(expand, 1, 1, 1, true, 0).relu().branchFrom(squeezed).conv(expand, 3, 1, 1, true, 1).relu().concatTo(2 * expand);
}

/**
 * torchvision's SqueezeNet 1.0 and 1.1: a strided stem (7x7 to 96, or 3x3 to 64), Fire modules between three
 * ceil-mode max-pools (1.1 pools earlier), and a classifier of dropout, a 1x1 convolution to the classes, a ReLU
 * and a global average pool.
 */
function squeezenet(version: '1_0' | '1_1'): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.part('features');
    // Fire modules by squeeze width (the expand width is four times it), 'M' a max-pool.
    const layout: Array<number | 'M'> = version === '1_0'
      ? ['M', 16, 16, 32, 'M', 32, 48, 48, 64, 'M', 64]
      : ['M', 16, 16, 'M', 32, 32, 'M', 48, 48, 64, 64];
    if (version === '1_0') net.conv(96, 7, 2, 1, true, 0).relu();
    else net.conv(64, 3, 2, 1, true, 0).relu();
    for (const item of layout) {
      if (item === 'M') net.maxPool(3, 2, 0, true);
      else fire(net, item, 4 * item);
    }
    net.part('classifier').dropout(0.5).conv(numClasses, 1, 1, 1, true, 0).relu().globalPool();
    return net.build(true);
  };
}

/**
 * torchvision's MNASNet (0.5, 0.75, 1.0, 1.3): a stem (a strided 3x3, a depthwise 3x3, a 1x1 projection), six
 * stacks of MobileNetV2-style inverted residuals (1x1 expansion, depthwise 3x3 or 5x5, 1x1 projection; a residual
 * where the shape holds) whose widths `alpha` scales (to multiples of 8), a 1x1 convolution to 1280, the mean over
 * space, dropout 0.2 and a linear.
 */
function mnasnet(alpha: number): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const depths = [32, 16, 24, 40, 80, 96, 192, 320].map((d) => divisible(d * alpha, 8));
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.part('layers').conv(depths[0]!, 3, 2).batchNorm().relu().conv(depths[0]!, 3, 1, depths[0]!).batchNorm().relu();
    net.conv(depths[1]!, 1, 1, 1, false, 0).batchNorm();
    // [kernel, stride, expansion, repeats] of each stack.
    const stacks: Array<[number, number, number, number]> = [[3, 2, 3, 3], [5, 2, 3, 3], [5, 2, 6, 3], [3, 1, 6, 2], [5, 2, 6, 4], [3, 1, 6, 1]];
    let inC = depths[1]!;
    stacks.forEach(([kernel, firstStride, expansion, repeats], i) => {
      const out = depths[i + 2]!;
      for (let r = 0; r < repeats; r++) {
        const stride = r === 0 ? firstStride : 1;
        const mid = inC * expansion;
        net.beginBlock();
        net.conv(mid, 1, 1, 1, false, 0).batchNorm().relu().conv(mid, kernel, stride, mid).batchNorm().relu().conv(out, 1, 1, 1, false, 0).batchNorm();
        if (stride === 1 && inC === out) net.addResidual();
        net.endBlock();
        inC = out;
      }
    });
    net.conv(1280, 1, 1, 1, false, 0).batchNorm().relu().part(POOL_PART).globalPool().part('classifier').dropout(0.2).linear(numClasses);
    return net.build(true);
  };
}

/**
 * torchvision's ShuffleNetV2: a strided 3x3 stem and a max-pool, three stages of inverted residuals (4, 8 and 4;
 * the first of each strides, both its branches reading the input; the others split the channels in two and run
 * one half through a 1x1, a depthwise 3x3 and a 1x1), the halves concatenated and shuffled, a 1x1 convolution,
 * the mean over space and a linear. `widths`: the stages' and the last convolution's output channels.
 */
function shufflenetV2(widths: [number, number, number, number]): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.part('conv1').conv(24, 3, 2).batchNorm().relu().part('maxpool').maxPool(3, 2, 1);
    let inC = 24;
    [4, 8, 4].forEach((repeats, stage) => {
      const out = widths[stage]!;
      const half = out / 2;
      net.part(`stage${stage + 2}`);
      for (let r = 0; r < repeats; r++) {
        net.beginBlock();
        if (r === 0) {
          const input = net.mark();
          net.conv(inC, 3, 2, inC).batchNorm().conv(half, 1, 1, 1, false, 0).batchNorm().relu().branchFrom(input);
          net.conv(half, 1, 1, 1, false, 0).batchNorm().relu().conv(half, 3, 2, half).batchNorm().conv(half, 1, 1, 1, false, 0).batchNorm().relu();
        } else {
          net.chunkChannels(half).conv(half, 1, 1, 1, false, 0).batchNorm().relu().conv(half, 3, 1, half).batchNorm().conv(half, 1, 1, 1, false, 0).batchNorm().relu();
        }
        // The halves concatenated, then shuffled (a copy): the next block reads the copy.
        net.concatTo(out);
        net.endBlock();
        inC = out;
      }
    });
    net.part('conv5').conv(widths[3], 1, 1, 1, false, 0).batchNorm().relu().part(POOL_PART).globalPool().part('fc').linear(numClasses);
    return net.build(true);
  };
}

/** Options a segmentation builder takes besides num_classes. */
export interface VisionOptions {
  /** aux_loss=True: an FCN head on an earlier stage gives a second output ("aux"), with its own loss. */
  auxLoss?: boolean;
  /** Inception v3 / GoogLeNet `aux_logits` (absent: True, their default without weights): the auxiliary classifiers. */
  auxLogits?: boolean;
  /** weights=... given: GoogLeNet's builder then drops its auxiliary classifiers unless aux_logits=True. */
  pretrained?: boolean;
  /**
   * A ViT's dropout inside its blocks (torchvision `dropout=`, timm `proj_drop_rate=`): after attention, after the
   * MLP's activation and after the MLP, each a bool mask in training. Absent or 0: none (both libraries' default).
   */
  blockDropout?: number;
  /** torchvision ResNet's `replace_stride_with_dilation` (stages 2..4): the stages that dilate instead of striding. */
  dilation?: readonly boolean[];
  /** A ResNet stem the script put in place of the library's (small images: a 3x3 stride-1 conv1, no max-pool). */
  resnetStem?: ResNetStem;
  /** torchvision MobileNetV2's `width_mult`: every layer's channels scaled (absent: 1). */
  widthMult?: number;
}

/**
 * A ResNet's stem as a script may replace it: `conv1`'s kernel, stride and padding (torchvision's: 7, 2, 3), and
 * whether the max-pool after it still runs (`model.maxpool = nn.Identity()`: not).
 */
export interface ResNetStem {
  conv?: { kernel: number; stride: number; padding: number };
  maxPool?: boolean;
}

/**
 * torchvision.models.segmentation's FCN and DeepLabV3 on a dilated ResNet (output stride 8): the head's map is
 * resized to the input, and under aux_loss so is an FCN head's map on the third stage.
 */
function resnetSegmentation(blocks: number[], head: 'fcn' | 'deeplabv3') {
  return (imageSize: number, numClasses: number, options: VisionOptions = {}): LayerNetSpec => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    const third = resnetStages(net, blocks, true, 1, 1, true);
    if (head === 'fcn') fcnHead(net, numClasses);
    else deepLabHead(net, numClasses);
    net.resizeTo(imageSize);
    if (options.auxLoss && third) auxiliaryHead(net, third, numClasses, imageSize);
    return net.build(true);
  };
}

/** With aux_loss: a second output, an FCN head on an earlier stage's features, resized to the image like the main one. */
function auxiliaryHead(net: NetBuilder, from: BranchPoint, numClasses: number, imageSize: number): void {
  net.addOutput().branchFrom(from);
  fcnHead(net, numClasses);
  net.resizeTo(imageSize);
}

/** DeepLabV3 on the dilated MobileNetV3-Large features (output stride 16); the aux FCN head reads the stride-8 stage (40 channels). */
function deeplabv3MobileNet(imageSize: number, numClasses: number, options: VisionOptions = {}): LayerNetSpec {
  const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
  const low = mobilenetV3Features(net, MOBILENET_V3_LARGE, true, 3);
  deepLabHead(net, numClasses);
  net.resizeTo(imageSize);
  if (options.auxLoss && low) auxiliaryHead(net, low, numClasses, imageSize);
  return net.build(true);
}

/**
 * LR-ASPP on the dilated MobileNetV3-Large: the last features (960 channels, stride 16) through a 1x1 conv-BN-ReLU
 * gated by a pooled 1x1 conv and a sigmoid, resized to the stride-8 stage, classified there and added to that
 * stage's own 1x1 classification; the sum is resized to the input.
 */
function lrasppMobileNet(imageSize: number, numClasses: number): LayerNetSpec {
  const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
  const low = mobilenetV3Features(net, MOBILENET_V3_LARGE, true, 3);
  const high = net.mark();
  net.globalPool().conv(128, 1, 1, 1, false, 0).sigmoid();
  net.branchFrom(high).conv(128, 1, 1, 1, false, 0).batchNorm().relu();
  // The gated product (a new tensor) is resized to the stride-8 size; the classifier keeps the resized map.
  net.concatTo(128);
  net.resizeTo(Math.ceil(imageSize / 8)).conv(numClasses, 1, 1, 1, true, 0);
  // The two classifications are added: the sum keeps neither.
  if (low) net.branchFrom(low, false).conv(numClasses, 1, 1, 1, true, 0);
  net.resizeTo(imageSize);
  return net.build(true);
}

export interface VisionModel {
  /** Names a script uses: torchvision constructor names and timm model names. */
  names: string[];
  /** The input size the architecture is built for where its name says (timm `vit_base_patch16_384`: 384). */
  imageSize?: number;
  /** torchvision.models.segmentation: num_classes defaults to 21, aux_loss to False (without weights). */
  segmentation?: boolean;
  /**
   * The parts (LayerNetSpec.parts' names) whose outputs timm's `features_only=True` returns, shallowest first, where
   * the builder names them.
   */
  features?: string[];
  /** Layer-built CNNs are rebuilt for the image size; ViTs map to a transformer spec. */
  build: (imageSize: number, numClasses: number, options?: VisionOptions) => LayerNetSpec | TransformerSpec;
}

/** The parts whose outputs timm's `features_only=True` returns for its ResNets (`act1`, then each stage). */
const RESNET_FEATURES = ['relu', 'layer1', 'layer2', 'layer3', 'layer4'];
/** The parts whose outputs timm's `features_only=True` returns for its ConvNeXts: each stage's (strides 4 to 32). */
const CONVNEXT_FEATURES = ['features.1', 'features.3', 'features.5', 'features.7'];

export interface VisionCatalogModel extends VisionModel {
  publishedParameters: number;
  /** The options the published count is of, where not the builder's defaults (GoogLeNet's: no auxiliary classifiers). */
  publishedOptions?: VisionOptions;
}

/** How a timm ViT variant differs from the plain ViT (DeiT-III's layer scale, a distilled DeiT's second token). */
type VitVariant = Pick<TransformerSpec, 'prefixTokens' | 'positionsWithoutPrefix' | 'layerScale'> & {
  /** BEiT: a relative position bias table in every block, sized for the image's patches (see relativePositionRows). */
  relativePositions?: boolean;
};

/**
 * DeiT-III (timm `deit3_*`): the ViT with LayerScale on both branches of every block (`init_values=1e-6`) and a
 * position table over the patches alone (`no_embed_class=True`).
 */
const DEIT3: VitVariant = { layerScale: true, positionsWithoutPrefix: true };
/** DeiT's distilled models (timm `deit_*_distilled_*`): a distillation token with its own position and classifier. */
const DEIT_DISTILLED: VitVariant = { prefixTokens: 2 };
/**
 * BEiT (timm `beit_*`): LayerScale on both branches, relative position biases in every block and no absolute
 * positions, the patches' mean through a LayerNorm into the classifier (the same count as the ViT's final norm).
 */
const BEIT: VitVariant = { layerScale: true, relativePositions: true };

function vitSpec(hidden: number, layers: number, heads: number, patch: number, imageSize: number, numClasses: number, options?: VisionOptions,
  variant: VitVariant = {}): TransformerSpec {
  const { relativePositions, ...traits } = variant;
  const prefix = traits.prefixTokens ?? 1;
  const positions = (imageSize / patch) ** 2 + (traits.positionsWithoutPrefix ? 0 : prefix);
  const dropout = (options?.blockDropout ?? 0) > 0 ? { hiddenDropout: true, activationDropout: true } : {};
  const relative = relativePositions ? { relativePositionRows: (2 * (imageSize / patch) - 1) ** 2 + 3 } : {};
  return makeSpec('vit', { hidden, layers, heads, intermediate: 4 * hidden, vocab: 0, maxPositions: positions, patchSize: patch,
    imageSize, numLabels: numClasses, qkvFused: true, ...dropout, ...traits, ...relative });
}

export const VISION_CATALOG: VisionCatalogModel[] = [
  { names: ['resnet18'], publishedParameters: 11_689_512, build: (s, n, o) => resnet([2, 2, 2, 2], false, s, n, 1, 1, false, o), features: RESNET_FEATURES },
  { names: ['resnet34'], publishedParameters: 21_797_672, build: (s, n, o) => resnet([3, 4, 6, 3], false, s, n, 1, 1, false, o), features: RESNET_FEATURES },
  { names: ['resnet50'], publishedParameters: 25_557_032, build: (s, n, o) => resnet([3, 4, 6, 3], true, s, n, 1, 1, false, o), features: RESNET_FEATURES },
  { names: ['resnet101'], publishedParameters: 44_549_160, build: (s, n, o) => resnet([3, 4, 23, 3], true, s, n, 1, 1, false, o), features: RESNET_FEATURES },
  { names: ['resnet152'], publishedParameters: 60_192_808, build: (s, n, o) => resnet([3, 8, 36, 3], true, s, n, 1, 1, false, o), features: RESNET_FEATURES },
  // timm's ResNet-D (deep stem, average-pooled shortcuts): results-imagenet.csv, to 0.01M (11.71M .. 60.21M).
  { names: ['resnet18d'], publishedParameters: 11_710_000, build: (s, n, o) => resnet([2, 2, 2, 2], false, s, n, 1, 1, false, o, true), features: RESNET_FEATURES },
  { names: ['resnet26d'], publishedParameters: 16_010_000, build: (s, n, o) => resnet([2, 2, 2, 2], true, s, n, 1, 1, false, o, true), features: RESNET_FEATURES },
  { names: ['resnet34d'], publishedParameters: 21_820_000, build: (s, n, o) => resnet([3, 4, 6, 3], false, s, n, 1, 1, false, o, true), features: RESNET_FEATURES },
  { names: ['resnet50d'], publishedParameters: 25_580_000, build: (s, n, o) => resnet([3, 4, 6, 3], true, s, n, 1, 1, false, o, true), features: RESNET_FEATURES },
  { names: ['resnet101d'], publishedParameters: 44_570_000, build: (s, n, o) => resnet([3, 4, 23, 3], true, s, n, 1, 1, false, o, true), features: RESNET_FEATURES },
  { names: ['resnet152d'], publishedParameters: 60_210_000, build: (s, n, o) => resnet([3, 8, 36, 3], true, s, n, 1, 1, false, o, true), features: RESNET_FEATURES },
  // timm's ECA-ResNet-D (ResNet-D with efficient channel attention on each bottleneck): results-imagenet.csv, to 0.01M.
  { names: ['ecaresnet50d'], publishedParameters: 25_580_000, build: (s, n, o) => resnet([3, 4, 6, 3], true, s, n, 1, 1, 'eca', o, true), features: RESNET_FEATURES },
  { names: ['ecaresnet101d'], publishedParameters: 44_570_000, build: (s, n, o) => resnet([3, 4, 23, 3], true, s, n, 1, 1, 'eca', o, true), features: RESNET_FEATURES },
  // timm's pre-activation ResNets with BatchNorm (results-imagenet.csv, to 0.01M; resnetv2_152 and the 50d/101d as
  // the builder counts them).
  { names: ['resnetv2_18'], publishedParameters: 11_690_000, build: resnetV2([2, 2, 2, 2], false) },
  { names: ['resnetv2_18d'], publishedParameters: 11_710_000, build: resnetV2([2, 2, 2, 2], false, true) },
  { names: ['resnetv2_34'], publishedParameters: 21_800_000, build: resnetV2([3, 4, 6, 3], false) },
  { names: ['resnetv2_34d'], publishedParameters: 21_820_000, build: resnetV2([3, 4, 6, 3], false, true) },
  { names: ['resnetv2_50'], publishedParameters: 25_550_000, build: resnetV2([3, 4, 6, 3], true) },
  { names: ['resnetv2_50d'], publishedParameters: 25_568_584, build: resnetV2([3, 4, 6, 3], true, true) },
  { names: ['resnetv2_101'], publishedParameters: 44_540_000, build: resnetV2([3, 4, 23, 3], true) },
  { names: ['resnetv2_101d'], publishedParameters: 44_560_712, build: resnetV2([3, 4, 23, 3], true, true) },
  { names: ['resnetv2_152'], publishedParameters: 60_185_128, build: resnetV2([3, 8, 36, 3], true) },
  // timm's HRNet classifiers, with 1000 classes (results-imagenet.csv, to 0.01M).
  { names: ['hrnet_w18_small'], publishedParameters: 13_190_000, build: hrnet(HRNET_W18_SMALL) },
  { names: ['hrnet_w18_small_v2'], publishedParameters: 15_600_000, build: hrnet(HRNET_W18_SMALL_V2) },
  { names: ['hrnet_w18'], publishedParameters: 21_300_000, build: hrnet(hrnetWide(18)) },
  { names: ['hrnet_w30'], publishedParameters: 37_710_000, build: hrnet(hrnetWide(30)) },
  { names: ['hrnet_w32'], publishedParameters: 41_230_000, build: hrnet(hrnetWide(32)) },
  { names: ['hrnet_w40'], publishedParameters: 57_560_000, build: hrnet(hrnetWide(40)) },
  { names: ['hrnet_w44'], publishedParameters: 67_060_000, build: hrnet(hrnetWide(44)) },
  { names: ['hrnet_w48'], publishedParameters: 77_470_000, build: hrnet(hrnetWide(48)) },
  { names: ['hrnet_w64'], publishedParameters: 128_060_000, build: hrnet(hrnetWide(64)) },
  // timm's BiT (GroupNorm, weight-standardized convolutions), with 1000 classes (results-imagenet.csv, to 0.01M).
  { names: ['resnetv2_50x1_bit'], publishedParameters: 25_550_000, build: resnetV2Bit([3, 4, 6, 3], 1) },
  { names: ['resnetv2_50x3_bit'], publishedParameters: 217_320_000, build: resnetV2Bit([3, 4, 6, 3], 3) },
  { names: ['resnetv2_101x1_bit'], publishedParameters: 44_540_000, build: resnetV2Bit([3, 4, 23, 3], 1) },
  { names: ['resnetv2_101x3_bit'], publishedParameters: 387_930_000, build: resnetV2Bit([3, 4, 23, 3], 3) },
  { names: ['resnetv2_152x2_bit'], publishedParameters: 236_340_000, build: resnetV2Bit([3, 8, 36, 3], 2) },
  { names: ['resnetv2_152x4_bit'], publishedParameters: 936_530_000, build: resnetV2Bit([3, 8, 36, 3], 4) },
  { names: ['mobilenet_v2', 'mobilenetv2_100'], publishedParameters: 3_504_872, build: mobilenetV2 },
  { names: ['efficientnet_b0', 'tf_efficientnet_b0'], publishedParameters: 5_288_548, build: efficientnetB0 },
  { names: ['efficientnet_b1', 'tf_efficientnet_b1'], publishedParameters: 7_794_184, build: efficientnet(1.0, 1.1) },
  { names: ['efficientnet_b2', 'tf_efficientnet_b2'], publishedParameters: 9_109_994, build: efficientnet(1.1, 1.2) },
  { names: ['efficientnet_b3', 'tf_efficientnet_b3'], publishedParameters: 12_233_232, build: efficientnet(1.2, 1.4) },
  { names: ['efficientnet_b4', 'tf_efficientnet_b4'], publishedParameters: 19_341_616, build: efficientnet(1.4, 1.8) },
  { names: ['efficientnet_b5', 'tf_efficientnet_b5'], publishedParameters: 30_389_784, build: efficientnet(1.6, 2.2) },
  { names: ['efficientnet_b6', 'tf_efficientnet_b6'], publishedParameters: 43_040_704, build: efficientnet(1.8, 2.6) },
  { names: ['efficientnet_b7', 'tf_efficientnet_b7'], publishedParameters: 66_347_960, build: efficientnet(2.0, 3.1) },
  // timm's tf_efficientnetv2_* are the TensorFlow models torchvision ported: the same layers (21.5M / 54.1M / 118.5M).
  { names: ['efficientnet_v2_s', 'tf_efficientnetv2_s'], publishedParameters: 21_458_488, build: efficientnetV2(EFFICIENTNET_V2_S) },
  { names: ['efficientnet_v2_m', 'tf_efficientnetv2_m'], publishedParameters: 54_139_356, build: efficientnetV2(EFFICIENTNET_V2_M) },
  { names: ['efficientnet_v2_l', 'tf_efficientnetv2_l'], publishedParameters: 118_515_272, build: efficientnetV2(EFFICIENTNET_V2_L) },
  { names: ['vgg11'], publishedParameters: 132_863_336, build: vgg(VGG_A, false) },
  { names: ['vgg11_bn'], publishedParameters: 132_868_840, build: vgg(VGG_A, true) },
  { names: ['vgg13'], publishedParameters: 133_047_848, build: vgg(VGG_B, false) },
  { names: ['vgg13_bn'], publishedParameters: 133_053_736, build: vgg(VGG_B, true) },
  { names: ['vgg16'], publishedParameters: 138_357_544, build: vgg(VGG_D, false) },
  { names: ['vgg16_bn'], publishedParameters: 138_365_992, build: vgg(VGG_D, true) },
  { names: ['vgg19'], publishedParameters: 143_667_240, build: vgg(VGG_E, false) },
  { names: ['vgg19_bn'], publishedParameters: 143_678_248, build: vgg(VGG_E, true) },
  { names: ['mobilenet_v3_large', 'mobilenetv3_large_100'], publishedParameters: 5_483_032, build: mobilenetV3(MOBILENET_V3_LARGE, 1280) },
  { names: ['mobilenet_v3_small', 'mobilenetv3_small_100'], publishedParameters: 2_542_856, build: mobilenetV3(MOBILENET_V3_SMALL, 1024) },
  // AlexNet, SqueezeNet, ShuffleNetV2 and MNASNet: torchvision's counts (1000 classes), as torchvision 0.14 builds them.
  { names: ['alexnet'], publishedParameters: 61_100_840, build: alexnet },
  { names: ['squeezenet1_0'], publishedParameters: 1_248_424, build: squeezenet('1_0') },
  { names: ['squeezenet1_1'], publishedParameters: 1_235_496, build: squeezenet('1_1') },
  { names: ['shufflenet_v2_x0_5'], publishedParameters: 1_366_792, build: shufflenetV2([48, 96, 192, 1024]) },
  { names: ['shufflenet_v2_x1_0'], publishedParameters: 2_278_604, build: shufflenetV2([116, 232, 464, 1024]) },
  { names: ['shufflenet_v2_x1_5'], publishedParameters: 3_503_624, build: shufflenetV2([176, 352, 704, 1024]) },
  { names: ['shufflenet_v2_x2_0'], publishedParameters: 7_393_996, build: shufflenetV2([244, 488, 976, 2048]) },
  { names: ['mnasnet0_5'], publishedParameters: 2_218_512, build: mnasnet(0.5) },
  { names: ['mnasnet0_75'], publishedParameters: 3_170_208, build: mnasnet(0.75) },
  { names: ['mnasnet1_0', 'mnasnet_100'], publishedParameters: 4_383_312, build: mnasnet(1.0) },
  { names: ['mnasnet1_3'], publishedParameters: 6_282_256, build: mnasnet(1.3) },
  { names: ['densenet121'], publishedParameters: 7_978_856, build: densenet([6, 12, 24, 16]) },
  // DenseNet-161: growth 48 from 96 initial features (torchvision's published count).
  { names: ['densenet161'], publishedParameters: 28_681_000, build: densenet([6, 12, 36, 24], 48, 96) },
  { names: ['densenet169'], publishedParameters: 14_149_480, build: densenet([6, 12, 32, 32]) },
  { names: ['densenet201'], publishedParameters: 20_013_928, build: densenet([6, 12, 48, 32]) },
  // Published counts: Inception v3 with its auxiliary classifier (as the ImageNet weights hold it), GoogLeNet without.
  { names: ['inception_v3'], publishedParameters: 27_161_264, imageSize: 299, build: inceptionV3 },
  { names: ['googlenet'], publishedParameters: 6_624_904, publishedOptions: { auxLogits: false }, build: googlenet },
  { names: ['maxvit_t'], publishedParameters: 30_919_624, build: maxvit([64, 128, 256, 512], [2, 2, 5, 2], 64) },
  { names: ['convnext_tiny'], publishedParameters: 28_589_128, build: convnextTiny, features: CONVNEXT_FEATURES },
  { names: ['convnext_small'], publishedParameters: 50_223_688, build: convnext([3, 3, 27, 3], [96, 192, 384, 768]), features: CONVNEXT_FEATURES },
  { names: ['convnext_base'], publishedParameters: 88_591_464, build: convnext([3, 3, 27, 3], [128, 256, 512, 1024]), features: CONVNEXT_FEATURES },
  { names: ['convnext_large'], publishedParameters: 197_767_336, build: convnext([3, 3, 27, 3], [192, 384, 768, 1536]), features: CONVNEXT_FEATURES },
  // timm's smaller and larger ConvNeXts (results-imagenet.csv, to 0.01M). The small ones set conv_mlp: their MLP is a
  // pair of 1x1 convolutions on the (N, C, H, W) map, with the weights and the saved tensors of the linears.
  { names: ['convnext_atto'], publishedParameters: 3_700_000, build: convnext([2, 2, 6, 2], [40, 80, 160, 320]), features: CONVNEXT_FEATURES },
  { names: ['convnext_femto'], publishedParameters: 5_220_000, build: convnext([2, 2, 6, 2], [48, 96, 192, 384]), features: CONVNEXT_FEATURES },
  { names: ['convnext_pico'], publishedParameters: 9_050_000, build: convnext([2, 2, 6, 2], [64, 128, 256, 512]), features: CONVNEXT_FEATURES },
  { names: ['convnext_nano'], publishedParameters: 15_590_000, build: convnext([2, 2, 8, 2], [80, 160, 320, 640]), features: CONVNEXT_FEATURES },
  { names: ['convnext_xlarge'], publishedParameters: 350_200_000, build: convnext([3, 3, 27, 3], [256, 512, 1024, 2048]), features: CONVNEXT_FEATURES },
  { names: ['wide_resnet50_2'], publishedParameters: 68_883_240, build: (s, n, o) => resnet([3, 4, 6, 3], true, s, n, 2, 1, false, o), features: RESNET_FEATURES },
  { names: ['wide_resnet101_2'], publishedParameters: 126_886_696, build: (s, n, o) => resnet([3, 4, 23, 3], true, s, n, 2, 1, false, o), features: RESNET_FEATURES },
  { names: ['resnext50_32x4d'], publishedParameters: 25_028_904, build: (s, n, o) => resnet([3, 4, 6, 3], true, s, n, 4 / 64, 32, false, o), features: RESNET_FEATURES },
  { names: ['resnext101_32x8d'], publishedParameters: 88_791_336, build: (s, n, o) => resnet([3, 4, 23, 3], true, s, n, 8 / 64, 32, false, o), features: RESNET_FEATURES },
  { names: ['resnext101_64x4d'], publishedParameters: 83_455_272, build: (s, n, o) => resnet([3, 4, 23, 3], true, s, n, 4 / 64, 64, false, o), features: RESNET_FEATURES },
  // timm's SE variants (7x7 stem, as torchvision's ResNets): 28.09M, 27.56M, 49.33M, 66.82M, 48.96M and 93.57M
  // parameters in timm's model cards; seresnext101_32x4d's count with 555 classes is the one measured (holdout7).
  { names: ['seresnet50'], publishedParameters: 28_088_024, build: (s, n, o) => resnet([3, 4, 6, 3], true, s, n, 1, 1, true, o), features: RESNET_FEATURES },
  { names: ['seresnext50_32x4d'], publishedParameters: 27_559_896, build: (s, n, o) => resnet([3, 4, 6, 3], true, s, n, 4 / 64, 32, true, o), features: RESNET_FEATURES },
  { names: ['seresnet101'], publishedParameters: 49_326_872, build: (s, n, o) => resnet([3, 4, 23, 3], true, s, n, 1, 1, true, o), features: RESNET_FEATURES },
  { names: ['seresnet152'], publishedParameters: 66_821_848, build: (s, n, o) => resnet([3, 8, 36, 3], true, s, n, 1, 1, true, o), features: RESNET_FEATURES },
  { names: ['seresnext101_32x4d'], publishedParameters: 48_955_416, build: (s, n, o) => resnet([3, 4, 23, 3], true, s, n, 4 / 64, 32, true, o), features: RESNET_FEATURES },
  { names: ['seresnext101_32x8d'], publishedParameters: 93_569_048, build: (s, n, o) => resnet([3, 4, 23, 3], true, s, n, 8 / 64, 32, true, o), features: RESNET_FEATURES },
  // RegNets: torchvision's published counts; timm's (results-imagenet.csv, to 0.01M) agree with the builder's with timm's
  // rounding, which only changes regnetx_004, regnetx_040, regnety_008, regnety_040 and regnety_080 (timm's `_tv`
  // models keep torchvision's widths).
  { names: ['regnet_y_400mf', 'regnety_004'], publishedParameters: 4_344_144, build: regnet(16, 48, 27.89, 2.09, 8, 0.25) },
  { names: ['regnet_y_800mf', 'regnety_008_tv'], publishedParameters: 6_432_512, build: regnet(14, 56, 38.84, 2.4, 16, 0.25) },
  { names: ['regnet_y_1_6gf', 'regnety_016'], publishedParameters: 11_202_430, build: regnet(27, 48, 20.71, 2.65, 24, 0.25) },
  { names: ['regnet_y_3_2gf', 'regnety_032'], publishedParameters: 19_436_338, build: regnet(21, 80, 42.63, 2.66, 24, 0.25) },
  { names: ['regnet_y_8gf', 'regnety_080_tv'], publishedParameters: 39_381_472, build: regnet(17, 192, 76.82, 2.19, 56, 0.25) },
  { names: ['regnet_y_16gf', 'regnety_160'], publishedParameters: 83_590_140, build: regnet(18, 200, 106.23, 2.48, 112, 0.25) },
  { names: ['regnet_y_32gf', 'regnety_320'], publishedParameters: 145_046_770, build: regnet(20, 232, 115.89, 2.53, 232, 0.25) },
  { names: ['regnet_y_128gf'], publishedParameters: 644_812_894, build: regnet(27, 456, 160.83, 2.52, 264, 0.25) },
  { names: ['regnet_x_400mf', 'regnetx_004_tv'], publishedParameters: 5_495_976, build: regnet(22, 24, 24.48, 2.54, 16) },
  { names: ['regnet_x_800mf', 'regnetx_008'], publishedParameters: 7_259_656, build: regnet(16, 56, 35.73, 2.28, 16) },
  { names: ['regnet_x_1_6gf', 'regnetx_016'], publishedParameters: 9_190_136, build: regnet(18, 80, 34.01, 2.25, 24) },
  { names: ['regnet_x_3_2gf', 'regnetx_032'], publishedParameters: 15_296_552, build: regnet(25, 88, 26.31, 2.25, 48) },
  { names: ['regnet_x_8gf', 'regnetx_080'], publishedParameters: 39_572_648, build: regnet(23, 80, 49.56, 2.88, 120) },
  { names: ['regnet_x_16gf', 'regnetx_160'], publishedParameters: 54_278_536, build: regnet(22, 216, 55.59, 2.1, 128) },
  { names: ['regnet_x_32gf', 'regnetx_320'], publishedParameters: 107_811_560, build: regnet(23, 320, 69.86, 2.0, 168) },
  { names: ['regnetx_002'], publishedParameters: 2_684_792, build: regnet(13, 24, 36.44, 2.49, 8, 0, 'timm') },
  { names: ['regnetx_004'], publishedParameters: 5_157_512, build: regnet(22, 24, 24.48, 2.54, 16, 0, 'timm') },
  { names: ['regnetx_006'], publishedParameters: 6_196_040, build: regnet(16, 48, 36.97, 2.24, 24, 0, 'timm') },
  { names: ['regnetx_040'], publishedParameters: 22_118_248, build: regnet(23, 96, 38.65, 2.43, 40, 0, 'timm') },
  { names: ['regnetx_064'], publishedParameters: 26_209_256, build: regnet(17, 184, 60.83, 2.07, 56, 0, 'timm') },
  { names: ['regnetx_120'], publishedParameters: 46_106_056, build: regnet(19, 168, 73.36, 2.37, 112, 0, 'timm') },
  { names: ['regnety_002'], publishedParameters: 3_162_996, build: regnet(13, 24, 36.44, 2.49, 8, 0.25, 'timm') },
  { names: ['regnety_006'], publishedParameters: 6_055_160, build: regnet(15, 48, 32.54, 2.32, 16, 0.25, 'timm') },
  { names: ['regnety_008'], publishedParameters: 6_263_168, build: regnet(14, 56, 38.84, 2.4, 16, 0.25, 'timm') },
  { names: ['regnety_040'], publishedParameters: 20_646_656, build: regnet(22, 96, 31.41, 2.24, 64, 0.25, 'timm') },
  { names: ['regnety_064'], publishedParameters: 30_583_252, build: regnet(25, 112, 33.22, 2.27, 72, 0.25, 'timm') },
  { names: ['regnety_080'], publishedParameters: 39_180_068, build: regnet(17, 192, 76.82, 2.19, 56, 0.25, 'timm') },
  { names: ['regnety_120'], publishedParameters: 51_822_544, build: regnet(19, 168, 73.36, 2.37, 112, 0.25, 'timm') },
  // timm's published counts (results-imagenet.csv, to 0.01M: 3.67, 14.01, 25.36, 45.24, 62.56, 82.0). pvt_v2_b2_li's
  // linear attention (a pooled 7x7 map) is not built.
  // timm's ResNeSt-50d (results-imagenet.csv: 27.48M).
  { names: ['resnest50d'], publishedParameters: 27_480_000, build: resnest([3, 4, 6, 3]), features: RESNET_FEATURES },
  // timm's ECA-NFNet-L0 (results-imagenet.csv: 24.14M; 24,143,924 as built).
  { names: ['eca_nfnet_l0'], publishedParameters: 24_140_000, build: ecaNfnet([1, 2, 6, 3]) },
  // timm's Twins-SVT (results-imagenet.csv: 24.06M, 56.07M, 99.27M).
  { names: ['twins_svt_small'], publishedParameters: 24_060_000, build: twinsSvt([2, 2, 10, 4], [64, 128, 256, 512], [2, 4, 8, 16]) },
  { names: ['twins_svt_base'], publishedParameters: 56_070_000, build: twinsSvt([2, 2, 18, 2], [96, 192, 384, 768], [3, 6, 12, 24]) },
  { names: ['twins_svt_large'], publishedParameters: 99_270_000, build: twinsSvt([2, 2, 18, 2], [128, 256, 512, 1024], [4, 8, 16, 32]) },
  { names: ['pvt_v2_b0'], publishedParameters: 3_670_000, build: pvtV2([2, 2, 2, 2], [32, 64, 160, 256], [8, 8, 4, 4]), features: PVT_V2_FEATURES },
  { names: ['pvt_v2_b1'], publishedParameters: 14_010_000, build: pvtV2([2, 2, 2, 2], PVT_V2_WIDE, [8, 8, 4, 4]), features: PVT_V2_FEATURES },
  { names: ['pvt_v2_b2'], publishedParameters: 25_360_000, build: pvtV2([3, 4, 6, 3], PVT_V2_WIDE, [8, 8, 4, 4]), features: PVT_V2_FEATURES },
  { names: ['pvt_v2_b3'], publishedParameters: 45_240_000, build: pvtV2([3, 4, 18, 3], PVT_V2_WIDE, [8, 8, 4, 4]), features: PVT_V2_FEATURES },
  { names: ['pvt_v2_b4'], publishedParameters: 62_560_000, build: pvtV2([3, 8, 27, 3], PVT_V2_WIDE, [8, 8, 4, 4]), features: PVT_V2_FEATURES },
  { names: ['pvt_v2_b5'], publishedParameters: 82_000_000, build: pvtV2([3, 6, 40, 3], PVT_V2_WIDE, [4, 4, 4, 4]), features: PVT_V2_FEATURES },
  { names: ['swin_t', 'swin_tiny_patch4_window7_224'], publishedParameters: 28_288_354, build: swin([2, 2, 6, 2], 96, [3, 6, 12, 24]) },
  { names: ['swin_s', 'swin_small_patch4_window7_224'], publishedParameters: 49_606_258, build: swin([2, 2, 18, 2], 96, [3, 6, 12, 24]) },
  { names: ['swin_b', 'swin_base_patch4_window7_224'], publishedParameters: 87_768_224, build: swin([2, 2, 18, 2], 128, [4, 8, 16, 32]) },
  // torchvision's published counts (1000 classes); swin_v2_t's measured with 150 classes (holdout7, results/h200.json).
  { names: ['swin_v2_t'], publishedParameters: 28_351_570, imageSize: 256, build: swinV2([2, 2, 6, 2], 96, [3, 6, 12, 24]) },
  { names: ['swin_v2_s'], publishedParameters: 49_737_442, imageSize: 256, build: swinV2([2, 2, 18, 2], 96, [3, 6, 12, 24]) },
  { names: ['swin_v2_b'], publishedParameters: 87_930_848, imageSize: 256, build: swinV2([2, 2, 18, 2], 128, [4, 8, 16, 32]) },
  // timm's MLP-Mixer (results-imagenet.csv: b16 59.88M, l16 208.20M; the others as the builder counts them).
  { names: ['mixer_s32_224'], publishedParameters: 19_104_624, build: mlpMixer(512, 8, 32) },
  { names: ['mixer_s16_224'], publishedParameters: 18_528_264, build: mlpMixer(512, 8, 16) },
  { names: ['mixer_b32_224'], publishedParameters: 60_293_428, build: mlpMixer(768, 12, 32) },
  { names: ['mixer_b16_224'], publishedParameters: 59_880_472, build: mlpMixer(768, 12, 16) },
  { names: ['mixer_l32_224'], publishedParameters: 206_939_264, build: mlpMixer(1024, 24, 32) },
  { names: ['mixer_l16_224'], publishedParameters: 208_196_168, build: mlpMixer(1024, 24, 16) },
  // timm's EfficientNet-Lite and TinyNet (results-imagenet.csv, to 0.01M: lite0-4 4.65M .. 13.01M, tinynet_a-e
  // 6.19M .. 2.04M, each at its default input size).
  { names: ['efficientnet_lite0', 'tf_efficientnet_lite0'], publishedParameters: 4_650_000, build: timmEfficientNet({ width: 1.0, depth: 1.0, lite: true }) },
  { names: ['efficientnet_lite1', 'tf_efficientnet_lite1'], publishedParameters: 5_420_000, build: timmEfficientNet({ width: 1.0, depth: 1.1, lite: true }) },
  { names: ['efficientnet_lite2', 'tf_efficientnet_lite2'], publishedParameters: 6_090_000, build: timmEfficientNet({ width: 1.1, depth: 1.2, lite: true }) },
  { names: ['efficientnet_lite3', 'tf_efficientnet_lite3'], publishedParameters: 8_200_000, build: timmEfficientNet({ width: 1.2, depth: 1.4, lite: true }) },
  { names: ['efficientnet_lite4', 'tf_efficientnet_lite4'], publishedParameters: 13_010_000, build: timmEfficientNet({ width: 1.4, depth: 1.8, lite: true }) },
  { names: ['tinynet_a'], publishedParameters: 6_190_000, build: timmEfficientNet({ width: 1.0, depth: 1.2, lite: false }) },
  { names: ['tinynet_b'], publishedParameters: 3_730_000, build: timmEfficientNet({ width: 0.75, depth: 1.1, lite: false }) },
  { names: ['tinynet_c'], publishedParameters: 2_460_000, build: timmEfficientNet({ width: 0.54, depth: 0.85, lite: false }) },
  { names: ['tinynet_d'], publishedParameters: 2_340_000, build: timmEfficientNet({ width: 0.54, depth: 0.695, lite: false }) },
  { names: ['tinynet_e'], publishedParameters: 2_040_000, build: timmEfficientNet({ width: 0.51, depth: 0.6, lite: false }) },
  // timm's EdgeNeXt with 1000 classes (timm's model cards: 1.33M, 2.34M, 5.59M, 18.51M); the small one's 101-class
  // count was measured on the H200 (holdout12 results: 5,312,637).
  { names: ['edgenext_xx_small'], publishedParameters: 1_330_000, build: edgenext({ dims: [24, 48, 88, 168], depths: [2, 2, 6, 2], heads: 4 }) },
  { names: ['edgenext_x_small'], publishedParameters: 2_340_000, build: edgenext({ dims: [32, 64, 100, 192], depths: [3, 3, 9, 3], heads: 4 }) },
  { names: ['edgenext_small'], publishedParameters: 5_590_000, build: edgenext({ dims: [48, 96, 160, 304], depths: [3, 3, 9, 3], heads: 8 }) },
  { names: ['edgenext_base'], publishedParameters: 18_510_000, build: edgenext({ dims: [80, 160, 288, 584], depths: [3, 3, 9, 3], heads: 8 }) },
  // timm's ConvNeXt V2 with 1000 classes, as the builder counts them (timm's model cards: 3.71M .. 197.96M); the tiny's
  // agrees with the count measured with 38 classes (holdout7, results/h200.json).
  { names: ['convnextv2_atto'], publishedParameters: 3_708_400, build: convnextV2([2, 2, 6, 2], [40, 80, 160, 320]) },
  { names: ['convnextv2_femto'], publishedParameters: 5_233_240, build: convnextV2([2, 2, 6, 2], [48, 96, 192, 384]) },
  { names: ['convnextv2_pico'], publishedParameters: 9_066_280, build: convnextV2([2, 2, 6, 2], [64, 128, 256, 512]) },
  { names: ['convnextv2_nano'], publishedParameters: 15_623_800, build: convnextV2([2, 2, 8, 2], [80, 160, 320, 640]) },
  { names: ['convnextv2_tiny'], publishedParameters: 28_635_496, build: convnextV2([3, 3, 9, 3], [96, 192, 384, 768]) },
  { names: ['convnextv2_base'], publishedParameters: 88_717_800, build: convnextV2([3, 3, 27, 3], [128, 256, 512, 1024]) },
  { names: ['convnextv2_large'], publishedParameters: 197_956_840, build: convnextV2([3, 3, 27, 3], [192, 384, 768, 1536]) },
  { names: ['convnextv2_huge'], publishedParameters: 660_290_000, build: convnextV2([3, 3, 27, 3], [352, 704, 1408, 2816]) },
  // torchvision.models.segmentation (published counts are the COCO-with-VOC-labels weights': 21 classes, aux head).
  { names: ['fcn_resnet50'], publishedParameters: 35_322_218, segmentation: true, build: resnetSegmentation([3, 4, 6, 3], 'fcn') },
  { names: ['fcn_resnet101'], publishedParameters: 54_314_346, segmentation: true, build: resnetSegmentation([3, 4, 23, 3], 'fcn') },
  { names: ['deeplabv3_resnet50'], publishedParameters: 42_004_074, segmentation: true, build: resnetSegmentation([3, 4, 6, 3], 'deeplabv3') },
  { names: ['deeplabv3_resnet101'], publishedParameters: 60_996_202, segmentation: true, build: resnetSegmentation([3, 4, 23, 3], 'deeplabv3') },
  { names: ['deeplabv3_mobilenet_v3_large'], publishedParameters: 11_029_328, segmentation: true, build: deeplabv3MobileNet },
  { names: ['lraspp_mobilenet_v3_large'], publishedParameters: 3_221_538, segmentation: true, build: lrasppMobileNet },
  { names: ['vit_tiny_patch16_224', 'deit_tiny_patch16_224'], publishedParameters: 5_717_416, build: (s, n, o) => vitSpec(192, 12, 3, 16, s, n, o) },
  { names: ['vit_small_patch16_224', 'deit_small_patch16_224'], publishedParameters: 22_050_664, build: (s, n, o) => vitSpec(384, 12, 6, 16, s, n, o) },
  { names: ['vit_b_16', 'vit_base_patch16_224', 'deit_base_patch16_224'], publishedParameters: 86_567_656, build: (s, n, o) => vitSpec(768, 12, 12, 16, s, n, o) },
  { names: ['vit_b_32', 'vit_base_patch32_224'], publishedParameters: 88_224_232, build: (s, n, o) => vitSpec(768, 12, 12, 32, s, n, o) },
  { names: ['vit_l_16', 'vit_large_patch16_224'], publishedParameters: 304_326_632, build: (s, n, o) => vitSpec(1024, 24, 16, 16, s, n, o) },
  // DeiT-III and distilled DeiT: timm's published counts (results-imagenet.csv, to 0.01M); the other image sizes
  // (`deit3_base_patch16_384`) follow from the name (vitFromName).
  { names: ['deit3_small_patch16_224'], publishedParameters: 22_060_000, build: (s, n, o) => vitSpec(384, 12, 6, 16, s, n, o, DEIT3) },
  { names: ['deit3_medium_patch16_224'], publishedParameters: 38_850_000, build: (s, n, o) => vitSpec(512, 12, 8, 16, s, n, o, DEIT3) },
  { names: ['deit3_base_patch16_224'], publishedParameters: 86_590_000, build: (s, n, o) => vitSpec(768, 12, 12, 16, s, n, o, DEIT3) },
  { names: ['deit3_large_patch16_224'], publishedParameters: 304_370_000, build: (s, n, o) => vitSpec(1024, 24, 16, 16, s, n, o, DEIT3) },
  { names: ['deit3_huge_patch14_224'], publishedParameters: 632_130_000, build: (s, n, o) => vitSpec(1280, 32, 16, 14, s, n, o, DEIT3) },
  { names: ['deit_tiny_distilled_patch16_224'], publishedParameters: 5_910_000, build: (s, n, o) => vitSpec(192, 12, 3, 16, s, n, o, DEIT_DISTILLED) },
  { names: ['deit_small_distilled_patch16_224'], publishedParameters: 22_440_000, build: (s, n, o) => vitSpec(384, 12, 6, 16, s, n, o, DEIT_DISTILLED) },
  { names: ['deit_base_distilled_patch16_224'], publishedParameters: 87_340_000, build: (s, n, o) => vitSpec(768, 12, 12, 16, s, n, o, DEIT_DISTILLED) },
];

/** ViT widths as the ViT paper and timm name them: hidden size, layers, heads (MLP 4x hidden). */
const VIT_SIZES: Record<string, [number, number, number]> = {
  tiny: [192, 12, 3], small: [384, 12, 6], base: [768, 12, 12], large: [1024, 24, 16], huge: [1280, 32, 16],
  b: [768, 12, 12], l: [1024, 24, 16], h: [1280, 32, 16],
  // DeiT-III's medium size (no plain `vit_medium_patch16_224` exists in timm).
  medium: [512, 12, 8],
};

/** The sizes each timm family has (`deit_large_*` and `vit_medium_*_224` are not timm models). */
const TIMM_VIT_SIZES: Record<string, string[]> = {
  vit: ['tiny', 'small', 'base', 'large', 'huge'],
  deit: ['tiny', 'small', 'base'],
  deit3: ['small', 'medium', 'base', 'large', 'huge'],
  beit: ['base', 'large'],
};

/**
 * A ViT named by its size, patch and image size: timm `vit_{tiny,small,base,large,huge}_patch{P}_{S}`,
 * `deit_{tiny,small,base}[_distilled]_patch{P}_{S}` (DeiT is the ViT architecture; the distilled ones add a token),
 * `deit3_{small,medium,base,large,huge}_patch{P}_{S}` (DEIT3), `beit_{base,large}_patch{P}_{S}` (BEIT), torchvision `vit_{b,l,h}_{P}` (built for 224). The
 * position embedding is sized for that image size (or for timm's `img_size=`), so the parameters follow from the name.
 */
function vitFromName(key: string): VisionModel | undefined {
  const timm = /^(vit|deit3|deit|beit)_([a-z]+?)(_distilled)?_patch(\d+)_(\d+)$/.exec(key);
  const torchvision = /^vit_([blh])_(\d+)$/.exec(key);
  if (timm && (!TIMM_VIT_SIZES[timm[1]!]!.includes(timm[2]!) || (timm[3] && timm[1] !== 'deit'))) return undefined;
  const size = timm ? VIT_SIZES[timm[2]!] : torchvision ? VIT_SIZES[torchvision[1]!] : undefined;
  if (!size) return undefined;
  const patch = Number(timm ? timm[4] : torchvision![2]);
  const native = timm ? Number(timm[5]) : 224;
  if (!(patch > 0) || native % patch !== 0) return undefined;
  const [hidden, layers, heads] = size;
  const variant = timm?.[1] === 'deit3' ? DEIT3 : timm?.[1] === 'beit' ? BEIT : timm?.[3] ? DEIT_DISTILLED : {};
  return { names: [key], imageSize: native, build: (s, n, o) => vitSpec(hidden, layers, heads, patch, s, n, o, variant) };
}

export function findVisionModel(name: string): VisionModel | undefined {
  const key = name.trim().toLowerCase().replace(/^timm\//, '').replace(/\.[a-z0-9_]+$/, '');
  return VISION_CATALOG.find((m) => m.names.includes(key)) ?? vitFromName(key);
}

/** A SegFormer's sizes, as SegformerConfig names them (lists per encoder stage). */
export interface SegformerShape {
  depths: number[];
  hiddenSizes: number[];
  heads: number[];
  srRatios: number[];
  patchSizes: number[];
  strides: number[];
  mlpRatios: number[];
  decoderHidden: number;
  channels: number;
}

/** SegformerConfig's defaults: MiT-b0 with a 256-wide decode head. */
export const SEGFORMER_DEFAULTS: SegformerShape = {
  depths: [2, 2, 2, 2], hiddenSizes: [32, 64, 160, 256], heads: [1, 2, 5, 8], srRatios: [8, 4, 2, 1], patchSizes: [7, 3, 3, 3],
  strides: [4, 2, 2, 2], mlpRatios: [4, 4, 4, 4], decoderHidden: 256, channels: 3,
};

/** The published MiT encoders (b0..b5): depths and widths; b1..b5 share widths and a 768-wide decode head. */
export const SEGFORMER_SIZES: Record<string, Partial<SegformerShape>> = {
  b0: {},
  b1: { hiddenSizes: [64, 128, 320, 512] },
  b2: { depths: [3, 4, 6, 3], hiddenSizes: [64, 128, 320, 512], decoderHidden: 768 },
  b3: { depths: [3, 4, 18, 3], hiddenSizes: [64, 128, 320, 512], decoderHidden: 768 },
  b4: { depths: [3, 8, 27, 3], hiddenSizes: [64, 128, 320, 512], decoderHidden: 768 },
  b5: { depths: [3, 6, 40, 3], hiddenSizes: [64, 128, 320, 512], decoderHidden: 768 },
};

/**
 * transformers' SegFormer: four stages, each an overlapping patch embedding (a strided convolution and a
 * LayerNorm), Mix Transformer blocks and a LayerNorm; with `head` (SegformerForSemanticSegmentation), the all-MLP
 * decode head: each stage's output through a linear to the decoder width, resized to the first stage's map,
 * concatenated, fused by a 1x1 convolution, BatchNorm, ReLU, dropout (classifier_dropout_prob, 0.1) and a 1x1
 * classifier. Its logits (a quarter of the image's side) are resized to the labels' size for the loss.
 */
export function segformer(shape: SegformerShape, imageSize: number, numClasses: number, head: boolean): LayerNetSpec {
  const net = new NetBuilder({ kind: 'image', channels: shape.channels, size: imageSize });
  const stageOutputs: BranchPoint[] = [];
  shape.depths.forEach((depth, stage) => {
    const patch = shape.patchSizes[stage] ?? 3;
    net.conv(shape.hiddenSizes[stage]!, patch, shape.strides[stage] ?? 2, 1, true, Math.floor(patch / 2)).layerNorm();
    for (let b = 0; b < depth; b++) net.segformerBlock(shape.heads[stage] ?? 1, shape.srRatios[stage] ?? 1, shape.mlpRatios[stage] ?? 4);
    // The stage's LayerNorm, then a contiguous (B, C, h, w) copy of its fp32 output that the next stage's patch
    // embedding and the decode head each read.
    net.layerNorm();
    if (head && stage < shape.depths.length - 1) net.keptInFp32();
    stageOutputs.push(net.mark());
  });
  if (!head) return net.build(true);
  const d = shape.decoderHidden;
  const linears = shape.hiddenSizes.reduce((sum, c) => sum + c * d, 0);
  net.addParameters(linears + shape.hiddenSizes.length * d, linears);
  // The four linears' outputs, resized to the first stage's map and concatenated: the fuse convolution keeps that.
  net.branchFrom(stageOutputs[0]!).concatTo(shape.hiddenSizes.length * d);
  net.conv(d, 1, 1, 1, false, 0).batchNorm().relu(false).dropout(0.1).conv(numClasses, 1, 1, 1, true, 0);
  net.returnsHere().resizeTo(imageSize);
  return net.build(true);
}
