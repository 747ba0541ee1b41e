// A model the script builds itself (an nn.Module subclass, or an nn.Sequential), as the program model constructed
// it: its submodules in registration order, with every constructor argument evaluated, through helper functions,
// loops, comprehensions, nested custom blocks and containers. The layers are pushed through NetBuilder in that
// order, which is the order most forward() methods run them in.
import { libraryBackbone, libraryPart, libraryPartsParameters, libraryVisionCall, partsNamed, type LibraryPart } from './library-models';
import type { CallResultValue, How, LayerValue, ObjectValue, TensorValue, Value } from '../engine/program/values';
import { drawnRange, isIntegerTensor, isModuleClass, madeTensorIsInteger, madeTensorShape, NONE, numberOf, partialTensorShape, tensorShape, UNKNOWN } from '../engine/program/values';
import { BASE_LAYER, lookupClassAttribute, type ProgramModel } from '../engine/program/interpreter';
import { enclosingLoops } from '../engine/syntax';
import { underNoGrad } from '../engine/program/grad-mode';
import { loopLoader } from './growth';
import type { PyNode } from '../engine/program/node';
import { ForwardTrace, normAffine, type TracedLibraries } from './forward-trace';
import { keepStepLossOverOutput, keepStepReturnedOutputs } from './step-returned-outputs';
import { continuesEarlierCall, traceFollowingMethodCalls } from './step-method-calls';
import { carriedArguments, type CarriedFrom } from './carried-state';
import { dataLengthOrigin, sampleArguments, type SampleShape } from './dataset-samples';
import { NetBuilder } from './layers';
import { featurePyramidLayers } from './feature-pyramid';
import { isLazyLayer, materializeLazy, materializedLazy } from './lazy-layers';
import type { LayerNetSpec } from './types';
import { treeIndex } from '../engine/program/tree-index';
import { builtBeforeLoop, definedByScript, tracedDefinition } from './traced-definitions';

export interface CustomModuleInfo {
  className: string;
  line: number;
  /**
   * Builds the net for an input size (image side or sequence length); `targetLen`: the length of the target tokens
   * (an encoder-decoder's), which the arguments of the step's call named as targets (`tgt[:, :-1]`) are given;
   * `batch`: the batch the per-sample figures are for, where they depend on it (LayerNetSpec.batchDependent).
   */
  build: (inputSize: number, targetLen?: number, batch?: number) => LayerNetSpec;
  inputKind: 'image' | 'tokens' | 'vector';
  /** Channels of the first convolution (images) or input features (vectors). */
  inputChannels: number;
  /** torch.nn layer types the estimator does not model (their parameters and activations are not counted). */
  unknownLayers: string[];
  /**
   * Parts of a library model the module holds as its own submodules that the catalog cannot size (a block inside a
   * stage, `resnet.layer3[0]`), so the module's size is not known. Named as the script reads them.
   */
  libraryParts?: string[];
  /**
   * Whether the module holds a library vision model or parts of one (sized by the catalog): the layer walk has none
   * of their layers, so it neither keeps their activations nor resizes the map through them.
   */
  holdsLibraryModel?: boolean;
  /**
   * Lines of containers whose contents the program model could not evaluate (`nn.Sequential(*blocks)` of a list it
   * does not know): layers of unknown size, so the module's size is not known.
   */
  undeterminedContainers?: number[];
  /** A layer given a size that is no number the script determines (`nn.Linear(512, settings.WIDTH)`, unread). */
  undeterminedSize?: string;
  /** Parameters of the layers the script froze (requires_grad_(False)), as the program model ran it. */
  frozenParameters: number;
  /**
   * The sequence (or signal) length of one sample a Dataset's `__getitem__` makes, read the way the first layer takes
   * it: `[S]` token ids for an Embedding, `[L]` or `[C, L]` for a Conv1d of C input channels, `[T, F]` for a
   * recurrent layer of F input features.
   */
  sampleLength?: { value: number; line: number; how: How };
  /** Whether the script freezes the model (or a part) and unfreezes it again within one loop (a GAN's critic). */
  freezesInTurn?: boolean;
  /**
   * The step calls the model on a tensor whose leading axes it folds into one (`points.reshape(-1, 3)`: rays x
   * samples per ray; `frames.flatten(0, 1)`) from a tensor the program model cannot size. The line, the expression,
   * and the rows one batch sample makes, per model, where running the step's code at its sizes found them (the
   * trace then takes that many rows as one sample).
   */
  foldedInput?: { line: number; text: string; rowsPerSample: number[]; samplesPerStep?: number };
  /**
   * The token lengths of the step's call as the loader's data makes them: the input's, and, for an argument of
   * token ids of another length (an encoder-decoder's decoder input, `tgt[:, :-1]` or BOS + `tgt[:, :-1]`), its
   * own; each with where the data sets it (see dataLengthOrigin).
   */
  stepTokens?: { source: LocatedLength; target?: LocatedLength };
  /** The shape of the tensor the script calls the model on, where the program model knows it (batch first). */
  inputShape?: { dims: number[]; line: number; how: How; dimOrigins?: Array<{ line: number; how: How }> };
}

/** Fewer tokens than this are a few numbers per sample (a label, a length), not a sequence. */
const FEWEST_SEQUENCE_TOKENS = 8;

/** A length and where the script sets it (0-based line). */
interface LocatedLength { value: number; line: number; how: How }

/** Names a script gives the tokenised targets of a seq2seq model. */
export const TARGET_VARIABLE = /^(labels|targets?|tgt|tgts|label_ids|target_ids|tgt_ids|decoder_input_ids|target_encodings?|label_encodings?|summar(y|ies))$/;

/**
 * The variable a call-site argument reads, through slices and method calls (`tgt[:, :-1]`, `y.to(device)`), with
 * the expression: undefined when it reads something else (a dict entry, an attribute).
 */
function argumentVariable(node: PyNode): string | undefined {
  let current: PyNode | null = node;
  for (let depth = 0; current && depth < 8; depth++) {
    if (current.type === 'identifier') return current.text;
    if (current.type === 'subscript') {
      const key = current.childForFieldName('subscript');
      if (key?.type !== 'slice' && key?.type !== 'expression_list' && key?.type !== 'tuple') return undefined;
      current = current.childForFieldName('value');
    } else if (current.type === 'call' && current.childForFieldName('function')?.type === 'attribute') {
      current = current.childForFieldName('function')!.childForFieldName('object');
    } else {
      return undefined;
    }
  }
  return undefined;
}

/** Layers with no parameters whose activations the estimator does not need (views, identity, shape ops). */
const PASS_THROUGH = new Set(['Identity', 'Flatten', 'Unflatten', 'Softmax', 'LogSoftmax', 'Softmax2d', 'PixelShuffle', 'PixelUnshuffle',
  'ChannelShuffle']);

/** A registered submodule: a torch.nn layer, or an instance of a module class of the script. */
type Module = LayerValue | ObjectValue;

function isModule(value: Value): value is Module {
  return value.kind === 'layer' || (value.kind === 'object' && value.role === 'instance' && !!value.cls && isModuleClass(value.cls));
}

/** The submodules of a module, in registration order. */
function submodules(module: Module): Module[] {
  if (module.kind === 'layer') return module.children.filter(isModule);
  const out: Module[] = [];
  for (const value of module.attrs.values()) if (isModule(value)) out.push(value);
  return out;
}

/** The instances of the script's modules on the GPU that hold `held` as one of their attributes. */
export function* wrappersHolding(program: ProgramModel, held: Value): Generator<ObjectValue> {
  for (const wrapper of program.onDevice) {
    if (wrapper.kind === 'object' && wrapper.role === 'instance' && [...wrapper.attrs.values()].includes(held)) yield wrapper;
  }
}

/** Whether a module is `root` or one of its submodules, at any depth (an optimizer given `model.encoder.parameters()`). */
export function holdsModule(root: Value, target: Value): boolean {
  if (root === target) return true;
  if (!isModule(root)) return false;
  const seen = new Set<Module>([root]);
  const pending = [root];
  while (pending.length > 0) {
    for (const child of submodules(pending.pop()!)) {
      if (child === target) return true;
      if (!seen.has(child)) pending.push(child), seen.add(child);
    }
  }
  return false;
}

/**
 * Whether `root` holds `target` as an attribute of itself or of one of its submodules, at any depth: also a library
 * model (a call's result), which is no module of the script's (MoCo's `self.encoder_k = copy.deepcopy(self.encoder_q)`).
 */
export function holdsValue(root: Value, target: Value): boolean {
  if (root === target) return true;
  if (!isModule(root)) return false;
  const seen = new Set<Module>([root]);
  const pending = [root];
  while (pending.length > 0) {
    const module = pending.pop()!;
    const held = module.kind === 'layer' ? [...module.children, ...(module.named?.values() ?? [])] : [...module.attrs.values()];
    if (held.includes(target)) return true;
    for (const child of submodules(module)) if (!seen.has(child)) pending.push(child), seen.add(child);
  }
  return false;
}

/**
 * Where gradient checkpointing cuts a module tree. `blocks`: composite submodules (the script's own block classes,
 * nested nn.Sequentials) recomputed one at a time, each keeping only its input. `segments`: an nn.Sequential of
 * plain layers, run through checkpoint_sequential in round(sqrt(n)) segments. The estimate and the refactoring
 * both read this plan, so the saving shown is the saving of the edit offered.
 */
export interface CheckpointPlan {
  kind: 'blocks' | 'segments';
  /** The blocks, or the layers of the Sequential run in segments. */
  modules: Module[];
  /** Python paths from the model to each block (`.features[0]`), or to the Sequential (`` for the model itself). */
  paths: string[];
}

interface PlacedModule { module: Module; path: string }

/** A module's submodules with their Python paths, looking through ModuleList/ModuleDict (they have no forward). */
function placedSubmodules(module: Module, path: string, seen: Set<Module>): PlacedModule[] {
  const out: PlacedModule[] = [];
  const place = (child: Value, childPath: string): void => {
    if (!isModule(child) || seen.has(child)) return;
    seen.add(child);
    if (child.kind === 'layer' && (child.type === 'ModuleList' || child.type === 'ModuleDict')) out.push(...placedSubmodules(child, childPath, seen));
    else out.push({ module: child, path: childPath });
  };
  if (module.kind === 'object') {
    // A subclass of nn.Sequential / nn.ModuleList registers its modules by number (`self[0]`).
    for (const [name, value] of module.attrs) place(value, /^\d+$/.test(name) ? `${path}[${name}]` : `${path}.${name}`);
  } else if (module.named && module.named.size > 0) {
    for (const [name, value] of module.named) place(value, module.type === 'ModuleDict' ? `${path}[${JSON.stringify(name)}]` : `${path}.${name}`);
  } else {
    module.children.forEach((child, index) => place(child, `${path}[${index}]`));
  }
  return out;
}

/** A submodule with a forward of its own worth recomputing: a block class of the script, or a Sequential of layers. */
function isComposite(module: Module): boolean {
  // A class that extends one torch.nn layer (`class LayerNorm2d(nn.LayerNorm)`) is that layer.
  if (module.kind === 'object') return !(module.attrs.has(BASE_LAYER) && submodules(module).length === 1);
  return module.type === 'Sequential' && submodules(module).length >= 2;
}

export function checkpointPlan(root: Module): CheckpointPlan | undefined {
  const blocks: PlacedModule[] = [];
  let plainSequential: PlacedModule | undefined = root.kind === 'layer' && root.type === 'Sequential' ? { module: root, path: '' } : undefined;
  const visit = (module: Module, path: string, depth: number): void => {
    if (depth > 8) return;
    const composites = placedSubmodules(module, path, new Set()).filter((placed) => isComposite(placed.module));
    // One composite (a wrapper's backbone, a features Sequential): the blocks are inside it.
    if (composites.length === 1) {
      const only = composites[0]!;
      if (only.module.kind === 'layer' && !submodules(only.module).some(isComposite)) plainSequential ??= only;
      visit(only.module, only.path, depth + 1);
      return;
    }
    for (const placed of composites) {
      // A Sequential of stages is a container: its stages are the blocks. A block class keeps its own forward whole.
      const inner = placed.module.kind === 'layer' ? placedSubmodules(placed.module, placed.path, new Set()).filter((p) => isComposite(p.module)).length : 0;
      if (inner >= 2) visit(placed.module, placed.path, depth + 1);
      else blocks.push(placed);
    }
  };
  visit(root, '', 0);
  if (blocks.length >= 2) return { kind: 'blocks', modules: blocks.map((b) => b.module), paths: blocks.map((b) => b.path) };
  const layers = plainSequential ? submodules(plainSequential.module) : [];
  if (plainSequential && layers.length >= 4) return { kind: 'segments', modules: layers, paths: [plainSequential.path] };
  return undefined;
}

/** Whether a module tree holds a BatchNorm layer (its running statistics see every forward, recomputed or micro). */
export function hasBatchNorm(root: Value): boolean {
  if (root.kind === 'call') {
    const name = root.path.endsWith('.get_model') && root.args[0]?.kind === 'string' ? root.args[0].value : root.path.split('.').pop() ?? '';
    return /^torchvision\.models\./.test(root.path) && /^(resnet|wide_resnet|resnext|densenet|efficientnet_b|mobilenet|regnet|inception|googlenet|mnasnet|shufflenet|vgg\d+_bn)/.test(name);
  }
  if (!isModule(root)) return false;
  const seen = new Set<Module>();
  const visit = (module: Module, depth: number): boolean => {
    if (depth > 24 || seen.has(module)) return false;
    seen.add(module);
    if (module.kind === 'layer' && /^(Sync)?BatchNorm/.test(module.type)) return true;
    return submodules(module).some((child) => visit(child, depth + 1));
  };
  return visit(root, 0);
}

/** A flat list of leaf layers, each marked with the checkpointing block it belongs to. */
interface Leaf { layer: LayerValue; block: number | undefined }

function leaves(root: Module, blocks: ReadonlySet<Module>): { leaves: Leaf[]; unknown: Set<string> } {
  const out: Leaf[] = [];
  const unknown = new Set<string>();
  const seen = new Set<Module>();
  let blockCounter = 0;
  // A TransformerEncoder's layers are its blocks unless the plan already cut elsewhere.
  let blocksAssigned = blocks.size > 0;
  const visit = (module: Module, block: number | undefined, depth: number): void => {
    if (depth > 24 || seen.has(module)) return;
    seen.add(module);
    const own = block ?? (blocks.has(module) ? blockCounter++ : undefined);
    // nn.Transformer holds its encoder and decoder stacks as submodules (see transformerParts in the interpreter).
    if (module.kind === 'layer' && module.type !== 'Sequential' && module.type !== 'ModuleList' && module.type !== 'ModuleDict' && module.type !== 'Transformer') {
      if (module.type === 'TransformerEncoder' || module.type === 'TransformerDecoder') {
        const layer = module.args[0] ?? module.kwargs.get(module.type === 'TransformerEncoder' ? 'encoder_layer' : 'decoder_layer');
        const count = numberOf(module.args[1] ?? module.kwargs.get('num_layers')) ?? 1;
        if (layer?.kind === 'layer') {
          for (let i = 0; i < count; i++) out.push({ layer, block: own ?? (blocksAssigned ? undefined : blockCounter++) });
          blocksAssigned = true;
        }
        // The stack's final norm (`norm=nn.LayerNorm(d)`) has parameters of its own.
        const norm = module.kwargs.get('norm') ?? module.args[2];
        if (norm?.kind === 'layer') out.push({ layer: norm, block: own });
        return;
      }
      if (!LAYER_TYPES.has(module.type) && !PASS_THROUGH.has(module.type)) unknown.add(module.type);
      out.push({ layer: module, block: own });
      return;
    }
    for (const child of submodules(module)) visit(child, own, depth + 1);
  };
  visit(root, undefined, 0);
  return { leaves: out, unknown };
}

const LAYER_TYPES = new Set(['Parameter', 'Linear', 'Bilinear', 'LazyLinear', 'LazyConv1d', 'LazyConv2d', 'LazyConv3d',
  'LazyConvTranspose1d', 'LazyConvTranspose2d', 'LazyConvTranspose3d', 'LazyBatchNorm1d', 'LazyBatchNorm2d', 'LazyBatchNorm3d',
  'LazyInstanceNorm1d', 'LazyInstanceNorm2d', 'LazyInstanceNorm3d', 'Conv1d', 'Conv2d', 'Conv3d', 'ConvTranspose1d', 'ConvTranspose2d',
  'ConvTranspose3d', 'Embedding', 'EmbeddingBag', 'LayerNorm', 'RMSNorm', 'BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'GroupNorm', 'InstanceNorm1d', 'InstanceNorm2d',
  'InstanceNorm3d', 'LSTM', 'GRU', 'RNN', 'LSTMCell', 'GRUCell', 'RNNCell', 'MultiheadAttention',
  'TransformerEncoderLayer', 'TransformerDecoderLayer', 'ReLU', 'GELU', 'SiLU', 'Tanh', 'Sigmoid', 'Dropout', 'Dropout1d', 'Dropout2d', 'Dropout3d',
  'MaxPool1d', 'MaxPool2d', 'MaxPool3d', 'AdaptiveAvgPool1d', 'AdaptiveAvgPool2d', 'AdaptiveAvgPool3d', 'AvgPool1d', 'AvgPool2d', 'AvgPool3d',
  'AdaptiveMaxPool1d', 'AdaptiveMaxPool2d', 'AdaptiveMaxPool3d', 'LeakyReLU', 'ReLU6', 'Hardtanh',
  'Hardswish', 'Mish', 'ELU', 'SELU', 'CELU', 'GLU', 'PReLU', 'Softplus', 'Upsample', 'UpsamplingNearest2d', 'UpsamplingBilinear2d',
  'FeaturePyramidNetwork', ...['Zero', 'Constant', 'Reflection', 'Replication', 'Circular'].flatMap((kind) => [1, 2, 3].map((d) => `${kind}Pad${d}d`))]);

function argument(layer: LayerValue, index: number, keyword: string): Value | undefined {
  return layer.kwargs.get(keyword) ?? layer.args[index];
}

function num(layer: LayerValue, index: number, keyword: string, fallback: number): number {
  const value = argument(layer, index, keyword);
  if (value?.kind === 'list') return numberOf(value.items[0]) ?? fallback;
  return numberOf(value) ?? fallback;
}

function flag(layer: LayerValue, keyword: string, fallback: boolean, index = -1): boolean {
  const value = argument(layer, index, keyword);
  return value?.kind === 'bool' ? value.value : fallback;
}

function firstShape(list: Leaf[]): { kind: 'image' | 'tokens' | 'vector'; channels: number; layer?: LayerValue } {
  for (const { layer } of list) {
    switch (layer.type) {
      case 'Conv2d':
      case 'Conv3d':
        return { kind: 'image', channels: num(layer, 0, 'in_channels', 3), layer };
      // A lazy first convolution reads whatever channels the data has: an image's three, unless the data says.
      case 'LazyConv2d':
      case 'LazyConv3d':
        return { kind: 'image', channels: 3, layer };
      case 'Embedding':
      case 'EmbeddingBag':
        return { kind: 'tokens', channels: 1, layer };
      case 'Conv1d':
        return { kind: 'tokens', channels: num(layer, 0, 'in_channels', 1), layer };
      case 'LSTM':
      case 'GRU':
      case 'RNN':
        return { kind: 'tokens', channels: num(layer, 0, 'input_size', 1), layer };
      case 'Linear':
        return { kind: 'vector', channels: num(layer, 0, 'in_features', 1), layer };
      default:
        break;
    }
  }
  return { kind: 'vector', channels: 1 };
}

function apply(net: NetBuilder, layer: LayerValue): void {
  // A lazy layer takes the walk's current width, unless a traced forward gave it one.
  if (isLazyLayer(layer)) {
    const eager = materializeLazy(layer, net.channels, false);
    if (eager) apply(net, eager);
    return;
  }
  switch (layer.type) {
    case 'Parameter': {
      // nn.Parameter(torch.zeros(1, 1, dim)): a class token, position table or scale, counted by its shape.
      const tensor = layer.args[0] ?? layer.kwargs.get('data');
      const shape = tensor?.kind === 'call' ? madeTensorShape(tensor) : undefined;
      if (shape) net.parameters += shape.reduce((a, b) => a * b, 1);
      return;
    }
    case 'Linear':
    case 'LazyLinear': {
      const inFeatures = layer.type === 'LazyLinear' ? undefined : num(layer, 0, 'in_features', net.channels);
      net.linear(num(layer, layer.type === 'LazyLinear' ? 0 : 1, 'out_features', 1), flag(layer, 'bias', true, layer.type === 'LazyLinear' ? 1 : 2), inFeatures, layer.tiedWeight);
      return;
    }
    case 'Conv1d':
    case 'Conv2d':
    case 'Conv3d': {
      const kernel = num(layer, 2, 'kernel_size', 3);
      const stride = num(layer, 3, 'stride', 1);
      const paddingValue = argument(layer, 4, 'padding');
      const padding = paddingValue?.kind === 'string' ? (paddingValue.value === 'same' ? Math.floor(kernel / 2) : 0)
        : paddingValue?.kind === 'list' ? numberOf(paddingValue.items[0]) ?? 0 : numberOf(paddingValue) ?? 0;
      const bias = flag(layer, 'bias', true, 7);
      const out = num(layer, 1, 'out_channels', 1);
      const inChannels = num(layer, 0, 'in_channels', net.channels);
      if (layer.type === 'Conv1d') net.conv1d(out, kernel, stride, bias, padding, inChannels, num(layer, 6, 'groups', 1));
      else net.conv(out, kernel, stride, num(layer, 6, 'groups', 1), bias, padding, true, inChannels);
      return;
    }
    case 'ConvTranspose1d':
    case 'ConvTranspose2d':
    case 'ConvTranspose3d':
      net.convTranspose(num(layer, 1, 'out_channels', 1), num(layer, 2, 'kernel_size', 2), num(layer, 3, 'stride', 1), num(layer, 4, 'padding', 0),
        flag(layer, 'bias', true), num(layer, 0, 'in_channels', net.channels));
      return;
    case 'Upsample':
    case 'UpsamplingNearest2d':
    case 'UpsamplingBilinear2d':
      net.upsample(num(layer, 1, 'scale_factor', 2));
      return;
    case 'FeaturePyramidNetwork':
      // It reads a dict of maps, which a walk of one tensor does not have: its parameters only (the trace runs it).
      net.parameters += layerParameters(layer).total;
      return;
    case 'Embedding': {
      const vocab = num(layer, 0, 'num_embeddings', 1);
      const dim = num(layer, 1, 'embedding_dim', 1);
      net.embedding(vocab, dim);
      // Tied to the output head: one matrix, counted at the head.
      if (layer.tiedWeight) net.parameters -= vocab * dim;
      return;
    }
    case 'EmbeddingBag':
      net.embeddingBag(num(layer, 0, 'num_embeddings', 1), num(layer, 1, 'embedding_dim', 1));
      return;
    case 'BatchNorm1d':
    case 'BatchNorm2d':
    case 'BatchNorm3d':
    case 'InstanceNorm1d':
    case 'InstanceNorm2d':
    case 'InstanceNorm3d':
      net.batchNorm(num(layer, 0, 'num_features', net.channels), !layer.type.startsWith('InstanceNorm') || flag(layer, 'affine', false));
      return;
    case 'LayerNorm':
    case 'RMSNorm': {
      const shape = argument(layer, 0, 'normalized_shape');
      const features = shape?.kind === 'list' ? shape.items.map((i) => numberOf(i) ?? 1).reduce((a, b) => a * b, 1) : numberOf(shape) ?? net.channels;
      net.layerNorm(features, layer.type === 'RMSNorm' ? 1 : 2, normAffine(layer));
      return;
    }
    case 'GroupNorm':
      net.layerNorm(num(layer, 1, 'num_channels', net.channels), 2, normAffine(layer));
      return;
    case 'ReLU6':
    case 'Hardtanh':
      net.relu6();
      return;
    case 'ReLU':
      net.relu(flag(layer, 'inplace', false, 0));
      return;
    case 'LeakyReLU':
      // Out of place, leaky_relu's backward reads its input, which the layer before does not always keep.
      if (flag(layer, 'inplace', false, 1)) net.relu(true);
      else net.activation();
      return;
    case 'Sigmoid':
    case 'Tanh':
      net.sigmoid();
      return;
    case 'PReLU':
      net.activation();
      net.parameters += num(layer, 0, 'num_parameters', 1);
      return;
    case 'GELU':
    case 'SiLU':
    case 'Hardswish':
    case 'Mish':
    case 'ELU':
    case 'SELU':
    case 'CELU':
    case 'Softplus':
    case 'GLU':
      // GLU keeps its input, like these; its halved output is what the next layer is built for.
      net.activation();
      return;
    case 'Dropout':
    case 'Dropout1d':
    case 'Dropout2d':
    case 'Dropout3d':
      net.dropout(num(layer, 0, 'p', 0.5));
      return;
    case 'MaxPool1d':
    case 'MaxPool2d':
    case 'MaxPool3d': {
      const kernel = num(layer, 0, 'kernel_size', 2);
      net.maxPool(kernel, num(layer, 1, 'stride', kernel), num(layer, 2, 'padding', 0));
      return;
    }
    case 'AvgPool1d':
    case 'AvgPool2d':
    case 'AvgPool3d':
    case 'AdaptiveAvgPool1d':
    case 'AdaptiveAvgPool2d':
    case 'AdaptiveAvgPool3d':
    case 'AdaptiveMaxPool1d':
    case 'AdaptiveMaxPool2d':
    case 'AdaptiveMaxPool3d':
      net.globalPool();
      return;
    case 'LSTM':
    case 'GRU':
    case 'RNN':
      net.recurrent(num(layer, 1, 'hidden_size', 1), num(layer, 2, 'num_layers', 1), flag(layer, 'bidirectional', false, 6),
        layer.type === 'LSTM' ? 4 : layer.type === 'GRU' ? 3 : 1, num(layer, 0, 'input_size', net.channels), flag(layer, 'bias', true, 3));
      return;
    case 'MultiheadAttention':
      net.multiheadAttention(num(layer, 0, 'embed_dim', net.channels), num(layer, 1, 'num_heads', 1));
      return;
    case 'TransformerEncoderLayer':
    case 'TransformerDecoderLayer':
      net.transformerLayer(num(layer, 0, 'd_model', net.channels), num(layer, 2, 'dim_feedforward', 2048), num(layer, 3, 'dropout', 0.1),
        layer.type === 'TransformerDecoderLayer');
      return;
    default:
      return;
  }
}

/** A weight autocast casts once a step, or one weight_norm / spectral_norm makes at each call (see layerParameters). */
function castOrReparametrized(layer: LayerValue, weight: number): { cast: number; reparametrized?: number } {
  return layer.weightNormalized ? { cast: 0, reparametrized: weight } : { cast: weight };
}

/**
 * A layer's own parameters, from its constructor arguments alone (what `sum(p.numel() for p in m.parameters())`
 * counts), and those of them autocast casts to half precision once a step (linear, convolution and attention
 * weights). A weight that weight_norm or spectral_norm makes anew at each call is no parameter autocast caches a
 * copy of: its copy is made per call, `reparametrized` elements each (see ForwardTrace.keepReparametrizedWeight).
 */
export function layerParameters(layer: LayerValue): { total: number; cast: number; reparametrized?: number } {
  const eager = isLazyLayer(layer) ? materializedLazy(layer) : undefined;
  if (eager) return layerParameters(eager);
  const n = (index: number, keyword: string, fallback: number): number => num(layer, index, keyword, fallback);
  const kernel = (index: number, dims: number): number => {
    const value = argument(layer, index, 'kernel_size');
    if (value?.kind === 'list') return value.items.map((i) => numberOf(i) ?? 1).reduce((a, b) => a * b, 1);
    return (numberOf(value) ?? 1) ** dims;
  };
  switch (layer.type) {
    case 'Linear': {
      const weight = layer.tiedWeight ? 0 : n(0, 'in_features', 0) * n(1, 'out_features', 0);
      const magnitude = layer.weightNormalized === 'weight' ? n(1, 'out_features', 0) : 0;
      const cast = n(0, 'in_features', 0) * n(1, 'out_features', 0);
      return { total: weight + magnitude + (flag(layer, 'bias', true, 2) ? n(1, 'out_features', 0) : 0), ...castOrReparametrized(layer, cast) };
    }
    case 'Bilinear': {
      const weight = n(0, 'in1_features', 0) * n(1, 'in2_features', 0) * n(2, 'out_features', 0);
      return { total: weight + (flag(layer, 'bias', true, 3) ? n(2, 'out_features', 0) : 0), cast: weight };
    }
    case 'Conv1d':
    case 'Conv2d':
    case 'Conv3d':
    case 'ConvTranspose1d':
    case 'ConvTranspose2d':
    case 'ConvTranspose3d': {
      const dims = layer.type.endsWith('3d') ? 3 : layer.type.endsWith('2d') ? 2 : 1;
      const groups = n(layer.type.startsWith('ConvTranspose') ? 6 : 6, 'groups', 1);
      const weight = (n(0, 'in_channels', 0) / groups) * n(1, 'out_channels', 0) * kernel(2, dims);
      const bias = flag(layer, 'bias', true, layer.type.startsWith('ConvTranspose') ? 7 : 7) ? n(1, 'out_channels', 0) : 0;
      // weight_norm's magnitude: one per slice along the weight's first axis (out_channels; in_channels transposed).
      const magnitude = layer.weightNormalized === 'weight' ? n(layer.type.startsWith('ConvTranspose') ? 0 : 1, layer.type.startsWith('ConvTranspose') ? 'in_channels' : 'out_channels', 0) : 0;
      return { total: weight + bias + magnitude, ...castOrReparametrized(layer, weight) };
    }
    case 'BatchNorm1d':
    case 'BatchNorm2d':
    case 'BatchNorm3d':
      return { total: flag(layer, 'affine', true, 3) ? 2 * n(0, 'num_features', 0) : 0, cast: 0 };
    case 'InstanceNorm1d':
    case 'InstanceNorm2d':
    case 'InstanceNorm3d':
      return { total: flag(layer, 'affine', false, 3) ? 2 * n(0, 'num_features', 0) : 0, cast: 0 };
    case 'GroupNorm':
      return { total: flag(layer, 'affine', true, 3) ? 2 * n(1, 'num_channels', 0) : 0, cast: 0 };
    case 'LayerNorm':
    case 'RMSNorm': {
      const shape = argument(layer, 0, 'normalized_shape');
      const features = shape?.kind === 'list' ? shape.items.map((i) => numberOf(i) ?? 1).reduce((a, b) => a * b, 1) : numberOf(shape) ?? 0;
      if (!flag(layer, 'elementwise_affine', true, 2)) return { total: 0, cast: 0 };
      return { total: features * (layer.type === 'RMSNorm' || !flag(layer, 'bias', true, 3) ? 1 : 2), cast: 0 };
    }
    case 'Embedding':
    case 'EmbeddingBag':
      return { total: layer.tiedWeight ? 0 : n(0, 'num_embeddings', 0) * n(1, 'embedding_dim', 0), cast: 0 };
    case 'PReLU':
      return { total: n(0, 'num_parameters', 1), cast: 0 };
    case 'Parameter': {
      const tensor = layer.args[0] ?? layer.kwargs.get('data');
      const shape = tensor?.kind === 'call' ? madeTensorShape(tensor) : undefined;
      return { total: shape ? shape.reduce((a, b) => a * b, 1) : 0, cast: 0 };
    }
    case 'LSTMCell':
    case 'GRUCell':
    case 'RNNCell': {
      const gates = layer.type === 'LSTMCell' ? 4 : layer.type === 'GRUCell' ? 3 : 1;
      const input = n(0, 'input_size', 0);
      const hidden = n(1, 'hidden_size', 0);
      const cast = gates * hidden * (input + hidden);
      return { total: cast + (flag(layer, 'bias', true, 2) ? 2 * gates * hidden : 0), cast };
    }
    case 'LSTM':
    case 'GRU':
    case 'RNN': {
      const gates = layer.type === 'LSTM' ? 4 : layer.type === 'GRU' ? 3 : 1;
      const input = n(0, 'input_size', 0);
      const hidden = n(1, 'hidden_size', 0);
      const layers = n(2, 'num_layers', 1);
      const dirs = flag(layer, 'bidirectional', false, 6) ? 2 : 1;
      const bias = flag(layer, 'bias', true, 3);
      let total = 0;
      let cast = 0;
      for (let l = 0; l < layers; l++) {
        const layerIn = l === 0 ? input : hidden * dirs;
        cast += dirs * gates * hidden * (layerIn + hidden);
        total += dirs * gates * hidden * (layerIn + hidden + (bias ? 2 : 0));
      }
      return { total, cast };
    }
    case 'MultiheadAttention': {
      const e = n(0, 'embed_dim', 0);
      const bias = flag(layer, 'bias', true, 3);
      // Keys and values of their own width (kdim / vdim, None for embed_dim) are projected by E x kdim and E x vdim
      // weights; add_bias_kv appends a learned key and value (E each).
      const [kdim, vdim] = [n(6, 'kdim', e), n(7, 'vdim', e)];
      const weights = 2 * e * e + e * kdim + e * vdim;
      return { total: weights + (bias ? 4 * e : 0) + (flag(layer, 'add_bias_kv', false, 4) ? 2 * e : 0), cast: weights };
    }
    case 'FeaturePyramidNetwork': {
      const pyramid = featurePyramidLayers(layer);
      const convolutions = pyramid ? [...pyramid.lateral, ...pyramid.output].map(layerParameters) : [];
      return { total: convolutions.reduce((sum, c) => sum + c.total, 0), cast: convolutions.reduce((sum, c) => sum + c.cast, 0) };
    }
    case 'TransformerEncoderLayer':
    case 'TransformerDecoderLayer': {
      const d = n(0, 'd_model', 0);
      const ff = n(2, 'dim_feedforward', 2048);
      const blocks = layer.type === 'TransformerDecoderLayer' ? 2 : 1;
      return {
        total: blocks * (4 * d * d + 4 * d) + 2 * d * ff + ff + d + (blocks + 1) * 2 * d,
        cast: blocks * 4 * d * d + 2 * d * ff,
      };
    }
    default:
      return { total: 0, cast: 0 };
  }
}

function nameOf(module: Module): string {
  return module.kind === 'layer' ? `nn.${module.type}` : module.typeName;
}

/** See CustomModuleInfo.sampleLength: the first sample shape a `__getitem__` makes that the first layer can take. */
function sampleLength(program: ProgramModel, first: ReturnType<typeof firstShape>): CustomModuleInfo['sampleLength'] {
  for (const { value: call, inFunction } of program.tensorCalls) {
    if (inFunction !== '__getitem__') continue;
    const shape = tensorShape(call);
    // A length under 8 is a draw of a few numbers (`torch.rand(1)`), not a sequence.
    if (!shape || shape.dims[shape.dims.length - 1]! < FEWEST_SEQUENCE_TOKENS) continue;
    const dims = shape.dims;
    const at = (index: number): { line: number; how: How } => shape.dimOrigins?.[index] ?? { line: shape.line, how: shape.how };
    switch (first.layer?.type) {
      case 'Embedding':
      case 'EmbeddingBag':
        if (dims.length === 1 && isIntegerTensor(call)) return { value: dims[0]!, ...at(0) };
        break;
      case 'Conv1d':
        if ((dims.length === 1 && first.channels === 1) || (dims.length === 2 && dims[0] === first.channels)) return { value: dims[dims.length - 1]!, ...at(dims.length - 1) };
        break;
      case 'LSTM':
      case 'GRU':
      case 'RNN':
        if (dims.length === 2 && dims[1] === first.channels) return { value: dims[0]!, ...at(0) };
        break;
      default:
        break;
    }
  }
  return undefined;
}

type InputShape = { shape: number[]; integer: boolean };

/**
 * A DataLoader's collate_fn that concatenates its samples rather than stacking them (`torch.cat(xs)`: graph batching,
 * where a batch is one big graph of every sample's nodes and edges): the function, one sample as `__getitem__` makes
 * it (each returned tensor's shape), and the names the loop around the step's call binds the collated parts to.
 * Undefined where no collate_fn concatenates.
 */
function concatenatingCollate(program: ProgramModel, site: PyNode): { collate: Value; sample: Array<SampleShape | undefined>; names: string[] } | undefined {
  // The loader the step's loop iterates, its collate_fn and its dataset's __getitem__ (as dataset-samples reads them).
  const loop = enclosingLoops(site).find((outer) => outer.type === 'for_statement');
  const { value: loader } = loopLoader(program, loop);
  if (!loop || loader?.kind !== 'call' || !/(^|\.)DataLoader$/.test(loader.path)) return undefined;
  const collate = loader.kwargs.get('collate_fn');
  const body = collate?.kind === 'function' ? collate.node.childForFieldName('body')?.text ?? '' : '';
  if (!collate || !/\btorch\.(cat|concat)\(/.test(body) || /\btorch\.stack\(/.test(body)) return undefined;
  const dataset = loader.kwargs.get('dataset') ?? loader.args[0];
  const method = dataset?.kind === 'object' && dataset.cls ? lookupClassAttribute(dataset.cls, '__getitem__') : undefined;
  if (method?.kind !== 'function') return undefined;
  const getitem = method.node;
  const returned = getitem.descendantsOfType('return_statement')[0]?.namedChildren[0];
  const elements = returned && (returned.type === 'expression_list' || returned.type === 'tuple') ? returned.namedChildren.filter((c): c is PyNode => !!c && c.type !== 'comment') : [];
  const sample = elements.map((element): InputShape | undefined => {
    const value = program.valueOf(element);
    const shape = value?.kind === 'call' ? tensorShape(value) : undefined;
    // Sizes drawn at random keep their least (a spectrogram's frames): the lengths a packed sequence runs over.
    const least = shape?.least?.some((d) => d !== undefined) ? { least: shape.least } : {};
    return shape && value?.kind === 'call' ? { shape: shape.dims, integer: isIntegerTensor(value), ...least } : undefined;
  });
  // The loop's target tuple that holds the batch's parts (`for step, (x, edge_index, ...) in enumerate(loader)`).
  const left = loop.childForFieldName('left');
  const patterns = [left, ...(left?.descendantsOfType(['tuple_pattern', 'pattern_list']) ?? [])];
  // `for step, (x, lens, ...) in enumerate(loader)`: the inner tuple, whose names are all plain, before the outer one.
  const lists = patterns.map((p) => p?.namedChildren.filter((c): c is PyNode => !!c).map((c) => (c.type === 'identifier' ? c.text : '')) ?? [])
    .filter((list) => list.length >= elements.length && list.length > 1);
  const names = lists.find((list) => !list.includes('')) ?? lists[0];
  if (!names || sample.every((s) => s === undefined)) return undefined;
  return { collate, sample, names };
}

/**
 * Candidate per-sample inputs of a module, with batch 1, most likely first: a call site whose argument the script
 * determines (`netG(torch.randn(b, nz, 1, 1))`), the tensors the script's data code creates (a Dataset's
 * `torch.randn(T, n_mels)`, with or without a batch dimension), then the shape its first layer implies at the
 * detected size.
 */
/** How many of the input candidates are tried in pairs for a forward of several inputs (at most its square traces). */
const MAX_PAIRED_CANDIDATES = 6;

function inputCandidates(program: ProgramModel, root: Module, first: ReturnType<typeof firstShape>, size: number, members?: number): InputShape[] {
  const out: InputShape[] = [];
  for (const args of program.moduleCalls.get(root) ?? []) {
    const given = args[0];
    const shape = given?.kind === 'call' ? tensorShape(given) : undefined;
    if (shape && shape.dims.length >= 2) out.push({ shape: [1, ...shape.dims.slice(1)], integer: given?.kind === 'call' && isIntegerTensor(given) });
  }
  // The tensors the script's data code makes come before a guess from the first layer: one sample where a
  // Dataset's __getitem__ makes it, else a batch or a whole dataset whose first dimension is not the sample's.
  for (const { value: call, inFunction } of program.tensorCalls) {
    const shape = tensorShape(call);
    if (!shape) continue;
    const integer = call.path === 'torch.randint' || isIntegerTensor(call);
    // A stacked ensemble's batch, (members, batch, ...): a member sees the batch.
    const perMember = members !== undefined && shape.dims.length >= 3 && shape.dims[0] === members;
    out.push({ shape: inFunction === '__getitem__' ? [1, ...shape.dims] : [1, ...shape.dims.slice(perMember ? 2 : 1)], integer });
  }
  const layer = first.layer;
  if (first.kind === 'image' && !layer) out.push({ shape: [1, first.channels, size, size], integer: false });
  switch (layer?.type) {
    case 'Conv2d':
    case 'Conv3d':
      out.push({ shape: [1, first.channels, ...new Array<number>(layer.type === 'Conv3d' ? 3 : 2).fill(size)], integer: false });
      break;
    case 'EmbeddingBag':
      out.push({ shape: [1, size], integer: true });
      break;
    case 'Embedding':
      out.push({ shape: [1, size], integer: true });
      // Token ids laid out (seq, batch), as sequence layers without batch_first read them (the trace says which fits).
      out.push({ shape: [size, 1], integer: true });
      break;
    case 'Conv1d':
      out.push({ shape: [1, first.channels, size], integer: false });
      break;
    case 'LSTM':
    case 'GRU':
    case 'RNN': {
      const batchFirst = layer.kwargs.get('batch_first');
      out.push({ shape: batchFirst?.kind === 'bool' && batchFirst.value ? [1, size, first.channels] : [size, 1, first.channels], integer: false });
      break;
    }
    default:
      out.push({ shape: [1, first.channels], integer: false });
  }
  const seen = new Set<string>();
  return out.filter((candidate) => {
    const key = `${candidate.integer}:${candidate.shape.join('x')}`;
    // One integer per sample (a class label: a Dataset's `self.y[i]`) is only ever another argument (see labelInputs).
    if (seen.has(key) || candidate.shape.length < (candidate.integer ? 1 : 2)) return false;
    seen.add(key);
    return true;
  }).slice(0, 12);
}

/**
 * A step argument that is a dict or tuple of tensors the script makes per step (`model({"ids": torch.randint(...),
 * "offsets": ...})`), as forward receives it for one sample: each tensor with batch 1 and its other sizes where the
 * script gives them (a size it does not determine, such as the length of a flat list of every sample's ids, counts
 * as 1). Undefined where the argument holds no tensor the script makes.
 */
function batchOfTensors(value: Value | undefined, input: (shape: number[], integer: boolean) => TensorValue): Value | undefined {
  if (value?.kind !== 'dict' && value?.kind !== 'list') return undefined;
  let tensors = 0;
  const perSample = (item: Value): Value => {
    if (item.kind !== 'call' || !item.path.startsWith('torch.')) return item;
    tensors++;
    const made = partialTensorShape(item);
    const dims = made?.dims ?? tensorShape(item)?.dims ?? [undefined];
    return input([1, ...dims.slice(1).map((d) => d ?? 1)], made?.integer ?? isIntegerTensor(item));
  };
  const given: Value = value.kind === 'dict'
    ? { ...value, entries: new Map([...value.entries].map(([key, item]) => [key, perSample(item)] as const)) }
    : { ...value, items: value.items.map(perSample) };
  return tensors > 0 ? given : undefined;
}

/** Methods that leave a tensor's rows what they are (`x.to(device)`, `x.float()`). */
const KEEPS_ROWS = /^(to|cuda|float|half|bfloat16|contiguous|detach|requires_grad_)$/;

/**
 * The tensor an argument folds leading axes of into its rows: `t` of `t.reshape(-1, k)` / `t.view(-1, k, ...)`,
 * `t.flatten(0, ...)` / `torch.flatten(t, 0, ...)` (see CustomModuleInfo.foldedInput). Undefined where it folds none.
 */
function foldedTensor(node: PyNode): PyNode | undefined {
  let current: PyNode | null = node;
  for (let depth = 0; current?.type === 'call' && depth < 6; depth++) {
    const fn: PyNode | null = current.childForFieldName('function');
    const args = current.childForFieldName('arguments')?.namedChildren.filter((n): n is PyNode => !!n && n.type !== 'comment') ?? [];
    const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text ?? '' : '';
    const object: PyNode | undefined = fn?.type === 'attribute' ? fn.childForFieldName('object') ?? undefined : undefined;
    const positional = args.filter((a) => a.type !== 'keyword_argument');
    const startDim = (given: PyNode | undefined): boolean =>
      given?.text === '0' || args.some((a) => a.type === 'keyword_argument' && a.childForFieldName('name')?.text === 'start_dim' && a.childForFieldName('value')?.text === '0');
    if (/^(reshape|view)$/.test(method)) {
      const sizes = positional.length === 1 && positional[0]!.type === 'tuple' ? positional[0]!.namedChildren : positional;
      return sizes.length >= 2 && sizes[0]?.text.replace(/\s+/g, '') === '-1' ? object : undefined;
    }
    if (method === 'flatten') return startDim(positional[0]) ? object : undefined;
    if (fn?.text === 'torch.flatten') return startDim(positional[1]) ? positional[0] : undefined;
    if (!KEEPS_ROWS.test(method)) return undefined;
    current = object ?? null;
  }
  return undefined;
}

/**
 * Whether an argument folds the leading axes of a tensor the step makes itself into the model's rows. A batch the
 * loop takes from its loader (`for x, y in loader: model(x.view(-1, 784))`) is flattened per sample, not folded.
 */
function foldsRows(node: PyNode): boolean {
  const folded = foldedTensor(node);
  if (!folded) return false;
  if (folded.type !== 'identifier') return true;
  return !enclosingLoops(node).some((loop) => loop.type === 'for_statement' &&
    [loop.childForFieldName('left'), ...(loop.childForFieldName('left')?.descendantsOfType('identifier') ?? [])].some((target) => target?.text === folded.text));
}

/**
 * A trace at the step's own sizes (batch included) that notes, for one module, the input it is first called on and,
 * where a reshape folded that input's leading axes into its rows, how long the leading axis was (the batch).
 */
class FoldingTrace extends ForwardTrace {
  /** Tensors made by folding (`reshape(-1, k)`, `flatten(0, 1)`), with the leading size of what they folded. */
  private readonly folded = new Map<number, number>();
  called?: { shape: number[]; integer: boolean; lead: number };

  constructor(private readonly root: Module) {
    super(new Set());
  }

  override method(receiver: TensorValue, name: string, args: Value[], kwargs: Map<string, Value>): Value {
    const out = super.method(receiver, name, args, kwargs);
    if (out.kind !== 'tensor') return out;
    const lead = this.folded.get(receiver.id);
    if (lead !== undefined && KEEPS_ROWS.test(name)) this.folded.set(out.id, lead);
    else if (/^(reshape|view|flatten)$/.test(name) && out.shape.length < receiver.shape.length && out.shape[0]! > receiver.shape[0]!) this.folded.set(out.id, receiver.shape[0]!);
    return out;
  }

  override enterModule(module: ObjectValue | LayerValue, inputs: Value[]): void {
    const x = inputs[0];
    const lead = x?.kind === 'tensor' ? this.folded.get(x.id) : undefined;
    if (module === this.root && !this.called && x?.kind === 'tensor' && lead !== undefined) this.called = { shape: x.shape, integer: x.integer, lead };
    super.enterModule(module, inputs);
  }
}

/**
 * The rows one batch sample makes of a folded input (see CustomModuleInfo.foldedInput), found by running the
 * step's loop body at its own sizes, statement by statement, up to the statement that calls the model (directly, or
 * through a helper function of the script: NeRF's `render(model, rays, ...)`). Undefined where that run does not
 * reach the model with a folded tensor.
 */
function foldedRowsPerSample(program: ProgramModel, root: Module, siteNode: PyNode): (InputShape & { samples: number }) | undefined {
  let outerCall = siteNode;
  let fn = siteNode.parent;
  while (fn && fn.type !== 'function_definition') fn = fn.parent;
  if (fn) {
    // A helper (not a method) that calls the model: the step calls it in a loop (the body is run until this model is
  // reached: a second model the same helper is given later, NeRF's fine network, is reached by a later call).
    if (fn.parent?.parent?.type === 'class_definition') return undefined;
    const name = fn.childForFieldName('name')?.text;
    const caller = treeIndex(program.root).calls.find((call) => call.childForFieldName('function')?.text === name &&
      enclosingLoops(call).some((loop) => loop.type === 'for_statement'));
    if (!caller) return undefined;
    outerCall = caller;
  }
  const loop = enclosingLoops(outerCall).find((outer) => outer.type === 'for_statement');
  const body = loop?.childForFieldName('body')?.namedChildren.filter((n): n is PyNode => !!n) ?? [];
  const trace = new FoldingTrace(root);
  const names = new Map<string, Value>();
  // The model handed to the helper by a name of the step's function (`render_rays(field, ...)` in main()): that name
  // holds the model itself, which the replay below would not know.
  for (const argument of outerCall.childForFieldName('arguments')?.namedChildren ?? []) {
    if (argument?.type === 'identifier' && program.valueOf(argument) === root) names.set(argument.text, root);
  }
  for (const statement of body) {
    const reachesCall = statement.startIndex <= outerCall.startIndex && outerCall.endIndex <= statement.endIndex;
    const assignment = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
    if (assignment?.type === 'assignment') {
      const right = assignment.childForFieldName('right');
      const value = right ? program.evaluateTraced(right, names, trace) : undefined;
      const left = assignment.childForFieldName('left');
      if (left?.type === 'identifier' && value) names.set(left.text, value);
      else if ((left?.type === 'pattern_list' || left?.type === 'tuple_pattern') && value?.kind === 'list') {
        left.namedChildren.forEach((target, i) => {
          if (target?.type === 'identifier' && value.items[i]) names.set(target.text, value.items[i]!);
        });
      }
    } else if (reachesCall && assignment) {
      program.evaluateTraced(assignment, names, trace);
    }
    if (trace.called) break;
  }
  const found = trace.called;
  if (!found || found.lead < 1 || found.shape[0]! % found.lead !== 0) return undefined;
  return { shape: [found.shape[0]! / found.lead, ...found.shape.slice(1)], integer: found.integer, samples: found.lead };
}

/** The largest tensor among what forward returned (logits beside a scalar loss). */
function outputOf(value: Value | undefined): number | undefined {
  if (!value) return undefined;
  if (value.kind === 'tensor') return value.shape.reduce((a, b) => a * b, 1);
  const items = value.kind === 'list' ? value.items : value.kind === 'dict' ? [...value.entries.values()] : value.kind === 'object' ? [...value.attrs.values()] : [];
  const sizes = items.map(outputOf).filter((n): n is number => n !== undefined);
  // A tuple's first tensor is the prediction the loss reads (`logits, attn = model(x)`; `output, hidden`); a scalar
  // first (a loss computed inside forward) gives way to the largest of the rest. A score per sample of two axes
  // (`(B, 1)`) is no scalar, though one sample's has one element: so read, it stays the output at every batch.
  const first = value.kind === 'list' ? value.items[0] : undefined;
  const perSample = first?.kind === 'tensor' && first.shape.length >= 2;
  if (value.kind === 'list' && value.tuple && sizes.length > 0 && (sizes[0]! > 1 || perSample)) return sizes[0];
  // A list forward grew (`predictions.append(flow)` each refinement step) or a dict of heads' outputs: every item is
  // alive, and the loss reads each (a sequence loss, one loss per head).
  if (((value.kind === 'list' && !value.tuple) || value.kind === 'dict') && sizes.length > 0) return sizes.reduce((a, b) => a + b, 0);
  return sizes.length > 0 ? Math.max(...sizes) : undefined;
}

/** The parameters of a module the script builds (`sum(p.numel() for p in module.parameters())`), from its layers' arguments. */
export function moduleParameters(root: Value): number {
  if (!isModule(root)) return 0;
  return leaves(root, new Set()).leaves.reduce((sum, { layer }) => sum + layerParameters(layer).total, 0);
}

/**
 * Parameters of `nn.Embedding(..., sparse=True)` / `nn.EmbeddingBag(..., sparse=True)`: backward gives them a sparse
 * gradient of the looked-up rows only, never a dense table-sized one.
 */
function sparseGradients(layers: readonly LayerValue[]): { sparseGradientParameters?: number } {
  const sparse = layers.filter((layer) => (layer.type === 'Embedding' || layer.type === 'EmbeddingBag') &&
    layer.kwargs.get('sparse')?.kind === 'bool' && (layer.kwargs.get('sparse') as { value: boolean }).value);
  const total = sparse.reduce((sum, layer) => sum + layerParameters(layer).total, 0);
  return total > 0 ? { sparseGradientParameters: total } : {};
}

/** The constructor arguments (position, keyword) that size each layer type. */
const SIZE_ARGUMENTS: Record<string, ReadonlyArray<readonly [number, string]>> = {
  Linear: [[0, 'in_features'], [1, 'out_features']],
  Embedding: [[0, 'num_embeddings'], [1, 'embedding_dim']],
  LayerNorm: [[0, 'normalized_shape']],
  GroupNorm: [[0, 'num_groups'], [1, 'num_channels']],
  MultiheadAttention: [[0, 'embed_dim'], [1, 'num_heads']],
  TransformerEncoderLayer: [[0, 'd_model'], [1, 'nhead']],
  TransformerDecoderLayer: [[0, 'd_model'], [1, 'nhead']],
  ...Object.fromEntries(['Conv1d', 'Conv2d', 'Conv3d', 'ConvTranspose1d', 'ConvTranspose2d', 'ConvTranspose3d']
    .map((type) => [type, [[0, 'in_channels'], [1, 'out_channels'], [2, 'kernel_size']] as const])),
  ...Object.fromEntries(['BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d'].map((type) => [type, [[0, 'num_features']] as const])),
  ...Object.fromEntries(['LSTM', 'GRU', 'RNN', 'LSTMCell', 'GRUCell', 'RNNCell'].map((type) => [type, [[0, 'input_size'], [1, 'hidden_size']] as const])),
};

/** See CustomModuleInfo.undeterminedSize: the first layer given a size that is no number the script determines. */
function withUndeterminedSize(list: readonly Leaf[]): Pick<CustomModuleInfo, 'undeterminedSize'> {
  const determined = (value: Value): boolean => (value.kind === 'list' ? value.items.every(determined) : numberOf(value) !== undefined);
  for (const { layer } of list) {
    // A pyramid with norms or extra levels of its own is not sized (see featurePyramidLayers).
    if (layer.type === 'FeaturePyramidNetwork' && !featurePyramidLayers(layer)) return { undeterminedSize: 'torchvision.ops.FeaturePyramidNetwork' };
    for (const [index, keyword] of SIZE_ARGUMENTS[layer.type] ?? []) {
      const given = argument(layer, index, keyword);
      if (given && !determined(given)) return { undeterminedSize: `nn.${layer.type}` };
    }
  }
  return {};
}

/**
 * The library vision models a module (or its submodules) holds, whole (`self.encoder = timm.create_model(...)`) or
 * in parts (`self.layer3 = resnet.layer3`, `nn.Sequential(*list(resnet.children())[:-2])`), and what of it cannot
 * be sized (see CustomModuleInfo.libraryParts and undeterminedContainers).
 */
interface LibraryHoldings {
  /** Parameters of what is held, each model's parts counted once however often they are held. */
  parameters: number;
  /** Of those, the ones the script froze (requires_grad off). */
  frozenParameters: number;
  /** Whether it holds any library vision model or part of one (the module then takes images). */
  holdsAny: boolean;
  /** Whether it holds parts of one (not only whole models, which the catalog sizes as themselves). */
  holdsParts: boolean;
  unsized: string[];
  undetermined: number[];
}

/** A submodule of a library vision model, as the program model holds it: the model and the dotted path. */
function librarySubmodule(value: Value): { model: CallResultValue; path: string } | undefined {
  if (value.kind === 'method' && value.receiver.kind === 'call') return { model: value.receiver, path: value.name };
  const model = value.kind === 'object' && value.role === 'library-module' ? value.attrs.get('model') : undefined;
  return model?.kind === 'call' && value.kind === 'object' ? { model, path: value.typeName } : undefined;
}

/**
 * Whether one of the script's modules holds parts of the library model `model` (`nn.Sequential(*list(resnet.children())
 * [:-3])`, `self.layer3 = resnet.layer3`), built wherever the script builds it (a helper a constructor calls): the
 * library model is then a backbone of that module, not the model trained.
 */
export function scriptModuleHoldsPartsOf(program: ProgramModel, model: Value): boolean {
  const seen = new Set<Value>();
  const holds = (value: Value, depth: number): boolean => {
    if (depth > 12 || seen.has(value)) return false;
    seen.add(value);
    if (librarySubmodule(value)?.model === model) return true;
    if (value.kind === 'layer') return [...value.children, ...(value.named?.values() ?? [])].some((child) => holds(child, depth + 1));
    return value.kind === 'object' && value.role === 'instance' && !!value.cls && isModuleClass(value.cls) && [...value.attrs.values()].some((child) => holds(child, depth + 1));
  };
  return program.instances.some((instance) => instance.cls !== undefined && isModuleClass(instance.cls) && holds(instance, 0));
}

/** Whether the script's requires_grad calls, in order, leave a library model's submodule frozen. */
function libraryPathFrozen(program: ProgramModel | undefined, model: CallResultValue, path: string): boolean {
  let frozen = false;
  for (const f of program?.libraryFreezes ?? []) {
    if (f.model === model && !f.replaced && (f.path === '' || f.path === path || path.startsWith(`${f.path}.`))) frozen = f.frozen;
  }
  return frozen;
}

/** Library calls that make modules: torchvision's models and ops, timm's. */
const LIBRARY_MODULE = /^(torchvision\.(models|ops)|timm)\./;

function libraryHoldings(root: Module, program: ProgramModel | undefined): LibraryHoldings {
  const held = new Map<CallResultValue, Array<{ part: LibraryPart | 'whole'; frozen: boolean }>>();
  const unsized: string[] = [];
  const undetermined: number[] = [];
  const seen = new Set<Value>();
  const hold = (model: CallResultValue, part: LibraryPart | 'whole', frozen: boolean): void => {
    held.set(model, [...(held.get(model) ?? []), { part, frozen }]);
  };
  const visit = (value: Value, depth: number): void => {
    if (depth > 12 || seen.has(value)) return;
    seen.add(value);
    const submodule = librarySubmodule(value);
    if (value.kind === 'call' && libraryBackbone(value)) {
      hold(value, libraryPart(value, '') ?? 'whole', libraryPathFrozen(program, value, ''));
    } else if (value.kind === 'call' && LIBRARY_MODULE.test(value.path) && !libraryVisionCall(value)) {
      // A library module the catalog does not know (a layer of torchvision.ops, a model cut by a node it cannot
      // place): its parameters are not known, never none.
      if (unsized.length < 4) unsized.push(value.path.slice(value.path.lastIndexOf('.') + 1));
    } else if (submodule && libraryVisionCall(submodule.model)) {
      const part = libraryBackbone(submodule.model) ? libraryPart(submodule.model, submodule.path) : undefined;
      if (part) hold(submodule.model, part, libraryPathFrozen(program, submodule.model, submodule.path));
      else if (unsized.length < 4) unsized.push(`${submodule.model.path.slice(submodule.model.path.lastIndexOf('.') + 1)}.${submodule.path}`);
    } else if (value.kind === 'layer') {
      const container = value.type === 'Sequential' || value.type === 'ModuleList' || value.type === 'ModuleDict';
      if (container && value.children.some((child) => child.kind === 'unknown')) undetermined.push(value.line);
      for (const child of [...value.children, ...(value.named?.values() ?? [])]) visit(child, depth + 1);
    } else if (value.kind === 'object' && value.role === 'instance' && value.cls && isModuleClass(value.cls)) {
      for (const child of value.attrs.values()) visit(child, depth + 1);
    }
  };
  visit(root, 0);
  let parameters = 0;
  let frozenParameters = 0;
  for (const [model, parts] of held) {
    // Held whole (or whole as well as in parts): the model's parameters, once.
    const whole = parts.find((p) => p.part === 'whole');
    const count = whole ? libraryBackbone(model)!.build(224).parameters
      : libraryPartsParameters(model, parts.flatMap((p) => (p.part === 'whole' ? [] : p.part.covered)));
    parameters += count;
    if (whole ? whole.frozen : parts.every((p) => p.frozen)) frozenParameters += count;
    else {
      const frozenHere = whole ? 0 : libraryPartsParameters(model, parts.flatMap((p) => (p.frozen && p.part !== 'whole' ? p.part.covered : [])));
      // Parts inside what is held that the script froze by their own paths (a loop over named_parameters()).
      const covered = parts.flatMap((p) => (p.part === 'whole' ? libraryPart(model, '')?.covered ?? [] : p.part.covered));
      frozenParameters += Math.max(frozenHere, libraryPartsParameters(model, frozenPartsOf(program, model).filter((i) => covered.includes(i))));
    }
  }
  // A features_only model held as itself (path '') is a whole model too.
  const holdsParts = [...held.values()].some((parts) => parts.some((p) => p.part !== 'whole' && p.part.path !== ''));
  return { parameters, frozenParameters, holdsAny: held.size > 0, holdsParts, unsized, undetermined };
}

/** The part indices of a library vision model that the script's requires_grad calls, run in order, leave frozen. */
function frozenPartsOf(program: ProgramModel | undefined, model: CallResultValue): number[] {
  const parts = libraryBackbone(model)?.build(224).parts ?? [];
  const frozen = parts.map(() => false);
  for (const f of program?.libraryFreezes ?? []) {
    if (f.model !== model || f.replaced) continue;
    for (const i of partsNamed(parts, f.path) ?? []) frozen[i] = f.frozen;
  }
  return frozen.flatMap((isFrozen, i) => (isFrozen ? [i] : []));
}

/** Whether a module (or a submodule, a few levels down) holds a library vision model the catalog knows. */
function holdsBackbone(module: Value, depth = 0): boolean {
  if (depth > 3) return false;
  if (module.kind === 'call') return libraryBackbone(module) !== undefined;
  if (module.kind === 'object' && module.role === 'instance') return [...module.attrs.values()].some((child) => holdsBackbone(child, depth + 1));
  return false;
}

/**
 * The draw of the token axis of the step's data, where its dataset draws each item's length (`torch.randint(1, V,
 * (n,))` with `n = random.randint(50, 400)`): the sequences a collate function pads and the step may pack.
 */
function drawnTokenAxis(shapes: ReadonlyArray<SampleShape | undefined>): { least: number; most: number } | undefined {
  for (const sample of shapes) {
    const axis = sample?.least?.findIndex((least) => least !== undefined) ?? -1;
    if (sample && axis >= 0) return { least: sample.least![axis]!, most: sample.shape[axis]! };
  }
  return undefined;
}

/** One finished trace of forward: what it kept, and what it returned (for its whole batch). */
interface Traced {
  trace: ForwardTrace;
  /** What forward holds at once over what it keeps, its output aside (ForwardTrace.forwardLiveExcess). */
  liveExcess: { fp32: number; half: number; amp: number };
  output: number;
  outputKept: boolean;
  parts?: LayerNetSpec['outputPartsPerSample'];
  targetTokens?: number;
  /**
   * Whether none of the step's tensors had a batch axis to grow (a full graph's node ids and edge lists, each built
   * whole by the script's own function): the figures are the whole step's at any batch.
   */
  wholeStep?: boolean;
}

/** The input the search for one that fits chose, its trace for one sample, and how to trace it again. */
type SearchedInput = Traced & {
  /** Whether the trace ran on the tensors the loader's data makes. */
  fromData: boolean;
  /** The same input traced again, with other blocks as checkpoint cuts, for `batch` samples. */
  again: (cut: ReadonlySet<Module>, batch: number) => Traced | undefined;
};

/** How far a trace of two samples may be from twice one's before forward is taken not to grow evenly. */
const UNEVEN_GROWTH = 0.01;

/**
 * The axis a step input of one sample holds the batch on: the first (batch-first data, or a sample's rows folded
 * into it), else the first of one element (time-first token ids, `(T, 1)`); undefined where no axis is one.
 */
function batchAxis(shape: readonly number[], rowsFirst: boolean): number | undefined {
  if (rowsFirst || shape[0] === 1) return 0;
  const axis = shape.indexOf(1);
  return axis >= 0 ? axis : undefined;
}

/** What the loss reads at the end of a trace: the largest of what forward returns and what a loss inside it reads. */
const lossRead = (traced: Traced): number => Math.max(traced.output, traced.trace.lossInputElements);

/**
 * Whether forward traced for two samples keeps, holds at its largest or peaks at in backward other than twice what it
 * does for one: some tensors do not grow with the batch (an MoE layer's (experts, capacity, features) buffers, sized
 * by a capacity the script computes from its configured batch). A trace of two that fits worse, or whose output is
 * not twice one's (an op it sizes for one sample lost the batch on the way), says nothing.
 */
function growsUnevenly(one: Traced, two: Traced | undefined): boolean {
  const apart = (double: number, single: number): boolean => Math.abs(double - 2 * single) > UNEVEN_GROWTH * single;
  if (!two || two.trace.mismatches > one.trace.mismatches || apart(lossRead(two), lossRead(one))) return false;
  const figures = (t: Traced): number[] => [t.trace.savedElements, t.trace.largest, t.trace.backwardPeak, t.liveExcess.fp32];
  const [single, double] = [figures(one), figures(two)];
  return single.some((n, i) => apart(double[i]!, n));
}

/** The spec's forwardLiveExcessBytesPerSample, where forward holds more at some point than it keeps at its end. */
function forwardLiveExcess(excess: { fp32: number; half: number; amp: number }, perSample: (n: number) => number): Pick<LayerNetSpec, 'forwardLiveExcessBytesPerSample'> {
  if (excess.fp32 <= 0 && excess.half <= 0 && excess.amp <= 0) return {};
  return { forwardLiveExcessBytesPerSample: { fp32: perSample(excess.fp32), half: perSample(excess.half), amp: perSample(excess.amp) } };
}

/** The next value of a carried argument in what forward returned (see carried-state); undefined where it holds none. */
function carriedValue(returned: Value, from: CarriedFrom): Value | undefined {
  if (from === 'whole') return returned;
  return returned.kind === 'list' && returned.tuple ? returned.items[from] : undefined;
}

/** Whether the value carried to the next step holds tensors the first step's argument did not (a memory where there was none). */
function changesArgument(given: Value | undefined, next: Value | undefined): boolean {
  const shapes = (value: Value | undefined): string => {
    if (!value) return '';
    if (value.kind === 'tensor') return `[${value.shape.join(',')}]`;
    if (value.kind === 'list') return `(${value.items.map(shapes).join(';')})`;
    if (value.kind === 'dict') return `{${[...value.entries.values()].map(shapes).join(';')}}`;
    return '';
  };
  const carries = (value: Value | undefined): boolean =>
    !!value && (value.kind === 'tensor' || (value.kind === 'list' && value.items.some(carries)) || (value.kind === 'dict' && [...value.entries.values()].some(carries)));
  return carries(next) && shapes(given) !== shapes(next);
}

/** A value holding a module's parameters (`module.parameters()`, a list or dict made of them). */
function holdsOwnParameters(value: Value): boolean {
  if (value.kind === 'object' && value.role === 'parameters') return true;
  const items = value.kind === 'list' ? value.items : value.kind === 'dict' ? [...value.entries.values()] : [];
  return items.length > 0 && items.every((item) => item.kind === 'object' && item.role === 'parameters');
}

/**
 * How the module is run: `stackedMembers`, as one of that many members of an ensemble whose parameters torch.func
 * stacks and whose forward vmap runs (see ForwardTrace.stackedParameters).
 */
export interface ModuleNetOptions {
  stackedMembers?: number;
}

/** The net of a module the script builds; undefined when it holds no layer at all. */
export function moduleNet(root: Value, program?: ProgramModel, options: ModuleNetOptions = {}): CustomModuleInfo | undefined {
  if (!isModule(root)) return undefined;
  const stacked = (options.stackedMembers ?? 0) > 1;
  const plan = checkpointPlan(root);
  const blocks = new Set<Module>(plan?.modules ?? []);
  const { leaves: list, unknown } = leaves(root, blocks);
  const library = libraryHoldings(root, program);
  // A module of nothing but a whole library model is that model (the catalog's own sizing of it applies).
  if (list.length === 0 && !library.holdsParts) return undefined;
  // A module holding a library vision backbone (`self.encoder = timm.create_model(...)`) or parts of one takes images.
  const first: ReturnType<typeof firstShape> = holdsBackbone(root) || library.holdsAny ? { kind: 'image', channels: 3 } : firstShape(list);
  const libraries: TracedLibraries = {
    backbone: libraryBackbone,
    part: (model, path) => {
      const part = libraryPart(model, path);
      return part ? { part, trainable: !libraryPathFrozen(program, model, path) } : undefined;
    },
  };
  // The training step's call (the one with the most arguments: `model(x, targets)`) decides which path of
  // forward() runs; its other arguments are given tensors of the input's shape. Of calls with as many arguments, one
  // a loop repeats with autograd on is the step's, not a no_grad call before the loop (a data-dependent
  // initialisation on one batch).
  const sites = program?.moduleCalls.get(root) ?? [];
  const siteNodes = program?.moduleCallNodes.get(root) ?? [];
  const stepLike = (i: number): boolean => { const node = siteNodes[i]; return !!node && enclosingLoops(node).length > 0 && !underNoGrad(node); };
  const gradless = (i: number): boolean => { const node = siteNodes[i]; return !!node && underNoGrad(node); };
  // A call on what an earlier call of the module returned (`model.score(h, triples)` after `h = model.encode(x)`) is
  // traced after that one (see traceFollowingMethodCalls), never as the step's own.
  const continues = (i: number): boolean => { const node = siteNodes[i]; return !!node && continuesEarlierCall(node, siteNodes); };
  const siteIndex = sites.reduce((best, args, i) => (continues(best) && !continues(i)) || (!continues(i) && (args.length > (sites[best]?.length ?? 0)
    || (args.length === (sites[best]?.length ?? 0) && gradless(best) && stepLike(i)))) ? i : best, 0);
  const site = sites[siteIndex] ?? [];
  const siteNode = program?.moduleCallNodes.get(root)?.[siteIndex];
  const argumentNodes = siteNode?.childForFieldName('arguments')?.namedChildren.filter((n): n is PyNode => !!n && n.type !== 'keyword_argument' && n.type !== 'comment') ?? [];
  // Numbers drawn at random that the call gives forward (a count of steps to unroll): traced at their largest.
  const drawnArguments = site.slice(1).flatMap((arg) => (arg.kind === 'number' && arg.least !== undefined
    ? [{ least: arg.least, most: arg.value, line: arg.origin?.line ?? siteNode?.startPosition.row ?? 0 }] : []));
  // Arguments the loop hands back from the call's result (`logits, mems = model(inp, mems)`).
  const carried = siteNode ? carriedArguments(siteNode, argumentNodes) : new Map<number, CarriedFrom>();
  // The shapes of the step call's arguments, from the samples its loop's dataset makes (read once, at any size).
  let sampled: { shapes: ReturnType<typeof sampleArguments> } | undefined;
  const sampleShapes = (): ReturnType<typeof sampleArguments> =>
    (sampled ??= { shapes: program && siteNode ? sampleArguments(program, siteNode, argumentNodes, { throughLoopBody: true }) : undefined }).shapes;
  // The step folds axes into the model's rows (see CustomModuleInfo.foldedInput): how many rows one sample makes.
  const folds = !!(siteNode && argumentNodes[0] && site[0]?.kind === 'unknown' && foldsRows(argumentNodes[0]));
  let foldedFound: { rows: ReturnType<typeof foldedRowsPerSample> } | undefined;
  const foldedRows = (): ReturnType<typeof foldedRowsPerSample> =>
    (foldedFound ??= { rows: folds && program && siteNode ? foldedRowsPerSample(program, root, siteNode) : undefined }).rows;
  /** The input forward was traced with at each size (see build), found once. */
  const searches = new Map<string, { best: SearchedInput | undefined; cut: ReadonlySet<Module>; cutByScript: boolean }>();
  const build = (size: number, targetLen?: number, batch = 1): LayerNetSpec => {
    const input: LayerNetSpec['input'] = first.kind === 'image' ? { kind: 'image', channels: first.channels, size }
      : first.kind === 'tokens' ? { kind: 'tokens', seqLen: size } : { kind: 'vector', features: first.channels };
    const net = new NetBuilder(input);
    net.stackedParameters = stacked;
    if (first.kind === 'tokens' && first.channels > 1) net.embedding(0, first.channels);
    let open: number | undefined;
    for (const { layer, block } of list) {
      if (block !== open) {
        if (open !== undefined) net.endBlock();
        if (block !== undefined) net.beginBlock();
        open = block;
      }
      apply(net, layer);
    }
    if (open !== undefined) net.endBlock();
    // Parameters come from each layer's own arguments, never from shapes the walk inferred.
    const counted = list.map(({ layer }) => layerParameters(layer));
    // Library models and their parts are no layers of the walk: their parameters come from the catalog.
    const spec = {
      ...net.build(first.kind !== 'vector'),
      parameters: counted.reduce((sum, c) => sum + c.total, 0) + library.parameters,
      castParameters: counted.reduce((sum, c) => sum + c.cast, 0) + library.parameters,
      checkpointSegments: plan?.kind === 'segments',
      ...sparseGradients(list.map(({ layer }) => layer)),
    };
    // What backward keeps, from running forward() itself (functional activations, skips, reshapes included);
    // the registration-order walk above stays the answer where the trace cannot finish.
    if (!program) return spec;
    // The input under which forward() runs with every layer given the shape it expects.
    let best: SearchedInput | undefined;
    // A loader whose collate_fn concatenates its samples (graph batching): the step's arguments are what the
    // collate_fn makes of one sample, by the names the loop binds them to.
    const batching = siteNode ? concatenatingCollate(program, siteNode) : undefined;
    const firstName = argumentNodes[0] ? argumentVariable(argumentNodes[0]) : undefined;
    const firstIndex = batching && firstName !== undefined ? batching.names.indexOf(firstName) : -1;
    const firstSample = firstIndex >= 0 ? batching?.sample[firstIndex] : undefined;
    const allCandidates = inputCandidates(program, root, first, size, options.stackedMembers);
    const folded = foldedRows();
    // An argument the script's own function builds whole for the step (a batch of graphs' edge list) indexes the
    // rows of all its samples: the step's inputs hold the batch folded into their first axis, and where they come
    // from a loader's samples, forward is traced at the step's batch (a trace of one sample would count the whole
    // step's edges once per sample).
    const indexedWhole = !!siteNode && site.slice(1).some((arg, i) => arg.kind === 'unknown' && !!argumentNodes[i + 1] && definedByScript(program, argumentNodes[i + 1]!, siteNode));
    const candidates = [...(firstSample ? [firstSample] : []), ...(folded ? [folded] : []), ...allCandidates.filter((candidate) => candidate.shape.length >= 2)];
    /** One integer per sample: a class label a conditional model takes beside its input (`D(images, labels)`). */
    const labelInputs = allCandidates.filter((candidate) => candidate.shape.length === 1);
    const collatedInputs = (attempt: ForwardTrace): Map<string, Value> | undefined => {
      if (!batching) return undefined;
      const sample: Value = { kind: 'list', items: batching.sample.map((s) => (s ? attempt.input(s.shape, s.integer) : UNKNOWN)), tuple: true };
      const made = program.traceFunction(batching.collate, [{ kind: 'list', items: [sample], tuple: false }], attempt);
      if (made?.kind !== 'list') return undefined;
      return new Map(batching.names.map((name, i) => [name, made.items[i] ?? UNKNOWN] as const).filter(([name, value]) => name !== '' && value.kind === 'tensor'));
    };
    /**
     * A step argument the script's own function builds whole once before the loop (a graph's edge list and edge
     * types, `src, dst, rel = build_graph(device)`): that function traced apart, its tensor given to forward as one
     * the step holds, with the draw its integers come from (`rel == r` then holds for one edge type's share).
     * Undefined for an argument built otherwise.
     */
    const builtWhole = (arg: Value | undefined, node: PyNode | undefined): TensorValue | undefined => {
      if ((arg?.kind !== 'unknown' && arg?.kind !== 'call') || !node || !siteNode || !builtBeforeLoop(program, node, siteNode)) return undefined;
      const builder = new ForwardTrace(new Set(), () => false, () => 0, libraries);
      builder.buildsData = true;
      const built = tracedDefinition(program, node, siteNode, builder);
      // A function the trace does not follow all the way (a sparse adjacency it builds) is sized as the program model
      // sizes the call, as are tensors whose shape it gives otherwise.
      if (!built || builder.unmodelled.size > 0 || builder.mismatches > 0) return undefined;
      const made = arg.kind === 'call' ? madeTensorShape(arg) : undefined;
      return made && made.join() !== built.shape.join() ? undefined : built;
    };
    // Only a graph is read so: among those arguments, an index vector (an edge list's ends or types, node ids). A
    // batch the script makes once before the loop keeps its batch axis, which the candidates' search scales.
    const wholeGraph = argumentNodes.some((node, i) => {
      const built = builtWhole(site[i], node);
      return !!built && built.integer && built.shape.length === 1;
    });
    const definedInput = (arg: Value | undefined, node: PyNode | undefined, attempt: ForwardTrace): TensorValue | undefined => {
      const built = wholeGraph ? builtWhole(arg, node) : undefined;
      return built ? attempt.input(built.shape, built.integer, built.drawn) : undefined;
    };
    /**
     * forward() run with `candidate` as its input, for `batch` samples; the other arguments of the step's call take
     * `others` (by default the input's shape), or for target tokens their own length. Undefined where it could not
     * finish.
     */
    const traceInputs = (candidate: InputShape, others: InputShape, fromData: ReadonlyArray<InputShape | undefined> | undefined, cut: ReadonlySet<Module>,
      batch: number, previous?: { trace: ForwardTrace; returned: Value }): Traced | undefined => {
      const attempt = new ForwardTrace(cut, (layer) => !program.frozen.has(layer) && layerParameters(layer).total > 0, (layer) => layerParameters(layer).total, libraries,
        (layer) => layerParameters(layer).reparametrized ?? 0);
      attempt.drawnLengths(fromData ? drawnTokenAxis(fromData) : candidate === firstSample && firstSample ? drawnTokenAxis([firstSample]) : undefined);
      attempt.stackedParameters = stacked;
      attempt.samples = batch;
      // The step's tensors hold `batch` samples on their batch axis; one without a batch axis cannot be batched.
      let unbatched = false;
      let batchable = false;
      const stepInput = (shape: number[], integer: boolean, drawn?: TensorValue['drawn']): TensorValue => {
        batchable = true;
        const axis = batch === 1 ? undefined : batchAxis(shape, shape === folded?.shape || indexedWhole);
        if (batch !== 1 && axis === undefined) unbatched = true;
        return attempt.input(axis === undefined ? shape : shape.map((d, k) => (k === axis ? d * batch : d)), integer, drawn);
      };
      // A concatenating collate_fn is given one sample: its batch is traced at one sample only.
      const collated = candidate === firstSample && batch === 1 ? collatedInputs(attempt) : undefined;
      const x = (firstName !== undefined ? collated?.get(firstName) : undefined) ?? batchOfTensors(site[0], stepInput)
        ?? definedInput(site[0], argumentNodes[0], attempt) ?? stepInput(candidate.shape, candidate.integer);
      // The length of the token ids given as targets, where it is not the input's.
      let targetTokens: number | undefined;
      const tokenLength = (given: Value): void => {
        const length = given.kind === 'tensor' && given.integer && given.shape.length === 2 ? given.shape[1] : undefined;
        if (length !== undefined && length >= FEWEST_SEQUENCE_TOKENS && candidate.integer && length !== candidate.shape[1]) targetTokens ??= length;
      };
      const rest = site.slice(1).map((arg, i) => {
        // What the previous step returned, where the loop hands it back (a Transformer-XL's memory).
        const from = carried.get(i + 1);
        const again = previous && from !== undefined ? carriedValue(previous.returned, from) : undefined;
        if (again) return attempt.carry(previous!.trace, again);
        // The module's own parameters given as its weights (`learner(x, list(learner.parameters()))`, MAML's fast
        // weights at their start): forward's path without them runs the same layers.
        if (holdsOwnParameters(arg)) return NONE;
        if (arg.kind !== 'unknown' && arg.kind !== 'call') return arg;
        const built = arg.kind === 'call' ? definedInput(arg, argumentNodes[i + 1], attempt) : undefined;
        if (built) return built;
        const sample = fromData?.[i + 1];
        if (sample) {
          const given = stepInput(sample.shape, sample.integer);
          tokenLength(given);
          return given;
        }
        // Target tokens (an encoder-decoder's `tgt[:, :-1]`): their own length, in the input's layout, and the
        // call's expression applied to them.
        const node = argumentNodes[i + 1];
        const name = node ? argumentVariable(node) : undefined;
        const given = name !== undefined ? collated?.get(name) : undefined;
        if (given) return given;
        const axis = candidate.integer && candidate.shape.length === 2 ? candidate.shape.indexOf(size) : -1;
        if (node && name && targetLen !== undefined && axis >= 0 && TARGET_VARIABLE.test(name)) {
          const tokens = stepInput(candidate.shape.map((d, k) => (k === axis ? targetLen : d)), true);
          const given = program.evaluateTraced(node, new Map([[name, tokens]]), attempt);
          const taken = given?.kind === 'tensor' ? given : tokens;
          tokenLength(taken);
          return taken;
        }
        // A tensor made per step with a shape the script gives, at least past its batch (`torch.randint(0, T,
        // (x.size(0),))`, a diffusion model's timesteps; `torch.randn(B, 128)`, a conditioning vector): that shape,
        // for one sample.
        const made = arg.kind === 'call' ? partialTensorShape(arg) : undefined;
        if (made && made.dims.length >= 1 && made.dims.slice(1).every((d) => d !== undefined)) {
          return stepInput([1, ...(made.dims.slice(1) as number[])], made.integer, arg.kind === 'call' ? drawnRange(arg) : undefined);
        }
        // A tensor the script builds whole before the loop from sized parts (a full-batch graph's edge list,
        // `torch.stack([torch.cat([src, loops]), ...])`): the same tensor whatever the batch, so given as it is.
        const whole = arg.kind === 'call' ? madeTensorShape(arg) : undefined;
        if (whole && arg.kind === 'call') return attempt.input(whole, madeTensorIsInteger(arg));
        // A variable the script's own function builds before the step (a graph's edge list): that call, traced.
        const defined = arg.kind === 'unknown' && node && siteNode ? tracedDefinition(program, node, siteNode, attempt) : undefined;
        if (defined) return defined;
        return stepInput(others.shape, others.integer);
      });
      const returned = program.trace(root, [x, ...rest], attempt, program.moduleCallMethods.get(root)?.[siteIndex]);
      // The step's calls of the model's other methods on what this one returned (`model.score(h, triples)`).
      const following = siteNode ? traceFollowingMethodCalls(program, root, siteNode, returned, attempt) : undefined;
      const stepCalls = (program.moduleCallNodes.get(root) ?? []).filter((node) => !following?.calls.has(node.id));
      // Whether the model's calls ran on a tensor with a batch axis; the labels the loss reads after them do not make
      // a whole-graph step (every tensor of its forward given whole) a batched one.
      const forwardBatchable = batchable;
      keepStepReturnedOutputs(program, stepCalls, returned, attempt);
      // A tensor the step makes beside the input (its labels), at the traced batch: its shape past the batch axis.
      const stepTensor = (made: Value): TensorValue | undefined => {
        const shape = made.kind === 'call' ? partialTensorShape(made) : undefined;
        if (!shape || shape.dims.length < 1 || shape.dims.slice(1).some((d) => d === undefined)) return undefined;
        return stepInput([1, ...(shape.dims.slice(1) as number[])], shape.integer);
      };
      keepStepLossOverOutput(program, stepCalls, returned, attempt, stepTensor, following?.names);
      const output = outputOf(returned);
      if (process.env.OOMGUARD_DEBUG_TRACE) console.error('candidate', JSON.stringify(candidate), 'others', JSON.stringify(others), 'batch', batch, 'output', output, 'mismatches', attempt.mismatches, 'saved', attempt.savedElements, 'largest', attempt.largest, 'peak', attempt.backwardPeak, 'unmodelled', [...attempt.unmodelled].join(' '));
      if (output === undefined || !Number.isFinite(output) || !Number.isFinite(attempt.savedElements) || unbatched) return undefined;
      // The loop's later steps run on what this one returned where it differs from what the first was given (a memory
      // of the last segment where the first had none): those steps are the ones traced.
      const later = !previous && returned && [...carried].some(([position, from]) => changesArgument(site[position], carriedValue(returned, from)))
        ? traceInputs(candidate, others, fromData, cut, batch, { trace: attempt, returned }) : undefined;
      if (later) return later;
      return { trace: attempt, liveExcess: attempt.forwardLiveExcess(returned), output, outputKept: attempt.keepsLargest(returned), parts: attempt.outputParts(returned), targetTokens,
        ...(!forwardBatchable && !collated ? { wholeStep: true } : {}) };
    };
    /** forward() run for one sample (see traceInputs); kept where it fits better than the best so far. */
    const tryInputs = (candidate: InputShape, others: InputShape = candidate, fromData?: ReadonlyArray<InputShape | undefined>): boolean => {
      const traced = traceInputs(candidate, others, fromData, blocks, 1);
      if (!traced) return false;
      if (!best || traced.trace.mismatches < best.trace.mismatches) {
        // The data's sample, as a concatenating collate_fn makes the batch of it, is the data's input too.
        best = { ...traced, fromData: fromData?.[0] !== undefined || (!!firstSample && candidate === firstSample), again: (cut, batch) => traceInputs(candidate, others, fromData, cut, batch) };
      }
      return traced.trace.mismatches === 0;
    };
    // The step's arguments as the loader's dataset makes them, each its own element of the sample, come first
    // (stacked by the default collate; a concatenating collate_fn is read above).
    const fromData = batching ? undefined : sampleShapes();
    // The input that fits is searched for once per size: a rebuild for another batch traces the one found.
    const searchKey = `${size}:${targetLen ?? ''}`;
    let found = searches.get(searchKey);
    if (!found) {
      let fits = fromData?.[0] ? tryInputs(fromData[0], fromData[0], fromData) : false;
      // The data that gives only the other arguments (a helper computes the input itself): those still take the
      // data's shapes while the input's candidates are tried.
      const othersFromData = fromData?.[0] ? undefined : fromData;
      if (!fits) for (const candidate of candidates) if ((fits = tryInputs(candidate, candidate, othersFromData))) break;
      // A forward of several inputs of different kinds (a two-tower model's images and token ids): its other
      // arguments take another of the data's tensors, the pair that fits best (tried only when none fits alone).
      const moreInputs = site.slice(1).some((arg) => arg.kind === 'unknown' || arg.kind === 'call');
      if (!fits && moreInputs) {
        const paired = candidates.slice(0, MAX_PAIRED_CANDIDATES);
        search: for (const candidate of paired) {
          for (const others of [...paired, ...labelInputs]) if (others !== candidate && tryInputs(candidate, others)) break search;
        }
      }
      // A forward that calls checkpoint() itself (`x = checkpoint(blk, x)` in a loop over its blocks): the modules it
      // gives checkpoint are where it cuts, so the same input is traced again with those as the blocks. Where they are
      // only some of the blocks the plan would cut (a ViT encoder's blocks beside a conv decoder's), the others run
      // normally and keep what they save.
      const explicitCut = best?.trace.checkpointedModules;
      const cutByScript = !!explicitCut && explicitCut.size >= 2
        && (explicitCut.size !== blocks.size || [...explicitCut].some((module) => !blocks.has(module)));
      const cut = cutByScript ? explicitCut! : blocks;
      const again = cutByScript ? best!.again(cut, 1) : undefined;
      if (again) best = { ...best!, ...again };
      found = { best, cut, cutByScript };
      searches.set(searchKey, found);
    }
    best = found.best;
    if (!best) return { ...spec, forwardUntraced: true };
    const { cut, cutByScript } = found;
    // Forward traced for the batch asked for, where not every tensor grows with it (see LayerNetSpec.batchDependent);
    // else for one sample, checked against two.
    const atBatch = batch > 1 ? best.again(cut, batch) : undefined;
    const dependent = batch > 1 ? atBatch !== undefined && atBatch.trace.mismatches <= best.trace.mismatches
      : !batching && ((indexedWhole && best.fromData) || !!best.wholeStep || growsUnevenly(best, best.again(cut, 2)));
    const traced = atBatch && dependent ? atBatch : best;
    const tracedBatch = traced === best ? 1 : batch;
    const { trace, outputKept, targetTokens } = traced;
    // The trace's figures are for its whole batch.
    const perSample = (n: number): number => n / tracedBatch;
    // The loss reads the logits: those a cross-entropy inside forward reads where forward returns less (the loss).
    const returnedOutput = perSample(traced.output);
    const output = Math.max(returnedOutput, perSample(trace.lossInputElements));
    const parts = traced.parts?.map((part) => ({ ...part, elements: perSample(part.elements) }));
    // The data's tensors, as the dataset makes them (fp32, or int64 ids), when the trace ran on them.
    const dataBytes = best.fromData ? fromData?.reduce((sum, sample) => sum + (sample ? sample.shape.reduce((a, d) => a * d, 1) * (sample.integer ? 8 : 4) : 0), 0) : undefined;
    const blocksTraced = trace.blockSaved.length === trace.blockInputs.length && trace.blockSaved.length > 1;
    const recomputed = trace.compileRecomputed;
    // Lazy layers are counted at the sizes the traced forward gave them.
    const recounted = list.some(({ layer }) => isLazyLayer(layer)) ? list.map(({ layer }) => layerParameters(layer)) : undefined;
    return {
      ...spec,
      ...(recounted ? { parameters: recounted.reduce((sum, c) => sum + c.total, 0) + library.parameters,
        castParameters: recounted.reduce((sum, c) => sum + c.cast, 0) + library.parameters } : {}),
      ...(cutByScript ? { checkpointSegments: false } : {}),
      savedElementsPerSample: perSample(trace.savedElements),
      autocastSavedBytesPerSample: perSample(trace.autocastSavedBytes),
      backwardPeakElementsPerSample: perSample(trace.backwardPeak),
      ...(trace.backwardPeakAutocastSurplus > 0 ? { backwardPeakAutocastSurplusBytesPerSample: perSample(trace.backwardPeakAutocastSurplus) } : {}),
      ...(trace.backwardPeakInBatchedProduct ? { backwardPeakWithoutConvolution: true } : {}),
      backwardPoints: tracedBatch === 1 ? trace.backwardPoints : trace.backwardPoints.map((point) => ({
        ...point, elements: perSample(point.elements), ...(point.compileRecomputed ? { compileRecomputed: perSample(point.compileRecomputed) } : {}),
      })),
      ...(recomputed.elements > 0
        ? { compileRecomputed: { elementsPerSample: perSample(recomputed.elements), autocastBytesPerSample: perSample(recomputed.autocastBytes) } } : {}),
      gradientPairElementsPerSample: perSample(trace.gradientPair),
      createGraphElementsPerSample: perSample(trace.gradientKept),
      fixedBytesPerSample: perSample(trace.fixedBytes),
      ...(trace.reparametrizedWeights > 0 ? { reparametrizedWeightElements: trace.reparametrizedWeights } : {}),
      ...(trace.stepKeptElements > 0 ? { stepKeptElementsPerSample: perSample(trace.stepKeptElements) } : {}),
      ...(trace.stepKeptFp32Elements > 0 ? { stepKeptFp32ElementsPerSample: perSample(trace.stepKeptFp32Elements) } : {}),
      ...(trace.stepLossInPlaceOfOutputLoss ? { stepLossInPlaceOfOutputLoss: true } : {}),
      ...(trace.stepLossExtraGradients.elements > 0
        ? { stepLossExtraGradientsPerSample: { elements: perSample(trace.stepLossExtraGradients.elements), fp32: perSample(trace.stepLossExtraGradients.fp32) } } : {}),
      ...(trace.stepLossGradientElements > 0 ? { stepLossGradientElementsPerSample: perSample(trace.stepLossGradientElements) } : {}),
      ...(trace.sparseGradient.rows > 0
        ? { sparseGradientPerSample: { rows: perSample(trace.sparseGradient.rows), values: perSample(trace.sparseGradient.values) } } : {}),
      ...(trace.fixedBytes > trace.fixedBytesAtBackwardPeak ? { fixedBytesAfterBackwardPeak: perSample(trace.fixedBytes - trace.fixedBytesAtBackwardPeak) } : {}),
      largestElementsPerSample: perSample(trace.largest),
      outputElementsPerSample: output,
      ...(output > returnedOutput ? { returnedOutputElementsPerSample: returnedOutput } : {}),
      ...(parts ? { outputPartsPerSample: parts } : {}),
      ...(outputKept ? { outputKeptByForward: true } : {}),
      ...(dataBytes ? { stepInputBytesPerSample: dataBytes } : {}),
      ...(best.fromData ? { inputFromData: true } : {}),
      ...(targetTokens !== undefined ? { targetTokens } : {}),
      inferenceLiveElementsPerSample: perSample(trace.liveNoGrad),
      ...forwardLiveExcess(traced.liveExcess, perSample),
      ...(trace.carriedState.floats + trace.carriedState.integerBytes > 0 ? { carriedStatePerSample: {
        floats: perSample(trace.carriedState.floats), fullPrecisionFloats: perSample(trace.carriedState.fullPrecisionFloats), integerBytes: perSample(trace.carriedState.integerBytes),
      } } : {}),
      // Bytes under autocast where fp32 tensors make them more than 2 an element (as LayerNetBuilder gives them).
      ...(trace.autocastInferenceLiveBytes > 2 * trace.liveNoGrad ? { autocastInferenceLiveBytesPerSample: perSample(trace.autocastInferenceLiveBytes) } : {}),
      ...(trace.frozenPartsLive > 0 ? { frozenPrefix: { liveElementsPerSample: perSample(trace.frozenPartsLive), parameters: trace.frozenPartsParameters } } : {}),
      hasConvolution: trace.convolutions > 0,
      blockSavedElements: blocksTraced ? trace.blockSaved.map(perSample) : [],
      blockInputElements: blocksTraced ? trace.blockInputs.map(perSample) : [],
      ...(blocksTraced && trace.blockInputFullPrecision.length === trace.blockInputs.length && trace.blockInputFullPrecision.some(Boolean)
        ? { blockInputFullPrecision: trace.blockInputFullPrecision } : {}),
      ...(trace.lossInputFp32.autocast || trace.lossInputFp32.explicit ? { lossInputFp32: { ...trace.lossInputFp32 } } : {}),
      ...(trace.lossInForward ? { lossInForward: true } : {}),
      ...(trace.packedLengths ? { packedLengths: trace.packedLengths } : {}),
      ...(drawnArguments.length > 0 ? { drawnArguments } : {}),
      ...(trace.unmodelled.size > 0 ? { unmodelledOps: [...trace.unmodelled].sort() } : {}),
      ...(blocksTraced && trace.blockBackwardPeak.length === trace.blockInputs.length
        ? { blockBackwardPeakElements: trace.blockBackwardPeak.map(perSample), blockBackwardPeakAutocastBytes: trace.blockBackwardPeakAutocastBytes.map(perSample) } : {}),
      ...(blocksTraced && trace.blockOutsideBefore.length === trace.blockInputs.length
        ? { blockOutsideBeforeElements: trace.blockOutsideBefore.map(perSample), blockOutputsKeptOutsideElements: perSample(trace.blockOutputsKeptOutside) } : {}),
      ...(dependent ? { batchDependent: { batch: tracedBatch } } : {}),
      ...(traced.wholeStep ? { wholeStep: true } : {}),
    };
  };
  // The fit check and the panel rebuild the net for many batch sizes at one input size: build once per size, and
  // once per batch only where not every tensor of forward grows with the batch.
  const built = new Map<string, LayerNetSpec>();
  const cached = (size: number, targetLen: number | undefined, batch: number): LayerNetSpec => {
    const key = `${size}:${targetLen ?? ''}:${batch}`;
    let spec = built.get(key);
    if (!spec) built.set(key, (spec = build(size, targetLen, batch)));
    return spec;
  };
  const buildOnce = (size: number, targetLen?: number, batch?: number): LayerNetSpec => {
    const single = cached(size, targetLen, 1);
    return batch === undefined || batch <= 1 || !single.batchDependent ? single : cached(size, targetLen, batch);
  };
  const frozenParameters = (program ? list.filter(({ layer }) => program.frozen.has(layer)).reduce((sum, { layer }) => sum + layerParameters(layer).total, 0) : 0) +
    library.frozenParameters;
  // The step's call first (the one with the most arguments, as the trace takes it: `act(obs, actions)` in the
  // update, not `act(obs)` collecting a rollout).
  const inputShape = [...(program?.moduleCalls.get(root) ?? [])].sort((a, b) => b.length - a.length)
    .map((args) => (args[0]?.kind === 'call' ? tensorShape(args[0]) : undefined))
    .find((shape) => shape !== undefined && shape.dims.length >= 2);
  // The token lengths the data gives the step's call: the input's, and the first other argument's of its own length.
  const stepTokens = (): CustomModuleInfo['stepTokens'] => {
    const shapes = first.kind === 'tokens' && program && siteNode && !concatenatingCollate(program, siteNode) ? sampleShapes() : undefined;
    const tokens = (s: SampleShape | undefined): number | undefined =>
      (s?.integer && s.shape.length === 2 && s.shape[1]! >= FEWEST_SEQUENCE_TOKENS ? s.shape[1] : undefined);
    const source = tokens(shapes?.[0]);
    if (!program || !siteNode || source === undefined) return undefined;
    const target = shapes!.slice(1).map(tokens).find((length) => length !== undefined && length !== source);
    const located = (value: number): LocatedLength => ({ value, ...(dataLengthOrigin(program, siteNode, value) ?? { line: siteNode.startPosition.row, how: 'literal' }) });
    return { source: located(source), ...(target !== undefined ? { target: located(target) } : {}) };
  };
  // A signal of C channels the step's call is given, made in the loop's body (a spectrogram a helper computes with
  // torch.stft from a waveform of sizes the script gives): its length, read the way a first Conv1d takes it.
  const stepSignalLength = (): CustomModuleInfo['sampleLength'] => {
    const given = first.layer?.type === 'Conv1d' && program && siteNode ? sampleShapes()?.[0] : undefined;
    if (!given || given.integer || given.shape.length !== 3 || given.shape[1] !== first.channels) return undefined;
    return { value: given.shape[2]!, line: siteNode!.startPosition.row, how: 'loop' };
  };
  // A folded input the program model sizes (a loader's batch of frames) is traced as it is; one it cannot is flagged.
  const foldedInput = folds && argumentNodes[0] && !sampleShapes()?.[0]
    ? { line: argumentNodes[0].startPosition.row, text: argumentNodes[0].text, rowsPerSample: foldedRows() ? [foldedRows()!.shape[0]!] : [],
      ...(foldedRows() ? { samplesPerStep: foldedRows()!.samples } : {}) } : undefined;
  return {
    ...(foldedInput ? { foldedInput } : {}),
    className: nameOf(root), line: root.line, build: buildOnce, inputKind: first.kind, inputChannels: first.channels, unknownLayers: [...unknown].sort(),
    ...(library.unsized.length > 0 ? { libraryParts: library.unsized } : {}),
    ...(library.holdsAny ? { holdsLibraryModel: true } : {}),
    ...(library.undetermined.length > 0 ? { undeterminedContainers: library.undetermined } : {}), ...withUndeterminedSize(list), frozenParameters, inputShape, sampleLength: program ? sampleLength(program, first) ?? stepSignalLength() : undefined,
    freezesInTurn: program?.freezesInTurn(root) ?? false, stepTokens: stepTokens(),
  };
}

/**
 * Several models trained in one step (a GAN's generator and discriminator), in the order the data flows through
 * them: all their weights, gradients and optimizer states are kept, and the graph of each stays alive while the
 * later ones run (the generator's while the discriminator judges its output), so backward through one still has
 * the saved tensors of the models before it.
 */
export function trainedTogether(models: CustomModuleInfo[]): CustomModuleInfo {
  const combine = (specs: LayerNetSpec[]): LayerNetSpec => {
    const sum = (pick: (s: LayerNetSpec) => number): number => specs.reduce((total, s) => total + pick(s), 0);
    const max = (pick: (s: LayerNetSpec) => number): number => Math.max(...specs.map(pick));
    let before = 0;
    let backwardPeak = 0;
    // Under autocast, as bytes (elements at 2 bytes, with each model's fp32 gradients' surplus): see ForwardTrace.
    let autocastPeak = 0;
    for (const s of specs) {
      const own = s.backwardPeakElementsPerSample ?? s.savedElementsPerSample + s.largestElementsPerSample;
      backwardPeak = Math.max(backwardPeak, before + own);
      autocastPeak = Math.max(autocastPeak, 2 * (before + own) + (s.backwardPeakAutocastSurplusBytesPerSample ?? 0));
      before += s.savedElementsPerSample;
    }
    const autocastSurplus = Math.max(0, autocastPeak - 2 * backwardPeak);
    const inputElements = (s: LayerNetSpec): number => s.input.kind === 'image' ? s.input.channels * s.input.size ** 2 : s.input.kind === 'vector' ? s.input.features : s.input.seqLen;
    // The data the step loads is the largest of the models' inputs (a GAN's images, not its noise).
    const fed = specs.reduce((best, s) => (inputElements(s) > inputElements(best) ? s : best));
    const last = specs[specs.length - 1]!;
    const allAutocast = specs.every((s) => s.autocastSavedBytesPerSample !== undefined);
    return {
      kind: 'layers',
      parameters: sum((s) => s.parameters),
      castParameters: sum((s) => s.castParameters),
      savedElementsPerSample: sum((s) => s.savedElementsPerSample),
      ...(allAutocast ? { autocastSavedBytesPerSample: sum((s) => s.autocastSavedBytesPerSample!) } : {}),
      fixedBytesPerSample: sum((s) => s.fixedBytesPerSample),
      ...(specs.some((s) => s.reparametrizedWeightElements) ? { reparametrizedWeightElements: sum((s) => s.reparametrizedWeightElements ?? 0) } : {}),
      ...(specs.some((s) => s.stepKeptElementsPerSample) ? { stepKeptElementsPerSample: sum((s) => s.stepKeptElementsPerSample ?? 0) } : {}),
      ...(specs.some((s) => s.stepKeptFp32ElementsPerSample) ? { stepKeptFp32ElementsPerSample: sum((s) => s.stepKeptFp32ElementsPerSample ?? 0) } : {}),
      ...(specs.every((s) => s.stepLossInPlaceOfOutputLoss) ? { stepLossInPlaceOfOutputLoss: true } : {}),
      ...(specs.some((s) => s.stepLossGradientElementsPerSample)
        ? { stepLossGradientElementsPerSample: sum((s) => s.stepLossGradientElementsPerSample ?? 0) } : {}),
      largestElementsPerSample: max((s) => s.largestElementsPerSample),
      // The loss reads the last model's output (the discriminator's score).
      outputElementsPerSample: last.outputElementsPerSample,
      ...(last.outputKeptByForward ? { outputKeptByForward: true } : {}),
      hasConvolution: specs.some((s) => s.hasConvolution),
      inferenceLiveElementsPerSample: max((s) => s.inferenceLiveElementsPerSample),
      backwardPeakElementsPerSample: backwardPeak,
      ...(autocastSurplus > 0 ? { backwardPeakAutocastSurplusBytesPerSample: autocastSurplus } : {}),
      gradientPairElementsPerSample: max((s) => s.gradientPairElementsPerSample ?? 0),
      ...(specs.every((s) => s.createGraphElementsPerSample !== undefined) ? { createGraphElementsPerSample: sum((s) => s.createGraphElementsPerSample!) } : {}),
      blockSavedElements: specs.flatMap((s) => s.blockSavedElements),
      blockInputElements: specs.flatMap((s) => s.blockInputElements),
      ...(specs.some((s) => s.blockInputFullPrecision)
        ? { blockInputFullPrecision: specs.flatMap((s) => s.blockInputFullPrecision ?? s.blockInputElements.map(() => false)) } : {}),
      ...(last.lossInputFp32 ? { lossInputFp32: last.lossInputFp32 } : {}),
      ...(last.lossInForward ? { lossInForward: true } : {}),
      input: fed.input,
      scalesWithInput: specs.some((s) => s.scalesWithInput),
      ...(specs.find((s) => s.batchDependent) ? { batchDependent: specs.find((s) => s.batchDependent)!.batchDependent } : {}),
      ...(specs.some((s) => s.forwardUntraced) ? { forwardUntraced: true } : {}),
      ...(specs.every((s) => s.inputFromData) ? { inputFromData: true } : {}),
      ...(specs.some((s) => s.mapGrowth !== undefined) ? { mapGrowth: max((s) => s.mapGrowth ?? 1) } : {}),
      ...(specs.some((s) => s.unmodelledOps) ? { unmodelledOps: [...new Set(specs.flatMap((s) => s.unmodelledOps ?? []))].sort() } : {}),
    };
  };
  const fed = models.find((m) => m.inputKind !== 'vector') ?? models[0]!;
  const folded = models.find((m) => m.foldedInput)?.foldedInput;
  return {
    className: models.map((m) => m.className).join(' + '),
    line: models[0]!.line,
    build: (size, targetLen, batch) => combine(models.map((m) => m.build(size, targetLen, batch))),
    inputKind: fed.inputKind,
    inputChannels: fed.inputChannels,
    unknownLayers: [...new Set(models.flatMap((m) => m.unknownLayers))].sort(),
    ...(folded ? { foldedInput: { ...folded, rowsPerSample: models.flatMap((m) => m.foldedInput?.rowsPerSample ?? []) } } : {}),
    ...(models.some((m) => m.libraryParts) ? { libraryParts: models.flatMap((m) => m.libraryParts ?? []) } : {}),
    ...(models.some((m) => m.holdsLibraryModel) ? { holdsLibraryModel: true } : {}),
    ...(models.some((m) => m.undeterminedContainers) ? { undeterminedContainers: models.flatMap((m) => m.undeterminedContainers ?? []) } : {}),
    frozenParameters: models.reduce((sum, m) => sum + m.frozenParameters, 0),
    freezesInTurn: models.some((m) => m.freezesInTurn),
  };
}
