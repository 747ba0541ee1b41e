// timm's HRNet classifiers (`hrnet_w18_small` .. `hrnet_w64`), built layer by layer: parallel branches at 1/4, 1/8,
// 1/16 and 1/32 of the input, exchanged by fuse layers after every module, then the classification head that widens
// each branch and folds them into one 2048-channel map.
import { NetBuilder, type BranchPoint } from '../layers';
import type { LayerNetSpec } from '../types';

/** One stage of timm's HRNet config: modules of parallel branches, blocks per branch, each branch's width. */
interface HrnetStage {
  modules: number;
  blocks: number[];
  channels: number[];
}

/** A variant: stage 1 (bottlenecks on one branch), then stages 2-4 of basic blocks on 2, 3 and 4 branches. */
export interface HrnetShape {
  stage1: { blocks: number; channels: number };
  stages: [HrnetStage, HrnetStage, HrnetStage];
}

/** The branch widths of a `hrnet_wN` (N, 2N, 4N, 8N) with stage 3's 4 modules and stage 4's 3, 4 blocks each. */
export function hrnetWide(width: number): HrnetShape {
  const widths = [width, 2 * width, 4 * width, 8 * width];
  return {
    stage1: { blocks: 4, channels: 64 },
    stages: [
      { modules: 1, blocks: [4, 4], channels: widths.slice(0, 2) },
      { modules: 4, blocks: [4, 4, 4], channels: widths.slice(0, 3) },
      { modules: 3, blocks: [4, 4, 4, 4], channels: widths },
    ],
  };
}

/** The head's widths per branch before its bottlenecks' expansion (timm's head_channels). */
const HEAD_CHANNELS = [32, 64, 128, 256];
const FEATURES = 2048;

/**
 * timm's ResNet Bottleneck (1x1, 3x3, 1x1 to 4 x `planes`, BatchNorm after each, ReLU in place after the first two
 * and after the residual sum), with a 1x1 convolution + BatchNorm shortcut where the width changes (its output kept
 * by that BatchNorm; the convolution reads the block input, already kept).
 */
function bottleneck(net: NetBuilder, inChannels: number, planes: number, convBias = false): void {
  const out = 4 * planes;
  net.beginBlock();
  net.conv(planes, 1, 1, 1, false, 0).batchNorm().relu().conv(planes, 3).batchNorm().relu().conv(out, 1, 1, 1, false, 0).batchNorm();
  if (inChannels !== out) {
    net.addParameters(inChannels * out + 2 * out + (convBias ? out : 0), inChannels * out);
    net.normParameters += 2 * out;
    net.saved += net.elements;
  }
  net.addResidual().relu();
  net.endBlock();
}

/** timm's BasicBlock: two 3x3 convolutions with BatchNorm, ReLU in place between and after the residual sum. */
function basicBlock(net: NetBuilder, channels: number): void {
  net.beginBlock();
  net.conv(channels, 3).batchNorm().relu().conv(channels, 3).batchNorm().addResidual().relu();
  net.endBlock();
}

/**
 * One HighResolutionModule: each branch's blocks, then for each output resolution i the sum over branches j of
 * branch j brought to i (j > i: a 1x1 convolution, BatchNorm and nearest upsampling; j < i: strided 3x3
 * convolutions with BatchNorm, ReLU between them), through a ReLU that is not in place (it keeps its output; the sum
 * itself is kept by nothing).
 */
function highResolutionModule(net: NetBuilder, inputs: BranchPoint[], stage: HrnetStage): BranchPoint[] {
  const outputs = inputs.map((input, i) => {
    net.branchFrom(input, false);
    for (let b = 0; b < stage.blocks[i]!; b++) basicBlock(net, stage.channels[i]!);
    return net.mark();
  });
  if (outputs.length === 1) return outputs;
  return outputs.map((own, i) => {
    const c = stage.channels[i]!;
    outputs.forEach((other, j) => {
      if (j === i) return;
      net.branchFrom(other, false);
      if (j > i) {
        net.conv(c, 1, 1, 1, false, 0).batchNorm().upsample(2 ** (j - i));
        return;
      }
      for (let k = 0; k < i - j; k++) {
        const last = k === i - j - 1;
        net.conv(last ? c : stage.channels[j]!, 3, 2).batchNorm();
        if (!last) net.relu(false);
      }
    });
    net.branchFrom(own, false).concatTo(c).relu(false);
    return net.mark();
  });
}

export function hrnet(shape: HrnetShape): (imageSize: number, numClasses: number) => LayerNetSpec {
  return (imageSize, numClasses) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: imageSize });
    net.part('conv1').conv(64, 3, 2).part('bn1').batchNorm().part('act1').relu();
    net.part('conv2').conv(64, 3, 2).part('bn2').batchNorm().part('act2').relu();
    net.part('layer1');
    const { blocks, channels } = shape.stage1;
    for (let b = 0; b < blocks; b++) bottleneck(net, b === 0 ? 64 : 4 * channels, channels);
    let branches = [net.mark()];
    let widths = [4 * channels];
    shape.stages.forEach((stage, s) => {
      // The transition: a 3x3 convolution (BatchNorm, ReLU) where a branch changes width, and the new, lower
      // branch made from the last one by a strided 3x3 convolution.
      net.part(`transition${s + 1}`);
      const inputs = stage.channels.map((c, i) => {
        if (i < branches.length) {
          if (widths[i] === c) return branches[i]!;
          net.branchFrom(branches[i]!, false).conv(c, 3).batchNorm().relu();
          return net.mark();
        }
        net.branchFrom(branches[branches.length - 1]!, false).conv(c, 3, 2).batchNorm().relu();
        return net.mark();
      });
      net.part(`stage${s + 2}`);
      branches = inputs;
      for (let m = 0; m < stage.modules; m++) branches = highResolutionModule(net, branches, stage);
      widths = stage.channels;
    });
    // The head: a bottleneck widening each branch (to 128, 256, 512, 1024), each summed with the strided 3x3
    // convolution (bias, BatchNorm, ReLU) of the running sum of the branches above it; a 1x1 convolution to 2048.
    net.part('incre_modules');
    widths.forEach((c, i) => {
      net.branchFrom(branches[i]!, false);
      bottleneck(net, c, HEAD_CHANNELS[i]!);
      if (i > 0) net.concatTo(4 * HEAD_CHANNELS[i]!);
      if (i < widths.length - 1) net.conv(4 * HEAD_CHANNELS[i + 1]!, 3, 2, 1, true).batchNorm().relu();
    });
    net.part('final_layer').conv(FEATURES, 1, 1, 1, true, 0).batchNorm().relu();
    net.part('global_pool').globalPool().part('classifier').linear(numClasses);
    return net.build(true);
  };
}
