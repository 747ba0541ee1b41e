// What a module the script builds keeps for backward, found by running its forward() in the program model with
// tensors that carry shapes (batch 1). Each operation keeps what PyTorch's autograd formula for it keeps: a linear
// or convolution its input, BatchNorm/LayerNorm their input, ReLU/sigmoid/tanh/softmax their output, GELU/SiLU
// their input, max-pooling its input and int64 indices, dropout a bool mask, a product of two tensors both
// operands, attention q/k/v and its output; views, concatenation, additions and pooling by averaging keep nothing.
// A tensor kept by several operations is counted once.
import type { CallResultValue, LayerValue, ObjectValue, Scope, TensorTracer, TensorValue, Value } from '../engine/program/values';
import { runLibraryPart, type LibraryBackbone, type LibraryPart } from './library-models';
import { drawnRange, madeTensorShape, makesIntegers, numberOf, UNKNOWN } from '../engine/program/values';
import { recurrentBackwardWorkspace, recurrentReserve } from './layers';
import { featurePyramidLayers } from './feature-pyramid';
import { isLazyLayer, materializeLazy } from './lazy-layers';
import { gradientTensorsSaved } from './derivative-graphs';

/**
 * torch functions that are their tensor method with the tensor first (`torch.topk(x, k)` is `x.topk(k)`): traced by
 * the method's case, so that each op's shape and what it keeps are written once.
 */
const SAME_AS_METHOD: ReadonlySet<string> = new Set(['gather', 'take_along_dim', 'index_select', 'argsort', 'sort',
  'topk', 'log', 'log1p', 'log2', 'log10', 'abs', 'square', 'sqrt', 'rsqrt', 'reciprocal', 'expm1', 'neg', 'triu',
  'tril', 'floor', 'ceil', 'round', 'trunc', 'frac', 'sign', 'prod', 'index_add', 'index_copy', 'index_fill',
  'index_put', 'scatter', 'scatter_add', 'scatter_reduce', 'pow', 'repeat_interleave']);

/** Bytes of an int64 element: indices, token ids, what `.long()` makes. */
const INT64_BYTES = 8;
/** Bytes of an element of the integer dtypes a conversion names (`.long()`, `.to(torch.int32)`, `.bool()`). */
const INTEGER_DTYPE_BYTES: Readonly<Record<string, number>> = {
  long: 8, int64: 8, int: 4, int32: 4, short: 2, int16: 2, int8: 1, uint8: 1, bool: 1,
};

/** Elements of a shape; a size no one could compute (NaN, infinite) counts as 1, never as a NaN total. */
const numel = (shape: readonly number[]): number => shape.reduce((a, b) => a * (Number.isFinite(b) ? b : 1), 1);

/** Whether a tensor's dimensions of more than one element lie in memory in their own order (see TensorValue.layout). */
function isContiguous(x: TensorValue): boolean {
  const layout = x.layout;
  if (!layout) return true;
  if (layout.length !== x.shape.length) return false;
  const places = layout.filter((_place, i) => x.shape[i] !== 1);
  return places.every((place, i) => i === 0 || place > places[i - 1]!);
}

/** A view of `x` with its dimensions in another order (dimension i of the view is `order[i]` of x). */
function reordered(x: TensorValue, order: readonly number[]): TensorValue {
  const shape = order.map((d) => x.shape[d]!);
  if (x.layout && x.layout.length !== x.shape.length) return { ...x, shape };
  const places = x.layout ?? x.shape.map((_size, i) => i);
  const view: TensorValue = { kind: 'tensor', id: x.id, shape, integer: x.integer, layout: order.map((d) => places[d]!) };
  if (isContiguous(view)) delete view.layout;
  return view;
}

/** A pooling window per spatial dimension: `MaxPool2d((2, 1))` pools the first dimension only. */
interface PoolWindow { kernel: number[]; stride: number[]; padding: number[] }

/** A pooling layer's or function's window from its arguments: one number for every dimension, or one per dimension. */
function poolWindow(spatial: number, kernel: Value | undefined, stride: Value | undefined, padding: Value | undefined): PoolWindow {
  const each = (value: Value | undefined, fallback: number[]): number[] => {
    if (value?.kind === 'list' && value.items.length === spatial) return value.items.map((item, k) => numberOf(item) ?? fallback[k]!);
    const single = value?.kind === 'list' ? numberOf(value.items[0]) : value ? numberOf(value) : undefined;
    return single === undefined ? fallback : new Array<number>(spatial).fill(single);
  };
  const kernels = each(kernel, new Array<number>(spatial).fill(2));
  // A stride of None (the default) is the kernel's.
  return { kernel: kernels, stride: stride?.kind === 'none' ? kernels : each(stride, kernels), padding: each(padding, new Array<number>(spatial).fill(0)) };
}

/** The spatial dimensions a layer or function of PyTorch's 1d/2d/3d families works on (`MaxPool3d`, `avg_pool1d`): 3, 2 or 1. */
const spatialDims = (name: string): number => Number(/([123])d$/.exec(name)?.[1] ?? 2);
/** Functional forms of layers whose backward makes an input-sized gradient from an output-sized one. */
/**
 * int64 buffers a sort-based index_put_ (an indexed table's backward) holds per index element: the linearized index
 * and its partial sums, the sorted keys and positions, the radix sort's double buffers. Measured on the H200 with a
 * width-2 table looked up by two index tensors: 7.6-8.0 beside the lookup's gradient
 * (test/gpu/estimator/results/probe_ops10.json).
 */
const SORTED_INDEX_BUFFERS = 8;
/** A sparse matrix times a dense one: `torch.sparse.mm(adjacency, features)`, `torch.spmm`. */
const SPARSE_PRODUCT = /^torch\.(sparse\.mm|spmm)$/;
/** torchvision's deformable convolution (DCNv1/DCNv2), a function of its own (`from torchvision.ops import deform_conv2d`). */
const DEFORM_CONV = /^torchvision\.ops\.(?:deform_conv\.)?deform_conv2d$/;
/** torchvision's RoIAlign as a function (`from torchvision.ops import roi_align`). */
const ROI_ALIGN = /^torchvision\.ops\.(?:roi_align\.)?roi_align$/;
/** One-dimensional discrete Fourier transforms (`torch.fft.rfft(u, n=2 * L)`, an FFT long convolution). */
const FOURIER = /^torch\.fft\.(fft|ifft|rfft|irfft)$/;
const FUNCTIONAL_LAYER = /^torch\.(nn\.functional\.)?(relu|relu6|hardtanh|leaky_relu|gelu|silu|elu|mish|hardswish|glu|conv[123]d|conv_transpose[123]d|max_pool[123]d|avg_pool[123]d)$/;

/**
 * Operations whose backward, run with create_graph=True (a meta-learning inner step), keeps the gradient of their
 * output for the later backward through it: their derivative depends on tensors that require grad (a weight, the
 * input's statistics, a smooth activation's output), so double backward reads that gradient again. Piecewise-linear
 * ones (ReLU, max-pooling, dropout, pooling by averages, views) apply a fixed mask or index and keep nothing more.
 */
const GRADIENT_KEEPING_LAYER = /^(Linear|Bilinear|Conv[123]d|ConvTranspose[123]d|BatchNorm[123]d|LayerNorm|GroupNorm|InstanceNorm[123]d|RMSNorm|Tanh|Sigmoid|GELU|SiLU|Mish|ELU|SELU|CELU|Softplus|LogSigmoid|Hardswish|Softmax|LogSoftmax)$/;
const GRADIENT_KEEPING_FUNCTION = /^torch\.(nn\.functional\.)?(linear|bilinear|conv[123]d|conv_transpose[123]d|batch_norm|layer_norm|group_norm|instance_norm|rms_norm|tanh|sigmoid|gelu|silu|mish|elu|selu|celu|softplus|logsigmoid|hardswish|softmax|log_softmax|einsum)$/;
const GRADIENT_KEEPING_METHOD = /^(tanh|sigmoid|softmax|log_softmax)$/;

/**
 * Whether a norm layer has a learnable affine (a weight of its own): LayerNorm's and RMSNorm's elementwise_affine and
 * GroupNorm's and BatchNorm's affine default to on, InstanceNorm's to off.
 */
export function normAffine(layer: LayerValue): boolean {
  const flag = (index: number, name: string, fallback: boolean): boolean => {
    const value = layer.kwargs.get(name) ?? layer.args[index];
    return value?.kind === 'bool' ? value.value : fallback;
  };
  if (layer.type === 'LayerNorm' || layer.type === 'RMSNorm') return flag(2, 'elementwise_affine', true);
  if (layer.type === 'GroupNorm') return flag(3, 'affine', true);
  if (/^BatchNorm[123]d$/.test(layer.type)) return flag(3, 'affine', true);
  if (/^InstanceNorm[123]d$/.test(layer.type)) return flag(3, 'affine', false);
  return false;
}

/** The position of the weight among the arguments of torch.nn.functional's norms. */
const FUNCTIONAL_NORM_WEIGHT: Record<string, number> = { layer_norm: 2, group_norm: 2, batch_norm: 3, rms_norm: 2 };

function tensorsIn(value: Value | undefined): TensorValue[] {
  if (!value) return [];
  if (value.kind === 'tensor') return [value];
  if (value.kind === 'list') return value.items.flatMap(tensorsIn);
  if (value.kind === 'dict') return [...value.entries.values()].flatMap(tensorsIn);
  return [];
}

/** The numbers of a list or of the positional arguments (`view(1, -1)` and `view((1, -1))` alike). */
function dimsOf(args: Value[]): Array<number | undefined> {
  const flat = args.length === 1 && args[0]!.kind === 'list' ? args[0]!.items : args;
  return flat.map(numberOf);
}

/**
 * Whether a sequence layer sees one time step over a batch of many, where the trace runs one sample: the tokens
 * were laid out batch-first for a layer that reads (seq, batch, features), or the other way round.
 */
function collapsedSequence(shape: readonly number[], batchFirst: boolean): boolean {
  if (shape.length !== 3) return false;
  const [time, batch] = batchFirst ? [shape[1]!, shape[0]!] : [shape[0]!, shape[1]!];
  return time === 1 && batch > 1;
}

/** The library models a traced forward may call: whole (a backbone) or in parts (see library-models). */
export interface TracedLibraries {
  backbone: (model: CallResultValue) => LibraryBackbone | undefined;
  /** A part of a library model by its dotted path (`''`: a features_only model's feature extractor), and whether it trains. */
  part: (model: CallResultValue, path: string) => { part: LibraryPart; trainable: boolean } | undefined;
}

export class ForwardTrace implements TensorTracer {
  private nextId = 1;
  /**
   * The samples the step's tensors hold: one, unless the trace runs for a batch (see LayerNetSpec.batchDependent).
   * What a layer's formula counts for one sample (a library part's saved tensors, cuDNN's reserve, attention's
   * projections) is counted that many times.
   */
  samples = 1;
  /** Elements kept for backward, by tensor (each counted once). */
  private readonly saved = new Map<number, number>();
  /** Bytes kept that keep their dtype under autocast: dropout masks, max-pool indices. */
  fixedBytes = 0;
  /** fixedBytes when the backward peak's layer ran: what later layers keep at fixed size is freed by then. */
  fixedBytesAtBackwardPeak = 0;
  /** The sparse gradients of tables built with sparse=True: rows looked up (an int64 index each) and their values. */
  readonly sparseGradient = { rows: 0, values: 0 };
  largest = 0;
  convolutions = 0;
  /**
   * Elements of the weights weight_norm / spectral_norm made at the calls that record (see keepReparametrizedWeight):
   * kept by forward whatever its batch, so counted apart from what each sample keeps.
   */
  reparametrizedWeights = 0;
  /** What the step's own code keeps of what forward returned (see step-returned-outputs.ts). */
  stepKeptElements = 0;
  /** Of stepKeptElements, those kept in fp32 whatever autocast makes (a loss over `logits.float()`). */
  stepKeptFp32Elements = 0;
  /** The gradients that loss's backward makes at once, over what it kept (see step-returned-outputs.ts). */
  stepLossGradientElements = 0;
  liveNoGrad = 0;
  /**
   * The tensors alive together at each point of a no-grad forward, for their bytes under autocast: by id (whether
   * autocast leaves one fp32 is known only once its op has run) or with their precision given.
   */
  private readonly liveSets: Array<Array<{ id?: number; elements: number; integer?: boolean; fp32?: boolean }>> = [];
  /** The scopes of forward's frames, outermost first (see TensorTracer.watchFrames). */
  private frames: readonly Scope[] = [];
  /**
   * What each op of forward held beside what was kept for backward by then: the saved entries and fixed bytes at
   * that point (a mark to subtract what later ops keep), the next tensor id (tensors made after it were not alive),
   * and the tensors alive and not kept (the locals of the running frames, the op's operands and its output) as float
   * elements (those fp32 under autocast among them) and bytes of integers (see forwardLiveExcess).
   */
  private readonly forwardPoints: Array<{ savedEntries: number; fixedBytes: number; madeBefore: number; floats: number; fullPrecisionFloats: number; integerBytes: number }> = [];
  /** Tensors whose storage holds integers, by id, with the bytes of an element (int64's 8, `.int()`'s 4, bool's 1). */
  private readonly integerStorage = new Map<number, number>();
  /** int64 index tensors kept for backward in fixedBytes (an indexed table's), by id: alive as kept, not as locals. */
  private readonly keptIntegers = new Set<number>();
  /** A transformer stack's input, held by its caller while the stack's later layers run (see transformerLayerLive). */
  private stackInput: TensorValue | undefined;
  /**
   * Frozen library parts fed by tensors without history run as a no-grad forward: the most elements alive at once
   * while one runs (with what forward kept before it), and their parameters (see LayerNetSpec.frozenPrefix).
   */
  frozenPartsLive = 0;
  frozenPartsParameters = 0;
  /** Layers given a tensor whose shape does not fit them: the input shape the trace started from is wrong. */
  mismatches = 0;
  /** Operations on tensors the trace does not model (their outputs keep the input's shape). */
  readonly unmodelled = new Set<string>();
  /** Saved elements and input elements of each block (what checkpointing would cut on). */
  readonly blockSaved: number[] = [];
  readonly blockInputs: number[] = [];
  /** Whether each block's input stays fp32 under autocast (a residual stream fed by an embedding's fp32 output). */
  readonly blockInputFullPrecision: boolean[] = [];
  /** What forward kept outside the blocks before each block began (alive while that block is recomputed). */
  readonly blockOutsideBefore: number[] = [];
  /**
   * The most each block holds at once in its own backward, as elements and as bytes under autocast: what it kept
   * before a contraction or running sum (einsum, cumsum), plus that op's gradients and temporaries (see
   * blockGradients). Checkpointed, a recomputed block holds this beside the other blocks' inputs. A layer's gradient
   * pair is not recorded here: the checkpointing formula adds the largest one to the whole block's saved tensors.
   */
  readonly blockBackwardPeak: number[] = [];
  readonly blockBackwardPeakAutocastBytes: number[] = [];
  /** The blocks running now: what was kept when each began, and its backward's peak so far. */
  private readonly blockPeakFrames: Array<{ savedElements: number; savedBytes: number; elements: number; bytes: number }> = [];
  /** Elements of each tensor's storage: a view (a slice, `qkv[0]`) kept for backward keeps its whole base alive. */
  private readonly storage = new Map<number, number>();
  /** Tensors kept while a block runs (see keep()). */
  private readonly savedInBlock = new Set<number>();
  /** Elements of block outputs that layers outside the blocks keep too. */
  blockOutputsKeptOutside = 0;
  private readonly openBlocks = new Map<ObjectValue | LayerValue, number>();
  private readonly excluded = new Set<number>();
  /**
   * Tensors that stay fp32 under autocast: the fp32 input, what ops on autocast's fp32 list make (layer_norm,
   * group_norm, softmax, log_softmax, exp) and what element-wise ops make from an fp32 operand. Linear,
   * convolution, matmul and attention run in half precision.
   */
  private readonly fullPrecision = new Set<number>();
  /**
   * complex64 tensors (what torch.fft makes): 8 bytes an element, counted as two fp32 elements of storage (see
   * markComplex); element-wise arithmetic with one stays complex.
   */
  private readonly complexTensors = new Set<number>();
  /** fp32 tensors kept only as the half copy autocast makes for a linear, convolution or matmul (not themselves). */
  private readonly keptAsCastCopy = new Set<number>();
  /** Elements of those half copies: one per call (q, k and v projections of one input each make their own). */
  private castCopyElements = 0;
  /** Elements of the fp32 copies that ops on autocast's fp32 list (layer_norm, group_norm) make of a half input and keep. */
  private upcastCopyElements = 0;
  /**
   * fp32 copies the script makes itself (`logits.float()` of a half tensor), each with the tensor it copies: without
   * autocast they are that tensor (counted once), under autocast a copy of their own at 4 bytes.
   */
  private readonly explicitUpcast = new Map<number, number>();
  /** Tensors the script cast to fp32 itself (`.float()`, `.to(torch.float32)`), and views of them. */
  private readonly castToFp32 = new Set<number>();
  /**
   * What cross_entropy was given: an fp32 tensor under autocast (`autocast`), one the script cast to fp32 itself
   * (`explicit`); the loss then keeps and makes in backward what it does in fp32.
   */
  lossInputFp32 = { autocast: false, explicit: false };
  /** Whether forward itself computes a cross-entropy loss (a compiled forward then fuses the loss with its backward). */
  lossInForward = false;
  /** cross_entropy calls traced, the step's loss included (keptApart leaves this count as it is). */
  crossEntropyCalls = 0;
  /**
   * The step's own loss over the one tensor forward returns was traced without a cross-entropy (a hand-written
   * transducer or Dice loss alone): what it keeps replaces the cross-entropy terms the model counts by default.
   */
  stepLossInPlaceOfOutputLoss = false;
  /**
   * Of what that loss keeps beside a cross-entropy (a Dice term's softmax), the tensors with history: at the start of
   * backward each has its gradient and its own op's input gradient at once, beside the cross-entropy's (elements,
   * and of them those in fp32 under autocast).
   */
  stepLossExtraGradients = { elements: 0, fp32: 0 };
  /**
   * Elements of the largest tensor a cross-entropy inside forward reads (the logits): what the loss keeps and makes
   * in backward follows it, whatever forward returns (`return lm_loss, aux_loss` hands back only scalars).
   */
  lossInputElements = 0;

  /**
   * Whether the trace runs the script's own function that builds the step's data before the loop (a graph's edge
   * list, see module-tree's definedInput) rather than forward: the integers it draws (`torch.randint`) are tensors
   * that carry their draw, which later decides how many edges a comparison picks.
   */
  buildsData = false;
  /** Tensors without a batch axis: parameters, and what forward makes of them alone (`-torch.exp(self.A_log)`). */
  private readonly batchless = new Set<number>();
  /** Tensors with no autograd history: the data, constants, and what only frozen layers made from them. */
  private readonly noGrad = new Set<number>();
  /** Boolean masks (a comparison's result, `.bool()`, masks combined by `&`, `|`, `^`): an index by one selects. */
  private readonly masks = new Set<number>();
  /**
   * The share of a mask's elements that are set, where the data fixes it: a comparison with integers drawn uniformly
   * (`etype == t` of `torch.randint(0, T, (E,))` holds for one edge in T). A mask without one may hold every element.
   */
  private readonly maskShares = new Map<number, number>();
  /** Whether the operation being traced records autograd history (and so keeps tensors for backward). */
  private recording = true;
  /**
   * The most elements alive at once in backward, as far as the layer order tells: when a layer's backward runs,
   * what it and the layers before it saved is still alive (later layers' are freed), plus its output's gradient
   * and its input's. A large early tensor (a convolution stem at full resolution) sets it.
   */
  backwardPeak = 0;
  /** Whether backwardPeak is a batched matmul's backward (see batchedProduct): no convolution runs beside it. */
  backwardPeakInBatchedProduct = false;
  /**
   * The most bytes alive at a point of backward under autocast, counted as backwardPeak counts elements at 2 bytes
   * each, plus the bytes over 2 an element of the gradients there that are fp32 (a product with an fp32 softmax's
   * weights makes fp32 gradients though activations are half). See productBackwardPoint.
   */
  private autocastBackwardPeak = 0;
  /**
   * Element-wise products already traced, by each operand with history: what was kept up to each, its gradients, and
   * their autocast surplus (see productBackwardPoint).
   */
  private readonly productsReading = new Map<number, Array<{ saved: number; gradients: number; surplus: number }>>();
  /** The largest gradient pair of one layer (its output's gradient and its input's), alive while its backward runs. */
  gradientPair = 0;
  /**
   * Elements of the output gradients a backward run with create_graph=True keeps for a later backward through it
   * (see GRADIENT_KEEPING_LAYER), per sample: what a second-order inner step keeps beside its forward's tensors.
   */
  gradientKept = 0;
  /** A workspace the layer being traced takes in its backward, beside its gradients (cuDNN's recurrent layers). */
  private pendingBackwardWorkspace = 0;
  /**
   * The lengths of the sequences the step packs, where the data fixes their draw and the lengths tensor given to
   * pack_padded_sequence does not say (a collate function counting each sample's tokens): see drawnLengths.
   */
  private sequenceDraw: { least: number; most: number } | undefined;
  /** Packed sequences' data (and what recurrent layers make of it): the token axis and the length padded to. */
  private readonly packedAxes = new Map<number, { axis: number; padded: number }>();
  /** The lengths pack_padded_sequence was counted at: their draw, the mean tokens a sample holds, and the padded length. */
  packedLengths: { least: number; most: number; mean: number; padded: number } | undefined;

  /**
   * `trainable`: whether a layer has parameters that require grad (not frozen by the script); a frozen layer fed
   * by tensors without history records nothing, so a frozen backbone keeps no activations.
   */
  /**
   * Points of backward, one per layer that records: what is alive per sample when its backward runs (as
   * backwardPeak counts it) and the trainable parameters of the layers before it, whose gradients do not exist yet
   * (the later layers' do): a parameter-heavy net peaks midway, when gradients have replaced half the activations.
   */
  readonly backwardPoints: Array<{ elements: number; parametersBefore: number; compileRecomputed?: number }> = [];
  private trainableSoFar = 0;
  /** Each dropout's output, with the input it scaled (see compileRecomputed). */
  private readonly dropoutInputs = new Map<number, number>();

  /**
   * The module's parameters are stacked by torch.func (`stack_module_state`) and forward runs under vmap
   * (`vmap(functional_call(...))`): functorch's batching rules for batch_norm, group_norm and layer_norm with batched
   * weights normalize without the affine and then multiply by the weight and add the bias as ops of their own
   * (aten/src/ATen/functorch/BatchRulesNorm.cpp), and rms_norm runs as its composite ops, so the multiply keeps the
   * normalized tensor for the weight's gradient: one output-sized tensor more than the fused kernel keeps. Measured
   * on the H200 (test/gpu/estimator/results/probe_vmap10.json, 4 members x 4096 rows x 2048): LayerNorm, GroupNorm
   * and RMSNorm +1.0 such tensor each, LayerNorm with its weights not batched or without affine +0, linear, GELU,
   * dropout and the loss +0; three Linear-LayerNorm-GELU blocks +3.0, as at 16 members.
   */
  stackedParameters = false;

  /** Library models forward called (their parameters count once towards trainableSoFar). */
  private readonly librariesCounted = new Set<CallResultValue>();

  constructor(
    private readonly blocks: ReadonlySet<ObjectValue | LayerValue>,
    private readonly trainable: (layer: LayerValue) => boolean = () => true,
    private readonly parameterCount: (layer: LayerValue) => number = () => 0,
    private readonly libraries: TracedLibraries = { backbone: () => undefined, part: () => undefined },
    /** Elements of the weight weight_norm / spectral_norm make at each call of a layer (0 for a plain one). */
    private readonly weightElements: (layer: LayerValue) => number = () => 0,
  ) {}

  /** Parts of library models already run (their parameters counted once, however often forward calls them). */
  private readonly partsRun = new Set<string>();

  /**
   * A submodule of a library model called in forward (`self.layer3(x)` holding `resnet.layer3`, an nn.Sequential of
   * `resnet.children()`): what the catalog's build of the model keeps in those parts, at the size of the tensor
   * given. A frozen part (requires_grad off) fed by tensors without history records nothing.
   */
  libraryPart(model: CallResultValue, path: string, args: Value[]): Value | undefined {
    const x = tensorsIn(args[0])[0];
    if (!x) return undefined;
    const found = this.libraries.part(model, path);
    const run = found ? runLibraryPart(found.part, x.shape.slice(1)) : undefined;
    if (!found || !run) {
      this.mismatches++;
      return undefined;
    }
    return this.recorded([x], found.trainable, () => this.runPart(found.part, found.trainable, x, run));
  }

  private runPart(part: LibraryPart, trainable: boolean, x: TensorValue, run: NonNullable<ReturnType<typeof runLibraryPart>>): TensorValue {
    const key = `${part.model.line}:${part.model.path}:${part.covered.join(',')}`;
    const firstRun = !this.partsRun.has(key);
    if (firstRun) {
      this.partsRun.add(key);
      if (trainable) this.trainableSoFar += part.parameters;
    }
    // Per sample, times the rows it is given: a pair of images concatenated on the batch axis runs it for both.
    const n = x.shape[0] ?? this.samples;
    this.liveNoGrad = Math.max(this.liveNoGrad, n * run.liveElements);
    if (!this.recording) {
      // Nothing of it is kept, but its layers' tensors are alive while it runs (a BatchNorm's input and output, a
      // residual block's input beside its branch).
      this.frozenPartsLive = Math.max(this.frozenPartsLive, this.savedElements + n * run.liveElements);
      if (firstRun) this.frozenPartsParameters += part.parameters;
    }
    if (run.keepsInput) this.keep(x);
    const before = this.savedElements;
    this.keepBuffer(n * run.savedElements);
    if (this.recording) {
      this.fixedBytes += n * run.fixedBytes;
      this.backwardElements(before + n * (run.savedElements + run.largestElements));
    }
    this.largest = Math.max(this.largest, n * run.largestElements);
    if (run.hasConvolution) this.convolutions++;
    if (run.returnsInput) return x;
    const output = this.precision(this.produce([x.shape[0]!, ...run.outputDims], [x]), true);
    if (run.keepsOutput) this.keep(output);
    return output;
  }

  /**
   * A library CNN called in forward (`self.encoder(images)`, `.forward_features(images)`): what it keeps for backward
   * is its catalog build's at the image's size, and it returns its feature map (stride 32), pooled features, or
   * logits.
   */
  libraryModel(model: CallResultValue, method: string, args: Value[]): Value | undefined {
    const backbone = this.libraries.backbone(model);
    const x = tensorsIn(args[0])[0];
    if (!backbone || !x) return undefined;
    if (backbone.featureParts) return this.featureMaps(model, args);
    // A video model reads clips (N, C, T, H, W), an image model images (N, C, H, W).
    const clip = backbone.buildClip !== undefined;
    if (x.shape.length !== (clip ? 5 : 4) || (clip && method !== 'forward')) {
      this.mismatches++;
      return undefined;
    }
    // A map that is not square (128 mel bins x 1024 frames) runs as the square of the same area: the activations
    // follow the area, and the feature map it returns keeps the input's sides.
    const [h, w] = x.shape.slice(-2) as [number, number];
    const side = Math.max(1, Math.round(Math.sqrt(h * w)));
    const spec = backbone.buildClip ? backbone.buildClip(x.shape[2]!, side) : backbone.build(side);
    return this.recorded([x], true, () => {
      if (!this.librariesCounted.has(model)) {
        this.librariesCounted.add(model);
        this.trainableSoFar += spec.parameters;
      }
      const [before, n] = [this.savedElements, x.shape[0]!];
      this.keepBuffer(n * spec.savedElementsPerSample);
      this.backwardPeak = Math.max(this.backwardPeak, before + n * (spec.backwardPeakElementsPerSample ?? spec.savedElementsPerSample + spec.largestElementsPerSample));
      this.largest = Math.max(this.largest, n * spec.largestElementsPerSample);
      if (spec.hasConvolution) this.convolutions++;
      const [height, width] = [Math.ceil(h / 32), Math.ceil(w / 32)];
      const mapped = method === 'forward_features' || backbone.unpooled;
      const shape = mapped ? [x.shape[0]!, backbone.features, height, width] : [x.shape[0]!, backbone.classes > 0 ? backbone.classes : backbone.features];
      return this.precision(this.produce(shape, [x]), true);
    });
  }

  /** timm's `features_only=True` model called in forward: its feature maps, a list, shallowest first. */
  private featureMaps(model: CallResultValue, args: Value[]): Value | undefined {
    const x = tensorsIn(args[0])[0]!;
    const found = this.libraries.part(model, '');
    const run = found ? runLibraryPart(found.part, x.shape.slice(1)) : undefined;
    if (!found || !run?.featureDims) {
      this.mismatches++;
      return undefined;
    }
    return this.recorded([x], found.trainable, () => {
      const last = this.runPart(found.part, found.trainable, x, run);
      // The earlier maps are tensors the part made (and kept) on its way: the list holds them, not copies.
      const earlier = run.featureDims!.slice(0, -1).map((dims) => this.precision(this.make([x.shape[0]!, ...dims]), true));
      const names = this.libraries.backbone(model)?.featureNames;
      if (names) return { kind: 'dict', entries: new Map(names.map((name, i): [string, Value] => [name, [...earlier, last][i]!])) };
      return { kind: 'list', items: [...earlier, last], tuple: false };
    });
  }

  /** Runs one traced operation, recording only where its own parameters or an input carry autograd history. */
  private recorded<T extends Value | undefined>(inputs: Value[], ownGrad: boolean, run: () => T): T {
    const grad = ownGrad || inputs.flatMap(tensorsIn).some((t) => !this.noGrad.has(t.id));
    const outer = this.recording;
    this.recording = grad;
    try {
      const out = run();
      if (!grad && out) for (const t of tensorsIn(out)) this.noGrad.add(t.id);
      return out;
    } finally {
      this.recording = outer;
    }
  }

  private readonly buffers = new WeakMap<CallResultValue, TensorValue>();

  /** A module's buffer: allocated before forward like the step's inputs, without history. */
  buffer(made: CallResultValue, shape: number[], integer: boolean): TensorValue {
    let tensor = this.buffers.get(made);
    if (!tensor) this.buffers.set(made, (tensor = this.input(shape, integer)));
    return tensor;
  }

  /** The draw of the step's sequence lengths, as the data makes them (`n = random.randint(50, 400)` tokens an item). */
  drawnLengths(draw: { least: number; most: number } | undefined): void {
    this.sequenceDraw = draw;
  }

  /**
   * A tensor the step receives (allocated before forward, so never counted as saved by it); `drawn`: the range its
   * integers are drawn from, where the script fixes it (a lengths vector).
   */
  input(shape: number[], integer: boolean, drawn?: TensorValue['drawn']): TensorValue {
    const made = this.make(shape, integer);
    const tensor = drawn ? { ...made, drawn } : made;
    this.excluded.add(tensor.id);
    this.noGrad.add(tensor.id);
    if (!integer) this.fullPrecision.add(tensor.id);
    return tensor;
  }

  /**
   * What the previous step's forward returned (traced by `from`) and the loop gives back to this one (see
   * carried-state): inputs again, allocated before forward, each with the storage it views (a memory sliced from a
   * concatenation keeps the whole concatenation) and its precision. Their storage, counted once each, is carriedState.
   */
  carry(from: ForwardTrace, value: Value): Value {
    const counted = new Set<number>();
    const inputOf = (item: Value): Value => {
      if (item.kind === 'list') return { ...item, items: item.items.map(inputOf) };
      if (item.kind === 'dict') return { ...item, entries: new Map([...item.entries].map(([key, entry]) => [key, inputOf(entry)])) };
      if (item.kind !== 'tensor') return item;
      const made = this.input(item.shape, item.integer);
      const storage = from.storageOf(item);
      this.storage.set(made.id, storage);
      const fullPrecision = !item.integer && from.fullPrecision.has(item.id);
      if (!fullPrecision) this.fullPrecision.delete(made.id);
      if (!counted.has(item.id) && !from.excluded.has(item.id)) {
        counted.add(item.id);
        const bytes = item.integer ? INT64_BYTES * storage : 0;
        this.carriedState.integerBytes += bytes;
        if (!item.integer) this.carriedState.floats += storage;
        if (fullPrecision) this.carriedState.fullPrecisionFloats += storage;
      }
      return made;
    };
    return inputOf(value);
  }

  /** Storage of the tensors the loop carried into this forward from the last (see carry): float elements, fp32 ones among them, integer bytes. */
  readonly carriedState = { floats: 0, fullPrecisionFloats: 0, integerBytes: 0 };

  /** Whether forward keeps the largest tensor of `value` for backward (log_softmax's output), the data aside. */
  /** Each element of a returned tuple: its elements and whether autocast leaves it fp32. */
  outputParts(value: Value | undefined): Array<{ elements: number; fullPrecision: boolean }> | undefined {
    if (value?.kind !== 'list' || !value.tuple) return undefined;
    return value.items.map((item) => {
      const tensor = tensorsIn(item)[0];
      return { elements: tensor ? numel(tensor.shape) : 0, fullPrecision: tensor !== undefined && !tensor.integer && this.fullPrecision.has(tensor.id) };
    });
  }

  keepsLargest(value: Value | undefined): boolean {
    const largest = tensorsIn(value).reduce<TensorValue | undefined>((best, t) => (!best || numel(t.shape) > numel(best.shape) ? t : best), undefined);
    return largest !== undefined && this.saved.has(largest.id) && !this.excluded.has(largest.id) && !this.keptAsCastCopy.has(largest.id);
  }

  get savedElements(): number {
    let total = 0;
    for (const [id, elements] of this.saved) {
      const copied = this.explicitUpcast.get(id);
      if (!this.excluded.has(id) && !(copied !== undefined && this.saved.has(copied))) total += elements;
    }
    return total;
  }

  /**
   * Kept dropout outputs that torch.compile does not keep: inductor keeps the dropout's mask and recomputes its
   * output in backward from the input, where forward keeps that input anyway (the in-place ReLU before it keeps it).
   * Measured on the H200 (test/gpu/estimator/results/probe_custom9_compile.json): Linear -> BatchNorm1d -> ReLU ->
   * Dropout keeps 13 bytes an element eager, 9 compiled (the 4 of the dropout's output); without the Dropout,
   * compiled keeps what eager does. Without the BatchNorm it keeps 6 (the dropout's output, its mask and the ReLU's
   * bool, probe_compile9.json): counted as 5, 1 byte short, which the eager backward transient this net is given
   * (above the compiled one measured) covers. Elements, and their bytes under autocast.
   */
  get compileRecomputed(): { elements: number; autocastBytes: number } {
    let elements = 0;
    let autocastBytes = 0;
    for (const [id, kept] of this.saved) {
      const input = this.dropoutInputs.get(id);
      if (input === undefined || !this.saved.has(input) || this.excluded.has(id)) continue;
      elements += kept;
      // Under autocast a linear keeps a half copy of an fp32 output: that copy is what goes.
      autocastBytes += kept * (this.fullPrecision.has(id) && !this.keptAsCastCopy.has(id) ? 4 : 2);
    }
    return { elements, autocastBytes };
  }

  /**
   * Bytes kept for backward when forward runs under autocast: fp32 tensors at 4 bytes, half ones at 2, and the half
   * copies autocast saves for linears, convolutions and matmuls in place of their fp32 inputs.
   */
  get autocastSavedBytes(): number {
    let total = this.castCopyElements * 2 + this.upcastCopyElements * 4;
    for (const [id, elements] of this.saved) {
      if (this.excluded.has(id) || this.keptAsCastCopy.has(id)) continue;
      total += elements * (this.fullPrecision.has(id) ? 4 : 2);
    }
    return total;
  }

  /**
   * What an op that autocast casts for keeps of its operands: the operand itself without autocast, and under autocast
   * the copy it casts to (`to: 'half'` for linears, convolutions and matmuls given an fp32 operand; `to: 'fp32'` for
   * layer_norm / group_norm given a half one). The original is then kept only where another op keeps it.
   */
  private keepCastOperand(to: 'half' | 'fp32', ...tensors: TensorValue[]): void {
    if (!this.recording) return;
    for (const t of tensors) {
      if (t.integer) continue;
      const keptAlready = this.saved.has(t.id) && !this.keptAsCastCopy.has(t.id);
      this.saved.set(t.id, this.storageOf(t));
      if (this.fullPrecision.has(t.id) === (to === 'half') && !this.excluded.has(t.id)) {
        if (to === 'half') this.castCopyElements += numel(t.shape);
        else this.upcastCopyElements += numel(t.shape);
        if (!keptAlready) this.keptAsCastCopy.add(t.id);
      } else {
        // Already in the dtype the op runs in: the op keeps the tensor itself (a half tensor a GroupNorm kept only
        // as its fp32 copy, then given to a 1x1 skip convolution), as keep() does.
        this.keptAsCastCopy.delete(t.id);
      }
    }
  }

  /** Marks a tensor as made in half precision (true) or fp32 (false) under autocast. */
  private precision<T extends Value | undefined>(value: T, half: boolean): T {
    for (const t of tensorsIn(value)) {
      // Autocast casts floating tensors only: complex ones stay complex64.
      if (half && !this.complexTensors.has(t.id)) this.fullPrecision.delete(t.id);
      else if (!t.integer) this.fullPrecision.add(t.id);
    }
    return value;
  }

  private make(shape: number[], integer = false): TensorValue {
    // A size the trace could not compute (an unknown hyperparameter divided into it) is a wrong guess, not a NaN.
    if (shape.some((d) => !Number.isFinite(d))) this.mismatches++;
    const tensor: TensorValue = { kind: 'tensor', id: this.nextId++, shape: shape.map((d) => (Number.isFinite(d) ? Math.max(1, Math.round(d)) : 1)), integer };
    if (integer) this.integerStorage.set(tensor.id, INT64_BYTES);
    this.largest = Math.max(this.largest, numel(tensor.shape));
    this.storage.set(tensor.id, numel(tensor.shape));
    return tensor;
  }

  /** A new tensor computed from `inputs`. */
  private produce(shape: number[], inputs: TensorValue[] = [], integer = false): TensorValue {
    const out = this.make(shape, integer);
    // Element-wise results promote: one fp32 operand makes an fp32 result, one complex operand a complex one (the
    // ops that make real values of complex ones, abs, .real, irfft, say so after).
    if (!integer && inputs.some((t) => this.fullPrecision.has(t.id))) this.fullPrecision.add(out.id);
    if (!integer && inputs.some((t) => this.complexTensors.has(t.id))) this.markComplex(out);
    if (inputs.length > 0 && inputs.every((t) => this.batchless.has(t.id))) this.batchless.add(out.id);
    const live = inputs.reduce((sum, t) => sum + numel(t.shape), 0) + numel(out.shape);
    this.liveNoGrad = Math.max(this.liveNoGrad, live);
    this.liveSets.push([...inputs, out].map((t) => ({ id: t.id, elements: numel(t.shape), integer: t.integer })));
    this.forwardPoint([...inputs, out]);
    return out;
  }

  watchFrames(frames: readonly Scope[]): void {
    this.frames = frames;
  }

  /** The point being counted (see forwardPoint), and the last point that counted each tensor, by id. */
  private pointMark = 0;
  private readonly countedAt = new Map<number, number>();
  private readonly pointCount = { floats: 0, fullPrecisionFloats: 0, integerBytes: 0 };

  /**
   * A point of forward: the tensors alive and not kept for backward, from the running frames' locals (a tuple or
   * list of them included) and the op's own operands and output. Each storage counts once, at the bytes of its
   * dtype; weights, the step's inputs and tensors without a batch axis are not the activations'. Measured on the
   * H200 (test/gpu/estimator/results/probe_nerf11.json): a hash encoding's forward holds 3,392 MiB over its start,
   * as counted this way, and 1,152 MiB less with two int64 locals deleted before its corner weights are made.
   */
  private forwardPoint(operands: readonly TensorValue[]): void {
    const mark = ++this.pointMark;
    const count = this.pointCount;
    count.floats = count.fullPrecisionFloats = count.integerBytes = 0;
    for (const t of operands) this.countAlive(t, mark);
    for (const frame of this.frames) for (const value of frame.vars.values()) this.countAliveIn(value, mark);
    if (count.floats + count.integerBytes > 0) {
      this.forwardPoints.push({ savedEntries: this.saved.size, fixedBytes: this.fixedBytes, madeBefore: this.nextId, ...count });
    }
  }

  private countAliveIn(value: Value, mark: number): void {
    if (value.kind === 'tensor') this.countAlive(value, mark);
    else if (value.kind === 'list') for (const item of value.items) this.countAliveIn(item, mark);
    else if (value.kind === 'dict') for (const item of value.entries.values()) this.countAliveIn(item, mark);
  }

  private countAlive(t: TensorValue, mark: number): void {
    if (this.countedAt.get(t.id) === mark) return;
    this.countedAt.set(t.id, mark);
    if (this.excluded.has(t.id) || this.batchless.has(t.id) || this.keptIntegers.has(t.id) || this.saved.has(t.id)) return;
    const elements = this.storageOf(t);
    const integerBytes = this.integerStorage.get(t.id);
    if (integerBytes !== undefined) this.pointCount.integerBytes += elements * integerBytes;
    else {
      this.pointCount.floats += elements;
      if (this.fullPrecision.has(t.id)) this.pointCount.fullPrecisionFloats += elements;
    }
  }

  /**
   * The most bytes forward holds at once over what it keeps for backward when it ends, for the whole traced batch:
   * its locals alive at an op (int64 index arithmetic a hash encoding holds until it returns) less what ops after
   * that point keep. Floats at 4 bytes (fp32), 2 (half weights), or as autocast makes them (amp); what was kept
   * counted at the mode's bytes. What forward returns (`returned`) is left out, from when it was made until it was
   * kept (if ever): the loss's figures hold the output.
   */
  forwardLiveExcess(returned: Value | undefined): { fp32: number; half: number; amp: number } {
    // What was kept up to each saved entry, in the order kept (savedElements' count, as a running total), and the
    // entry that kept each tensor.
    const keptBefore: number[] = [0];
    const entry = new Map<number, number>();
    let total = 0;
    for (const [id, elements] of this.saved) {
      const copied = this.explicitUpcast.get(id);
      if (!this.excluded.has(id) && !(copied !== undefined && this.saved.has(copied))) total += elements;
      entry.set(id, keptBefore.length - 1);
      keptBefore.push(total);
    }
    const outputs = new Map<number, TensorValue>();
    for (const t of tensorsIn(returned)) {
      if (!this.excluded.has(t.id) && !this.batchless.has(t.id) && !this.keptIntegers.has(t.id)) outputs.set(t.id, t);
    }
    const most = { fp32: 0, half: 0, amp: 0 };
    for (const point of this.forwardPoints) {
      let { floats, fullPrecisionFloats, integerBytes } = point;
      for (const [id, t] of outputs) {
        if (id >= point.madeBefore || (entry.get(id) ?? Infinity) < point.savedEntries) continue;
        const elements = this.storageOf(t);
        const bytes = this.integerStorage.get(id);
        if (bytes !== undefined) integerBytes -= bytes * elements;
        else {
          floats -= elements;
          if (this.fullPrecision.has(id)) fullPrecisionFloats -= elements;
        }
      }
      const keptLater = total - keptBefore[Math.min(point.savedEntries, keptBefore.length - 1)]!;
      const fixedLater = this.fixedBytes - point.fixedBytes;
      const halfFloats = floats - fullPrecisionFloats;
      most.fp32 = Math.max(most.fp32, 4 * floats + integerBytes - 4 * keptLater - fixedLater);
      most.half = Math.max(most.half, 2 * floats + integerBytes - 2 * keptLater - fixedLater);
      most.amp = Math.max(most.amp, 4 * fullPrecisionFloats + 2 * halfFloats + integerBytes - 2 * keptLater - fixedLater);
    }
    return most;
  }

  /**
   * The most bytes a no-grad forward holds at once under autocast: fp32 tensors (the data, layer_norm's output, a
   * residual stream fed by an fp32 embedding) at 4 bytes, half ones at 2, integer ones at 8.
   */
  get autocastInferenceLiveBytes(): number {
    let most = 0;
    for (const set of this.liveSets) {
      let bytes = 0;
      for (const t of set) bytes += t.elements * (t.integer ? 8 : (t.fp32 ?? (t.id !== undefined && this.fullPrecision.has(t.id))) ? 4 : 2);
      most = Math.max(most, bytes);
    }
    return most;
  }

  /**
   * What an nn.TransformerEncoderLayer / DecoderLayer holds at once in a no-grad forward, at its feed-forward block:
   * its input (the frame that called it still holds it), the residual stream, the norm's output, and the hidden
   * activations twice (linear1's output while the activation makes its own); with pre-norm the stream and the norm's
   * output are two tensors, with post-norm the norm's output is the stream. A decoder layer holds the memory too, and
   * a stack's caller its input while later layers run. Under autocast the norm's output is fp32, the stream as fp32
   * as the input, and the hidden activations half.
   */
  private transformerLayerLive(x: TensorValue, hidden: number, normFirst: boolean, memory: TensorValue | undefined): void {
    const tokens = numel(x.shape.slice(0, -1));
    const width = numel(x.shape);
    const inputFp32 = this.fullPrecision.has(x.id);
    const set: Array<{ id?: number; elements: number; fp32?: boolean }> = [
      { id: x.id, elements: width },
      ...(normFirst ? [{ elements: width, fp32: inputFp32 }] : []),
      { elements: width, fp32: true },
      { elements: tokens * hidden, fp32: false },
      { elements: tokens * hidden, fp32: false },
      ...(memory && memory.id !== x.id ? [{ id: memory.id, elements: numel(memory.shape) }] : []),
      ...(this.stackInput && this.stackInput.id !== x.id ? [{ id: this.stackInput.id, elements: numel(this.stackInput.shape) }] : []),
    ];
    this.liveSets.push(set);
    this.liveNoGrad = Math.max(this.liveNoGrad, set.reduce((sum, t) => sum + t.elements, 0));
  }

  /**
   * What an op keeps beside its output that backward reads but never makes a gradient of (cuDNN's reserve space,
   * attention internals): saved, but not a tensor whose gradient is a transient of backward.
   */
  /** A point of backward with `alive` elements held: the peak so far, and the fixed bytes at it. */
  /**
   * What backward holds under autocast at its worst point over backwardPeak's elements at 2 bytes each: the surplus
   * of fp32 gradients where a point holding them passes the elements' worst point.
   */
  get backwardPeakAutocastSurplus(): number {
    return Math.max(0, this.autocastBackwardPeak - 2 * this.backwardPeak);
  }

  private backwardElements(alive: number, inBatchedProduct = false, autocastSurplus = 0): void {
    this.autocastBackwardPeak = Math.max(this.autocastBackwardPeak, 2 * alive + autocastSurplus);
    if (alive > this.backwardPeak) {
      this.fixedBytesAtBackwardPeak = this.fixedBytes;
      this.backwardPeakInBatchedProduct = inBatchedProduct;
    }
    this.backwardPeak = Math.max(this.backwardPeak, alive);
    const recomputed = this.compileRecomputed.elements;
    this.backwardPoints.push({ elements: alive, parametersBefore: this.trainableSoFar, ...(recomputed > 0 ? { compileRecomputed: recomputed } : {}) });
  }

  /**
   * What attention of a query over another tensor's keys makes and keeps a call, beside the inputs the projections
   * keep: the projected keys and values (2 key-sized), and on the query's side the projected query, the fused
   * kernel's output and out_proj's input (a contiguous copy of that output), or with weights the scaled query and
   * out_proj's input (the probabilities counted apart). Measured on the H200 (test/gpu/estimator/results/
   * probe_twins13.jsonl, batch-first, fp32, without weights): 4.1 query-sized and 3.0 key-sized tensors a call with
   * the inputs' copies (2048 queries over 64 keys and the reverse); one query over 120 keys, 3.0 x batch x keys x
   * embed a call, with or without a padding mask or dropout (mha_cross_step.json).
   */
  private keepCrossAttention(queryElements: number, keyElements: number, needWeights: boolean): void {
    this.keepBuffer((needWeights ? 2 : 3) * queryElements + 2 * keyElements);
  }

  /**
   * What a norm with a trained affine keeps beside `out` when the parameters are stacked (see stackedParameters): the
   * normalized tensor before the affine, of the output's size and precision. Its backward holds the weight's
   * gradient at that size too until autograd sums it to the weight's shape, after the multiply's backward returns
   * (measured, a LayerNorm alone holds one more still; with the rest of the step's terms, three stacked blocks
   * of 2048 come out 2% over the H200's peak with this one, 7% over with two).
   */
  private keepStackedNormalized(out: TensorValue): void {
    if (!this.stackedParameters || !this.recording) return;
    const normalized = this.precision(this.make(out.shape), !this.fullPrecision.has(out.id));
    this.keep(normalized);
    this.pendingBackwardWorkspace += numel(out.shape);
  }

  /**
   * weight_norm and spectral_norm (torch.nn.utils and its parametrizations) make the layer's weight anew from its
   * parametrization at every call (g * v / ||v||, v / sigma), and the layer keeps that tensor for its input's
   * gradient: one weight-sized tensor per call, whatever the batch, so a discriminator run on real and generated
   * audio keeps two copies of all its weights. Its bias and magnitudes (one value per output) are left out.
   */
  private keepReparametrizedWeight(layer: LayerValue): void {
    if (this.recording) this.reparametrizedWeights += this.weightElements(layer);
  }

  private keepBuffer(elements: number): void {
    if (!this.recording) return;
    this.saved.set(this.nextId++, elements);
  }

  /**
   * The per-head attention weights nn.MultiheadAttention computes with need_weights (its default), on its math path:
   * softmax keeps its output, fp32 under autocast (softmax is on autocast's fp32 list); dropout keeps its mask; the
   * product with the values keeps the (dropped) weights, as the half copy autocast casts them to (without autocast,
   * the dropout's output itself, or softmax's). Backward holds two fp32 gradients of the weights at once (dropout's
   * and softmax's, each an output's gradient and its input's) beside them. Measured on the H200 (probe_data13, per
   * block and (batch, head, query, key) element): kept 7.4 bytes under bf16 autocast with dropout (7 here), 6.1
   * without (6), 8.9 in fp32 (9); a checkpointed block's recompute and backward 14.7 bytes under autocast (15 here).
   * Without checkpointing, the gradients go in as the layer's backward workspace at the activations' element size:
   * 4 bytes under autocast where 8.7 were measured (an underestimate there), 8 in fp32 where 5.7 were.
   */
  private attentionWeights(rows: number, seq: number, keySeq: number, dropout: boolean): void {
    if (!this.recording) return;
    const shape = [rows, seq, keySeq];
    const weights = this.precision(this.make(shape), false);
    this.keep(weights);
    if (dropout) {
      this.keepBuffer(numel(shape) / 4);
      this.keepCastOperand('half', this.precision(this.make(shape), false));
    } else {
      this.keepCastOperand('half', weights);
    }
    const gradient = { elements: numel(shape), fp32: true };
    this.pendingBackwardWorkspace += 2 * numel(shape);
    this.blockGradients([gradient, gradient]);
  }

  /** What keeping a tensor keeps alive: its storage, which a view shares with its base. */
  private storageOf(t: TensorValue): number {
    return Math.max(this.storage.get(t.id) ?? 0, numel(t.shape));
  }

  private keep(...tensors: TensorValue[]): void {
    if (!this.recording) return;
    for (const t of tensors) {
      if (t.integer) continue;
      if (this.openBlocks.size > 0) this.savedInBlock.add(t.id);
      // A block's output that a layer after the blocks keeps (a max-pool after a checkpointed conv block): under
      // checkpointing it stays alive, though the block that made it keeps nothing.
      else if (this.savedInBlock.delete(t.id)) this.blockOutputsKeptOutside += this.storageOf(t);
      this.saved.set(t.id, this.storageOf(t));
      this.keptAsCastCopy.delete(t.id);
    }
  }

  /**
   * Runs `run` (the step's own code after forward: a loss over what forward returned) and returns what it kept for
   * backward, taken out of the trace again: the step keeps it once, however many forwards it runs. The trace's
   * other figures (its largest tensor, backward's points, the loss it read) stay forward's: they feed the step's
   * terms for the output the loss reads, which the model counts on its own.
   */
  keptApart(run: () => void): Map<number, number> {
    const before = new Set(this.saved.keys());
    const figures = { largest: this.largest, backwardPeak: this.backwardPeak, inBatchedProduct: this.backwardPeakInBatchedProduct, autocastPeak: this.autocastBackwardPeak,
      fixedAtPeak: this.fixedBytesAtBackwardPeak, fixedBytes: this.fixedBytes, points: this.backwardPoints.length, live: this.liveNoGrad,
      liveSets: this.liveSets.length, mismatches: this.mismatches, unmodelled: [...this.unmodelled], gradientPair: this.gradientPair,
      gradientKept: this.gradientKept, lossInput: this.lossInputElements, lossInForward: this.lossInForward, convolutions: this.convolutions };
    run();
    [this.largest, this.backwardPeak, this.backwardPeakInBatchedProduct] = [figures.largest, figures.backwardPeak, figures.inBatchedProduct];
    this.autocastBackwardPeak = figures.autocastPeak;
    [this.fixedBytesAtBackwardPeak, this.fixedBytes, this.liveNoGrad] = [figures.fixedAtPeak, figures.fixedBytes, figures.live];
    this.backwardPoints.length = figures.points;
    this.liveSets.length = figures.liveSets;
    [this.mismatches, this.gradientPair, this.gradientKept] = [figures.mismatches, figures.gradientPair, figures.gradientKept];
    [this.lossInputElements, this.lossInForward, this.convolutions] = [figures.lossInput, figures.lossInForward, figures.convolutions];
    this.unmodelled.clear();
    for (const op of figures.unmodelled) this.unmodelled.add(op);
    const kept = new Map<number, number>();
    for (const [id, elements] of this.saved) {
      if (before.has(id)) continue;
      if (!this.excluded.has(id)) kept.set(id, elements);
      this.saved.delete(id);
    }
    return kept;
  }

  passMark(): number {
    return this.savedElements;
  }

  repeatPass(mark: number, times: number): void {
    const kept = this.savedElements - mark;
    if (kept > 0 && times > 0) this.keepBuffer(kept * times);
  }

  enterModule(module: ObjectValue | LayerValue, inputs: Value[]): void {
    if (!this.blocks.has(module)) return;
    this.openBlocks.set(module, this.savedElements);
    this.beginBlockPeak();
    const input = tensorsIn(inputs[0])[0];
    this.blockInputs.push(numel(input?.shape ?? [0]));
    this.blockInputFullPrecision.push(input !== undefined && !input.integer && this.fullPrecision.has(input.id));
    this.blockOutsideBefore.push(this.savedElements - this.blockSaved.reduce((sum, saved) => sum + saved, 0) + this.blockOutputsKeptOutside);
  }

  parameter(layer: LayerValue): Value {
    const tensor = layer.args[0];
    const shape = tensor?.kind === 'call' ? madeTensorShape(tensor) : undefined;
    if (!shape) return UNKNOWN;
    const t = this.make(shape);
    // Parameters are weights, not activations: never counted as kept by forward.
    this.excluded.add(t.id);
    this.batchless.add(t.id);
    if (!this.trainable(layer)) this.noGrad.add(t.id);
    return t;
  }

  /** One tensor per layer: reading the weight twice (a tied head in two places) is one parameter. */
  private readonly weights = new Map<LayerValue, TensorValue>();

  /** The weight of an Embedding (num x dim) or a Linear (out x in), as a parameter tensor (see parameter()). */
  layerWeight(layer: LayerValue): Value | undefined {
    const known = this.weights.get(layer);
    if (known) return known;
    const [first, second] = [numberOf(layer.kwargs.get(layer.type === 'Linear' ? 'in_features' : 'num_embeddings') ?? layer.args[0]),
      numberOf(layer.kwargs.get(layer.type === 'Linear' ? 'out_features' : 'embedding_dim') ?? layer.args[1])];
    if ((layer.type !== 'Embedding' && layer.type !== 'Linear') || first === undefined || second === undefined) return undefined;
    const t = this.make(layer.type === 'Linear' ? [second, first] : [first, second]);
    this.excluded.add(t.id);
    this.batchless.add(t.id);
    if (!this.trainable(layer)) this.noGrad.add(t.id);
    this.weights.set(layer, t);
    return t;
  }

  /** The modules forward gave checkpoint() itself: where the script cuts, whatever checkpointPlan would. */
  readonly checkpointedModules = new Set<ObjectValue | LayerValue>();

  checkpointed(module: ObjectValue | LayerValue): void {
    this.checkpointedModules.add(module);
  }

  exitModule(module: ObjectValue | LayerValue): void {
    const start = this.openBlocks.get(module);
    if (start === undefined) return;
    this.openBlocks.delete(module);
    this.blockSaved.push(this.savedElements - start);
    this.endBlockPeak();
  }

  private beginBlockPeak(): void {
    this.blockPeakFrames.push({ savedElements: this.savedElements, savedBytes: this.autocastSavedBytes, elements: 0, bytes: 0 });
  }

  private endBlockPeak(): void {
    const frame = this.blockPeakFrames.pop();
    this.blockBackwardPeak.push(frame?.elements ?? 0);
    this.blockBackwardPeakAutocastBytes.push(frame?.bytes ?? 0);
  }

  /**
   * A point of a block's backward: what the block kept up to this op (what it keeps later is freed by then) and the
   * buffers the op's backward holds at once, each fp32 (`fp32`: 4 bytes under autocast) or not (2).
   */
  private blockGradients(buffers: Array<{ elements: number; fp32: boolean; autocastOnly?: boolean }>): void {
    if (this.blockPeakFrames.length === 0 || !this.recording) return;
    const elements = buffers.reduce((sum, b) => sum + (b.autocastOnly ? 0 : b.elements), 0);
    // No larger than a layer's gradient pair: the checkpointing formula's whole block plus that pair covers it (and a
    // loop of small products, a selective scan's, need not total what is kept at each of its steps).
    if (elements <= this.gradientPair) return;
    const [saved, savedBytes] = [this.savedElements, this.autocastSavedBytes];
    const bytes = buffers.reduce((sum, b) => sum + b.elements * (b.fp32 ? 4 : 2), 0);
    for (const frame of this.blockPeakFrames) {
      frame.elements = Math.max(frame.elements, saved - frame.savedElements + elements);
      frame.bytes = Math.max(frame.bytes, savedBytes - frame.savedBytes + bytes);
    }
  }

  /** A tensor's gradient as a buffer of blockGradients (the tensor's dtype under autocast). */
  private gradientOf(t: TensorValue): { elements: number; fp32: boolean } {
    return { elements: numel(t.shape), fp32: this.fullPrecision.has(t.id) };
  }

  // ---- layers -----------------------------------------------------------------------------------------------

  layer(layer: LayerValue, args: Value[], kwargs: Map<string, Value>): Value | undefined {
    if (layer.type === 'FeaturePyramidNetwork') return this.featurePyramid(layer, args[0]);
    // A lazy layer runs as the eager layer its first input makes it (its parameters counted as that layer's).
    if (isLazyLayer(layer)) {
      const x = tensorsIn(args[0])[0];
      const eager = x && x.shape.length >= 2 ? materializeLazy(layer, x.shape[/Linear/.test(layer.type) ? x.shape.length - 1 : 1]!, true) : undefined;
      return eager ? this.layer(eager, args, kwargs) : undefined;
    }
    this.pendingBackwardWorkspace = 0;
    const out = this.recorded(args, this.trainable(layer), () => this.layerOp(layer, args, kwargs));
    const input = tensorsIn(args[0])[0];
    const output = out ? tensorsIn(out)[0] : undefined;
    if (output && !this.noGrad.has(output.id)) {
      const inputGradient = input && !this.noGrad.has(input.id) ? numel(input.shape) : 0;
      this.gradientPair = Math.max(this.gradientPair, numel(output.shape) + inputGradient);
      this.backwardElements(this.savedElements + numel(output.shape) + inputGradient + this.pendingBackwardWorkspace);
      if (GRADIENT_KEEPING_LAYER.test(layer.type)) this.gradientKept += gradientTensorsSaved(layer.type) * numel(output.shape);
    }
    if (this.trainable(layer)) this.trainableSoFar += this.parameterCount(layer);
    return out;
  }

  /**
   * torchvision's FeaturePyramidNetwork on a dict of maps (shallowest first): each map's lateral 1x1 convolution, the
   * deeper merged map upsampled (nearest) to its size and added, then the 3x3 output convolution; a dict of the
   * outputs under the same keys, as torchvision's forward returns it.
   */
  private featurePyramid(pyramid: LayerValue, given: Value | undefined): Value | undefined {
    const layers = featurePyramidLayers(pyramid);
    const entries = given?.kind === 'dict' ? [...given.entries] : given?.kind === 'list' ? given.items.map((item, i): [string, Value] => [String(i), item]) : [];
    const maps = entries.map(([, value]) => (value.kind === 'tensor' && value.shape.length === 4 ? value : undefined));
    if (!layers || maps.length !== layers.lateral.length || maps.some((map) => !map)) {
      this.mismatches++;
      return undefined;
    }
    const conv = (layer: LayerValue, x: Value | undefined): TensorValue | undefined => {
      const out = x ? this.layer(layer, [x], new Map()) : undefined;
      return out?.kind === 'tensor' ? out : undefined;
    };
    const last = maps.length - 1;
    let merged = conv(layers.lateral[last]!, maps[last]);
    const outputs: Array<TensorValue | undefined> = [];
    outputs[last] = conv(layers.output[last]!, merged);
    for (let i = last - 1; i >= 0; i--) {
      const lateral = conv(layers.lateral[i]!, maps[i]);
      const size: Value = { kind: 'list', items: lateral ? lateral.shape.slice(2).map((d) => ({ kind: 'number', value: d })) : [], tuple: true };
      const upsampled = merged ? this.function('torch.nn.functional.interpolate', [merged], new Map([['size', size]])) : undefined;
      const sum = lateral && upsampled ? this.binary('+', lateral, upsampled) : undefined;
      merged = sum?.kind === 'tensor' ? sum : undefined;
      outputs[i] = conv(layers.output[i]!, merged);
    }
    if (outputs.some((out) => !out)) return undefined;
    const result = new Map(entries.map(([key], i): [string, Value] => [key, outputs[i]!]));
    if (layers.maxPoolLevel) {
      const pooled = this.function('torch.nn.functional.max_pool2d', [outputs[last]!, { kind: 'number', value: 1 }, { kind: 'number', value: 2 }], new Map());
      if (pooled) result.set('pool', pooled);
    }
    return given?.kind === 'list' ? { kind: 'list', items: [...result.values()], tuple: false } : { kind: 'dict', entries: result };
  }

  private layerOp(layer: LayerValue, args: Value[], kwargs: Map<string, Value>): Value | undefined {
    const x = tensorsIn(args[0])[0];
    if (!x) return undefined;
    if (process.env.OOMGUARD_DEBUG_TRACE) console.error(layer.type, JSON.stringify(x.shape));
    const arg = (index: number, name: string): Value | undefined => layer.kwargs.get(name) ?? layer.args[index];
    const num = (index: number, name: string, fallback: number): number => {
      const value = arg(index, name);
      return (value?.kind === 'list' ? numberOf(value.items[0]) : numberOf(value)) ?? fallback;
    };
    // A per-dimension argument (a 3-D convolution's kernel_size=(3, 7, 7), stride=(1, 2, 2)): one value per spatial
    // dimension, a single number standing for all of them.
    const perDimension = (index: number, name: string, fallback: number, count: number): number[] => {
      const value = arg(index, name);
      if (value?.kind === 'list' && value.items.length === count) return value.items.map((item) => numberOf(item) ?? fallback);
      const single = value?.kind === 'list' ? numberOf(value.items[0]) : numberOf(value);
      return new Array<number>(count).fill(single ?? fallback);
    };
    const flag = (name: string, fallback: boolean, index = -1): boolean => {
      const value = arg(index, name);
      return value?.kind === 'bool' ? value.value : fallback;
    };
    const shape = x.shape;
    const last = shape.length - 1;
    const expect = (ok: boolean) => {
      if (!ok) this.mismatches++;
    };
    switch (layer.type) {
      case 'Linear':
      case 'Bilinear':
        expect(shape[last] === num(0, layer.type === 'Bilinear' ? 'in1_features' : 'in_features', shape[last]!) && !x.integer);
        break;
      case 'Conv1d':
      case 'ConvTranspose1d':
        expect(shape.length === 3 && shape[1] === num(0, 'in_channels', shape[1]!));
        break;
      case 'Conv2d':
      case 'ConvTranspose2d':
      case 'Conv3d':
      case 'ConvTranspose3d':
        expect(shape.length === spatialDims(layer.type) + 2 && shape[1] === num(0, 'in_channels', shape[1]!));
        break;
      case 'BatchNorm2d':
      case 'BatchNorm3d':
        expect(shape.length === spatialDims(layer.type) + 2 && shape[1] === num(0, 'num_features', shape[1]!));
        break;
      case 'BatchNorm1d':
        expect(shape.length >= 2 && shape[1] === num(0, 'num_features', shape[1]!));
        break;
      case 'LayerNorm': {
        const normalized = arg(0, 'normalized_shape');
        const dims = normalized?.kind === 'list' ? normalized.items.map((i) => numberOf(i)) : [numberOf(normalized)];
        expect(dims.every((d, i) => d === undefined || shape[shape.length - dims.length + i] === d));
        break;
      }
      case 'Embedding':
        expect(x.integer);
        break;
      case 'EmbeddingBag':
        // Bags are the rows of a 2-D input, or the offsets' slices of a 1-D one.
        expect(x.integer && shape.length <= 2);
        break;
      case 'LSTM':
      case 'GRU':
      case 'RNN':
        expect(shape.length === 3 && shape[last] === num(0, 'input_size', shape[last]!) && !x.integer);
        expect(!collapsedSequence(shape, flag('batch_first', false, 4)));
        break;
      case 'MultiheadAttention':
      case 'TransformerEncoderLayer':
      case 'TransformerDecoderLayer':
        expect(!collapsedSequence(shape, flag('batch_first', false)));
        break;
      default:
        break;
    }
    switch (layer.type) {
      case 'Linear':
      case 'LazyLinear':
      case 'Bilinear': {
        this.keepCastOperand('half', x);
        this.keepReparametrizedWeight(layer);
        const out = num(layer.type === 'LazyLinear' ? 0 : 1, 'out_features', shape[last]!);
        return this.precision(this.produce([...shape.slice(0, -1), out], [x]), true);
      }
      case 'Conv1d':
      case 'Conv2d':
      case 'Conv3d':
      case 'ConvTranspose1d':
      case 'ConvTranspose2d':
      case 'ConvTranspose3d': {
        this.keepCastOperand('half', x);
        this.keepReparametrizedWeight(layer);
        this.convolutions++;
        const spatial = spatialDims(layer.type);
        const kernel = perDimension(2, 'kernel_size', 1, spatial);
        const stride = perDimension(3, 'stride', 1, spatial);
        const paddingValue = arg(4, 'padding');
        const padding = paddingValue?.kind === 'string'
          ? kernel.map((k) => (paddingValue.value === 'same' ? Math.floor(k / 2) : 0))
          : perDimension(4, 'padding', 0, spatial);
        const dilation = perDimension(layer.type.startsWith('ConvTranspose') ? 8 : 5, 'dilation', 1, spatial);
        const outputPadding = layer.type.startsWith('ConvTranspose') ? num(5, 'output_padding', 0) : 0;
        const out = num(1, 'out_channels', shape[shape.length - spatial - 1]!);
        const size = (n: number, d: number) => layer.type.startsWith('ConvTranspose')
          ? (n - 1) * stride[d]! - 2 * padding[d]! + dilation[d]! * (kernel[d]! - 1) + outputPadding + 1
          : Math.floor((n + 2 * padding[d]! - dilation[d]! * (kernel[d]! - 1) - 1) / stride[d]!) + 1;
        const lead = shape.slice(0, shape.length - spatial - 1);
        return this.precision(this.produce([...lead, out, ...shape.slice(-spatial).map((n, d) => size(n, d))], [x]), true);
      }
      case 'BatchNorm1d':
      case 'BatchNorm2d':
      case 'BatchNorm3d':
      case 'InstanceNorm1d':
      case 'InstanceNorm2d':
      case 'InstanceNorm3d':
      case 'LayerNorm':
      case 'RMSNorm':
      case 'GroupNorm':
      case 'LocalResponseNorm': {
        // layer_norm and group_norm are on autocast's fp32 list: they cast a half input to fp32, keep that copy and
        // make fp32; batch and instance norm keep the input's dtype.
        const fp32List = /^(LayerNorm|GroupNorm|RMSNorm)$/.test(layer.type);
        if (fp32List) this.keepCastOperand('fp32', x);
        else this.keep(x);
        const out = fp32List ? this.precision(this.produce(shape, [x]), false) : this.produce(shape, [x]);
        if (normAffine(layer) && this.trainable(layer)) this.keepStackedNormalized(out);
        return out;
      }
      case 'ReLU':
        return this.relu(x, flag('inplace', false, 0));
      // Backward reads the input: leaky_relu's out of place (in place, the result it overwrote the input with), and
      // ReLU6's (hardtanh) always, so the next layer keeps the output beside it (see NetBuilder.relu6).
      case 'LeakyReLU':
        if (flag('inplace', false, 1)) return this.relu(x, true);
        this.keep(x);
        return this.produce(shape, [x]);
      case 'ReLU6':
      case 'Hardtanh':
        this.keep(x);
        return this.produce(shape, [x]);
      case 'GELU':
      case 'SiLU':
      case 'Mish':
      case 'Hardswish':
      case 'ELU':
      case 'SELU':
      case 'CELU':
      case 'Softplus':
      case 'PReLU':
      case 'GLU':
        this.keep(x);
        if (layer.type === 'GLU') {
          // GLU halves its `dim` (the last by default: nn.GLU(dim=1) on (B, C, T) halves the channels).
          const d = num(0, 'dim', -1);
          const axis = d < 0 ? shape.length + d : d;
          return this.produce(shape.map((size, i) => (i === axis ? size / 2 : size)), [x]);
        }
        return this.produce(shape, [x]);
      case 'Sigmoid':
      case 'Tanh':
      case 'Softmax':
      case 'LogSoftmax': {
        const out = this.produce(shape, [x]);
        if (layer.type === 'Softmax' || layer.type === 'LogSoftmax') this.precision(out, false);
        this.keep(out);
        return out;
      }
      case 'Dropout':
      case 'Dropout1d':
      case 'Dropout2d':
      case 'Dropout3d':
      case 'AlphaDropout':
        return this.dropout(x, num(0, 'p', 0.5));
      case 'MaxPool1d':
      case 'MaxPool2d':
      case 'MaxPool3d':
      case 'AvgPool1d':
      case 'AvgPool2d':
      case 'AvgPool3d': {
        const window = poolWindow(spatialDims(layer.type), arg(0, 'kernel_size'), arg(1, 'stride'), arg(2, 'padding'));
        return layer.type.startsWith('Max') ? this.maxPool(x, window) : this.pool(x, window);
      }
      case 'AdaptiveAvgPool1d':
      case 'AdaptiveAvgPool2d':
      case 'AdaptiveAvgPool3d':
      case 'AdaptiveMaxPool1d':
      case 'AdaptiveMaxPool2d':
      case 'AdaptiveMaxPool3d': {
        const spatial = spatialDims(layer.type);
        const size = arg(0, 'output_size');
        const dims = size?.kind === 'list' ? size.items.map((i) => numberOf(i) ?? 1) : Array(spatial).fill(numberOf(size) ?? 1);
        if (layer.type.startsWith('AdaptiveMax')) this.keep(x);
        return this.produce([...shape.slice(0, shape.length - spatial), ...dims], [x]);
      }
      case 'Flatten': {
        const start = numberOf(arg(0, 'start_dim')) ?? 1;
        return this.flatten(x, start, numberOf(arg(1, 'end_dim')) ?? -1);
      }
      case 'Unflatten':
      case 'Identity':
        return x;
      // `nn.ReplicationPad1d((0, stride))`, `nn.ZeroPad2d(1)`: one number pads both sides of every spatial dimension.
      case 'ZeroPad1d':
      case 'ZeroPad2d':
      case 'ZeroPad3d':
      case 'ConstantPad1d':
      case 'ConstantPad2d':
      case 'ConstantPad3d':
      case 'ReflectionPad1d':
      case 'ReflectionPad2d':
      case 'ReflectionPad3d':
      case 'ReplicationPad1d':
      case 'ReplicationPad2d':
      case 'ReplicationPad3d':
      case 'CircularPad1d':
      case 'CircularPad2d':
      case 'CircularPad3d': {
        const padding = arg(0, 'padding');
        const widths = padding?.kind === 'list' ? padding.items.map(numberOf) : new Array<number | undefined>(2 * spatialDims(layer.type)).fill(numberOf(padding));
        return this.padded(x, widths);
      }
      case 'Upsample':
      case 'UpsamplingNearest2d':
      case 'UpsamplingBilinear2d':
        return this.interpolate(x, arg(0, 'size'), arg(1, 'scale_factor'));
      case 'PixelShuffle': {
        const r = num(0, 'upscale_factor', 2);
        const [n, c, h, w] = shape as [number, number, number, number];
        return this.produce([n, c / (r * r), h * r, w * r], [x]);
      }
      case 'Embedding':
        if (flag('sparse', false, 6)) this.sparseLookup(x, num(1, 'embedding_dim', 1));
        // A lookup of fp32 weights: fp32 under autocast.
        return this.precision(this.produce([...shape, num(1, 'embedding_dim', 1)], [x]), false);
      case 'EmbeddingBag':
        if (flag('sparse', false, 6)) this.sparseLookup(x, num(1, 'embedding_dim', 1));
        return this.embeddingBag(layer, x, args[1] ?? kwargs.get('offsets'), num, flag);
      case 'LSTM':
      case 'GRU':
      case 'RNN':
        return this.precision(this.recurrent(layer, x, num, flag), true);
      case 'LSTMCell':
      case 'GRUCell':
      case 'RNNCell':
        return this.recurrentCell(layer, x, args[1], num);
      case 'MultiheadAttention': {
        const batchFirst = flag('batch_first', false);
        const embed = num(0, 'embed_dim', shape[last]!);
        const heads = num(1, 'num_heads', 1);
        const seq = shape.length === 3 ? shape[batchFirst ? 1 : 0]! : shape[0]!;
        // Cross-attention (a decoder step's query over the encoder's outputs): keys and values have their own length.
        const key = tensorsIn(args[1])[0];
        // A slice of the keys as the query (attention pooling: `attn(x[:1], x, x)`) is a view of the same tensor, of
        // its own length.
        const cross = key !== undefined && (key.id !== x.id || numel(key.shape) !== numel(x.shape));
        const keySeq = cross && key.shape.length === shape.length ? (shape.length === 3 ? key.shape[batchFirst ? 1 : 0]! : key.shape[0]!) : seq;
        const needWeights = kwargs.get('need_weights')?.kind === 'bool' ? (kwargs.get('need_weights') as { value: boolean }).value : true;
        // The in-projections keep their inputs: batch-first ones are transposed to sequence-first, and a linear over
        // the transposed view keeps a contiguous copy of it, made every call.
        const value = tensorsIn(args[2])[0];
        const inputs = cross ? [x, key, ...(value && value.id !== key.id ? [value] : [])] : [x];
        if (batchFirst && shape.length === 3) for (const t of inputs) this.keepBuffer(numel(t.shape));
        else this.keep(...inputs);
        // What the attention makes and keeps (see keepCrossAttention). Self-attention: the packed q, k, v, the
        // attention's output (the fused kernel's, or with weights the scaled q) and out_proj's input, 5 x the input
        // a call (measured on the H200 with batch_first, 6.03 x the input with its copy; probe_twins13.jsonl).
        if (cross) this.keepCrossAttention(this.samples * seq * embed, this.samples * keySeq * embed, needWeights);
        else this.keepBuffer(this.samples * 5 * seq * embed);
        this.pendingBackwardWorkspace = !this.recording ? 0
          : cross ? crossAttentionBackward(this.samples * seq * embed, this.samples * keySeq * embed, numel(key.shape)) : this.samples * 3 * seq * embed;
        // With dropout the weights are also dropped: its mask and the dropped weights are kept too (as LayerNetBuilder's
        // multiheadAttention counts them).
        const dropout = num(2, 'dropout', 0);
        if (needWeights) this.attentionWeights(this.samples * heads, seq, keySeq, dropout > 0);
        if (needWeights) this.keepBuffer(this.samples * seq * keySeq);
        const weights = needWeights ? this.produce(this.samples === 1 ? [seq, seq] : [this.samples, seq, seq]) : undefined;
        return { kind: 'list', items: [this.precision(this.produce(shape, [x]), true), weights ?? { kind: 'none' }], tuple: true };
      }
      case 'TransformerEncoderLayer':
      case 'TransformerDecoderLayer': {
        const d = num(0, 'd_model', shape[last]!);
        const ff = num(2, 'dim_feedforward', 2048);
        const dropout = num(3, 'dropout', 0.1);
        const attentionBlocks = layer.type === 'TransformerDecoderLayer' ? 2 : 1;
        const seq = numel(shape) / d;
        this.keep(x);
        const masks = dropout > 0 ? (attentionBlocks + 2) * d / 4 + ff / 4 + ff : 0;
        this.keepBuffer(seq * (attentionBlocks * 6 * d + 2 * ff + masks + 2 * d));
        // Cross-attention over the encoder's output (the memory, of its own length): the memory itself, and every
        // layer's keys and values projected from it, 3 memory-sized tensors a call as for nn.MultiheadAttention
        // over another tensor's keys (see above).
        const memory = layer.type === 'TransformerDecoderLayer' ? tensorsIn(kwargs.get('memory') ?? args[1])[0] : undefined;
        if (memory && memory.id !== x.id && memory.shape[memory.shape.length - 1] === d) {
          this.keep(memory);
          this.keepBuffer(3 * numel(memory.shape));
        }
        this.transformerLayerLive(x, ff, flag('norm_first', false), memory && !memory.integer && memory.shape[memory.shape.length - 1] === d ? memory : undefined);
        return this.produce(shape, [x]);
      }
      case 'TransformerEncoder':
      case 'TransformerDecoder': {
        const inner = arg(0, layer.type === 'TransformerEncoder' ? 'encoder_layer' : 'decoder_layer');
        const count = num(1, 'num_layers', 1);
        let out: Value = x;
        // Each layer of the stack is a block checkpointing can cut on (unless the stack sits inside one).
        const asBlocks = this.openBlocks.size === 0;
        if (inner?.kind === 'layer') {
          const caller = this.stackInput;
          this.stackInput = x;
          for (let i = 0; i < count; i++) {
            const before = this.savedElements;
            if (asBlocks && out.kind === 'tensor') {
              this.blockInputs.push(numel(out.shape));
              this.blockInputFullPrecision.push(!out.integer && this.fullPrecision.has(out.id));
              this.blockOutsideBefore.push(before - this.blockSaved.reduce((sum, saved) => sum + saved, 0) + this.blockOutputsKeptOutside);
            }
            if (asBlocks) this.beginBlockPeak();
            out = this.layer(inner, [out, ...args.slice(1)], kwargs) ?? out;
            if (asBlocks) {
              this.blockSaved.push(this.savedElements - before);
              this.endBlockPeak();
            }
          }
          this.stackInput = caller;
        }
        const norm = arg(2, 'norm');
        if (norm?.kind === 'layer' && out.kind === 'tensor') out = this.layer(norm, [out], new Map()) ?? out;
        return out;
      }
      case 'Transformer': {
        // nn.Transformer(src, tgt): the encoder stack over the source, the decoder stack over the target (the
        // interpreter built both as its named submodules); the output has the target's shape.
        const encoder = layer.named?.get('encoder');
        const decoder = layer.named?.get('decoder');
        const target = args[1] ?? kwargs.get('tgt');
        if (encoder?.kind !== 'layer' || decoder?.kind !== 'layer' || !target) {
          this.unmodelled.add('nn.Transformer');
          return this.produce(shape, [x]);
        }
        const memory = this.layer(encoder, [x], new Map()) ?? x;
        return this.layer(decoder, [target, memory], new Map());
      }
      default:
        this.unmodelled.add(`nn.${layer.type}`);
        return this.produce(shape, [x]);
    }
  }

  /**
   * nn.EmbeddingBag: one pooled vector per bag (a row of a 2-D input; with a 1-D input, one per offset, and one per
   * sample where the offsets' count is not known), fp32 like the table. Backward reads only integer bookkeeping: the
   * bag of each id and each bag's size (int64), and for mode="max" the index of every maximum.
   */
  private embeddingBag(layer: LayerValue, x: TensorValue, offsets: Value | undefined,
    num: (index: number, name: string, fallback: number) => number, flag: (name: string, fallback: boolean, index?: number) => boolean): TensorValue {
    const offsetTensor = offsets ? tensorsIn(offsets)[0] : undefined;
    const lastOffset = flag('include_last_offset', false, 7) ? 1 : 0;
    const bags = x.shape.length >= 2 ? x.shape[0]! : offsetTensor?.shape.length === 1 ? Math.max(1, offsetTensor.shape[0]! - lastOffset) : 1;
    const dim = num(1, 'embedding_dim', 1);
    const mode = layer.kwargs.get('mode') ?? layer.args[5];
    if (this.recording) this.fixedBytes += (numel(x.shape) + bags + (mode?.kind === 'string' && mode.value === 'max' ? bags * dim : 0)) * 8;
    return this.precision(this.produce([bags, dim], [x]), false);
  }

  /**
   * A table built with sparse=True gets, in place of a table-sized gradient, one row of `dim` values for every id
   * looked up (duplicates included) and its int64 index (measured on the H200: probe_over11).
   */
  private sparseLookup(ids: TensorValue, dim: number): void {
    if (!this.recording) return;
    this.sparseGradient.rows += numel(ids.shape);
    this.sparseGradient.values += numel(ids.shape) * dim;
  }

  private relu(x: TensorValue, inplace: boolean): TensorValue {
    if (inplace) {
      this.keep(x);
      return x;
    }
    const out = this.produce(x.shape, [x]);
    this.keep(out);
    return out;
  }

  private dropout(x: TensorValue, p: number): TensorValue {
    if (p <= 0) return x;
    this.fixedBytes += numel(x.shape);
    const out = this.produce(x.shape, [x]);
    if (!x.integer) this.dropoutInputs.set(out.id, x.id);
    return out;
  }

  private maxPool(x: TensorValue, window: PoolWindow): TensorValue {
    this.keep(x);
    const out = this.pool(x, window);
    this.fixedBytes += numel(out.shape) * 8;
    return out;
  }

  private pool(x: TensorValue, { kernel, stride, padding }: PoolWindow): TensorValue {
    const spatial = kernel.length;
    const size = (n: number, k: number) => Math.floor((n + 2 * padding[k]! - kernel[k]!) / stride[k]!) + 1;
    return this.produce([...x.shape.slice(0, x.shape.length - spatial), ...x.shape.slice(-spatial).map(size)], [x]);
  }

  private interpolate(x: TensorValue, size: Value | undefined, scale: Value | undefined): TensorValue {
    const spatial = x.shape.length - 2;
    let dims = x.shape.slice(2);
    if (size && size.kind !== 'none') {
      dims = size.kind === 'list' ? size.items.map((i, k) => numberOf(i) ?? dims[k]!) : dims.map(() => numberOf(size) ?? 1);
    } else if (scale && scale.kind !== 'none') {
      const factors = scale.kind === 'list' ? scale.items.map((i) => numberOf(i) ?? 1) : Array(spatial).fill(numberOf(scale) ?? 2);
      dims = dims.map((d, k) => Math.floor(d * (factors[k] ?? 1)));
    }
    return this.produce([...x.shape.slice(0, 2), ...dims], [x]);
  }

  private flatten(x: TensorValue, start: number, end: number): TensorValue {
    const n = x.shape.length;
    const s = start < 0 ? n + start : start;
    const e = end < 0 ? n + end : end;
    if (s >= e) return x;
    return this.view(x, [...x.shape.slice(0, s), numel(x.shape.slice(s, e + 1)), ...x.shape.slice(e + 1)]);
  }

  /** A view: same storage, nothing kept; shape with one -1 inferred. */
  private view(x: TensorValue, dims: Array<number | undefined>): TensorValue {
    if (dims.some((d) => d === undefined)) return { ...x, id: x.id, shape: x.shape };
    const known = (dims as number[]).filter((d) => d !== -1);
    const inferred = dims.includes(-1) ? numel(x.shape) / Math.max(1, numel(known)) : undefined;
    return { kind: 'tensor', id: x.id, shape: (dims as number[]).map((d) => (d === -1 ? inferred ?? 1 : d)), integer: x.integer };
  }

  private recurrent(layer: LayerValue, x: TensorValue, num: (i: number, n: string, f: number) => number, flag: (n: string, f: boolean, i?: number) => boolean): Value {
    const hidden = num(1, 'hidden_size', 1);
    const layers = num(2, 'num_layers', 1);
    const dirs = flag('bidirectional', false, 6) ? 2 : 1;
    const gates = layer.type === 'LSTM' ? 4 : layer.type === 'GRU' ? 3 : 1;
    // A packed sequence is laid out as it was packed (an RNN reads a PackedSequence whatever its batch_first).
    const packing = this.packedAxes.get(x.id);
    const batchFirst = packing ? packing.axis === 1 : flag('batch_first', false, 4);
    const seq = x.shape.length === 3 ? x.shape[batchFirst ? 1 : 0]! : x.shape[0]!;
    this.keep(x);
    this.keepBuffer(this.samples * recurrentReserve(gates, seq, hidden, layers, dirs));
    // Its backward takes cuDNN's workspace while everything up to it is still kept (see layer()).
    this.pendingBackwardWorkspace = this.recording ? this.samples * recurrentBackwardWorkspace(seq, hidden, dirs) : 0;
    const out = this.produce([...x.shape.slice(0, -1), hidden * dirs], [x]);
    if (packing) this.packedAxes.set(out.id, packing);
    this.keep(out);
    const state = this.produce([layers * dirs, this.samples, hidden]);
    return { kind: 'list', items: [out, gates === 4 ? { kind: 'list', items: [state, this.produce(state.shape)], tuple: true } : state], tuple: true };
  }

  /**
   * `pack_padded_sequence(x, lengths)`: the packed data holds the real tokens only, the mean length per sample where
   * the lengths' draw is known (from the lengths tensor, else from the data's token axis: see drawnLengths), the
   * padded length otherwise (an upper bound, which the estimate then says). It is laid out as `x`, its token axis
   * shortened; the recurrent layer reads it there, and pad_packed_sequence pads it back.
   */
  private pack(x: TensorValue, lengths: TensorValue | undefined, batchFirst: boolean): TensorValue {
    const axis = x.shape.length === 3 && batchFirst ? 1 : 0;
    const padded = x.shape[axis] ?? 1;
    const draw = lengths?.drawn ?? this.sequenceDraw;
    // The share of the padded length a sample fills on average: uniform draws, the batch padded to the longest.
    const share = draw && draw.most > 0 ? Math.min(1, (draw.least + draw.most) / 2 / draw.most) : 1;
    // A draw of the data's lengths before a subsampling stem (a spectrogram's frames, halved by a strided
    // convolution) is told on the axis packed, as the stem leaves it.
    const scale = draw && draw.most > 0 && draw.most !== padded ? padded / draw.most : 1;
    if (draw) this.packedLengths = { least: Math.round(draw.least * scale), most: Math.round(draw.most * scale), mean: padded * share, padded };
    const data = this.produce(x.shape.map((d, k) => (k === axis ? d * share : d)), [x], x.integer);
    this.packedAxes.set(data.id, { axis, padded });
    return data;
  }

  /** `pad_packed_sequence(out)`: the packed data padded back to `total_length` (else the length it was packed from). */
  private unpack(data: TensorValue, batchFirst: boolean, totalLength: number | undefined): TensorValue {
    const packing = this.packedAxes.get(data.id);
    if (!packing) return this.produce(data.shape, [data], data.integer);
    const shape = data.shape.map((d, k) => (k === packing.axis ? totalLength ?? packing.padded : d));
    // Packed batch-first and unpacked time-first (or the other way round): the token and batch axes swap.
    if (shape.length === 3 && (packing.axis === 1) !== batchFirst) [shape[0], shape[1]] = [shape[1]!, shape[0]!];
    return this.produce(shape, [data], data.integer);
  }

  /**
   * One step of a recurrent cell, called by the script once per time step (a decoder unrolled in Python): its two
   * linears keep the input and the previous state; the fused CUDA kernel keeps both gate projections (autograd keeps
   * them for a differentiable backward) and its workspace (GRU: 3 + 3 gates and 5 hidden vectors, measured 13.55
   * hidden vectors a call with the input copy and the output on the H200; LSTM, read from the same autograd formula:
   * 4 + 4 gates, 4 of workspace and the new cell state; RNN: its output), every step anew.
   */
  private recurrentCell(layer: LayerValue, x: TensorValue, state: Value | undefined, num: (i: number, n: string, f: number) => number): Value {
    const hidden = num(1, 'hidden_size', 1);
    const batch = x.shape.length > 1 ? x.shape.slice(0, -1) : [];
    const given = tensorsIn(state);
    this.keepCastOperand('half', x);
    for (const t of given) this.keepCastOperand('half', t);
    if (given.length === 0) this.keepBuffer(numel(batch) * hidden);
    const workspace = layer.type === 'GRUCell' ? 3 + 3 + 5 : layer.type === 'LSTMCell' ? 4 + 4 + 4 + 1 : 0;
    if (workspace > 0) this.keepBuffer(numel(batch) * hidden * workspace);
    const out = this.precision(this.produce([...batch, hidden], [x, ...given]), true);
    if (layer.type === 'RNNCell') this.keep(out);
    if (layer.type !== 'LSTMCell') return out;
    return { kind: 'list', items: [out, this.precision(this.produce([...batch, hidden], [x]), true)], tuple: true };
  }

  // ---- functions, methods, operators --------------------------------------------------------------------------

  function(path: string, args: Value[], kwargs: Map<string, Value>): Value | undefined {
    if (DEFORM_CONV.test(path)) return this.deformConv2d(args, kwargs);
    if (ROI_ALIGN.test(path)) return this.roiAlign(args, kwargs);
    const out = this.recorded([...args, ...kwargs.values()], false, () => this.functionOp(path, args, kwargs));
    if (GRADIENT_KEEPING_FUNCTION.test(path)) this.keepsGradientOf(out, path.slice(path.lastIndexOf('.') + 1));
    // A functional activation or pooling (`F.relu(x)`, `F.max_pool2d(x, 2)`) is a layer to backward: its output's
    // gradient and its input's are alive at once beside what is still kept, as for the module form (layer()).
    if (FUNCTIONAL_LAYER.test(path)) this.backwardPoint(tensorsIn(args[0])[0], out ? tensorsIn(out)[0] : undefined);
    // A sparse matrix times a dense one (a graph's adjacency times node features): backward computes the dense
    // operand's gradient as the transposed product, which takes two dense-sized buffers beside it (measured on the
    // H200 for COO: 4 x the operand over what forward kept, its own gradient and the output's included;
    // test/gpu/estimator/results/probe_packed.json).
    const dense = tensorsIn(args[1])[0];
    if (SPARSE_PRODUCT.test(path) && dense && !this.noGrad.has(dense.id)) {
      this.backwardPoint(dense, out ? tensorsIn(out)[0] : undefined, 2 * numel(dense.shape));
    }
    return out;
  }

  /**
   * `deform_conv2d(input, offset, weight, bias, stride, padding, dilation, mask)`: the weight's output channels on the
   * grid a convolution of the weight's kernel makes (the offsets' grid). Its autograd function keeps the input, the
   * offsets, the mask and the weight; torchvision's autocast wrapper runs it in fp32, so under autocast those are fp32
   * copies, and the output is cast back to the input's dtype. Forward and each of backward's passes gather the
   * sampled input into a column buffer of in_channels x kernel x output grid for each image of a slice of up to 32
   * images: one per image at batches up to 32, held at backward beside the gradients.
   */
  private deformConv2d(args: Value[], kwargs: Map<string, Value>): Value | undefined {
    const argument = (index: number, name: string): TensorValue | undefined => tensorsIn(kwargs.get(name) ?? args[index])[0];
    const [x, offset, weight, mask] = [argument(0, 'input'), argument(1, 'offset'), argument(2, 'weight'), argument(7, 'mask')];
    if (!x || !weight || x.shape.length !== 4 || weight.shape.length !== 4) {
      this.mismatches++;
      return undefined;
    }
    const pair = (index: number, name: string, fallback: number): [number, number] => {
      const value = kwargs.get(name) ?? args[index];
      if (value?.kind === 'list') return [numberOf(value.items[0]) ?? fallback, numberOf(value.items[1] ?? value.items[0]) ?? fallback];
      const single = numberOf(value) ?? fallback;
      return [single, single];
    };
    const [stride, padding, dilation] = [pair(4, 'stride', 1), pair(5, 'padding', 0), pair(6, 'dilation', 1)];
    const kernel = weight.shape.slice(2) as [number, number];
    const grid = [0, 1].map((d) => Math.floor((x.shape[d + 2]! + 2 * padding[d]! - dilation[d]! * (kernel[d]! - 1) - 1) / stride[d]!) + 1);
    const operands = [x, offset, mask].filter((t): t is TensorValue => t !== undefined);
    const out = this.recorded([...args, ...kwargs.values()], false, () => {
      this.keepCastOperand('fp32', ...operands);
      this.convolutions++;
      const made = this.produce([x.shape[0]!, weight.shape[0]!, ...grid], operands);
      return this.precision(made, !this.fullPrecision.has(x.id));
    });
    const columns = x.shape[0]! * weight.shape[1]! * kernel[0] * kernel[1] * grid[0]! * grid[1]!;
    this.backwardPoint(x, out, columns);
    return out;
  }

  /**
   * `roi_align(input, boxes, output_size, spatial_scale, sampling_ratio, aligned)`: (K, C, oh, ow) for K boxes, given
   * as one (K, 5) tensor of (batch index, x1, y1, x2, y2) or a list of (L, 4) tensors, one per image. Its autograd
   * function keeps only the boxes and the input's size; torchvision's autocast wrapper runs it in fp32 and casts the
   * output back to the input's dtype. Backward scatters the output's gradient into an input-sized one. Measured on
   * the H200 (test/gpu/estimator/results/probe_under11.jsonl: roi_align then `.float().square()`): forward keeps one
   * fp32 output-sized tensor, the square's, and the backward peak is the square's chain, whatever the input's dtype.
   */
  private roiAlign(args: Value[], kwargs: Map<string, Value>): Value | undefined {
    const x = tensorsIn(kwargs.get('input') ?? args[0])[0];
    const boxesValue = kwargs.get('boxes') ?? args[1];
    const boxes = tensorsIn(boxesValue);
    const sizeValue = kwargs.get('output_size') ?? args[2];
    const size = sizeValue?.kind === 'list' ? sizeValue.items.map(numberOf) : [numberOf(sizeValue), numberOf(sizeValue)];
    if (!x || x.shape.length !== 4 || boxes.length === 0 || size.length !== 2 || size.some((d) => d === undefined)) {
      this.mismatches++;
      return undefined;
    }
    const rois = boxesValue?.kind === 'list' ? boxes.reduce((sum, t) => sum + t.shape[0]!, 0) : boxes[0]!.shape[0]!;
    const out = this.recorded([x], false, () => {
      const made = this.produce([rois, x.shape[1]!, size[0]!, size[1]!], [x]);
      return this.precision(made, !this.fullPrecision.has(x.id));
    });
    this.backwardPoint(x, out);
    return out;
  }

  /**
   * A one-dimensional FFT along `dim` (the last by default) at length `n` (the input's, or its padded or cut size):
   * rfft makes n // 2 + 1 complex bins, fft and ifft n, irfft n real values from a complex input (2 (m - 1) without
   * n). The transforms run in fp32 (complex64) whatever autocast says and are linear: their backward reads nothing
   * saved but the sizes. Measured on the H200 (test/gpu/estimator/results/probe_under11.jsonl, an S4D long
   * convolution `irfft(rfft(u, n=2L) * rfft(k, n=2L), n=2L)[..., :L]`): forward keeps 5.25 x u's fp32 bytes, the two
   * spectra the product keeps (2 x each) and the square's input after it (1 x), and as much again as the spectra:
   * counted as each real input's transform keeping its copy padded to n (what n's bytes make: n // 2 + 1 complex
   * elements are n + 2 floats).
   */
  private fourier(kind: string, x: TensorValue, args: Value[], kwargs: Map<string, Value>): TensorValue {
    const given = numberOf(kwargs.get('n') ?? args[0]);
    const d = numberOf(kwargs.get('dim') ?? args[1]) ?? -1;
    const axis = d < 0 ? x.shape.length + d : d;
    const length = x.shape[axis] ?? 1;
    const inverseReal = kind === 'irfft';
    const n = given ?? (inverseReal ? 2 * (length - 1) : length);
    const shapeAt = (size: number): number[] => x.shape.map((s, i) => (i === axis ? size : s));
    const real = !this.complexTensors.has(x.id);
    if (real && !inverseReal && this.recording && !this.noGrad.has(x.id)) {
      this.keep(given !== undefined && given !== length ? this.precision(this.produce(shapeAt(n), [x]), false) : x);
    }
    const out = this.precision(this.produce(shapeAt(kind === 'rfft' ? Math.floor(n / 2) + 1 : n), [x]), false);
    return inverseReal ? this.markReal(out) : (this.markComplex(out), out);
  }

  /** Marks a tensor complex64: its storage two fp32 elements an element. */
  private markComplex(t: TensorValue): void {
    this.complexTensors.add(t.id);
    this.fullPrecision.add(t.id);
    this.storage.set(t.id, 2 * numel(t.shape));
  }

  /** Of tensors kept (elements by id, as keptApart gives them), the elements of those in fp32 under autocast. */
  /** Of tensors kept (elements by id), those with autograd history (the loss's gradients reach them). */
  withHistory(kept: ReadonlyMap<number, number>): Map<number, number> {
    return new Map([...kept].filter(([id]) => !this.noGrad.has(id)));
  }

  fullPrecisionElements(kept: ReadonlyMap<number, number>): number {
    return [...kept].reduce((sum, [id, elements]) => sum + (this.fullPrecision.has(id) ? elements : 0), 0);
  }

  /** `z.real` of a complex tensor: real elements of its shape; keeping them keeps the complex storage. */
  private realView(z: TensorValue): TensorValue {
    const view = this.make(z.shape, false);
    this.storage.set(view.id, this.storageOf(z));
    this.fullPrecision.add(view.id);
    if (this.noGrad.has(z.id)) this.noGrad.add(view.id);
    if (this.batchless.has(z.id)) this.batchless.add(view.id);
    return view;
  }

  /** A real tensor made from complex ones (abs, irfft, view_as_real): one fp32 element an element. */
  private markReal(t: TensorValue): TensorValue {
    if (this.complexTensors.delete(t.id)) this.storage.set(t.id, numel(t.shape));
    return t;
  }

  private backwardPoint(input: TensorValue | undefined, output: TensorValue | undefined, workspace = 0): void {
    if (!output || this.noGrad.has(output.id) || output === input) return;
    const inputGradient = input && !this.noGrad.has(input.id) ? numel(input.shape) : 0;
    this.gradientPair = Math.max(this.gradientPair, numel(output.shape) + inputGradient);
    this.backwardElements(this.savedElements + numel(output.shape) + inputGradient + workspace);
  }

  private functionOp(path: string, args: Value[], kwargs: Map<string, Value>): Value | undefined {
    const packing = /^torch\.nn\.utils\.rnn\.(pack_padded_sequence|pad_packed_sequence)$/.exec(path);
    const packed = tensorsIn(args[0])[0];
    if (packing && packed) {
      const batchFirstArg = kwargs.get('batch_first') ?? args[packing[1] === 'pack_padded_sequence' ? 2 : 1];
      const batchFirst = batchFirstArg?.kind === 'bool' && batchFirstArg.value;
      if (packing[1] === 'pack_padded_sequence') return this.pack(packed, tensorsIn(args[1] ?? kwargs.get('lengths'))[0], batchFirst);
      return { kind: 'list', items: [this.unpack(packed, batchFirst, numberOf(kwargs.get('total_length') ?? args[3])), this.produce([this.samples], [], true)], tuple: true };
    }
    const fourier = FOURIER.exec(path);
    if (fourier && packed && !packed.integer) return this.fourier(fourier[1]!, packed, args.slice(1), kwargs);
    // torch.sparse.mm / torch.spmm: a sparse matrix (a graph's adjacency) times a dense one, a product like mm.
    const match = /^torch\.(?:nn\.functional\.|special\.|linalg\.|sparse\.)?(\w+)$/.exec(path);
    if (!match) return undefined;
    const name = match[1]!;
    if (name === 'einsum' && args[0]?.kind === 'string') return this.einsum(args[0].value, args.slice(1).flatMap(tensorsIn));
    if (name === 'multi_head_attention_forward') return this.multiHeadAttentionForward(args, kwargs);
    const x = tensorsIn(args[0])[0];
    // Functions that make tensors from sizes.
    if (!x) {
      if (name === 'linspace' || name === 'logspace') {
        const steps = numberOf(kwargs.get('steps') ?? args[2]);
        return steps !== undefined && steps > 0 ? this.produce([steps], []) : undefined;
      }
      if (name === 'arange') {
        const n = numberOf(args[1]) !== undefined ? numberOf(args[1])! - (numberOf(args[0]) ?? 0) : numberOf(args[0]);
        return n !== undefined ? this.produce([n], [], true) : undefined;
      }
      // Integers drawn at random (`torch.randint(0, T, (E,))`, an edge list's types) where the trace builds the step's
      // data (see buildsData): the draw is kept with the tensor.
      if (this.buildsData && (name === 'randint' || name === 'randperm')) {
        const sizes = name === 'randperm' ? args.slice(0, 1) : [kwargs.get('size') ?? args[args.length >= 3 ? 2 : 1] ?? UNKNOWN];
        const dims = dimsOf(sizes);
        if (dims.length === 0 || dims.some((d) => d === undefined)) return undefined;
        const made = this.produce(dims as number[], [], true);
        const drawn = name === 'randperm' ? { least: 0, most: dims[0]! - 1 } : drawnRange({ kind: 'call', path: 'torch.randint', args, kwargs, line: 0 });
        return drawn ? { ...made, drawn } : made;
      }
      if (/^(zeros|ones|randn|rand|empty|full)$/.test(name) && args.length > 0) {
        const dims = dimsOf(name === 'full' ? args.slice(0, 1) : args);
        return dims.every((d) => d !== undefined) ? this.produce(dims as number[], [], makesIntegers(`torch.${name}`, args, kwargs)) : undefined;
      }
      if ((name === 'cat' || name === 'concat' || name === 'stack') && args[0]?.kind === 'list') {
        const parts = tensorsIn(args[0]);
        if (parts.length === 0) return undefined;
        return this.function(path, [{ kind: 'list', items: parts, tuple: true }, ...args.slice(1)], kwargs);
      }
      return undefined;
    }
    if (SAME_AS_METHOD.has(name)) return this.method(x, name, args.slice(1), kwargs);
    const dim = (index: number, fallback: number): number => numberOf(kwargs.get('dim') ?? args[index]) ?? fallback;
    switch (name) {
      case 'relu':
      case 'relu_':
        return this.relu(x, name === 'relu_' || (kwargs.get('inplace')?.kind === 'bool' && (kwargs.get('inplace') as { value: boolean }).value));
      // As their modules (LeakyReLU, ReLU6): backward reads the input out of place, the result in place.
      case 'relu6':
      case 'hardtanh':
      case 'hardtanh_':
      case 'leaky_relu':
      case 'leaky_relu_': {
        const inplace = name.endsWith('_') || (kwargs.get('inplace')?.kind === 'bool' && (kwargs.get('inplace') as { value: boolean }).value);
        if (inplace) return this.relu(x, true);
        this.keep(x);
        return this.produce(x.shape, [x]);
      }
      case 'conv1d':
      case 'conv2d':
      case 'conv3d':
      case 'conv_transpose1d':
      case 'conv_transpose2d':
      case 'conv_transpose3d': {
        const convolved = this.convolution(name, x, args, kwargs);
        if (convolved) return convolved;
        break;
      }
      // GLU halves `dim` (the last by default) into a value and a gate; backward reads the input.
      case 'glu': {
        const d = dim(1, -1);
        const axis = d < 0 ? x.shape.length + d : d;
        this.keep(x);
        return this.produce(x.shape.map((size, i) => (i === axis ? Math.max(1, Math.floor(size / 2)) : size)), [x]);
      }
      // Clamping: backward reads the input (where it was in range), the output is a tensor of its own.
      case 'clamp':
      case 'clip':
        return this.method(x, name, args.slice(1), kwargs);
      // A norm over dimensions (the whole tensor without one): backward reads the input and the norm.
      case 'norm':
      case 'vector_norm':
        return this.method(x, 'norm', args.slice(1), kwargs);
      case 'gelu':
      case 'silu':
      case 'mish':
      case 'elu':
      case 'hardswish':
      case 'softplus':
      // log_sigmoid's backward reads its input (a negative-sampling loss over dot products).
      case 'logsigmoid':
      case 'layer_norm':
      case 'group_norm':
      case 'batch_norm':
      case 'rms_norm':
      case 'normalize': {
        const fp32List = name === 'layer_norm' || name === 'group_norm' || name === 'rms_norm' || name === 'normalize';
        if (fp32List) this.keepCastOperand('fp32', x);
        else this.keep(x);
        const out = this.produce(x.shape, [x]);
        if (fp32List) this.precision(out, false);
        // The weight given (`F.layer_norm(x, shape, self.weight, self.bias)`): a trained one is stacked under vmap too.
        const weightAt = FUNCTIONAL_NORM_WEIGHT[name];
        const weight = weightAt ? tensorsIn(kwargs.get('weight') ?? args[weightAt])[0] : undefined;
        if (weight && this.excluded.has(weight.id) && !this.noGrad.has(weight.id)) this.keepStackedNormalized(out);
        return out;
      }
      case 'sigmoid':
      case 'tanh':
      case 'softmax':
      case 'log_softmax':
      case 'exp': {
        const out = this.produce(x.shape, [x]);
        if (name === 'softmax' || name === 'log_softmax' || name === 'exp') this.precision(out, false);
        this.keep(out);
        return out;
      }
      // Backward of a sine or cosine reads its input (a Fourier position encoding of coordinates).
      case 'sin':
      case 'cos': {
        this.keep(x);
        return this.produce(x.shape, [x]);
      }
      // A grid of coordinates from 1-D axes: one tensor per axis, each as large as the grid ('xy' swaps the first
      // two axes).
      case 'meshgrid': {
        const axes = args.flatMap(tensorsIn);
        const sides = axes.map((t) => numel(t.shape));
        const indexing = kwargs.get('indexing');
        if (indexing?.kind === 'string' && indexing.value === 'xy' && sides.length >= 2) [sides[0], sides[1]] = [sides[1]!, sides[0]!];
        return { kind: 'list', items: axes.map(() => this.produce(sides, axes)), tuple: true };
      }
      case 'dropout':
      case 'dropout2d':
      case 'dropout3d': {
        const training = kwargs.get('training') ?? args[2];
        if (training?.kind === 'bool' && !training.value) return x;
        return this.dropout(x, numberOf(kwargs.get('p') ?? args[1]) ?? 0.5);
      }
      case 'max_pool1d':
      case 'max_pool2d':
      case 'max_pool3d':
      case 'avg_pool1d':
      case 'avg_pool2d':
      case 'avg_pool3d': {
        const window = poolWindow(spatialDims(name), kwargs.get('kernel_size') ?? args[1], kwargs.get('stride') ?? args[2], kwargs.get('padding') ?? args[3]);
        return name.startsWith('max') ? this.maxPool(x, window) : this.pool(x, window);
      }
      case 'adaptive_avg_pool1d':
      case 'adaptive_avg_pool2d':
      case 'adaptive_avg_pool3d':
      case 'adaptive_max_pool1d':
      case 'adaptive_max_pool2d':
      case 'adaptive_max_pool3d': {
        const spatial = spatialDims(name);
        const size = kwargs.get('output_size') ?? args[1];
        const dims = size?.kind === 'list' ? size.items.map((i) => numberOf(i) ?? 1) : Array(spatial).fill(numberOf(size) ?? 1);
        return this.produce([...x.shape.slice(0, x.shape.length - spatial), ...dims], [x]);
      }
      case 'interpolate':
      case 'upsample':
        return this.interpolate(x, kwargs.get('size') ?? args[1], kwargs.get('scale_factor') ?? args[2]);
      case 'flatten':
        return this.flatten(x, numberOf(kwargs.get('start_dim') ?? args[1]) ?? 0, numberOf(kwargs.get('end_dim') ?? args[2]) ?? -1);
      case 'cat':
      case 'concat': {
        const parts = tensorsIn(args[0]);
        const d = dim(1, 0);
        const axis = d < 0 ? x.shape.length + d : d;
        const shape = [...x.shape];
        shape[axis] = parts.reduce((sum, t) => sum + (t.shape[axis] ?? 1), 0);
        // Token ids joined (`torch.cat([bos, tgt[:, :-1]], dim=1)`, a decoder's teacher-forced input) stay ids.
        const joined = this.produce(shape, parts, parts.every((t) => t.integer));
        const drawn = joinedDraw(parts);
        return drawn ? { ...joined, drawn } : joined;
      }
      case 'stack': {
        const parts = tensorsIn(args[0]);
        const d = dim(1, 0);
        const shape = [...x.shape];
        shape.splice(d < 0 ? shape.length + d + 1 : d, 0, parts.length);
        return this.produce(shape, parts, parts.every((t) => t.integer));
      }
      case 'matmul':
      case 'bmm':
      case 'mm':
      case 'spmm':
        return this.binary('@', args[0]!, args[1] ?? UNKNOWN);
      case 'scaled_dot_product_attention': {
        const [q, k, v] = [x, tensorsIn(args[1])[0], tensorsIn(args[2])[0]];
        if (q.shape.length !== 4 && k && v) return this.mathAttention(q, k, v, numberOf(kwargs.get('dropout_p') ?? args[4]) ?? 0);
        // The fused kernels (flash, memory-efficient) write the output as batch x tokens x heads x head_dim and
        // return it transposed: `y.transpose(1, 2).contiguous()` copies nothing (measured on the H200: a GPT block
        // keeps 16 token-wide tensors, not 17; test/gpu/estimator/results/compile_saved.json).
        const made = this.produce([...q.shape.slice(0, -1), v?.shape[v.shape.length - 1] ?? q.shape[q.shape.length - 1]!], [q]);
        const out = this.precision(q.shape.length === 4 ? { ...made, layout: [0, 2, 1, 3] } : made, true);
        this.keepCastOperand('half', q, ...(k ? [k] : []), ...(v ? [v] : []));
        this.keep(out);
        return out;
      }
      case 'cross_entropy':
        this.lossInForward = true;
        this.crossEntropyCalls += 1;
        this.lossInputElements = Math.max(this.lossInputElements, numel(x.shape));
        if (!x.integer && this.fullPrecision.has(x.id)) this.lossInputFp32.autocast = true;
        if (!x.integer && this.castToFp32.has(x.id)) this.lossInputFp32.explicit = true;
        return this.produce([1]);
      case 'mse_loss':
      case 'l1_loss':
      case 'nll_loss':
      case 'binary_cross_entropy_with_logits':
        return this.produce([1]);
      case 'grid_sample': {
        // `F.grid_sample(input, grid)`: one value per grid point, per channel: (N, C, *grid's points). Backward
        // reads both the input and the grid (a correlation volume sampled around each pixel, RAFT's lookup).
        const grid = tensorsIn(args[1] ?? kwargs.get('grid'))[0];
        if (!grid || grid.shape.length !== x.shape.length) break;
        this.keep(x, grid);
        return this.produce([x.shape[0]!, x.shape[1]!, ...grid.shape.slice(1, -1)], [x, grid]);
      }
      case 'zeros_like':
      case 'ones_like':
      case 'randn_like':
      case 'rand_like':
      case 'empty_like':
      case 'full_like':
        return this.produce(x.shape, [], x.integer);
      case 'nonzero':
      case 'argwhere':
        return this.method(x, name, args.slice(1), kwargs);
      case 'where': {
        // `torch.where(mask)`: the positions of its set elements, one (K,) tensor per dimension (nonzero's as_tuple).
        if (args.length === 1 && kwargs.size === 0) return this.positions(x, true);
        // `torch.where(cond, a, b)`: the broadcast of the three; integer where both choices are (a label swapped
        // for a null class). A number choice takes the tensor's kind.
        const [a, b] = [tensorsIn(args[1])[0], tensorsIn(args[2])[0]];
        if (!a && !b) break;
        const shape = [x, a, b].reduce<number[]>((acc, t) => (t ? broadcast(acc, t.shape) : acc), []);
        return this.produce(shape, [a, b].filter((t): t is TensorValue => !!t), (a?.integer ?? true) && (b?.integer ?? true));
      }
      case 'pad': {
        const padded = this.padded(x, args[1]?.kind === 'list' ? args[1].items.map(numberOf) : []);
        if (padded) return padded;
        break;
      }
      // A float tensor of (..., 2) seen as complex, and back: the last dimension of two floats is one complex element.
      case 'view_as_complex': {
        if (x.shape[x.shape.length - 1] !== 2) break;
        const out = this.produce(x.shape.slice(0, -1), [x]);
        this.markComplex(out);
        return out;
      }
      case 'view_as_real':
        return this.markReal(this.precision(this.produce([...x.shape, 2], [x]), false));
      case 'stft': {
        // A short-time Fourier transform of (batch, samples) or (samples): onesided bins n_fft // 2 + 1 by frames
        // (centred by default: 1 + samples // hop). The complex output is counted as its element count.
        const nFft = numberOf(kwargs.get('n_fft') ?? args[1]);
        if (nFft === undefined || x.shape.length < 1) break;
        const hop = numberOf(kwargs.get('hop_length') ?? args[2]) ?? Math.floor(nFft / 4);
        const centred = kwargs.get('center') ?? args[5];
        const samples = x.shape[x.shape.length - 1]!;
        const frames = centred?.kind === 'bool' && !centred.value ? 1 + Math.floor((samples - nFft) / hop) : 1 + Math.floor(samples / hop);
        const onesided = kwargs.get('onesided');
        const bins = onesided?.kind === 'bool' && !onesided.value ? nFft : Math.floor(nFft / 2) + 1;
        return this.produce([...x.shape.slice(0, -1), bins, frames], [x]);
      }
      case 'mean':
      case 'sum':
      case 'amax':
      case 'amin':
        return this.reduce(x, args.slice(1), kwargs);
      case 'max':
      case 'min':
        return this.extreme(x, args.slice(1), kwargs);
      case 'one_hot': {
        // F.one_hot(idx, n): int64, one more axis of n classes.
        const classes = numberOf(args[1] ?? kwargs.get('num_classes'));
        return classes !== undefined && classes > 0 ? this.produce([...x.shape, classes], [x], true) : undefined;
      }
      case 'cumsum':
      case 'cumprod': {
        // A running total keeps the shape and the dtype (cumprod's backward reads its input); autocast gives a float
        // one an fp32 output (a linear attention's prefix sums of k v^T): its policy for cumsum and cumprod sets the
        // op's dtype to fp32 and leaves the input as it is.
        if (name === 'cumprod') this.keep(x);
        const out = this.produce(x.shape, [x], x.integer);
        if (x.integer) return out;
        const running = this.precision(out, false);
        // cumsum's backward is a reversed running sum of the gradient cast to the input's dtype,
        // `grad.to(input.dtype).flip(d).cumsum(d).flip(d)` in one expression: the output's gradient (fp32 under
        // autocast) and three buffers of its size are alive at once, in the input's dtype, with the cast copy beside
        // them where that is half (measured on the H200, a checkpointed block of running sums: 4.13 such tensors
        // over the persistent state in fp32, 3.06 under bf16 autocast; test/gpu/estimator/results/probe_ckpt9.jsonl).
        if (name === 'cumsum' && !this.noGrad.has(x.id)) {
          const halfInput = !this.fullPrecision.has(x.id);
          const buffer = { elements: numel(running.shape), fp32: !halfInput };
          this.blockGradients([this.gradientOf(running), ...(halfInput ? [{ ...buffer, autocastOnly: true }] : []), buffer, buffer, buffer]);
        }
        return running;
      }
      case 'std':
      case 'var':
        // Backward of a spread reads the input (and the mean it recomputes from it).
        this.keep(x);
        return this.reduce(x, args.slice(1), kwargs);
      case 'logsumexp': {
        // A log-sum-exp over a dimension (a CRF's forward algorithm): it removes that dimension; backward reads the
        // input and the result, and autocast runs it in fp32.
        const out = this.reduce(x, args.slice(1), kwargs) as TensorValue;
        this.keep(x, out);
        return this.precision(out, false);
      }
      case 'transpose':
      case 'permute':
      case 'reshape':
      case 'unsqueeze':
      case 'squeeze':
      case 'chunk':
      case 'split':
      case 'unbind':
        return this.method(x, name, args.slice(1), kwargs);
      case 'add':
      case 'sub':
      case 'mul':
      case 'div':
        return this.binary({ add: '+', sub: '-', mul: '*', div: '/' }[name]!, args[0]!, args[1] ?? UNKNOWN);
      case 'einsum':
        break;
      default:
        break;
    }
    this.unmodelled.add(path);
    return this.produce(x.shape, [x]);
  }

  /**
   * `F.conv2d(x, weight, bias, stride, padding, dilation, groups)` and the other convolutions as functions (a fixed
   * filter bank, `groups=C` for a depthwise one): the weight's output channels (a transposed one's: its second axis
   * times the groups) on the grid its kernel makes, as nn.Conv2d. Autograd keeps the input and the weight; a weight
   * without a batch axis (a parameter, a buffer, a filter made from them) is not the activations'. Undefined where
   * the weight's shape does not fit the input.
   */
  private convolution(name: string, x: TensorValue, args: Value[], kwargs: Map<string, Value>): TensorValue | undefined {
    const weight = tensorsIn(kwargs.get('weight') ?? args[1])[0];
    const spatial = spatialDims(name);
    if (!weight || weight.shape.length !== spatial + 2 || x.shape.length < spatial + 1) {
      this.mismatches++;
      return undefined;
    }
    const transposed = name.startsWith('conv_transpose');
    const at = (index: number, keyword: string): Value | undefined => kwargs.get(keyword) ?? args[index];
    const perDimension = (value: Value | undefined, fallback: number): number[] => {
      if (value?.kind === 'list') return Array.from({ length: spatial }, (_, d) => numberOf(value.items[d] ?? value.items[0]) ?? fallback);
      return new Array<number>(spatial).fill(numberOf(value) ?? fallback);
    };
    const kernel = weight.shape.slice(2);
    const stride = perDimension(at(3, 'stride'), 1);
    const paddingValue = at(4, 'padding');
    const dilation = perDimension(at(transposed ? 7 : 5, 'dilation'), 1);
    const padding = paddingValue?.kind === 'string'
      ? kernel.map((k, d) => (paddingValue.value === 'same' ? Math.floor((dilation[d]! * (k - 1)) / 2) : 0))
      : perDimension(paddingValue, 0);
    const outputPadding = transposed ? perDimension(at(5, 'output_padding'), 0) : [];
    const groups = numberOf(at(6, 'groups')) ?? 1;
    const channels = transposed ? weight.shape[1]! * groups : weight.shape[0]!;
    const size = (n: number, d: number): number => (transposed
      ? (n - 1) * stride[d]! - 2 * padding[d]! + dilation[d]! * (kernel[d]! - 1) + outputPadding[d]! + 1
      : Math.floor((n + 2 * padding[d]! - dilation[d]! * (kernel[d]! - 1) - 1) / stride[d]!) + 1);
    this.keepCastOperand('half', x, ...(this.batchless.has(weight.id) ? [] : [weight]));
    this.convolutions++;
    const lead = x.shape.slice(0, x.shape.length - spatial - 1);
    return this.precision(this.produce([...lead, channels, ...x.shape.slice(-spatial).map(size)], [x, weight]), true);
  }

  /**
   * `F.pad(x, (left, right, top, bottom, ...))` and the padding layers: pairs from the last dimension backwards, into
   * a new tensor. Backward of a pad (constant, reflected, replicated or circular) needs only the shapes: it keeps
   * nothing. Undefined where a width is not known.
   */
  private padded(x: TensorValue, widths: ReadonlyArray<number | undefined>): TensorValue | undefined {
    if (widths.length === 0 || widths.length % 2 !== 0 || widths.some((w) => w === undefined)) return undefined;
    const shape = [...x.shape];
    for (let k = 0; k < widths.length / 2 && k < shape.length; k++) {
      const axis = shape.length - 1 - k;
      shape[axis] = shape[axis]! + widths[2 * k]! + widths[2 * k + 1]!;
    }
    return this.produce(shape, [x], x.integer);
  }

  /**
   * F.scaled_dot_product_attention where only the math kernel runs: the fused kernels (flash, memory-efficient,
   * cuDNN) take 4-D q, k, v only, so 3-D or 5-D ones (timm Twins' windows as their own axis) go to the composite
   * math kernel. It upcasts half inputs to fp32 and keeps, all fp32: the scaled q and k (copies), v (under autocast
   * its fp32 copy) and the softmax's probabilities (..., queries, keys); with dropout the dropped probabilities and
   * their mask too. Its output, cast back to the inputs' dtype, is kept by nothing of its own.
   */
  private mathAttention(q: TensorValue, k: TensorValue, v: TensorValue, dropout: number): TensorValue {
    const scores = broadcast(q.shape.slice(0, -2), k.shape.slice(0, -2));
    const probabilities = [...scores, q.shape[q.shape.length - 2]!, k.shape[k.shape.length - 2]!];
    const fp32 = (shape: number[], inputs: TensorValue[]): TensorValue => this.precision(this.produce(shape, inputs), false);
    const scaled = [fp32(q.shape, [q]), fp32(k.shape, [k])];
    this.keep(...scaled);
    this.keepCastOperand('fp32', v);
    let weights = fp32(probabilities, [q, k]);
    this.keep(weights);
    if (dropout > 0) {
      this.fixedBytes += numel(probabilities);
      weights = fp32(probabilities, [weights]);
      this.keep(weights);
    }
    return this.precision(this.produce([...probabilities.slice(0, -1), v.shape[v.shape.length - 1]!], [weights, v]), true);
  }

  /**
   * `F.multi_head_attention_forward(query, key, value, ...)` (sequence-first, as nn.MultiheadAttention calls it; CLIP's
   * attention pooling calls it directly): kept as cross-attention (keepCrossAttention); the output has the query's
   * shape, out_proj's width.
   */
  private multiHeadAttentionForward(args: Value[], kwargs: ReadonlyMap<string, Value>): Value | undefined {
    const [query, key, value] = (['query', 'key', 'value'] as const).map((name, i) => tensorsIn(kwargs.get(name) ?? args[i])[0]);
    if (!query || !key) return undefined;
    const outWeight = tensorsIn(kwargs.get('out_proj_weight') ?? args[14])[0];
    const width = outWeight?.shape.length === 2 ? outWeight.shape[0]! : query.shape[query.shape.length - 1]!;
    for (const t of [query, key, ...(value && value.id !== key.id ? [value] : [])]) this.keep(t);
    const needWeights = kwargs.get('need_weights');
    this.keepCrossAttention(numel(query.shape), numel(key.shape), !(needWeights?.kind === 'bool' && !needWeights.value));
    const weights = needWeights?.kind === 'bool' && !needWeights.value ? undefined
      : this.produce([query.shape[1] ?? 1, query.shape[0] ?? 1, key.shape[0] ?? 1]);
    const out = this.precision(this.produce([...query.shape.slice(0, -1), width], [query]), true);
    if (this.recording) this.backwardPoint(query, out, crossAttentionBackward(numel(query.shape), numel(key.shape), numel(key.shape)));
    return { kind: 'list', items: [out, weights ?? { kind: 'none' }], tuple: true };
  }

  /**
   * `torch.einsum("bqhd,bkhd->bhqk", q, k)`: a contraction like matmul (on autocast's half list), which keeps both
   * operands for backward; the output's shape comes from the letters after `->` (or, implicitly, those that appear
   * once, in order). An equation with `...` or operands that do not match it is not traced.
   */
  private einsum(equation: string, operands: TensorValue[]): Value | undefined {
    const [inputs, explicit] = equation.replace(/\s+/g, '').split('->') as [string, string | undefined];
    const terms = inputs.split(',');
    if (equation.includes('...') || terms.length !== operands.length) return undefined;
    const sizes = new Map<string, number>();
    for (const [i, term] of terms.entries()) {
      const shape = operands[i]!.shape;
      if (term.length !== shape.length) {
        this.mismatches++;
        return undefined;
      }
      for (const [k, letter] of [...term].entries()) if ((sizes.get(letter) ?? 1) === 1) sizes.set(letter, shape[k]!);
    }
    const letters = [...inputs.replace(/,/g, '')];
    const output = explicit ?? [...new Set(letters)].filter((l) => letters.indexOf(l) === letters.lastIndexOf(l)).sort().join('');
    // One operand whose letters are only put in another order (`"nhwpqc->nchpwq"`, unpatchifying): a permuted view,
    // which keeps nothing for backward.
    const only = operands.length === 1 ? terms[0]! : undefined;
    if (only && output.length === only.length && new Set(only).size === only.length && [...output].every((l) => only.includes(l))) {
      return reordered(operands[0]!, [...output].map((l) => only.indexOf(l)));
    }
    this.keepCastOperand('half', ...operands);
    const out = this.precision(this.produce([...output].map((l) => sizes.get(l) ?? 1), operands), true);
    // Its backward makes each operand's gradient in half precision under autocast, and an fp32 operand's gradient
    // is then cast back to fp32 while the half one is alive.
    const withGradient = operands.filter((t) => !this.noGrad.has(t.id) && !t.integer);
    if (withGradient.length > 0) {
      this.blockGradients([this.gradientOf(out), ...withGradient.flatMap((t) => [{ elements: numel(t.shape), fp32: false },
        ...(this.fullPrecision.has(t.id) ? [{ elements: numel(t.shape), fp32: true, autocastOnly: true }] : [])])]);
    }
    return out;
  }

  /**
   * `torch.max(x, dim)` / `x.max(dim)` (and min): (values, indices), backward scattering the gradient through the
   * int64 indices it keeps; with another tensor, element-wise (it broadcasts as a sum does); alone, the largest value.
   */
  private extreme(x: TensorValue, rest: Value[], kwargs: Map<string, Value>): Value {
    if (rest[0]?.kind === 'tensor') return this.binaryOp('+', x, rest[0]) ?? x;
    if (!(rest[0] ?? kwargs.get('dim'))) return this.reduce(x, [], kwargs);
    const values = this.reduce(x, rest, kwargs) as TensorValue;
    const indices = this.produce(values.shape, [x], true);
    if (this.recording) this.fixedBytes += numel(indices.shape) * 8;
    return { kind: 'list', items: [values, indices], tuple: true };
  }

  private reduce(x: TensorValue, args: Value[], kwargs: Map<string, Value>): Value {
    const dimValue = kwargs.get('dim') ?? args[0];
    const keepdim = (kwargs.get('keepdim') ?? args[1])?.kind === 'bool' && ((kwargs.get('keepdim') ?? args[1]) as { value: boolean }).value;
    if (!dimValue || dimValue.kind === 'none') return this.produce([1], [x]);
    const dims = (dimValue.kind === 'list' ? dimValue.items : [dimValue]).map((d) => numberOf(d)).map((d) => (d !== undefined && d < 0 ? x.shape.length + d : d));
    const shape = x.shape.flatMap((size, i) => (dims.includes(i) ? (keepdim ? [1] : []) : [size]));
    return this.produce(shape, [x]);
  }

  attribute(receiver: TensorValue, name: string): Value {
    if (name === 'shape') return { kind: 'list', items: receiver.shape.map((d) => ({ kind: 'number', value: d }) as Value), tuple: true };
    if (name === 'ndim') return { kind: 'number', value: receiver.shape.length };
    if (name === 'T' || name === 'mT') return this.method(receiver, 'transpose', [{ kind: 'number', value: -2 }, { kind: 'number', value: -1 }], new Map());
    if (name === 'device' || name === 'dtype') return UNKNOWN;
    // `x.max(dim=2).values`: a reduction over a dimension returns (values, indices); the trace keeps the values.
    if (name === 'values') return receiver;
    // A complex tensor's real and imaginary parts (an STFT's): real views of its shape that share its storage.
    if (name === 'real' || name === 'imag') return this.complexTensors.has(receiver.id) ? this.realView(receiver) : receiver;
    if (name === 'indices') return { ...receiver, integer: true };
    return UNKNOWN;
  }

  method(x: TensorValue, name: string, args: Value[], kwargs: Map<string, Value>): Value {
    const out = this.recorded([x, ...args, ...kwargs.values()], false, () => this.methodOp(x, name, args, kwargs));
    if (GRADIENT_KEEPING_METHOD.test(name)) this.keepsGradientOf(out, name);
    return out;
  }

  /**
   * An op whose double backward reads its output's gradient (see GRADIENT_KEEPING_LAYER), where it records: that
   * gradient, and what a composite activation's backward saves beside it (derivative-graphs.ts).
   */
  private keepsGradientOf(out: Value | undefined, op: string): void {
    const output = out ? tensorsIn(out)[0] : undefined;
    if (output && !output.integer && !this.noGrad.has(output.id)) this.gradientKept += gradientTensorsSaved(op) * numel(output.shape);
  }

  private methodOp(x: TensorValue, name: string, args: Value[], kwargs: Map<string, Value>): Value {
    const n = x.shape.length;
    const axis = (d: number | undefined, extra = 0): number => (d === undefined ? 0 : d < 0 ? n + extra + d : d);
    switch (name) {
      case 'size': {
        const d = numberOf(args[0] ?? kwargs.get('dim'));
        return d === undefined ? this.attribute(x, 'shape') : { kind: 'number', value: x.shape[axis(d)] ?? 1 };
      }
      case 'dim':
      case 'ndimension':
        return { kind: 'number', value: n };
      case 'numel':
        return { kind: 'number', value: numel(x.shape) };
      case 'view':
      case 'reshape':
      case 'view_as':
      case 'reshape_as': {
        // reshape of a transposed or permuted tensor copies it (view would fail in PyTorch).
        const source = name.startsWith('reshape') && !isContiguous(x) ? this.produce(x.shape, [x], x.integer) : x;
        if (name.endsWith('_as')) return { ...source, shape: tensorsIn(args[0])[0]?.shape ?? x.shape };
        return this.view(source, dimsOf(args));
      }
      case 'flatten':
        return this.flatten(x, numberOf(args[0] ?? kwargs.get('start_dim')) ?? 0, numberOf(args[1] ?? kwargs.get('end_dim')) ?? -1);
      case 'unfold': {
        // `x.unfold(dim, size, step)`: windows of `size` every `step` along dim (a series cut into patches), a view
        // with one more axis; its windows overlap in memory, so a layer or reshape that needs contiguous memory copies.
        const d = axis(numberOf(args[0] ?? kwargs.get('dimension')));
        const [size, step] = [numberOf(args[1] ?? kwargs.get('size')), numberOf(args[2] ?? kwargs.get('step'))];
        if (size === undefined || step === undefined || step <= 0 || d >= n || size > x.shape[d]!) break;
        const shape = x.shape.map((s, i) => (i === d ? Math.floor((s - size) / step) + 1 : s));
        return { ...x, shape: [...shape, size], layout: x.layout ?? x.shape.map((_size, i) => i) };
      }
      case 'permute': {
        const order = dimsOf(args);
        if (order.some((d) => d === undefined)) return x;
        return reordered(x, (order as number[]).map(axis));
      }
      case 'transpose':
      case 'swapaxes': {
        const a = axis(numberOf(args[0]));
        const b = axis(numberOf(args[1]));
        if (a >= n || b >= n) {
          // A dimension the traced shape does not have (the input guess is off): swapped as given.
          const shape = [...x.shape];
          [shape[a], shape[b]] = [shape[b]!, shape[a]!];
          return { ...x, shape };
        }
        const order = x.shape.map((_size, i) => i);
        [order[a], order[b]] = [b, a];
        return reordered(x, order);
      }
      case 't':
        return this.method(x, 'transpose', [{ kind: 'number', value: 0 }, { kind: 'number', value: 1 }], kwargs);
      case 'unsqueeze': {
        const shape = [...x.shape];
        shape.splice(axis(numberOf(args[0]), 1), 0, 1);
        return { ...x, shape };
      }
      case 'squeeze': {
        const d = numberOf(args[0]);
        return { ...x, shape: d === undefined ? x.shape.filter((s) => s !== 1) : x.shape.filter((s, i) => !(i === axis(d) && s === 1)) };
      }
      case 'expand':
      case 'expand_as':
      case 'repeat': {
        // New axes come first (`latents.expand(b, -1, -1)` of a (256, 512) tensor): a -1 keeps the axis it lines up
        // with from the right.
        const dims = dimsOf(args);
        const target = name === 'expand_as' ? tensorsIn(args[0])[0]?.shape ?? x.shape : dims.map((d, i) => (d === undefined || d === -1 ? x.shape[i - (dims.length - n)] ?? 1 : d));
        if (name === 'repeat') return this.produce(target.map((r, i) => r * (x.shape[i - (target.length - n)] ?? 1)), [x]);
        return { ...x, shape: target };
      }
      case 'new_zeros':
      case 'new_ones':
      case 'new_empty':
      case 'new_full': {
        // A new tensor of the sizes given (`memory.new_zeros(B, H)`; `x.new_zeros(())`, a scalar), with no history.
        const sizes = name === 'new_full' ? args.slice(0, 1) : args;
        const scalar = sizes.length === 1 && sizes[0]!.kind === 'list' && sizes[0]!.items.length === 0;
        const dims = dimsOf(sizes);
        if (!scalar && (dims.length === 0 || dims.some((d) => d === undefined))) return this.produce(x.shape, [x]);
        const out = this.produce(dims as number[], [], x.integer);
        this.noGrad.add(out.id);
        if (this.fullPrecision.has(x.id)) this.fullPrecision.add(out.id);
        return out;
      }
      case 'contiguous':
        return isContiguous(x) ? x : this.produce(x.shape, [x], x.integer);
      case 'clone':
        return this.produce(x.shape, [x], x.integer);
      case 'float':
      case 'double':
        return this.upcast(x);
      case 'to': {
        // `.to(device)` keeps the dtype (token ids stay integers); a dtype named says what it becomes.
        const dtype = dtypeIn(args, kwargs);
        if (dtype === undefined) return x;
        if (/^(float32|float|float64|double)$/.test(dtype)) return this.upcast(x);
        const integerBytes = INTEGER_DTYPE_BYTES[dtype];
        if (dtype === 'bool') return this.toMask(x);
        return integerBytes !== undefined ? this.toIntegers(x, integerBytes) : { ...x, integer: false };
      }
      case 'cuda':
      case 'cpu':
        // A move keeps the dtype: token ids stay integers.
        return x;
      case 'half':
      case 'bfloat16':
      case 'type_as':
        return { ...x, integer: false };
      case 'long':
      case 'int':
        return this.toIntegers(x, INTEGER_DTYPE_BYTES[name]!);
      case 'bool':
        return this.toMask(x);
      case 'detach':
        return { ...x, integer: true };
      case 'chunk': {
        const count = numberOf(args[0]) ?? 1;
        const d = axis(numberOf(args[1] ?? kwargs.get('dim')) ?? 0);
        const shape = [...x.shape];
        shape[d] = Math.ceil(shape[d]! / count);
        return { kind: 'list', items: Array.from({ length: count }, () => ({ ...x, shape }) as Value), tuple: true };
      }
      case 'unbind': {
        const d = axis(numberOf(args[0] ?? kwargs.get('dim')) ?? 0);
        const shape = x.shape.filter((_, i) => i !== d);
        return { kind: 'list', items: Array.from({ length: x.shape[d] ?? 1 }, () => ({ ...x, shape }) as Value), tuple: true };
      }
      case 'split': {
        const size = numberOf(args[0]);
        const d = axis(numberOf(args[1] ?? kwargs.get('dim')) ?? 0);
        const sizes = args[0]?.kind === 'list' ? args[0].items.map((i) => numberOf(i) ?? 1) : size ? Array(Math.ceil(x.shape[d]! / size)).fill(size) : [x.shape[d]!];
        return { kind: 'list', items: sizes.map((s) => { const shape = [...x.shape]; shape[d] = s; return { ...x, shape } as Value; }), tuple: true };
      }
      case 'max':
      case 'min':
        return this.extreme(x, args, kwargs);
      case 'cumsum':
      case 'cumprod':
        return this.function(`torch.${name}`, [x, ...args], kwargs) ?? x;
      case 'mean':
      case 'sum':
      case 'amax':
      case 'amin':
      case 'argmax':
        return this.reduce(x, args, kwargs);
      case 'std':
      case 'var':
        this.keep(x);
        return this.reduce(x, args, kwargs);
      case 'masked_fill':
      case 'masked_fill_':
      case 'add_':
      case 'mul_':
      case 'clamp_':
      case 'clip_':
      case 'fill_':
      case 'zero_':
        return x;
      // Out of place, clamp makes a tensor of its own and its backward reads the input (which elements were in range).
      case 'clamp':
      case 'clip': {
        if (x.integer) return this.produce(x.shape, [x], true);
        this.keep(x);
        return this.produce(x.shape, [x]);
      }
      // `v.norm(dim=-1)`, `torch.linalg.vector_norm`: the input reduced over `dim` (every dimension without one);
      // backward reads the input and the norm (the p=2 formula `x * grad / norm`).
      case 'norm': {
        const out = this.reduce(x, [kwargs.get('dim') ?? args[1] ?? { kind: 'none' }, kwargs.get('keepdim') ?? args[2] ?? { kind: 'none' }], new Map()) as TensorValue;
        const reduced = this.precision(out, false);
        this.keep(x, reduced);
        return reduced;
      }
      case 'relu':
      case 'relu_':
      case 'gelu':
      case 'silu':
      case 'sigmoid':
      case 'tanh':
      case 'softmax':
      case 'log_softmax':
      case 'exp':
      case 'sin':
      case 'cos':
      case 'logsumexp':
        return this.function(`torch.${name}`, [x, ...args], kwargs) ?? x;
      case 'matmul':
        return this.binary('@', x, args[0] ?? UNKNOWN) ?? x;
      case 'pow':
        return this.binary('**', x, kwargs.get('exponent') ?? args[0] ?? UNKNOWN) ?? x;
      // Picking by an index tensor (an MAE's visible patches, sampled tokens): the result has the index's shape
      // (gather, take_along_dim) or the input's with one axis as long as the index (index_select). gather's and
      // take_along_dim's backward is given the input itself, not its size, so autograd keeps the whole input: a
      // distribution over a vocabulary stays alive for the one probability a loss picks from it.
      case 'gather':
      case 'take_along_dim': {
        const index = tensorsIn(name === 'gather' ? kwargs.get('index') ?? args[1] : kwargs.get('indices') ?? args[0])[0];
        if (!this.noGrad.has(x.id)) this.keep(x);
        return index ? this.produce(index.shape, [x], x.integer) : this.produce(x.shape, [x], x.integer);
      }
      case 'index_select': {
        const index = tensorsIn(kwargs.get('index') ?? args[1])[0];
        const shape = [...x.shape];
        shape[axis(numberOf(kwargs.get('dim') ?? args[0]) ?? 0)] = index ? numel(index.shape) : shape[0]!;
        return this.produce(shape, [x], x.integer);
      }
      // The order of the values: integer indices of the input's shape (sort also gives the sorted values).
      case 'argsort':
        return this.produce(x.shape, [], true);
      // sort's backward scatters the gradient back by the int64 indices it keeps.
      case 'sort': {
        const indices = this.produce(x.shape, [], true);
        if (this.recording && !x.integer) {
          this.fixedBytes += numel(indices.shape) * INT64_BYTES;
          this.keptIntegers.add(indices.id);
        }
        return { kind: 'list', items: [this.produce(x.shape, [x], x.integer), indices], tuple: true };
      }
      // Element-wise functions: the input's shape; backward reads the input (log, abs, square) or the result (sqrt,
      // rsqrt, reciprocal, expm1), or nothing (neg).
      case 'log':
      case 'log1p':
      case 'log2':
      case 'log10':
      case 'abs':
      case 'square':
      case 'sqrt':
      case 'rsqrt':
      case 'reciprocal':
      case 'expm1':
      case 'neg': {
        const out = this.produce(x.shape, [x], x.integer);
        if (/^(sqrt|rsqrt|reciprocal|expm1)$/.test(name)) this.keep(out);
        else if (name !== 'neg') this.keep(x);
        return name === 'abs' ? this.markReal(out) : out;
      }
      // Rounding (a hash grid's cell corners, `scaled.floor().long()`): the input's shape; its gradient is zero, so
      // backward reads nothing. A triangle of a matrix (a causal mask) keeps nothing either.
      case 'triu':
      case 'tril':
      case 'floor':
      case 'ceil':
      case 'round':
      case 'trunc':
      case 'frac':
      case 'sign':
        return this.produce(x.shape, [x], x.integer);
      // A product over a dimension (trilinear weights of a cell's corners): backward reads the input and the result.
      case 'prod': {
        const out = this.reduce(x, args, kwargs) as TensorValue;
        this.keep(x, out);
        return out;
      }
      // Writing a source into the receiver's rows by an index (a graph's messages summed per destination node,
      // `out.index_add_(0, dst, messages)`): the receiver's shape, in place or as a copy. Backward gathers the
      // gradient by the index (integers); index_add and index_copy keep the source too, scatter and index_put do not;
      // a max / min / product reduction also reads the receiver, the source and the result.
      case 'index_add':
      case 'index_add_':
      case 'index_copy':
      case 'index_copy_':
      case 'index_fill':
      case 'index_fill_':
      case 'index_put':
      case 'index_put_':
      case 'scatter':
      case 'scatter_':
      case 'scatter_add':
      case 'scatter_add_':
      case 'scatter_reduce':
      case 'scatter_reduce_': {
        const source = tensorsIn(kwargs.get('src') ?? kwargs.get('source') ?? kwargs.get('values') ?? args[name.startsWith('index_put') ? 1 : 2])[0];
        const reduce = kwargs.get('reduce') ?? args[3];
        if (name.startsWith('scatter_reduce') && reduce?.kind === 'string' && /^(amax|amin|prod)$/.test(reduce.value)) {
          const out = name.endsWith('_') ? x : this.produce(x.shape, [x, ...(source ? [source] : [])]);
          this.keep(x, out, ...(source ? [source] : []));
          return out;
        }
        // index_add's and index_copy's gradient for the source is the output's picked by the index and expanded to the
        // source (`expand_as(source)`): autograd keeps the source itself, the messages of every group summed in
        // (measured on the H200: 488 MiB more kept than scatter_add's for 10^6 messages of 128 fp32,
        // test/gpu/estimator/results/probe_rgcn13.jsonl).
        if (source && /^index_(add|copy)_?$/.test(name) && !this.noGrad.has(source.id)) this.keep(source);
        return name.endsWith('_') ? x : this.produce(x.shape, [x, ...(source ? [source] : [])], x.integer);
      }
      // The k largest (or smallest) along a dimension, the last by default (a k-NN graph's neighbours): values and
      // int64 indices of k along it; backward scatters by the indices (integers, not counted as kept).
      case 'topk': {
        const k = numberOf(args[0] ?? kwargs.get('k'));
        const d = axis(numberOf(args[1] ?? kwargs.get('dim')) ?? -1);
        if (k === undefined || d >= n) break;
        const shape = x.shape.map((size, i) => (i === d ? Math.min(k, size) : size));
        // The indices name positions along the dimension: read as drawn evenly from them (a router's experts, each
        // `idx == e` holding one expert's share of the picks).
        const indices = { ...this.produce(shape, [], true), drawn: { least: 0, most: x.shape[d]! - 1 } };
        return { kind: 'list', items: [this.produce(shape, [x], x.integer), indices], tuple: true };
      }
      // Each element (or slice along `dim`) repeated a number of times (a batch of graphs' node offsets, one per
      // edge): that axis, or the flattened tensor without `dim`, times the repeats. Repeats given per element (a
      // tensor) make a length the data decides, not modelled.
      case 'repeat_interleave': {
        const times = numberOf(args[0] ?? kwargs.get('repeats') ?? UNKNOWN);
        const dim = numberOf(args[1] ?? kwargs.get('dim') ?? UNKNOWN);
        if (times === undefined || (dim !== undefined && axis(dim) >= n)) break;
        const shape = dim === undefined ? [numel(x.shape) * times] : x.shape.map((size, i) => (i === axis(dim) ? size * times : size));
        return this.produce(shape, [x], x.integer);
      }
      case 'nonzero':
      case 'argwhere': {
        const asTuple = kwargs.get('as_tuple');
        return this.positions(x, name === 'nonzero' && asTuple?.kind === 'bool' && asTuple.value);
      }
      case 'item':
      case 'tolist':
        return UNKNOWN;
      default:
        break;
    }
    this.unmodelled.add(`Tensor.${name}`);
    return this.produce(x.shape, [x]);
  }

  /** `x.bool()`: a mask (see masks), a copy of one byte an element (of integers too), without history. */
  private toMask(x: TensorValue): TensorValue {
    if (this.masks.has(x.id)) return x;
    const out = this.produce(x.shape, [x], true);
    this.integerStorage.set(out.id, INTEGER_DTYPE_BYTES.bool!);
    this.noGrad.add(out.id);
    this.masks.add(out.id);
    return out;
  }

  /** `a & b` of masks (or a mask and a Python bool), and `a < b`: a mask of their broadcast shape, without history. */
  private combinedMask(x: TensorValue | undefined, y: TensorValue | undefined, share?: number): TensorValue {
    const mask = this.produce(broadcast(x?.shape ?? [], y?.shape ?? []));
    this.noGrad.add(mask.id);
    this.masks.add(mask.id);
    if (share !== undefined) this.maskShares.set(mask.id, share);
    return mask;
  }

  /**
   * The share of `a & b`, `a | b`, `a ^ b` of masks set, taken as independent: where a share is not known, `&` is at
   * most the other's and the others are not known.
   */
  private combinedShare(operator: string, x: TensorValue | undefined, y: TensorValue | undefined): number | undefined {
    const [a, b] = [x ? this.maskShares.get(x.id) : undefined, y ? this.maskShares.get(y.id) : undefined];
    if (operator === '&') return a === undefined && b === undefined ? undefined : (a ?? 1) * (b ?? 1);
    if (a === undefined || b === undefined) return undefined;
    return operator === '|' ? a + b - a * b : a + b - 2 * a * b;
  }

  /** The elements a mask holds set: its share of those it covers (see maskShares), all of them where not known. */
  private setElements(mask: TensorValue): number {
    return Math.round(numel(mask.shape) * (this.maskShares.get(mask.id) ?? 1));
  }

  /**
   * `mask.nonzero()`, `torch.nonzero(mask)`, `torch.where(mask)`: the positions of a mask's set elements, int64 without
   * history, as many as it holds (see setElements): (K, dims), or with as_tuple one (K,) tensor per dimension.
   */
  private positions(mask: TensorValue, asTuple: boolean): Value {
    const count = this.setElements(mask);
    const made = (shape: number[]): TensorValue => {
      const out = this.produce(shape, [], true);
      this.noGrad.add(out.id);
      return out;
    };
    if (!asTuple) return made([count, mask.shape.length]);
    return { kind: 'list', items: mask.shape.map(() => made([count])), tuple: true };
  }

  /**
   * `x.long()`, `.int()`, `.to(torch.long)`: of floats, a copy of its own (`scaled.floor().long()` holds
   * its int64 elements beside the floats), of integers the tensor itself (token ids moved as they are).
   */
  private toIntegers(x: TensorValue, bytes: number): TensorValue {
    if (x.integer) return x;
    const out = this.produce(x.shape, [x], true);
    this.integerStorage.set(out.id, bytes);
    this.noGrad.add(out.id);
    return out;
  }

  /**
   * `x.float()`: x itself where it is fp32 under autocast already; of a half tensor, an fp32 copy under autocast
   * (the same tensor without autocast, see explicitUpcast). Either way the result is one the script cast to fp32.
   */
  private upcast(x: TensorValue): TensorValue {
    if (x.integer) {
      // Integers made float (a one-hot of the labels for a Dice loss, a mask): a new tensor, fp32 under autocast too.
      const out = this.produce(x.shape, [x]);
      this.fullPrecision.add(out.id);
      return out;
    }
    let out = x;
    if (!this.fullPrecision.has(x.id)) {
      out = this.make(x.shape);
      this.storage.set(out.id, this.storageOf(x));
      this.explicitUpcast.set(out.id, x.id);
      if (this.noGrad.has(x.id)) this.noGrad.add(out.id);
      if (this.excluded.has(x.id)) this.excluded.add(out.id);
      this.fullPrecision.add(out.id);
    }
    this.castToFp32.add(out.id);
    return out;
  }

  binary(operator: string, a: Value, b: Value): Value | undefined {
    const out = this.recorded([a, b], false, () => this.binaryOp(operator, a, b));
    // A product's gradient is the other operand times the output's: where both have history, double backward reads it.
    const recordedOperands = [a, b].filter((v) => v.kind === 'tensor' && !this.noGrad.has(v.id)).length;
    if (operator === '@' || ((operator === '*' || operator === '/') && recordedOperands === 2)) this.keepsGradientOf(out, operator);
    if ((operator === '*' || operator === '/') && recordedOperands > 0) this.productBackwardPoint(out, [a, b]);
    return out;
  }

  /**
   * An element-wise product's backward: the output's gradient and, for each operand with history, a gradient of the
   * output's shape (a broadcast operand's, `messages * weights.unsqueeze(-1)`, is that large until it is summed down
   * to its own shape) are alive at once beside what forward kept up to it.
   */
  private productBackwardPoint(out: Value | undefined, operands: Value[]): void {
    const output = out?.kind === 'tensor' ? out : undefined;
    if (!output || output.integer || !this.recording || this.noGrad.has(output.id)) return;
    const recorded = operands.filter((v): v is TensorValue => v.kind === 'tensor' && !this.noGrad.has(v.id));
    const gradients = (1 + recorded.length) * numel(output.shape);
    // Under autocast a product's gradients take its output's dtype: fp32 where an operand is (softmax's weights).
    const surplus = this.fullPrecision.has(output.id) ? 2 * gradients : 0;
    // An operand an earlier product read too (softmax weights pooling both a mean and a second moment,
    // `sum(x * w)` and `sum(x ** 2 * w)`): backward runs this later product first, and the gradient it makes for that
    // operand waits in autograd's buffer, beside the earlier product's own gradients, until that one's backward has
    // run and added its part. Measured on the H200 (test/gpu/estimator/results/probe_under12.jsonl, asp_b64):
    // attentive statistics pooling over a (64, 1536, 301) half map with fp32 weights peaked 450 MiB (8 half maps)
    // over what it kept: 4 fp32 gradients of the map.
    for (const operand of recorded) {
      const waiting = numel(operand.shape);
      const waitingSurplus = this.fullPrecision.has(operand.id) ? 2 * waiting : 0;
      for (const earlier of this.productsReading.get(operand.id) ?? []) {
        this.backwardElements(earlier.saved + earlier.gradients + waiting, false, earlier.surplus + waitingSurplus);
      }
    }
    for (const operand of recorded) {
      const readers = this.productsReading.get(operand.id) ?? [];
      readers.push({ saved: this.savedElements, gradients, surplus });
      this.productsReading.set(operand.id, readers);
    }
    this.backwardElements(this.savedElements + gradients, false, surplus);
  }

  private binaryOp(operator: string, a: Value, b: Value): Value | undefined {
    const x = a.kind === 'tensor' ? a : undefined;
    const y = b.kind === 'tensor' ? b : undefined;
    if (!x && !y) return undefined;
    // Backward needs an operand of a product only for the other's gradient: beside an operand without history
    // (the data, a mask, a normalized adjacency) the one with history is not kept.
    const needs = (other: TensorValue | undefined): boolean => !!other && !this.noGrad.has(other.id);
    if (operator === '@') {
      if (!x || !y) return x ?? y;
      if (x.shape.length >= 3 && y.shape.length >= 3) return this.batchedProduct(x, y, needs);
      this.keepCastOperand('half', ...(needs(y) ? [x] : []), ...(needs(x) ? [y] : []));
      const shape = [...(x.shape.length >= y.shape.length ? x.shape : y.shape).slice(0, -2), x.shape[x.shape.length - 2] ?? 1, y.shape[y.shape.length - 1] ?? 1];
      return this.precision(this.produce(shape, [x, y]), true);
    }
    if (/^(<|>|<=|>=|==|!=)$/.test(operator)) {
      // A comparison makes a mask of the operands' broadcast shape, without history, as masks combined do.
      return this.combinedMask(x, y, drawnShare(operator, a, b));
    }
    // Element-wise arithmetic, remainders and bit operations (`(h0 ^ h1) % T`, hashing integer coordinates) make a
    // tensor of the broadcast shape.
    if (!/^([+\-*/%&|^]|\/\/|\*\*|<<|>>)$/.test(operator)) return x ?? y;
    if (/^[&|^]$/.test(operator) && [x, y].every((t) => !t || this.masks.has(t.id))) return this.combinedMask(x, y, this.combinedShare(operator, x, y));
    const shape = broadcast(x?.shape ?? [], y?.shape ?? []);
    // Shapes that do not broadcast: the trace's input guess is wrong somewhere (a timestep given an image's shape).
    // Counted as a mismatch, and the larger operand's shape kept rather than a product of both.
    if (x && y && !broadcastable(x.shape, y.shape)) {
      this.mismatches++;
      return this.produce(numel(x.shape) >= numel(y.shape) ? x.shape : y.shape, [x, y]);
    }
    // A product keeps each operand the other's gradient needs; a quotient keeps its divisor for either gradient,
    // and its dividend for the divisor's; with a number, or a sum, nothing.
    if (x && y && operator === '*') this.keep(...(needs(y) ? [x] : []), ...(needs(x) ? [y] : []));
    if (x && y && operator === '/') this.keep(...(needs(y) ? [x] : []), ...(needs(x) || needs(y) ? [y] : []));
    // A power is on autocast's fp32 list: under autocast it keeps the fp32 copy it casts a half base to, and makes fp32.
    if (operator === '**' && x) this.keepCastOperand('fp32', x);
    const made = this.produce(shape, [x, y].filter((t): t is TensorValue => !!t), !!x?.integer && (!y || y.integer));
    // Drawn integers shifted by a number (`rel + NUM_RELS`, the inverse edges' types) are drawn from the shifted range.
    const shift = x?.drawn && b.kind === 'number' && Number.isInteger(b.value) && (operator === '+' || operator === '-') ? (operator === '+' ? b.value : -b.value) : undefined;
    const out = shift !== undefined && x?.drawn ? { ...made, drawn: { least: x.drawn.least + shift, most: x.drawn.most + shift } } : made;
    if (operator === '**' && !out.integer) this.precision(out, false);
    // Arithmetic with a complex operand (spectra multiplied, a float tensor times `1j`) is complex.
    const imaginary = (v: Value): boolean => v.kind === 'number' && v.imaginary === true;
    if (!out.integer && (imaginary(a) || imaginary(b))) this.markComplex(out);
    return out;
  }

  /**
   * A matmul of two batched operands (3 dims or more). torch.matmul broadcasts their batch dimensions and runs bmm
   * on each expanded to the common batch: an operand with fewer batch elements (a parameter broadcast over the
   * samples, `W @ u` with W of shape (1, n, k, d, c); an activation broadcast over another axis) is copied at the
   * full batch, and bmm keeps that copy for backward, whose gradient is as large. A parameter has no batch axis, so
   * its copy grows with the batch like an activation.
   */
  private batchedProduct(x: TensorValue, y: TensorValue, needs: (other: TensorValue) => boolean): TensorValue {
    const batch = broadcast(x.shape.slice(0, -2), y.shape.slice(0, -2));
    const batchElements = numel(batch);
    // A weight without a batch axis meets the samples' axis where the other operand's first axis (the samples, batch
    // first) lies beyond its own axes or faces a 1 in them (a capsule layer's (1, n, k, d, c) weight): at one traced
    // sample the copy is invisible but is made for each. An expert weight (experts, d, h) against (experts, c, d) is not.
    const broadcastOverSamples = (t: TensorValue, other: TensorValue): boolean =>
      this.batchless.has(t.id) && !this.batchless.has(other.id) && (other.shape.length > t.shape.length || t.shape[0] === 1);
    const expanded = (t: TensorValue, other: TensorValue): number =>
      (numel(t.shape.slice(0, -2)) < batchElements || broadcastOverSamples(t, other) ? batchElements * numel(t.shape.slice(-2)) : 0);
    let copiesWithGradient = 0;
    for (const [operand, other] of [[x, y], [y, x]] as const) {
      const copy = expanded(operand, other);
      if (copy > 0 && this.recording && !this.noGrad.has(operand.id)) copiesWithGradient += copy;
      if (!needs(other)) continue;
      if (copy > 0) this.keepBuffer(copy);
      else this.keepCastOperand('half', operand);
    }
    const out = this.precision(this.produce([...batch, x.shape[x.shape.length - 2] ?? 1, y.shape[y.shape.length - 1] ?? 1], [x, y]), true);
    // bmm's backward makes the gradient of each expanded copy before summing it back to the operand's shape.
    if (copiesWithGradient > 0) this.backwardElements(this.savedElements + numel(out.shape) + copiesWithGradient, true);
    return out;
  }

  /**
   * `table[level, hashed]`: a copy of the joint index shape. With history (a learned table), backward keeps the
   * int64 index tensors and accumulates the output's gradient into the table with PyTorch's sort-based index_put_: the
   * indices linearized, sorted, and their original positions, with the sort's double buffers (SORTED_INDEX_BUFFERS
   * int64 values an index element, counted as 2 elements each), beside the gradient.
   */
  private advancedIndex(x: TensorValue, items: readonly Value[], indices: readonly TensorValue[]): Value {
    const shape = advancedIndexShape(x, items, indices);
    if (!shape) {
      this.unmodelled.add('Tensor.__getitem__');
      return this.produce(x.shape, [x], x.integer);
    }
    // The result has the indices' axes (a batch's rows looked up in a table without one): they are its operands too.
    const out = this.produce(shape, [x, ...indices], x.integer);
    if (!this.recording || x.integer) return out;
    const indexElements = numel(broadcast(indices[0]!.shape, indices[indices.length - 1]!.shape));
    const joint = indices.reduce((sum, t) => sum + numel(t.shape), 0);
    this.fixedBytes += 8 * joint;
    for (const t of indices) this.keptIntegers.add(t.id);
    this.backwardElements(this.savedElements + numel(shape) + SORTED_INDEX_BUFFERS * 2 * Math.max(indexElements, numel(shape) / Math.max(1, numel(x.shape.slice(items.length)))));
    return out;
  }

  /** Whether `index` is a mask over exactly these axes (PyTorch's boolean indexing: `scores[pos]`, pos (B, H, W)). */
  private selects(index: TensorValue, axes: readonly number[]): boolean {
    return this.masks.has(index.id) && axes.length === index.shape.length && index.shape.every((d, i) => d === axes[i]);
  }

  index(x: TensorValue, key: Value): Value {
    const items = key.kind === 'list' ? key.items : [key];
    // Two or more index tensors (`table[level, hashed]`): they broadcast together, and the result is a copy. (Only
    // integers index with several tensors; the trace may not know their dtype.)
    const indices = items.filter((item): item is TensorValue => item.kind === 'tensor');
    if (indices.length >= 2) return this.recorded([x], false, () => this.advancedIndex(x, items, indices));
    const out: number[] = [];
    let axis = 0;
    const explicit = items.filter((i) => !(i.kind === 'none') && !(i.kind === 'string' && i.value === '...')).length;
    for (const item of items) {
      if (item.kind === 'none') {
        out.push(1);
      } else if (item.kind === 'string' && item.value === '...') {
        const skip = x.shape.length - explicit;
        out.push(...x.shape.slice(axis, axis + skip));
        axis += skip;
      } else if (item.kind === 'dict' && item.entries.has('slice')) {
        const size = x.shape[axis] ?? 1;
        const norm = (v: Value | undefined, fallback: number) => {
          const n = numberOf(v);
          return n === undefined ? fallback : Math.min(size, n < 0 ? size + n : n);
        };
        const start = norm(item.entries.get('start'), 0);
        const stop = norm(item.entries.get('stop'), size);
        const step = numberOf(item.entries.get('step')) ?? 1;
        const length = numberOf(item.entries.get('length'));
        out.push(length !== undefined ? Math.min(size, length) : Math.max(1, Math.ceil((stop - start) / step)));
        axis++;
      } else if (item.kind === 'tensor' && this.selects(item, x.shape.slice(axis, axis + item.shape.length))) {
        // A mask over k axes selects along one: the positions it holds (see setElements), at most every one it covers.
        out.push(this.setElements(item));
        axis += item.shape.length;
      } else if (item.kind === 'tensor') {
        out.push(...item.shape);
        axis++;
      } else {
        axis++;
      }
    }
    out.push(...x.shape.slice(axis));
    const shape = out.length > 0 ? out.map((d) => (Number.isFinite(d) ? Math.max(1, d) : 1)) : [1];
    const index = items.find((item): item is TensorValue => item.kind === 'tensor');
    return index ? this.recorded([x], false, () => this.picked(x, shape, index)) : { ...x, shape };
  }

  /**
   * `h[idx]`, `h[mask]`: PyTorch's advanced indexing copies the rows an index tensor or a mask picks, a tensor of its
   * own (a loop over edge types that picks each type's source rows keeps each type's copy where a layer reads it).
   * With history, backward keeps the index (int64, a mask's bool) and scatters the copy's gradient into one of the
   * input's size.
   */
  private picked(x: TensorValue, shape: number[], index: TensorValue): TensorValue {
    const made = this.produce(shape, [x, index], x.integer);
    const out = x.drawn ? { ...made, drawn: x.drawn } : made;
    if (!this.recording || x.integer) return out;
    // An index the step was given is held by the step anyway.
    if (!this.excluded.has(index.id)) {
      this.fixedBytes += numel(index.shape) * (this.masks.has(index.id) ? 1 : INT64_BYTES);
      this.keptIntegers.add(index.id);
    }
    // Backward scatters the copy's gradient with the sort-based index_put_, as for several indices (advancedIndex).
    const picks = this.masks.has(index.id) ? this.setElements(index) : numel(index.shape);
    this.backwardElements(this.savedElements + numel(shape) + SORTED_INDEX_BUFFERS * 2 * picks);
    return out;
  }
}

/**
 * Indexing by integer tensors that broadcast together (see ForwardTrace.advancedIndex). A None after the indexed
 * axes (`weight[rows, slot, None]`) is a new axis of 1 in its place.
 */
function advancedIndexShape(x: TensorValue, items: readonly Value[], indices: readonly TensorValue[]): number[] | undefined {
  const trailing = items.length - 1 - items.map((item) => item.kind).lastIndexOf('tensor');
  const added = items.slice(items.length - trailing).filter((item) => item.kind === 'none').length;
  if (added > 0 && added === trailing) {
    const shape = advancedIndexShape(x, items.slice(0, items.length - added), indices);
    const rest = x.shape.length - (items.length - added);
    return shape && [...shape.slice(0, shape.length - Math.max(0, rest)), ...new Array<number>(added).fill(1), ...shape.slice(shape.length - Math.max(0, rest))];
  }
  const joint = indices.reduce<number[] | undefined>((shape, t) => (shape && broadcastable(shape, t.shape) ? broadcast(shape, t.shape) : undefined), []);
  if (!joint || items.some((item) => item.kind !== 'tensor' && !(item.kind === 'dict' && item.entries.has('slice')))) return undefined;
  const positions = items.map((item, i) => (item.kind === 'tensor' ? i : -1)).filter((i) => i >= 0);
  const adjacent = positions.every((p, k) => k === 0 || p === positions[k - 1]! + 1);
  // Full slices keep their axes; the indexed axes become the joint shape, where the first index stood when the
  // indices are adjacent (PyTorch's rule), else in front.
  const kept = (from: number, to: number): number[] => x.shape.slice(from, to).filter((_d, k) => items[from + k]?.kind !== 'tensor');
  const rest = x.shape.slice(items.length);
  if (!adjacent) return [...joint, ...kept(0, items.length), ...rest];
  return [...kept(0, positions[0]!), ...joint, ...kept(positions[0]!, items.length), ...rest];
}

/** The dtype `.to(...)` names (`.to(torch.float32)`, `.to(device, dtype=torch.long)`), without `torch.`. */
function dtypeIn(args: Value[], kwargs: Map<string, Value>): string | undefined {
  for (const value of [...args, ...(kwargs.has('dtype') ? [kwargs.get('dtype')!] : [])]) {
    if (value.kind === 'dtype') return value.name;
    if (value.kind === 'ref' && /^torch\.(u?int\d*|long|short|bool|float\d*|double|half|bfloat16)$/.test(value.path)) return value.path.slice('torch.'.length);
  }
  return undefined;
}

/**
 * What attention of a query over another tensor's keys holds in its backward beside its output's and query's
 * gradients: two query-sized gradients, the keys' and values' and their input's (self-attention holds the packed q,
 * k, v gradients, 3 x its input). Measured on the H200 (fp32, batch-first, without weights; probe_twins13.jsonl):
 * 5.0 / 4.0 / 2.9 x the tensors named over what forward kept for self-attention, 2048 queries over 64 keys and
 * 64 over 2048, the output's gradient included.
 */
function crossAttentionBackward(queryElements: number, keyElements: number, keyInputElements: number): number {
  return 2 * queryElements + 2 * keyElements + keyInputElements;
}

function broadcastable(a: readonly number[], b: readonly number[]): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 1; i <= n; i++) {
    const x = a[a.length - i]!;
    const y = b[b.length - i]!;
    if (x !== y && x !== 1 && y !== 1) return false;
  }
  return true;
}

function broadcast(a: readonly number[], b: readonly number[]): number[] {
  const n = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    out.push(Math.max(x, y));
  }
  return out;
}

/**
 * The share of a comparison's elements that hold where one side holds integers drawn uniformly from a known range and
 * the other is a number: `rel == r` holds for one value of the range's, `rel < r` for those below r.
 */
function drawnShare(operator: string, a: Value, b: Value): number | undefined {
  const mirrored: Readonly<Record<string, string>> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=', '==': '==', '!=': '!=' };
  if (a.kind === 'number' && b.kind === 'tensor') return mirrored[operator] ? drawnShare(mirrored[operator]!, b, a) : undefined;
  if (a.kind !== 'tensor' || !a.drawn || b.kind !== 'number') return undefined;
  const { least, most } = a.drawn;
  const count = most - least + 1;
  // How many of the range's values lie below an integer bound.
  const below = (bound: number): number => Math.min(Math.max(bound - least, 0), count);
  const equal = Number.isInteger(b.value) && b.value >= least && b.value <= most ? 1 / count : 0;
  switch (operator) {
    case '==': return equal;
    case '!=': return 1 - equal;
    case '<': return below(Math.ceil(b.value)) / count;
    case '<=': return below(Math.floor(b.value) + 1) / count;
    case '>': return 1 - below(Math.floor(b.value) + 1) / count;
    case '>=': return 1 - below(Math.ceil(b.value)) / count;
    default: return undefined;
  }
}

/**
 * The draw of integers joined from drawn parts (`torch.cat([rel, rel + R])`): their ranges together, where they meet
 * or overlap (two equal halves of adjacent ranges are one uniform draw); undefined where a part is not drawn.
 */
function joinedDraw(parts: readonly TensorValue[]): TensorValue['drawn'] {
  const draws = parts.map((t) => t.drawn);
  if (draws.length === 0 || draws.some((d) => d === undefined)) return undefined;
  const sorted = (draws as Array<{ least: number; most: number }>).slice().sort((p, q) => p.least - q.least);
  if (sorted.some((d, i) => i > 0 && d.least > sorted[i - 1]!.most + 1)) return undefined;
  return { least: sorted[0]!.least, most: Math.max(...sorted.map((d) => d.most)) };
}
