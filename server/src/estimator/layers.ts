// Shape propagation through a network written layer by layer (torchvision models, nn.Module classes found in a
// script). Each op records what its backward keeps, following PyTorch's autograd formulas: convolutions and
// linears keep their input, BatchNorm its input, in-place ReLU its output, max-pooling its int64 indices,
// dropout a bool mask. A tensor kept by several ops is counted once.
import type { LayerNetSpec, LayerPart } from './types';

/** `t`: the frames of a video clip's feature map (absent: an image). */
type Shape = { kind: 'image'; c: number; h: number; w: number; t?: number } | { kind: 'tokens'; seq: number; f: number } | { kind: 'vector'; f: number };
/** A part while the walk is in it: the largest tensor and the most elements alive at once it has seen so far. */
type OpenPart = LayerPart & { largest: number; ownLive: number };

/** A shape's dimensions for one sample, as PyTorch lays them out: (C, H, W), (C, T, H, W), (seq, features), (features). */
function dimsOf(s: Shape): number[] {
  if (s.kind === 'image') return s.t ? [s.c, s.t, s.h, s.w] : [s.c, s.h, s.w];
  if (s.kind === 'tokens') return [s.seq, s.f];
  return [s.f];
}

function elementsOf(s: Shape): number {
  if (s.kind === 'image') return s.c * s.h * s.w * (s.t ?? 1);
  if (s.kind === 'tokens') return s.seq * s.f;
  return s.f;
}

/**
 * cuDNN's reserve space for a recurrent layer, in hidden-sized fp32 vectors per time step, layer and direction:
 * what forward keeps for backward. Measured on the H200 over 324 configurations (LSTM, GRU and tanh RNN; batch 16
 * to 256, hidden 128 to 1,024, 64 and 336 steps, 1 and 2 layers, one and two directions, with and without dropout;
 * test/gpu/estimator/results/rnn.json): LSTM 5, GRU 6, RNN 1, plus each layer below the top's output (1).
 */
export function recurrentReserve(gates: number, steps: number, hidden: number, layers: number, dirs: number): number {
  const perStep = gates === 4 ? 5 : gates === 3 ? 6 : 1;
  return steps * dirs * hidden * (perStep * layers + (layers - 1));
}

/**
 * The workspace cuDNN's recurrent backward takes on top of the reserve, per time step, in fp32 values: the same
 * runs give 6 hidden-sized vectors per direction one way and 8 both ways, whatever the number of layers, and never
 * less than about 3,000 values (4,300 both ways) for small hidden sizes.
 */
export function recurrentBackwardWorkspace(steps: number, hidden: number, dirs: number): number {
  return steps * Math.max(hidden * dirs * (dirs === 2 ? 8 : 6), dirs === 2 ? 4300 : 3000);
}

/** A tensor the walk passed, that a later branch reads again (a segmentation head reading an earlier stage). */
export interface BranchPoint {
  readonly shape: Shape;
  /** The index of the named part it was made in (-1 before the first). */
  readonly part: number;
}

/** One of torchvision MViT's blocks (MSBlockConfig and the model's options): see NetBuilder.multiscaleBlock. */
export interface MultiscaleBlockShape {
  heads: number;
  /** The block's output channels. */
  out: number;
  /** The spatial strides of q's pooling (and of the skip's max-pool) and of k's and v's: 1 where they keep the map. */
  qStride: number;
  kvStride: number;
  /** q is pooled (and normalised) too: every V2 block, V1's where q strides. */
  poolsQ: boolean;
  /** MViT V2: relative position tables, and the width changed before attention (V1: after the MLP). */
  relPos: boolean;
  projectAfterAttention: boolean;
}

/** Builds a LayerNetSpec by applying ops to a current tensor, per sample. */
export class NetBuilder {
  private shape: Shape;
  private currentSaved = false;
  parameters = 0;
  /** Of those, BatchNorm weights and biases: buffers where a detector freezes its pretrained backbone's norms. */
  normParameters = 0;
  castParameters = 0;
  saved = 0;
  fixedBytes = 0;
  largest = 0;
  private blockSaved: number[] = [];
  private blockInputs: number[] = [];
  private blockStartSaved = 0;
  /** Block input held for the residual while the block runs (no-grad forward). */
  private blockInputLive = 0;
  /**
   * A stage's input (a container of blocks inside the model's container: torchvision's `features[i]`,
   * `layer1`..`layer4`), held by the outer container's loop until the stage returns; from its second block on it is
   * no block's input, and is alive beside it (no-grad forward).
   */
  private stageInput = 0;
  private stageInputLive = 0;
  /** Largest sum of tensors alive at once in a no-grad forward: block input, op input, op output (see noteLive). */
  private live = 0;
  /** The same worst point's bytes under autocast, where a layer says it holds fp32 tensors then (see noteLive). */
  private liveAutocastBytes = 0;
  /** Saved elements that autocast keeps in fp32 (a transformer's residual stream the norms read): 2 bytes more each. */
  private fp32UnderAutocast = 0;
  /** The largest output-plus-input gradient of one layer, where a builder knows it. */
  private gradientPair = 0;
  /** Elements alive at the worst point of a recurrent layer's backward: what it and the layers before it keep, plus cuDNN's workspace. */
  private backwardWorkspace = 0;
  private convolutions = 0;
  private readonly inputSpec: LayerNetSpec['input'];
  /** Model outputs besides the last tensor (a segmentation model's auxiliary map), each with its own loss. */
  private extraOutputs = 0;
  private namedOutputs: Record<string, number> = {};
  /**
   * FrozenBatchNorm2d (a detector's pretrained backbone): `x * scale + shift` over buffers, whose backward needs no
   * input, so the norm keeps nothing (BatchNorm2d keeps the convolution's output).
   */
  frozenNorms = false;
  /**
   * The net's parameters are stacked by torch.func and forward runs under vmap: a norm with an affine keeps its
   * normalized tensor beside its output (see ForwardTrace.stackedParameters).
   */
  stackedParameters = false;
  /** Named top-level submodules in forward order (see part()), and the classifier head's start (the last linear). */
  private readonly parts: Array<OpenPart> = [];
  private headPart: OpenPart | undefined;
  /** Whether the walk made a tensor since the last part began (until it does, the current tensor is that part's input). */
  private producedSincePart = false;
  private returnedOutput: number | undefined;
  /** The largest ratio of a map's area (and frames) to the input image's, over the walk (see LayerNetSpec.mapGrowth). */
  private mapGrowth = 1;

  constructor(input: LayerNetSpec['input']) {
    this.inputSpec = input;
    if (input.kind === 'image') this.shape = { kind: 'image', c: input.channels, h: input.size, w: input.width ?? input.size, ...(input.frames ? { t: input.frames } : {}) };
    else if (input.kind === 'tokens') this.shape = { kind: 'tokens', seq: input.seqLen, f: 1 };
    else this.shape = { kind: 'vector', f: input.features };
    // The input batch is allocated before the step, not by forward.
    this.currentSaved = true;
    // Everything before the first named part (all of a net that names none but its head).
    this.part(BODY_PART);
  }

  get elements(): number {
    return elementsOf(this.shape);
  }

  get channels(): number {
    const s = this.shape;
    return s.kind === 'image' ? s.c : s.f;
  }

  private keepCurrent(): void {
    // The part's first layers keep the tensor the part reads (see LayerPart.keepsInput).
    const part = this.parts[this.parts.length - 1];
    if (part && !this.producedSincePart) part.keepsInput = true;
    if (!this.currentSaved) {
      this.saved += this.elements;
      this.currentSaved = true;
    }
  }

  get liveNoGrad(): number {
    return this.live;
  }

  /**
   * Elements alive at once at one point of a no-grad forward: the net's worst point, and the open part's.
   * `autocastBytes`: their bytes under autocast where some stay fp32 (else 2 bytes each).
   */
  noteLive(elements: number, autocastBytes = 2 * elements): void {
    this.live = Math.max(this.live, elements);
    this.liveAutocastBytes = Math.max(this.liveAutocastBytes, autocastBytes);
    for (const open of [this.headPart, this.parts[this.parts.length - 1]]) if (open) open.ownLive = Math.max(open.ownLive, elements);
  }

  private produce(shape: Shape): void {
    this.noteLive(this.stageInputLive + this.blockInputLive + this.elements + elementsOf(shape));
    this.shape = shape;
    this.currentSaved = false;
    this.producedSincePart = true;
    this.largest = Math.max(this.largest, elementsOf(shape));
    const input = this.inputSpec;
    if (shape.kind === 'image' && input.kind === 'image') {
      const inputArea = input.size * (input.width ?? input.size) * (input.frames ?? 1);
      this.mapGrowth = Math.max(this.mapGrowth, (shape.h * shape.w * (shape.t ?? 1)) / inputArea);
    }
    for (const open of [this.headPart, this.parts[this.parts.length - 1]]) if (open) open.largest = Math.max(open.largest, elementsOf(shape));
  }

  private snapshot(name: string): OpenPart {
    return {
      name, parametersBefore: this.parameters, normParametersBefore: this.normParameters, castParametersBefore: this.castParameters,
      savedBefore: this.saved, fixedBytesBefore: this.fixedBytes, fp32UnderAutocastBefore: this.fp32UnderAutocast, liveBefore: this.live,
      convolutionsFrom: this.convolutions, inputElements: this.elements, inputDims: dimsOf(this.shape), inputCounted: this.currentSaved,
      keepsInput: false, largestFrom: 0, largest: 0, ownLive: 0,
    };
  }

  /**
   * Marks the start of a named top-level submodule (torchvision's `conv1`, `layer1`, `features`, `fc`): where a
   * script's requires_grad_(False) on submodules can end a frozen prefix (see withFrozenPrefix).
   */
  part(name: string): this {
    this.closePart();
    this.parts.push(this.snapshot(name));
    this.producedSincePart = false;
    return this;
  }

  /** The part that ends here made no tensor of its own (an in-place ReLU): it returns what it reads. */
  private closePart(): void {
    const open = this.parts[this.parts.length - 1];
    if (open && !this.producedSincePart) open.returnsInput = true;
  }

  /** The named parts so far (a detector's backbone, read before its FPN is added). */
  partsSoFar(): LayerPart[] {
    return this.finishedParts();
  }

  private finishedParts(): LayerPart[] {
    const all = [...this.parts, ...(this.headPart ? [{ ...this.headPart, name: HEAD_PART }] : [])];
    // The largest tensor any op from a part on makes (what backward's transients scale with once it stops there).
    let largest = 0;
    const result: LayerPart[] = [];
    for (let i = all.length - 1; i >= 0; i--) {
      largest = Math.max(largest, all[i]!.largest);
      const { largest: _own, ownLive, ...part } = all[i]!;
      void _own;
      // Snapshots hold the convolutions before the part: those from it on are the rest.
      result.unshift({ ...part, largestFrom: largest, convolutionsFrom: this.convolutions - part.convolutionsFrom, liveWithin: ownLive });
    }
    return result;
  }

  /** The current output, under the name of the library module that makes it (torchvision's `layer1`). */
  name(path: string): this {
    this.namedOutputs[path] = this.elements;
    return this;
  }

  /**
   * The current tensor, for a second branch to read later. It has two readers, and the first (a convolution)
   * keeps it for backward, so it counts as kept from here.
   */
  mark(): BranchPoint {
    this.keepCurrent();
    return { shape: this.shape, part: this.parts.length - 1 };
  }

  /**
   * Continues from a marked tensor. `leavingKept`: the tensor the walk leaves is kept (a branch's output that a
   * concatenation or a loss reads later); false where only an addition reads it.
   */
  branchFrom(point: BranchPoint, leavingKept = true): this {
    if (leavingKept) this.keepCurrent();
    this.shape = point.shape;
    this.currentSaved = true;
    return this;
  }

  /** The current tensor is one of the model's outputs (alive until the loss, which reads it); the walk goes on elsewhere. */
  addOutput(): this {
    this.keepCurrent();
    this.extraOutputs += this.elements;
    return this;
  }

  /** The current tensor is what the model returns; the loss reads what the walk makes of it next (see LayerNetSpec.returnedOutputElementsPerSample). */
  returnsHere(): this {
    this.returnedOutput = this.elements;
    return this;
  }

  /** Bilinear resize to a square size (F.interpolate to the input's size): keeps nothing for backward. */
  resizeTo(size: number): this {
    const s = this.shape;
    if (s.kind === 'image' && size > 0) this.produce({ kind: 'image', c: s.c, h: size, w: size });
    return this;
  }

  /** Marks the start of a top-level block (what checkpoint_sequential would cut on). */
  beginBlock(): void {
    this.blockInputs.push(this.elements);
    this.blockStartSaved = this.saved;
    this.blockInputLive = this.elements;
  }

  endBlock(): void {
    this.keepCurrent();
    this.blockSaved.push(this.saved - this.blockStartSaved);
    this.blockInputLive = 0;
    // The stage's first block has returned: the stage's input is now held beside the blocks that follow.
    this.stageInputLive = this.stageInput;
  }

  /** Marks the start of a stage, a nested container of blocks (see stageInput). */
  beginStage(): void {
    this.stageInput = this.elements;
    this.stageInputLive = 0;
  }

  endStage(): void {
    this.stageInput = 0;
    this.stageInputLive = 0;
  }

  conv(out: number, kernel: number, stride = 1, groups = 1, bias = false, padding = Math.floor(kernel / 2), savesInput = true, inChannels?: number): this {
    this.declareChannels(inChannels);
    const s = this.shape;
    const c = s.kind === 'image' ? s.c : s.kind === 'tokens' ? s.f : s.f;
    const weights = (out * c * kernel * kernel) / groups;
    this.convolutions++;
    this.parameters += weights + (bias ? out : 0);
    this.castParameters += weights;
    if (savesInput) this.keepCurrent();
    if (s.kind === 'image') {
      const h = Math.floor((s.h + 2 * padding - kernel) / stride) + 1;
      const w = Math.floor((s.w + 2 * padding - kernel) / stride) + 1;
      this.produce({ kind: 'image', c: out, h: Math.max(1, h), w: Math.max(1, w) });
    } else if (s.kind === 'tokens') {
      const seq = Math.floor((s.seq + 2 * padding - kernel) / stride) + 1;
      this.produce({ kind: 'tokens', seq: Math.max(1, seq), f: out });
    } else {
      this.produce({ kind: 'vector', f: out });
    }
    return this;
  }

  /**
   * A 3-D convolution over a clip's feature map (frames x height x width), no bias: keeps its input. Kernel, stride
   * and padding per dimension, frames first.
   */
  conv3d(out: number, kernel: [number, number, number], stride: [number, number, number] = [1, 1, 1], padding: [number, number, number] = [0, 0, 0]): this {
    const s = this.shape;
    if (s.kind !== 'image') return this.conv(out, 1);
    const weights = out * s.c * kernel[0] * kernel[1] * kernel[2];
    this.convolutions++;
    this.parameters += weights;
    this.castParameters += weights;
    this.keepCurrent();
    const size = (n: number, d: 0 | 1 | 2) => Math.max(1, Math.floor((n + 2 * padding[d] - kernel[d]) / stride[d]) + 1);
    this.produce({ kind: 'image', c: out, t: size(s.t ?? 1, 0), h: size(s.h, 1), w: size(s.w, 2) });
    return this;
  }

  /**
   * A convolution with a rectangular kernel (Inception's 1x7 / 7x1 and 1x3 / 3x1), padded to keep the size, stride 1,
   * no bias: keeps its input.
   */
  convRect(out: number, kernelHeight: number, kernelWidth: number): this {
    const s = this.shape;
    if (s.kind !== 'image') return this.conv(out, 1);
    const weights = out * s.c * kernelHeight * kernelWidth;
    this.convolutions++;
    this.parameters += weights;
    this.castParameters += weights;
    this.keepCurrent();
    this.produce({ ...s, c: out });
    return this;
  }

  /**
   * A layer that declares its input channels (the script's own modules): where they differ from the tensor the
   * walk carries (a concatenated skip connection, a branch the walk did not follow), the declared ones are right.
   */
  private declareChannels(channels: number | undefined): void {
    const s = this.shape;
    if (channels === undefined || channels <= 0) return;
    if (s.kind === 'image' && s.c !== channels) this.shape = { ...s, c: channels };
    else if (s.kind === 'tokens' && s.f !== channels) this.shape = { ...s, f: channels };
  }

  /** 1-D convolution over a token sequence (channels = features). */
  conv1d(out: number, kernel: number, stride = 1, bias = true, padding = 0, inChannels?: number, groups = 1): this {
    if (this.shape.kind === 'image') this.shape = { kind: 'tokens', seq: this.shape.h * this.shape.w, f: this.shape.c };
    if (this.shape.kind === 'vector') this.shape = { kind: 'tokens', seq: 1, f: this.shape.f };
    return this.conv(out, kernel, stride, groups, bias, padding, true, inChannels);
  }

  /** ConvTranspose2d: upsamples; keeps its input for backward. */
  convTranspose(out: number, kernel: number, stride: number, padding: number, bias: boolean, inChannels?: number): this {
    this.declareChannels(inChannels);
    const s = this.shape;
    const c = s.kind === 'image' ? s.c : s.kind === 'tokens' ? s.f : s.f;
    this.convolutions++;
    this.parameters += c * out * kernel * kernel + (bias ? out : 0);
    this.castParameters += c * out * kernel * kernel;
    this.keepCurrent();
    if (s.kind === 'image') {
      const size = (n: number) => Math.max(1, (n - 1) * stride - 2 * padding + kernel);
      this.produce({ kind: 'image', c: out, h: size(s.h), w: size(s.w) });
    } else {
      this.produce(s.kind === 'tokens' ? { kind: 'tokens', seq: s.seq, f: out } : { kind: 'vector', f: out });
    }
    return this;
  }

  /** Nearest or bilinear upsampling: no parameters, keeps nothing but the output's shape grows. */
  upsample(scale: number): this {
    const s = this.shape;
    if (s.kind === 'image' && scale > 0) this.produce({ kind: 'image', c: s.c, h: Math.round(s.h * scale), w: Math.round(s.w * scale) });
    return this;
  }

  batchNorm(features = this.channels, affine = true): this {
    this.declareChannels(features);
    if (affine) {
      this.parameters += 2 * this.channels;
      this.normParameters += 2 * this.channels;
    }
    if (!this.frozenNorms) this.keepCurrent();
    this.produce(this.shape);
    if (affine && !this.frozenNorms) this.keepStackedNormalized();
    return this;
  }

  /** What a norm with an affine keeps beside its output when the parameters are stacked under vmap. */
  private keepStackedNormalized(): void {
    if (this.stackedParameters) this.saved += this.elements;
  }

  /**
   * layer_norm is on autocast's fp32 list: under autocast it casts a half input to fp32 and keeps that copy (4 bytes
   * a value where the half tensor would take 2), as the forward trace counts it (measured in round 3).
   */
  layerNorm(features = this.channels, parametersPerFeature = 2, affine = parametersPerFeature === 2): this {
    this.parameters += parametersPerFeature * features;
    if (!this.currentSaved) this.fp32UnderAutocast += this.elements;
    this.keepCurrent();
    this.produce(this.shape);
    if (affine) this.keepStackedNormalized();
    return this;
  }

  /**
   * GroupNorm then an in-place ReLU (timm's GroupNormAct): keeps its input and the ReLU's output. group_norm is on
   * autocast's fp32 list: under autocast it keeps an fp32 copy of a half input in its place (also where the input is
   * counted kept already: a pre-activation block's input, which only the norm and the residual sum read), its output,
   * which the ReLU keeps, is fp32 (2 bytes more than a half one), and the convolution that reads it keeps a half copy
   * (measured: BiT-50x1 under fp16 autocast keeps 14% more than without these copies, probe_resolve13).
   */
  groupNormAct(features = this.channels): this {
    this.declareChannels(features);
    this.parameters += 2 * this.channels;
    this.normParameters += 2 * this.channels;
    this.fp32UnderAutocast += this.elements;
    this.keepCurrent();
    this.produce(this.shape);
    this.keepCurrent();
    this.fp32UnderAutocast += 2 * this.elements;
    return this;
  }

  /** ReLU keeps its output; in place, that output is the tensor it was given. */
  relu(inplace = true): this {
    if (!inplace) this.produce(this.shape);
    this.keepCurrent();
    return this;
  }

  /**
   * ReLU6 is hardtanh (as nn.Hardtanh), whose backward reads the input: even in place it costs a tensor beside its output
   * (measured: torchvision MobileNetV2 at batch 64 is 1.3% off with this rule, 29% under without it).
   */
  relu6(): this {
    return this.activation();
  }

  /** SiLU, GELU, Hardswish, Tanh-like activations: keep their input, return a new tensor. */
  activation(): this {
    this.keepCurrent();
    this.produce(this.shape);
    return this;
  }

  /** Sigmoid keeps its output. */
  sigmoid(): this {
    this.produce(this.shape);
    this.keepCurrent();
    return this;
  }

  /** `ceilMode`: the last window may hang over the edge (GoogLeNet's pools). */
  maxPool(kernel: number, stride: number, padding = 0, ceilMode = false): this {
    const s = this.shape;
    if (s.kind !== 'image') return this;
    this.keepCurrent();
    const round = ceilMode ? Math.ceil : Math.floor;
    const size = (n: number) => {
      let out = round((n + 2 * padding - kernel) / stride) + 1;
      // PyTorch's rule: the last window must start inside the input (or its left padding).
      if (ceilMode && (out - 1) * stride >= n + padding) out--;
      return out;
    };
    const h = size(s.h);
    const w = size(s.w);
    this.produce({ kind: 'image', c: s.c, h, w });
    this.fixedBytes += s.c * h * w * 8; // int64 indices
    return this;
  }

  /** 3-D max pooling over a clip's feature map (frames first): keeps its int64 indices. */
  maxPool3d(kernel: [number, number, number], stride: [number, number, number], padding: [number, number, number] = [0, 0, 0]): this {
    const s = this.shape;
    if (s.kind !== 'image') return this;
    this.keepCurrent();
    const size = (n: number, d: 0 | 1 | 2) => Math.max(1, Math.floor((n + 2 * padding[d] - kernel[d]) / stride[d]) + 1);
    this.produce({ kind: 'image', c: s.c, t: size(s.t ?? 1, 0), h: size(s.h, 1), w: size(s.w, 2) });
    this.fixedBytes += this.elements * 8; // int64 indices
    return this;
  }

  /** Average pooling with a window (DenseNet transitions, Inception's pooled branches): keeps nothing. */
  avgPool(kernel: number, stride = kernel, padding = 0): this {
    const s = this.shape;
    if (s.kind !== 'image') return this;
    const size = (n: number) => Math.max(1, Math.floor((n + 2 * padding - kernel) / stride) + 1);
    this.produce({ kind: 'image', c: s.c, h: size(s.h), w: size(s.w) });
    return this;
  }

  /** AdaptiveAvgPool2d to a fixed size (VGG's 7x7): keeps nothing (its backward needs only the shape). */
  adaptiveAvgPool(size: number): this {
    const s = this.shape;
    if (s.kind === 'image') this.produce({ kind: 'image', c: s.c, h: size, w: size });
    return this;
  }

  /**
   * A slice of the current tensor's channels (torch.chunk, ShuffleNetV2's split): a view, so a layer that keeps it
   * keeps the whole tensor.
   */
  chunkChannels(channels: number): this {
    const s = this.shape;
    if (s.kind !== 'image') return this;
    this.keepCurrent();
    this.shape = { ...s, c: channels };
    return this;
  }

  /** The channels grew by concatenation (DenseNet): the next op reads a new, wider tensor. */
  concatTo(channels: number): this {
    const s = this.shape;
    if (s.kind === 'image') {
      this.shape = { ...s, c: channels };
      this.currentSaved = false;
      this.largest = Math.max(this.largest, this.elements);
    }
    return this;
  }

  /** Global average pooling and flatten: the input is kept (its backward reads the shape from it). */
  globalPool(): this {
    this.keepCurrent();
    this.produce({ kind: 'vector', f: this.channels });
    return this;
  }

  flattenTo(features: number): this {
    this.shape = { kind: 'vector', f: features };
    return this;
  }

  /** `tiedWeight`: the weight is another layer's (weight tying), so only the bias is a parameter of its own. */
  linear(out: number, bias = true, inFeatures?: number, tiedWeight = false): this {
    const s = this.shape;
    const inF = inFeatures ?? (s.kind === 'image' ? s.c * s.h * s.w : s.f);
    if (s.kind === 'image' && inFeatures !== undefined && inFeatures !== s.c * s.h * s.w) {
      // The script pools or flattens before the linear; take the declared in_features.
      this.shape = { kind: 'vector', f: inF };
    }
    // The last linear is the classifier head a fine-tuning script replaces (and trains alone).
    this.headPart = this.snapshot(HEAD_PART);
    this.parameters += (tiedWeight ? 0 : inF * out) + (bias ? out : 0);
    this.castParameters += inF * out;
    this.keepCurrent();
    const next = this.shape;
    this.produce(next.kind === 'tokens' ? { kind: 'tokens', seq: next.seq, f: out } : { kind: 'vector', f: out });
    return this;
  }

  embedding(vocab: number, dim: number): this {
    this.parameters += vocab * dim;
    const seq = this.shape.kind === 'tokens' ? this.shape.seq : 1;
    this.produce({ kind: 'tokens', seq, f: dim });
    return this;
  }

  /** nn.EmbeddingBag: each bag of ids pooled (sum, mean or max) into one vector, whatever the bag's length. */
  embeddingBag(vocab: number, dim: number): this {
    this.parameters += vocab * dim;
    this.produce({ kind: 'vector', f: dim });
    return this;
  }

  dropout(p = 0.5): this {
    if (p <= 0) return this;
    this.fixedBytes += this.elements; // bool mask
    this.produce(this.shape);
    return this;
  }

  /** Residual add: nothing is kept; in torchvision the sum is made in place on the branch output. */
  addResidual(): this {
    return this;
  }

  /** Squeeze-and-excitation: pooled vector, two 1x1 convs, a gate; the scaled product keeps both operands. */
  squeezeExcite(squeeze: number): this {
    const s = this.shape;
    if (s.kind !== 'image') return this;
    this.keepCurrent();
    const c = s.c;
    this.parameters += 2 * c * squeeze + squeeze + c;
    this.castParameters += 2 * c * squeeze;
    this.saved += c + squeeze * 2 + c * 2; // pooled, fc1 out, activation, gate
    this.produce(s);
    return this;
  }

  /**
   * Efficient channel attention (timm's EcaModule): the pooled channels through a 1-D convolution of `kernel` taps
   * (no bias) and a sigmoid; the gated product keeps the map it scales.
   */
  efficientChannelAttention(kernel: number): this {
    const s = this.shape;
    if (s.kind !== 'image') return this;
    this.keepCurrent();
    this.parameters += kernel;
    this.castParameters += kernel;
    this.saved += 2 * s.c; // the pooled channels (kept by the convolution) and the gate (kept by the sigmoid)
    this.produce(s);
    return this;
  }

  /** LSTM/GRU (cuDNN): keeps its input, cuDNN's reserve space and its output; backward takes a workspace on top. */
  recurrent(hidden: number, layers: number, bidirectional: boolean, gates: 1 | 3 | 4, inputFeatures?: number, bias = true): this {
    const s = this.shape;
    const seq = s.kind === 'tokens' ? s.seq : 1;
    const inF = inputFeatures ?? (s.kind === 'tokens' ? s.f : this.channels);
    const dirs = bidirectional ? 2 : 1;
    for (let l = 0; l < layers; l++) {
      const layerIn = l === 0 ? inF : hidden * dirs;
      this.parameters += dirs * gates * hidden * (layerIn + hidden + (bias ? 2 : 0));
      this.castParameters += dirs * gates * hidden * (layerIn + hidden);
    }
    this.keepCurrent();
    this.saved += recurrentReserve(gates, seq, hidden, layers, dirs);
    this.backwardWorkspace = Math.max(this.backwardWorkspace, this.saved + recurrentBackwardWorkspace(seq, hidden, dirs));
    this.produce({ kind: 'tokens', seq, f: hidden * dirs });
    this.currentSaved = true;
    return this;
  }

  /**
   * A Swin Transformer block (timm and torchvision) on an image-shaped map of C channels and T = h x w tokens, read
   * from their forward: norm1 keeps its input, qkv its (window-partitioned) input, q @ k^T the scaled q and qkv's
   * output (k, v are views of it), softmax its output and attn @ v that output, the projection its input, norm2 its
   * input, fc1, GELU and fc2 theirs (4C for the last two): 17 C + P per token, P = heads x window^2 attention
   * probabilities. Under autocast the residual stream the norms read and the softmax are fp32, and attn @ v keeps a
   * half copy of the probabilities (measured on the H200: test/gpu/estimator/results/vision.json).
   */
  swinBlock(heads: number, window: number, temporalWindow?: number, grouped?: { biasTable: false; kernel: 'math' }): this {
    const s = this.shape;
    if (s.kind !== 'image') return this;
    const c = s.c;
    const tokens = s.h * s.w * (s.t ?? 1);
    const win = Math.min(window, s.h, s.w);
    // A clip's 3-D windows (Swin3D): frames x window x window, each clamped to the map; the position-bias table is
    // the configured window's.
    const winFrames = temporalWindow !== undefined ? Math.min(temporalWindow, s.t ?? 1) : 1;
    // `grouped` (Twins' locally grouped attention): no position-bias table; see below for what its attention keeps.
    const table = grouped ? 0 : temporalWindow !== undefined ? (2 * temporalWindow - 1) * (2 * window - 1) ** 2 : (2 * win - 1) ** 2;
    this.beginBlock();
    this.parameters += 12 * c * c + 13 * c + table * heads;
    this.castParameters += 12 * c * c;
    this.currentSaved = true; // norm1's input is counted below
    const probabilities = heads * win * win * winFrames;
    if (grouped) {
      // F.scaled_dot_product_attention on 5-D q, k, v (batch, windows, heads, tokens, head_dim) runs the math kernel
      // (the fused ones take 4-D inputs only): it keeps the scaled q and k, v and the softmax's probabilities, all
      // fp32 (it upcasts half inputs), not qkv's output (2 C more than the eager block in fp32, where v is a view
      // of qkv).
      this.saved += (19 * c + probabilities) * tokens;
      this.fp32UnderAutocast += (2 * c + probabilities) * tokens;
    } else {
      this.saved += (17 * c + probabilities) * tokens;
      this.fp32UnderAutocast += (2 * c + 2 * probabilities) * tokens;
    }
    this.largest = Math.max(this.largest, 4 * c * tokens);
    this.noteLive(swinBlockLive(c, probabilities, 'fp32') * tokens, swinBlockLive(c, probabilities, 'autocast') * tokens);
    this.gradientPair = Math.max(this.gradientPair, 5 * c * tokens);
    this.produce(s);
    this.currentSaved = true; // the block's output is the next block's norm1 input, counted there
    this.endBlock();
    return this;
  }

  /**
   * transformers' SwinLayer (transformers 5: q_proj, k_proj, v_proj and o_proj around F.scaled_dot_product_attention),
   * read from its forward and measured tensor by tensor on the H200 (probe_grads13: every tensor saved for backward,
   * deduplicated by storage). layernorm_before keeps its input, the three projections the window-partitioned copy of
   * its output, SDPA (the memory-efficient kernel) q, k and v (3C, views of the projections' outputs), its output
   * (which o_proj reads as a view) and one fp32 log-sum-exp per head and query (padded to 32 a window);
   * layernorm_after, the MLP's fc1, GELU and fc2 as timm's: 16 C per token. No probabilities are kept. The
   * relative-position bias is added as SDPA's mask: broadcast (nothing per token) in a plain block, but materialised
   * per window with the shift's mask in a shifted one (`shifted`, where the map is larger than a window), its last
   * dimension padded to 8 (heads x 56 elements a token in 7x7 windows). Under autocast the residual stream the norms
   * read is fp32, and the fp32 windows are cast to half by each projection separately: three half copies where fp32
   * keeps one (4 bytes a channel over the one element counted).
   */
  transformersSwinLayer(heads: number, window: number, shifted: boolean): this {
    const s = this.shape;
    if (s.kind !== 'image') return this;
    const c = s.c;
    const tokens = s.h * s.w;
    const win = Math.min(window, s.h, s.w);
    const area = win * win;
    // set_shift_and_window_size: no shift (and no mask) where the map fits in one window.
    const mask = shifted && Math.min(s.h, s.w) > window ? heads * roundUpTo(area, 8) : 0;
    const windows = Math.ceil(s.h / win) * Math.ceil(s.w / win);
    this.beginBlock();
    this.parameters += 12 * c * c + 13 * c + (2 * win - 1) ** 2 * heads;
    this.castParameters += 12 * c * c;
    this.currentSaved = true; // layernorm_before's input is counted below
    this.saved += (16 * c + mask) * tokens;
    this.fp32UnderAutocast += 4 * c * tokens;
    this.fixedBytes += 4 * heads * roundUpTo(area, 32) * windows;
    this.largest = Math.max(this.largest, 4 * c * tokens);
    this.noteLive(swinBlockLive(c, mask, 'fp32') * tokens, swinBlockLive(c, mask, 'autocast') * tokens);
    this.gradientPair = Math.max(this.gradientPair, 5 * c * tokens);
    this.produce(s);
    this.currentSaved = true; // the layer's output is the next layer's layernorm_before input, counted there
    this.endBlock();
    return this;
  }

  /**
   * A multiscale block (torchvision's MViT) on a clip's map of C channels and N = t x h x w tokens plus a class
   * token, read from its forward: norm1, qkv to 3A (A the attention width: the output width in V2, the input's in
   * V1), q, k and v each copied out of qkv (contiguous, per head) for a depthwise 3x3x3 pooling convolution and a
   * LayerNorm (q strided by `qStride`, k and v by `kvStride` in space), eager attention (the scaled q and k kept
   * by q @ k^T, the softmax's probabilities, heads x Nq x Nk, kept by it and by attn @ v with v), a copy of the
   * heads' output for the projection, the skip max-pooled where q strides (its input and int64 indices kept),
   * norm2 and an MLP to 4A (fc1's and GELU's outputs kept). V2's relative positions (`relPos`) keep q and two
   * copies of it (an einsum's and the temporal term's matmul); stochastic depth keeps only its per-sample noise.
   * Measured on the H200 (test/gpu/estimator/results/probe_cat12.jsonl, training in fp32): what forward keeps is
   * 1.9% (V2-S) and 2.0% (V1-B) under the estimate's count. Under autocast the residual stream, the norms' inputs and
   * the softmax are fp32, and attn @ v keeps a half copy of the probabilities. The class token is counted in every
   * token set.
   */
  multiscaleBlock(block: MultiscaleBlockShape): this {
    const s = this.shape;
    if (s.kind !== 'image') return this;
    const { heads, out, qStride, kvStride, poolsQ, relPos, projectAfterAttention } = block;
    const c = s.c;
    const t = s.t ?? 1;
    const attention = projectAfterAttention ? out : c;
    const head = attention / heads;
    const pooled = (n: number, stride: number) => Math.floor((n - 1) / stride) + 1;
    const tokens = t * s.h * s.w + 1;
    const [qh, qw] = [pooled(s.h, qStride), pooled(s.w, qStride)];
    const queries = t * qh * qw + 1;
    const keys = t * pooled(s.h, kvStride) * pooled(s.w, kvStride) + 1;
    const probabilities = heads * queries * keys;
    const pools = poolsQ ? 3 : 2;
    const pooledTokens = (poolsQ ? queries : 0) + 2 * keys;
    this.beginBlock();
    // Parameters: norms, qkv and the attention's projection, the pooling convolutions and their norms, the MLP, a
    // projection where the width changes, V2's relative-position tables (sized for the block's input map).
    const changes = c !== out;
    const linears = 3 * c * attention + attention * attention + 4 * attention * attention + 4 * attention * out + (changes ? c * out : 0);
    const size = Math.max(s.h, s.w);
    const relTables = relPos ? (2 * Math.max(Math.floor(size / qStride), Math.floor(size / kvStride)) - 1) * 2 * head + (2 * t - 1) * head : 0;
    this.parameters += linears + 2 * c + 3 * attention + attention + pools * 29 * head + 2 * attention + 4 * attention + out + (changes ? out : 0) + relTables;
    this.castParameters += linears + pools * 27 * head;
    // norm1's input (the block's input: its class token besides the map) and output.
    const fresh = !this.currentSaved;
    this.keepCurrent();
    let saved = (fresh ? c : 0) + c * tokens;
    // The heads' q, k, v copied for their pooling convolutions; the pooled maps (with the class token) their norms
    // keep; the normalised k and v; the scaled q.
    saved += pools * attention * (tokens - 1) + attention * pooledTokens + 2 * attention * keys + attention * queries;
    if (relPos) saved += 3 * attention * queries;
    // The probabilities, the heads' output copied for the projection, the per-row statistics of the norms.
    saved += probabilities + attention * queries + 2 * (2 * tokens + 2 * queries + heads * pooledTokens);
    // The skip, max-pooled where q strides: its input and int64 indices.
    if (qStride > 1) {
      saved += attention * (tokens - 1);
      this.fixedBytes += 8 * attention * (queries - 1);
    }
    // norm2's input and output, fc1's and GELU's outputs. Stochastic depth's products keep only their (B, 1, 1) noise.
    saved += 2 * attention * queries + 8 * attention * queries;
    this.saved += saved;
    // Under autocast: the residual stream norm1 and norm2 read, the pooled maps their norms read (cast to fp32
    // copies) and the softmax's output are fp32; attn @ v keeps a half copy of the probabilities.
    this.fp32UnderAutocast += c * tokens + attention * queries + attention * pooledTokens + 2 * probabilities;
    this.largest = Math.max(this.largest, probabilities, 4 * attention * queries);
    // No-grad: the block's input, q, k, v and the scores beside the probabilities (under autocast the half scores,
    // the fp32 copy softmax casts them to and its fp32 output).
    const around = c * tokens + attention * (tokens + queries + 2 * keys);
    this.noteLive(around + 2 * probabilities, 2 * around + 10 * probabilities);
    this.gradientPair = Math.max(this.gradientPair, 2 * probabilities);
    this.produce({ kind: 'image', c: out, t, h: qh, w: qw });
    // The block's output, the next block's norm1 input, is kept from here.
    this.endBlock();
    return this;
  }

  /**
   * A Swin V2 block (torchvision's SwinTransformerBlockV2): V1's layers and saved tensors, with norms after attention
   * and MLP (the same count) and cosine attention: the normalised q and k (2C, where V1 keeps one scaled q) and the
   * raw scores, kept by the learned logit scale's product (P). Under autocast F.normalize's vector norm computes
   * in fp32 without a copy of its input (autocast gives it dtype=float32), and the matmul keeps half copies of the
   * normalised q and k. Parameters: V1's without the bias table, plus a logit scale per head and the position-bias
   * MLP (2 -> 512 -> heads). Measured (swin_v2_t, batch 32 at 256, AdamW): estimate -4.0% in fp32, -4.3% under bf16
   * autocast (test/gpu/estimator/results/cat7.json).
   */
  swinV2Block(heads: number, window: number): this {
    const s = this.shape;
    if (s.kind !== 'image') return this;
    const c = s.c;
    const tokens = s.h * s.w;
    const win = Math.min(window, s.h, s.w);
    this.beginBlock();
    this.parameters += 12 * c * c + 13 * c + heads + 3 * 512 + 512 * heads;
    this.castParameters += 12 * c * c + 512 * heads + 2 * 512;
    this.currentSaved = true;
    const probabilities = heads * win * win;
    this.saved += (18 * c + 2 * probabilities) * tokens;
    this.fp32UnderAutocast += (2 * c + 2 * probabilities) * tokens;
    this.largest = Math.max(this.largest, 4 * c * tokens);
    this.noteLive(6 * c * tokens);
    this.gradientPair = Math.max(this.gradientPair, 5 * c * tokens);
    this.produce(s);
    this.currentSaved = true;
    this.endBlock();
    return this;
  }

  /**
   * ConvNeXt V2's global response normalisation over the current map: the L2 norm over space of each channel,
   * divided by its mean over channels, scales the input (an affine weight and bias, 2C). Kept: the input (the norm
   * and the product read it) and the product (the affine's addcmul); the output is the next layer's input. Under
   * autocast the vector norm runs with dtype=float32 (no copy of its input), and the product with its fp32 scale is
   * fp32. Measured (convnextv2_tiny, batch 32 at 224, AdamW): estimate 0.0% in fp32, -2.7% under bf16 autocast
   * (test/gpu/estimator/results/cat7.json).
   */
  globalResponseNorm(): this {
    const elements = this.elements;
    this.parameters += 2 * this.channels;
    this.keepCurrent();
    this.saved += elements;
    this.fp32UnderAutocast += elements;
    this.produce(this.shape);
    return this;
  }

  /**
   * A SegFormer (Mix Transformer) block on an image-shaped map of C channels and N = h x w tokens, read from
   * transformers' modelling_segformer: LayerNorm, efficient self-attention whose keys and values come from a map
   * reduced by a stride-R convolution and a LayerNorm (M = N / R^2 tokens; none where R is 1), eager attention (q @
   * k^T, softmax, @ v), an output projection, LayerNorm, and the Mix-FFN (a linear to mC, a 3x3 depthwise
   * convolution, GELU, a linear back). Kept per token: the two norms' inputs and outputs, q, the attention's output,
   * k and v (M/N of a token each where reduced, with the reduction's norm input and output), the softmax's
   * probabilities (heads x M) and three mC-wide tensors. Under autocast the residual stream and the softmax are
   * fp32, every linear reading a norm's fp32 output keeps a half copy of its own, and attn @ v a half copy of the
   * probabilities. `fusedAttention` (timm's PVT v2, F.scaled_dot_product_attention): no probabilities are kept, only
   * the kernel's per-row statistics (one fp32 number per query and head).
   */
  segformerBlock(heads: number, reduction: number, mlpRatio: number, fusedAttention = false, mixFfn = true): this {
    const s = this.shape;
    if (s.kind !== 'image') return this;
    const c = s.c;
    const tokens = s.h * s.w;
    const reduced = reduction > 1 ? Math.max(1, Math.floor(s.h / reduction)) * Math.max(1, Math.floor(s.w / reduction)) : tokens;
    const share = reduced / tokens;
    const hidden = mlpRatio * c;
    this.beginBlock();
    const reductionWeights = reduction > 1 ? c * c * reduction * reduction : 0;
    const linearWeights = 4 * c * c + 2 * c * hidden;
    // `mixFfn` false (Twins' global sub-sampled attention): a plain MLP, no depthwise convolution between its linears.
    const depthwise = mixFfn ? 10 * hidden : 0;
    this.parameters += linearWeights + 4 * c + hidden + c + 4 * c + (reduction > 1 ? reductionWeights + 3 * c : 0) + depthwise;
    this.castParameters += linearWeights + reductionWeights + (mixFfn ? 9 * hidden : 0);
    // The first norm keeps the block's input, the fp32 residual stream under autocast.
    if (!this.currentSaved) this.fp32UnderAutocast += this.elements;
    this.keepCurrent();
    const probabilities = fusedAttention ? heads / 2 : heads * reduced;
    const keysValues = reduction > 1 ? 4 * c * share : 2 * c;
    this.saved += (5 * c + keysValues + (mixFfn ? 3 : 2) * hidden + probabilities) * tokens;
    this.fp32UnderAutocast += (c + (reduction > 1 ? c + 2 * c * share : 2 * c) + 2 * probabilities) * tokens;
    this.largest = Math.max(this.largest, hidden * tokens, probabilities * tokens);
    this.noteLive(Math.max((2 * c + 2 * hidden) * tokens, (c + 2 * probabilities) * tokens));
    this.gradientPair = Math.max(this.gradientPair, 2 * hidden * tokens);
    // The block's output: the next block's (or the stage norm's) input, kept there.
    this.produce(s);
    this.blockSaved.push(this.saved - this.blockStartSaved);
    this.blockInputLive = 0;
    return this;
  }

  /**
   * The current tensor is a Swin block's output, left as counted because the next Swin block counts its input (its
   * norm1's); read by a layer of another kind (Twins' position generator, a sub-sampled attention block), that
   * layer keeps it and counts it.
   */
  readByOtherLayer(): this {
    this.currentSaved = false;
    return this;
  }

  /** Under autocast the current tensor is fp32 and its two readers each cast a half copy of it (SegFormer's stage outputs). */
  keptInFp32(): this {
    this.fp32UnderAutocast += this.elements;
    return this;
  }

  /**
   * Runs `ops` on weights already counted (RAFT's feature encoder on the second image, its update block again at
   * every iteration): their tensors, not their parameters.
   */
  reusingWeights(ops: () => void): this {
    const [parameters, normParameters, castParameters] = [this.parameters, this.normParameters, this.castParameters];
    ops();
    [this.parameters, this.normParameters, this.castParameters] = [parameters, normParameters, castParameters];
    return this;
  }

  /** Parameters of layers the walk does not follow (SegFormer's decode-head linears, one per stage). */
  addParameters(count: number, castable: number): this {
    this.parameters += count;
    this.castParameters += castable;
    return this;
  }

  /**
   * Swin's patch merging: 2x2 neighbours concatenated (4C), a LayerNorm (keeps its input) and a linear to 2C (keeps
   * the norm's output). `reduceFirst` (Swin V2): the linear first (keeps the 4C input), then a LayerNorm over 2C.
   */
  patchMerging(reduceFirst = false): this {
    const s = this.shape;
    if (s.kind !== 'image') return this;
    const c = s.c;
    const tokens = Math.ceil(s.h / 2) * Math.ceil(s.w / 2) * (s.t ?? 1);
    this.parameters += (reduceFirst ? 4 * c : 8 * c) + 8 * c * c;
    this.castParameters += 8 * c * c;
    this.saved += (reduceFirst ? 6 * c : 8 * c) * tokens;
    this.fp32UnderAutocast += (reduceFirst ? 2 * c : 4 * c) * tokens;
    this.produce({ kind: 'image', c: 2 * c, h: Math.ceil(s.h / 2), w: Math.ceil(s.w / 2), ...(s.t !== undefined ? { t: s.t } : {}) });
    this.currentSaved = true;
    return this;
  }

  /** nn.MultiheadAttention with need_weights (its default): the averaged and per-head weights are kept. */
  multiheadAttention(embed: number, heads: number, needWeights = true, dropout = 0): this {
    const s = this.shape;
    const seq = s.kind === 'tokens' ? s.seq : 1;
    this.parameters += 4 * embed * embed + 4 * embed;
    this.castParameters += 4 * embed * embed;
    this.keepCurrent();
    this.saved += seq * embed * 4; // q, k, v, attention output
    if (needWeights) this.saved += heads * seq * seq * (1 + (dropout > 0 ? 1.25 : 0)) + seq * seq;
    this.produce({ kind: 'tokens', seq, f: embed });
    return this;
  }

  /** nn.TransformerEncoderLayer / DecoderLayer (post-norm by default; SDPA attention keeps no per-head scores). */
  transformerLayer(dModel: number, feedForward: number, dropout: number, decoder: boolean): this {
    const s = this.shape;
    const seq = s.kind === 'tokens' ? s.seq : 1;
    const attentionBlocks = decoder ? 2 : 1;
    this.parameters += attentionBlocks * (4 * dModel * dModel + 4 * dModel) + 2 * dModel * feedForward + feedForward + dModel +
      (attentionBlocks + 1) * 2 * dModel;
    this.castParameters += attentionBlocks * 4 * dModel * dModel + 2 * dModel * feedForward;
    this.keepCurrent();
    const masks = dropout > 0 ? (attentionBlocks + 2) * dModel / 4 + feedForward / 4 + feedForward : 0;
    this.saved += seq * (attentionBlocks * (4 * dModel + 2 * dModel) + 2 * feedForward + masks + 2 * dModel);
    this.produce({ kind: 'tokens', seq, f: dModel });
    return this;
  }

  build(scalesWithInput: boolean): LayerNetSpec {
    const outputElements = this.elements;
    this.closePart();
    // The running totals where the last part ends, before the loss's read of the output is counted.
    const { largest: _largest, ownLive: _live, ...atEnd } = this.snapshot(END_PART);
    void _largest;
    void _live;
    // Nothing runs from the end on (finishedParts counts each part's convolutions from it on).
    const partsEnd: LayerPart = { ...atEnd, convolutionsFrom: 0 };
    // A tensor the loss makes from the returned output (see returnsHere) is its own: forward keeps nothing of it.
    if (this.returnedOutput === undefined) this.keepCurrent();
    return {
      kind: 'layers',
      parameters: this.parameters,
      savedElementsPerSample: this.saved,
      fixedBytesPerSample: this.fixedBytes,
      largestElementsPerSample: this.largest,
      ...(this.backwardWorkspace > 0 ? { backwardPeakElementsPerSample: this.backwardWorkspace } : {}),
      ...(this.gradientPair > 0 ? { gradientPairElementsPerSample: this.gradientPair } : {}),
      ...(this.fp32UnderAutocast > 0 ? { autocastSavedBytesPerSample: 2 * this.saved + 2 * this.fp32UnderAutocast } : {}),
      inferenceLiveElementsPerSample: this.liveNoGrad,
      ...(this.liveAutocastBytes > 2 * this.live ? { autocastInferenceLiveBytesPerSample: this.liveAutocastBytes } : {}),
      outputElementsPerSample: outputElements + this.extraOutputs,
      ...(this.returnedOutput !== undefined ? { returnedOutputElementsPerSample: this.returnedOutput + this.extraOutputs } : {}),
      hasConvolution: this.convolutions > 0,
      ...(this.mapGrowth > 1 ? { mapGrowth: this.mapGrowth } : {}),
      blockSavedElements: this.blockSaved,
      blockInputElements: this.blockInputs,
      castParameters: this.castParameters,
      ...(Object.keys(this.namedOutputs).length > 0 ? { namedOutputElementsPerSample: { ...this.namedOutputs } } : {}),
      input: this.inputSpec,
      scalesWithInput,
      ...(this.parts.length > 0 || this.headPart ? { parts: this.finishedParts(), partsEnd } : {}),
    };
  }
}

/** `n` rounded up to a multiple of `step` (a kernel's padded dimension). */
function roundUpTo(n: number, step: number): number {
  return Math.ceil(n / step) * step;
}

/**
 * What a Swin block (torchvision's shifted_window_attention, timm's WindowAttention) holds at once per token in a
 * no-grad forward, C channels, P attention probabilities: at the softmax, the block's input, norm1's output, its
 * window-partitioned copy, qkv (3C), the scaled q and the scores, with softmax's output (fp32 under autocast, which
 * first makes an fp32 copy of the half scores); in the MLP, the input, norm2's output, fc1's and GELU's (4C each).
 * In elements in fp32; in bytes under autocast, where the residual stream and the norms are fp32 and the rest half.
 */
function swinBlockLive(c: number, p: number, precision: 'fp32' | 'autocast'): number {
  if (precision === 'fp32') return Math.max(7 * c + 2 * p, 10 * c);
  const attention = 4 * 3 * c + 2 * (3 * c + c) + 2 * p + 4 * 2 * p;
  const mlp = 4 * 2 * c + 2 * (4 * c + 4 * c);
  return Math.max(attention, mlp);
}

/** The names the classifier head (the net's last linear) and what comes before any named part go by among a net's parts. */
export const HEAD_PART = '(head)';
export const BODY_PART = '(body)';
/** The end of the net (LayerNetSpec.partsEnd). */
export const END_PART = '(end)';
/**
 * A boundary inside a net that is no submodule of the library model: the pooling its forward() does functionally
 * (torchvision's MobileNetV2 and DenseNet pool after `features` with no module of their own).
 */
export const POOL_PART = '(pool)';

/**
 * The net with its parts before `trainableFrom` frozen (requires_grad off) and fed by the data, which has no
 * history: they record nothing for backward, so what forward keeps starts with the first trainable part's input,
 * and while the frozen parts run their tensors are alive as in a no-grad forward. Layers frozen after a trainable
 * one still record (their input has history). `trainableFrom` at or past the last part: nothing is trained.
 */
export function withFrozenPrefix(spec: LayerNetSpec, trainableFrom: number): LayerNetSpec {
  const parts = spec.parts ?? [];
  const part = parts[trainableFrom];
  // Nothing with parameters comes before it (the unnamed start of a net that names its parts): nothing is frozen.
  if (trainableFrom <= 0 || parts.length === 0 || part?.parametersBefore === 0) return spec;
  // What compile recomputes is counted over the whole net: past a frozen prefix, keep it all (an overestimate).
  const { backwardPeakElementsPerSample: _peak, backwardPoints: _points, gradientPairElementsPerSample: _pair, createGraphElementsPerSample: _graph,
    compileRecomputed: _recomputed, ...rest } = spec;
  void _recomputed;
  void _peak;
  void _points;
  void _pair;
  void _graph;
  const cut = frozenPrefixCut(part, { saved: spec.savedElementsPerSample, fixedBytes: spec.fixedBytesPerSample, castParameters: spec.castParameters,
    parameters: spec.parameters, live: spec.inferenceLiveElementsPerSample });
  const fp32Total = spec.autocastSavedBytesPerSample !== undefined ? spec.autocastSavedBytesPerSample / 2 - spec.savedElementsPerSample : 0;
  const fp32 = part ? fp32Total - part.fp32UnderAutocastBefore : 0;
  return {
    ...rest,
    savedElementsPerSample: cut.saved,
    fixedBytesPerSample: cut.fixedBytes,
    ...(spec.autocastSavedBytesPerSample !== undefined ? { autocastSavedBytesPerSample: 2 * cut.saved + 2 * fp32 } : {}),
    largestElementsPerSample: cut.largest,
    castParameters: cut.castParameters,
    hasConvolution: part ? part.convolutionsFrom > 0 : false,
    blockSavedElements: [],
    blockInputElements: [],
    frozenPrefix: cut.frozenPrefix,
  };
}

/**
 * What a net keeps from `part` on where the parts before it are frozen and fed by the data, from its running totals
 * where it ends (`end`): what forward keeps starts with the part's input, and the frozen prefix is alive as in a
 * no-grad forward while it runs. No part: the whole net is frozen, and keeps nothing.
 */
export function frozenPrefixCut(part: LayerPart | undefined, end: { saved: number; fixedBytes: number; castParameters: number; parameters: number; live: number }):
  { saved: number; fixedBytes: number; castParameters: number; largest: number; frozenPrefix: NonNullable<LayerNetSpec['frozenPrefix']> } {
  if (!part) return { saved: 0, fixedBytes: 0, castParameters: 0, largest: 0, frozenPrefix: { liveElementsPerSample: end.live, parameters: end.parameters } };
  return {
    saved: end.saved - part.savedBefore + (part.inputCounted ? part.inputElements : 0),
    fixedBytes: end.fixedBytes - part.fixedBytesBefore,
    // Autocast caches half copies only of weights that require grad.
    castParameters: end.castParameters - part.castParametersBefore,
    largest: Math.max(part.largestFrom, part.inputElements),
    frozenPrefix: { liveElementsPerSample: part.liveBefore, parameters: part.parametersBefore },
  };
}

/**
 * The net cut where part `end` starts: a library model of which the script keeps only its first parts
 * (`vgg19(weights=None).features`). What forward keeps, makes and holds comes from the running totals there; the
 * tensor that part would read is the output.
 */
export function withPartsBefore(spec: LayerNetSpec, end: number): LayerNetSpec {
  const parts = spec.parts ?? [];
  const at = parts[end];
  if (!at || end <= 0) return spec;
  // Figures of the whole net's backward and outputs no longer hold: left to the totals below.
  const { backwardPeakElementsPerSample: _peak, backwardPoints: _points, gradientPairElementsPerSample: _pair, createGraphElementsPerSample: _graph,
    compileRecomputed: _recomputed, namedOutputElementsPerSample: _named, returnedOutputElementsPerSample: _returned,
    autocastInferenceLiveBytesPerSample: _live, outputPartsPerSample: _outputs, ...rest } = spec;
  void [_peak, _points, _pair, _graph, _recomputed, _named, _returned, _live, _outputs];
  // The output is kept for the loss that reads it, unless a layer before already kept it.
  const saved = at.savedBefore + (at.inputCounted ? 0 : at.inputElements);
  return {
    ...rest,
    parameters: at.parametersBefore,
    castParameters: at.castParametersBefore,
    savedElementsPerSample: saved,
    fixedBytesPerSample: at.fixedBytesBefore,
    ...(spec.autocastSavedBytesPerSample !== undefined ? { autocastSavedBytesPerSample: 2 * saved + 2 * at.fp32UnderAutocastBefore } : {}),
    inferenceLiveElementsPerSample: at.liveBefore,
    outputElementsPerSample: at.inputElements,
    hasConvolution: parts[0]!.convolutionsFrom > at.convolutionsFrom,
    blockSavedElements: [],
    blockInputElements: [],
    parts: parts.slice(0, end),
    partsEnd: at,
  };
}
