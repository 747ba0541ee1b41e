// torchvision's optical-flow models (torchvision.models.optical_flow: RAFT), as layer nets per image pair, derived
// from their code. RAFT runs a feature encoder on both images at once (the pair concatenated on the batch), builds
// an all-pairs correlation volume between the two 1/8-resolution feature maps and a pyramid of it pooled three
// times, runs a context encoder on the first image, then refines the flow `num_flow_updates` times (a forward
// argument, 12 by default) with one update block whose weights every iteration shares: a lookup in the pyramid
// around each pixel's current match, a motion encoder, a convolutional GRU whose hidden state each iteration keeps
// for backward, a flow head, and an upsampling of the flow to the input size (convex, through a predicted mask, in
// raft_large; bilinear in raft_small). forward returns every iteration's full-size prediction, which the usual
// sequence loss reads together.
import { NetBuilder } from '../layers';
import type { LayerNetSpec } from '../types';

/** How an encoder normalises: InstanceNorm2d (no affine), BatchNorm2d, or none (raft_small's context encoder). */
type FlowNorm = 'instance' | 'batch' | 'none';

/** torchvision's FeatureEncoder: its five widths (stem, three stages of two blocks, a 1x1 output), block kind and norm. */
interface FlowEncoder {
  layers: [number, number, number, number, number];
  bottleneck: boolean;
  norm: FlowNorm;
}

interface RaftConfig {
  feature: FlowEncoder;
  context: FlowEncoder;
  /** The correlation lookup's radius on each of the pyramid's 4 levels ((2r + 1)^2 samples each). */
  radius: number;
  /** The motion encoder's correlation convolutions (1x1, then a 3x3 where two), its flow convolutions (7x7, 3x3), its output width. */
  corrLayers: number[];
  flowLayers: [number, number];
  motionOut: number;
  /** The GRU's hidden state, and the kernel area of each of its ConvGRUs (raft_large: a 1x5 and a 5x1; raft_small: one 3x3). */
  hidden: number;
  gruKernels: number[];
  flowHead: number;
  /** raft_large's MaskPredictor (a 3x3 convolution to 256, a 1x1 to 8 x 8 x 9) and convex upsampling. */
  mask: boolean;
}

const PYRAMID_LEVELS = 4;
/** The mask's 8 x 8 x 9 weights per pixel, and its hidden width. */
const MASK_CHANNELS = 8 * 8 * 9;
const MASK_HIDDEN = 256;

export interface FlowModel {
  names: string[];
  /** torchvision's figure (the weights' num_params). */
  publishedParameters: number;
  /** forward's num_flow_updates where the script gives none. */
  defaultUpdates: number;
  build: (height: number, width: number, updates: number) => LayerNetSpec;
}

/** Conv2dNormActivation with a bias (RAFT's): the convolution, its norm, and an in-place ReLU unless `relu` is false. */
function convNormRelu(net: NetBuilder, out: number, kernel: number, stride: number, norm: FlowNorm, relu = true): void {
  net.conv(out, kernel, stride, 1, true, Math.floor(kernel / 2));
  if (norm === 'batch') net.batchNorm();
  else if (norm === 'instance') net.batchNorm(out, false);
  if (relu) net.relu();
}

/**
 * RAFT's ResidualBlock (two 3x3s) or BottleneckBlock (1x1 to a quarter, 3x3, 1x1 back), the input projected by a
 * strided 1x1 and a norm where the block strides; relu(x + y) keeps the sum.
 */
function encoderBlock(net: NetBuilder, out: number, stride: number, encoder: FlowEncoder): void {
  const input = net.mark();
  if (encoder.bottleneck) {
    convNormRelu(net, out / 4, 1, 1, encoder.norm);
    convNormRelu(net, out / 4, 3, stride, encoder.norm);
    convNormRelu(net, out, 1, 1, encoder.norm);
  } else {
    convNormRelu(net, out, 3, stride, encoder.norm);
    convNormRelu(net, out, 3, 1, encoder.norm);
  }
  if (stride !== 1) {
    net.branchFrom(input, false);
    convNormRelu(net, out, 1, stride, encoder.norm, false);
  }
  net.relu(false);
}

/** torchvision's FeatureEncoder: a strided 7x7 stem, three stages of two blocks (strides 1, 2, 2), a 1x1 convolution: 1/8 of the input. */
function flowEncoder(net: NetBuilder, encoder: FlowEncoder): void {
  const [stem, ...rest] = encoder.layers;
  convNormRelu(net, stem, 7, 2, encoder.norm);
  const stages: Array<[number, number]> = [[rest[0], 1], [rest[1], 2], [rest[2], 2]];
  for (const [out, stride] of stages) {
    encoderBlock(net, out, stride, encoder);
    encoderBlock(net, out, 1, encoder);
  }
  net.conv(rest[3], 1, 1, 1, true, 0);
}

/** The update block's (and mask predictor's) parameters and, of them, the convolution weights autocast casts. */
function updateParameters(config: RaftConfig, context: number): { all: number; cast: number } {
  const corr = PYRAMID_LEVELS * (2 * config.radius + 1) ** 2;
  const weights: number[] = [];
  const biases: number[] = [];
  const conv = (inC: number, out: number, area: number) => {
    weights.push(inC * out * area);
    biases.push(out);
  };
  let inC = corr;
  config.corrLayers.forEach((out, i) => {
    conv(inC, out, i === 0 ? 1 : 9);
    inC = out;
  });
  const [flow0, flow1] = config.flowLayers;
  conv(2, flow0, 49);
  conv(flow0, flow1, 9);
  conv(inC + flow1, config.motionOut - 2, 9);
  const gruInput = config.motionOut + context;
  for (const area of config.gruKernels) for (let gate = 0; gate < 3; gate++) conv(config.hidden + gruInput, config.hidden, area);
  conv(config.hidden, config.flowHead, 9);
  conv(config.flowHead, 2, 9);
  if (config.mask) {
    conv(config.hidden, MASK_HIDDEN, 9);
    conv(MASK_HIDDEN, MASK_CHANNELS, 1);
  }
  const cast = weights.reduce((a, b) => a + b, 0);
  return { all: cast + biases.reduce((a, b) => a + b, 0), cast };
}

/**
 * What one iteration keeps per 1/8-resolution pixel: the lookup's sampling grids (4 levels of (2r + 1)^2 points,
 * x and y, kept by grid_sample beside the pyramid it samples), the looked-up correlations and the ReLU outputs of
 * the motion encoder's convolutions, the flow it reads, the concatenation its last convolution reads; each ConvGRU
 * its input concatenated twice ([h, x] for the z and r gates, [r * h, x] for q), z, r, 1 - z, q and the hidden
 * state it reads; the new hidden state (the flow head's and mask's input) and the flow head's ReLU output; with the
 * mask, its ReLU output, the softmax over its 9 weights and the unfolded flow they weigh.
 */
function updateKeptPerPixel(config: RaftConfig, context: number): number {
  const samples = (2 * config.radius + 1) ** 2;
  const gruInput = config.motionOut + context;
  const corrReluOutputs = config.corrLayers.reduce((a, b) => a + b, 0);
  const [flow0, flow1] = config.flowLayers;
  const lastCorr = config.corrLayers[config.corrLayers.length - 1]!;
  const motion = PYRAMID_LEVELS * samples * 2 + PYRAMID_LEVELS * samples + corrReluOutputs + 2 + flow0 + flow1 + (lastCorr + flow1) + (config.motionOut - 2);
  const gru = config.gruKernels.length * (2 * (config.hidden + gruInput) + 5 * config.hidden);
  const mask = config.mask ? MASK_HIDDEN + MASK_CHANNELS + 2 * 9 : 0;
  return motion + gru + config.hidden + config.flowHead + mask;
}

/** RAFT for image pairs of `height` x `width` (multiples of 8) and `updates` iterations. */
function raft(config: RaftConfig): FlowModel['build'] {
  return (height, width, updates) => {
    const net = new NetBuilder({ kind: 'image', channels: 3, size: height, width });
    const images = net.mark();
    // torch.cat([image1, image2]): the pair the feature encoder's first convolution keeps.
    net.saved += 2 * 3 * height * width;
    net.part('feature_encoder');
    flowEncoder(net, config.feature);
    // Each feature map is kept by the correlation's matmul; the second image runs through the same weights.
    net.mark();
    const features = net.elements;
    net.reusingWeights(() => {
      net.branchFrom(images);
      flowEncoder(net, config.feature);
      net.mark();
    });
    // The correlation volume (every pixel against every pixel, at 1/8) and its pooled levels: grid_sample keeps each.
    const pixels = Math.ceil(height / 8) * Math.ceil(width / 8);
    let levelPixels = 0;
    for (let level = 0, h = Math.ceil(height / 8), w = Math.ceil(width / 8); level < PYRAMID_LEVELS; level++, h = Math.floor(h / 2), w = Math.floor(w / 2)) {
      levelPixels += h * w;
    }
    const pyramid = pixels * levelPixels;
    net.saved += pyramid;
    net.largest = Math.max(net.largest, pixels * pixels);
    // Made once: the matmul's product and its scaled copy beside both feature maps.
    net.noteLive(2 * features + 2 * pixels * pixels);
    net.part('context_encoder').branchFrom(images);
    flowEncoder(net, config.context);
    // tanh(hidden state) and relu(context) keep their outputs.
    const contextWidth = config.context.layers[4];
    net.saved += pixels * contextWidth;
    const context = contextWidth - config.hidden;
    net.part('update_block');
    const shared = updateParameters(config, context);
    net.addParameters(shared.all, shared.cast);
    const perUpdate = updateKeptPerPixel(config, context);
    net.saved += updates * pixels * perUpdate;
    // No-grad: the pyramid, the context and hidden state, and one iteration's tensors (the widest: the GRU's input twice).
    net.noteLive(pyramid + pixels * (contextWidth + perUpdate));
    // Every iteration's flow at full size, in the list forward returns (each kept for the loss).
    for (let update = 0; update < updates; update++) {
      if (update > 0) net.addOutput();
      net.branchFrom(images, false).concatTo(2);
    }
    return { ...net.build(true), stepInputBytesPerSample: 2 * 3 * height * width * 4 };
  };
}

const RAFT_LARGE: RaftConfig = {
  feature: { layers: [64, 64, 96, 128, 256], bottleneck: false, norm: 'instance' },
  context: { layers: [64, 64, 96, 128, 256], bottleneck: false, norm: 'batch' },
  radius: 4, corrLayers: [256, 192], flowLayers: [128, 64], motionOut: 128, hidden: 128, gruKernels: [5, 5], flowHead: 256, mask: true,
};

const RAFT_SMALL: RaftConfig = {
  feature: { layers: [32, 32, 64, 96, 128], bottleneck: true, norm: 'instance' },
  context: { layers: [32, 32, 64, 96, 160], bottleneck: true, norm: 'none' },
  radius: 3, corrLayers: [96], flowLayers: [64, 32], motionOut: 82, hidden: 96, gruKernels: [9], flowHead: 128, mask: false,
};

export const FLOW_CATALOG: FlowModel[] = [
  { names: ['raft_large'], publishedParameters: 5_257_536, defaultUpdates: 12, build: raft(RAFT_LARGE) },
  { names: ['raft_small'], publishedParameters: 990_162, defaultUpdates: 12, build: raft(RAFT_SMALL) },
];

export function findFlowModel(name: string): FlowModel | undefined {
  const key = name.trim().toLowerCase();
  return FLOW_CATALOG.find((m) => m.names.includes(key));
}
