// The program model: a bounded abstract interpreter that runs a script's source the way Python would, as far as
// the source alone determines it. Module code runs top to bottom; calls bind arguments to parameters (positional,
// keyword, defaults, *args/**kwargs) and run the function; classes are instantiated with their constructor
// arguments (nn.Module subclasses record their submodules in registration order); `for` loops over known
// sequences and comprehensions are unrolled; lists and dicts grow by append/extend/insert/+=/update; argparse
// defaults, dict and dataclass configs, SimpleNamespace, os.environ defaults and a YAML/JSON file the script names
// give their values. What the source does not determine is `unknown`.
//
// Every consumer (estimator, refactorings, rules) asks the same model: `valueOf(node)` is the value an expression
// had the first time it ran (functions nobody calls are run once with their defaults, so every expression has one).
import * as path from 'node:path';
import { basename as pathBasename, dirname as pathDirname, join as pathJoin, normalize as pathNormalize } from 'node:path';
import { host } from '../../host';
import type { PyNode } from './node';
import {
  NONE, UNKNOWN, Scope, dictGet, dictKeys, dictSet, drawnRange, isModuleClass, isModuleValue, methodResolutionOrder, numberOf, partialTensorShape, readThrough, stringOf, tensorShape, isIntegerTensor, madeTensorShape, listTensorShape, sizedOrListedShape,
  torchNnBase, truthy, withOrigin,
  type CallResultValue, type ClassValue, type DictValue, type FunctionValue, type How, type LayerValue, type ListValue, type ObjectValue, type StringValue,
  type NumberValue, type Origin, type RefValue, type TensorTracer, type Value,
} from './values';
import { parseConfigFile, parseCsvFile, parseIniFile } from './config-files';
import { expandArgumentFiles, parseArgumentList, shellWords, type ArgumentOption, type ArgumentSpec, type Token } from './argv';
import { loadedParser } from '../parser';
import { copyTree } from '../syntax-tree';
import { NodeValues, treeIndex } from './tree-index';

/** Loops longer than this run their body once with an unknown loop variable (no script builds more layers). */
const MAX_UNROLL = 512;
/** Loops that build nothing run at most this many times (their values do not depend on the count). */
const MAX_PLAIN_UNROLL = 16;
/** The most elements a comprehension of same-shaped tensors stands for (see evalComprehension). */
const MAX_UNIFORM_ITEMS = 1 << 20;

/** The elements an iterable too long to unroll yields: a range's count, a 1-d tensor's length (`torch.arange(n)`: n). */
function iterableLength(value: Value): number | undefined {
  const passes = passCount(value);
  if (passes !== undefined) return passes;
  if (value.kind !== 'call' || value.path !== 'torch.arange') return undefined;
  const shape = madeTensorShape(value);
  return shape?.length === 1 ? shape[0] : undefined;
}
/**
 * A loop that grows containers but has made no module after spending this many steps builds data (a dataset's
 * examples, each alike): it stops there, its lists grown to their full length with copies of the last pass's items.
 */
const DATA_LOOP_STEPS = 20_000;
/** While loops with a known condition that build nothing (`while s < size: s *= 2; n += 1`) run at most this many times. */
const MAX_WHILE_UNROLL = 64;
/** A loop body that grows a container or registers a module. */
/** A comprehension of known constants this long or shorter is a config's list, kept item by item (see evalComprehension). */
const MAX_CONFIG_ITEMS = 64;
/** A number, string or bool the script determines (not a random draw). */
function isKnownConstant(value: Value): boolean {
  return (value.kind === 'number' && value.least === undefined) || value.kind === 'string' || value.kind === 'bool';
}
/** A value with no parts: what a long comprehension of data makes (see evalComprehension). */
function isPlain(value: Value): boolean {
  return value.kind === 'number' || value.kind === 'string' || value.kind === 'bool' || value.kind === 'none' || value.kind === 'unknown';
}
// Also a module of a class set as another's attribute (`layer.attn.cache = KVCache(...)`: a submodule each pass).
const BUILDS = /\.(append|extend|insert|add_module|register_module)\(|\+=\s*(\[|[A-Za-z_][\w.]*\()|[\w\]]\.\w+\s*=\s*[A-Z]\w*\(/;
/** Evaluation steps per program: a bound on the work for any input (a 20,000-line script stays well inside). */
const MAX_STEPS = 400_000;
const MAX_CALL_DEPTH = 24;
/** Expression nesting the evaluator follows (calls count their own frames through MAX_CALL_DEPTH). */
const MAX_NESTING = 300;

/** Where a literal (or a value built from the source, a list or dict) was written; made only for values that carry it. */
function literalOrigin(node: PyNode): Origin {
  return { line: node.startPosition.row, how: 'literal' };
}

// Patterns tested for every literal, attribute or call evaluated: constants, since a regular expression literal is a new object each time it runs.
const UNDERSCORES = /_/g;
const PREFIXED_INTEGER = /^0[xob]/;
const NUMBER_SUFFIX = /[lj]$/;
const WHITESPACE = /\s+/g;
const TORCH_DTYPE = /^torch\.(float16|half|bfloat16|float32|float|float64|double)$/;

const LOWERCASE = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
/**
 * Constants of Python's standard library that scripts build sizes from (`len(string.ascii_letters) + 1` classes of
 * a character recognizer): their values, as Python defines them.
 */
const STANDARD_CONSTANTS: ReadonlyMap<string, string | number> = new Map<string, string | number>([
  ['string.ascii_lowercase', LOWERCASE],
  ['string.ascii_uppercase', LOWERCASE.toUpperCase()],
  ['string.ascii_letters', LOWERCASE + LOWERCASE.toUpperCase()],
  ['string.digits', DIGITS],
  ['string.hexdigits', `${DIGITS}abcdefABCDEF`],
  ['string.octdigits', '01234567'],
  ['string.punctuation', PUNCTUATION],
  ['string.whitespace', ' \t\n\r\x0b\x0c'],
  ['string.printable', `${DIGITS}${LOWERCASE}${LOWERCASE.toUpperCase()}${PUNCTUATION} \t\n\r\x0b\x0c`],
  ['math.pi', Math.PI],
  ['math.e', Math.E],
  ['math.tau', 2 * Math.PI],
]);

/** A library name (`string.digits`, `from math import pi`): its value where it is a standard constant. */
function libraryName(path: string): Value {
  const constant = STANDARD_CONSTANTS.get(path);
  if (typeof constant === 'string') return { kind: 'string', value: constant };
  if (typeof constant === 'number') return { kind: 'number', value: constant };
  return { kind: 'ref', path };
}
const TORCH_MADE_TENSOR = /^torch\.\w+(\[\])*$/;
const TORCH_PARAMETER = /^torch\.nn\.(parameter\.)?Parameter$/;
const HF_ARGUMENT_PARSER = /^transformers\.(hf_argparser\.)?HfArgumentParser$/;
const CHECKPOINT_CALL = /(^|\.)checkpoint\.checkpoint$/;
const CHECKPOINT_SEQUENTIAL_CALL = /(^|\.)checkpoint\.checkpoint_sequential$/;
const NUMPY_ALIAS = /^np\./;
/** numpy's array makers and the torch calls that make tensors of the same sizes from the same arguments. */
const NUMPY_ARRAY_FACTORIES = new Map([
  ['numpy.random.randn', 'torch.randn'], ['numpy.random.rand', 'torch.rand'], ['numpy.random.randint', 'torch.randint'],
  ['numpy.zeros', 'torch.zeros'], ['numpy.ones', 'torch.ones'], ['numpy.empty', 'torch.empty'], ['numpy.full', 'torch.full'],
]);
/** A tensor made from an array with its sizes (`torch.from_numpy(a)`, `torch.as_tensor(a)`, `torch.tensor(a)`). */
const TENSOR_FROM_ARRAY = /^torch\.(from_numpy|as_tensor|tensor)$/;
/** Attributes of a library model that give the width of its features (timm's `num_features`, `embed_dim`). */
const FEATURE_WIDTH_ATTRIBUTE = /^(num_features|embed_dim)$/;
/**
 * Names of a library model's classifier head: torchvision's `fc` / `classifier` / `heads`, timm's `head` / `fc`,
 * pretrainedmodels' `last_linear`. The estimator reads a replaced or removed head by them too.
 */
export const CLASSIFIER_ATTRIBUTE = /^(fc|classifier|head|heads|last_linear)$/;
const WEIGHT_REPARAMETRISATION = /^torch\.nn\.utils\.(parametrizations\.|spectral_norm\.|weight_norm\.)?(spectral_norm|weight_norm)$/;
const HF_CONFIG_CLASS = /^transformers\.\w+Config$/;
const NOT_A_MODEL_CONFIG = /(Lora|BitsAndBytes|Generation|Training)Config$/;
const DATACLASS_COPY = /^(dataclasses\.)?(asdict|replace)$/;
const TENSOR_FACTORY = /^torch\.(randn|rand|zeros|ones|empty|randint|full)$/;
const CHAINED_METHOD = /^(to|cuda|cpu|train|eval|half|float|bfloat16|double|requires_grad_|apply|type|to_empty)$/;
/** Tensor methods whose result has the receiver's shape (element-wise, cumulative along a dimension, copies). */
const SHAPE_KEEPING_METHOD = /^(cumsum|cumprod|abs|exp|log|sqrt|clamp|clip|sigmoid|tanh|sin|cos|neg|clone|contiguous|detach|round|floor|ceil|normal_|uniform_|mul|add|sub|div|pow|astype)$/;
const EXCLUSIVE_RANDOM = /^(random\.randrange|numpy\.random\.randint|numpy\.random\.Generator\.integers|numpy\.random\.Generator\.randint)$/;

/** The keyword arguments of a call that passes none (see evalArguments): never written to. */
const NO_KWARGS = new Map<string, Value>();

class ReturnSignal { constructor(readonly value: Value) {} }
class BreakSignal {}
class ContinueSignal {}
class BudgetExceeded {}
const ELEMENTWISE_COMPARISON = /^(<|>|<=|>=|==|!=)$/;

/** Library modules whose names we resolve as references (`import torch.nn as nn` → `torch.nn`). */
const TORCH_NN = /^torch\.nn\.(?:modules\.\w+\.)?([A-Z]\w*)$/;
/** torch.nn.utils' weight reparametrizations, old and new (`torch.nn.utils.parametrizations.weight_norm`). */
const WEIGHT_NORMALIZATION = /^torch\.nn\.utils\.(?:parametrizations\.)?(weight_norm|spectral_norm)$/;
/** torchvision.ops modules the layer walk and the trace size as layers of their own (a feature pyramid). */
const TORCHVISION_OPS_LAYER = /^torchvision\.ops\.(?:feature_pyramid_network\.)?(FeaturePyramidNetwork)$/;

/**
 * Where an instance of a script's class that extends a torch.nn layer (`class LayerNorm2d(nn.LayerNorm)`) keeps
 * that layer: its parameters and constructor arguments, as `nn.LayerNorm.__init__` would have set them on self.
 */
export const BASE_LAYER = '<torch.nn base>';

/** Values a deep copy makes at most (a model of a few thousand modules); past this, the copy is the original. */
const MAX_COPY_VALUES = 50_000;

/** Library classes that keep a deep copy of the module they are given (EMA / SWA weights). */
const AVERAGED_MODEL = /(^|\.)(swa_utils\.AveragedModel|AveragedModel|ModelEma|ModelEmaV2|ModelEmaV3)$/;

export interface ProgramOptions {
  /** The script's path: a config file it names is read relative to its folder (and to the working folder). */
  filePath?: string;
  /**
   * The width of the features a library model's classifier reads (`resnet50(...).fc.in_features`, a timm model's
   * `num_features`), where the caller's catalog knows the model.
   */
  libraryFeatureWidth?: (model: CallResultValue) => number | undefined;
  /**
   * The paths of the direct children of a library vision model's submodule (`''`: the model itself), in the order
   * `children()` yields them, where the caller's catalog knows the model's layout.
   */
  libraryChildren?: (model: CallResultValue, path: string) => string[] | undefined;
  /** timm's `feature_info` of a `features_only=True` model: each returned map's channels and reduction. */
  libraryFeatureInfo?: (model: CallResultValue) => { channels: number[]; reductions: number[] } | undefined;
  /** A size in a hub model's config (`llm.config.hidden_size`), where the caller's catalog knows the checkpoint. */
  libraryConfigValue?: (model: CallResultValue, name: string) => number | undefined;
}

export class ProgramModel {
  readonly globals = new Scope(undefined, 'module');
  /** The value each expression had the first time it was evaluated. */
  private readonly values: NodeValues<Value>;
  /** Functions (by node id) that ran at least once. */
  private readonly ran = new Set<number>();
  /** Functions (by node id) the script itself called, before those nobody called were run once (`probe`). */
  private readonly ranInScript = new Set<number>();
  private scriptRunDone = false;
  private steps = 0;
  private depth = 0;
  private exhausted = false;
  /** Every object created by calling a class of the script, in creation order. */
  readonly instances: ObjectValue[] = [];
  /** The arguments each module (a layer or a module instance) was called with outside a trace: its call sites. */
  readonly moduleCalls = new Map<Value, Value[][]>();
  /** The call expression of each of those call sites, in the same order (its argument expressions). */
  readonly moduleCallNodes = new Map<Value, PyNode[]>();
  /**
   * For a module class without forward(), the method each of its call sites ran (`agent.act(obs, action)`, a
   * policy's `get_action_and_value(x)`): what the step runs as its forward. Parallel to moduleCalls.
   */
  readonly moduleCallMethods = new Map<Value, string[]>();
  /**
   * Calls of a script module's own methods other than forward outside a trace (`model.encode(x)`, `model.score(h, t)`),
   * for any module, in order: the step's calls on what its traced call returned (see estimator/step-method-calls).
   */
  readonly moduleMethodCalls = new Map<Value, Array<{ method: string; node: PyNode }>>();
  /** The call expression `call` is evaluating (read once by `call`). */
  private pendingCallNode: PyNode | undefined;
  /**
   * Tensors the script creates with a shape it gives, in order, with the function that made each (a Dataset's
   * `__getitem__` makes one sample; other code makes batches or whole datasets).
   */
  readonly tensorCalls: Array<{ value: Extract<Value, { kind: 'call' }>; inFunction: string | undefined }> = [];
  /** Made tensors the script crops by slicing (`img[:, t:t + crop, l:l + crop]`), to the crop. */
  readonly crops = new Map<Extract<Value, { kind: 'call' }>, Extract<Value, { kind: 'call' }>>();
  private currentFunction: string | undefined;
  /** The function running now and its scope: what Lightning's `self.save_hyperparameters()` reads. */
  private currentFrame: { fn: FunctionValue; scope: Scope } | undefined;
  /** The scopes of the functions running now, outermost first: their locals hold tensors alive (see TensorTracer.watchFrames). */
  private readonly frames: Scope[] = [];
  /** Every value assigned to a plain name, in any scope, in the order the assignments ran (first run only). */
  readonly assigned = new Map<string, Value[]>();
  /** argparse results, dict configs, dataclass instances, namespaces and config files, in the order made. */
  readonly configs: Array<DictValue | ObjectValue> = [];
  /**
   * Modules whose parameters the script froze (`module.requires_grad_(False)`, `for p in module.parameters():
   * p.requires_grad = False`), submodules included; `requires_grad_(True)` later unfreezes a part again.
   */
  readonly frozen = new Set<ObjectValue | LayerValue>();
  /**
   * requires_grad calls on a library model (a from_pretrained model, a torchvision / timm vision model) or its
   * submodules, in the order they ran: the model's call, the submodule's dotted path ('' for the whole model), and
   * whether it was frozen. A vision model's submodule replaced by the script's own (`model.fc = nn.Linear(...)`)
   * is recorded in the same order, unfrozen (a new module's parameters require grad), with the module it got.
   */
  readonly libraryFreezes: Array<{ model: Value; path: string; frozen: boolean; replaced?: Value }> = [];
  /**
   * A library model's module list replaced by some of its own modules (`model.model.layers = model.model.layers[:12]`,
   * `nn.ModuleList(...)` of them): the list's path and the indices it keeps, in order.
   */
  readonly libraryListsKept: Array<{ model: Value; path: string; kept: number[] }> = [];
  /**
   * Deep copies of modules the script makes (`copy.deepcopy(model)`, `AveragedModel(model)`, timm's `ModelEmaV2`),
   * each with the module it copies: separate weights, frozen or moved on their own.
   */
  readonly copies = new Map<Value, { source: Value; line: number }>();
  /** Modules (and library models) the script moved to a GPU (`.cuda()`, `.to("cuda")`, `.to(device)`), as it last left them. */
  readonly onDevice = new Set<Value>();
  /**
   * Tensors the script's modules register as buffers (`self.register_buffer("k", torch.zeros(shape))`: a static KV
   * cache, a position table), by module and name (a name registered again replaces the tensor), with the line.
   */
  readonly buffers = new Map<ObjectValue, Map<string, { value: Value; line: number }>>();
  /** An EMA wrapper a library class makes (`AveragedModel(model)`) and the copy it holds (`ema.module`). */
  private readonly wrapped = new Map<Value, Value>();
  /** An argparse parser's sub-commands action (`add_subparsers`) and the dest it writes the command's name under. */
  private readonly subcommands = new Map<Value, { action: ObjectValue; dest: string | undefined }>();
  /** Each argparse parser's arguments, to read an argument list given to its parse_args (see argv.ts). */
  private readonly argumentSpecs = new Map<Value, ArgumentSpec>();
  /** parse_args calls given an argument list the script does not determine (their 0-based lines): defaults read. */
  readonly unreadArgumentLists: Array<{ line: number; argument: string | undefined }> = [];
  /** Every value a deep copy made (the copies' submodules and layers included). */
  private readonly copied = new Set<Value>();

  /** The EMA wrapper a library class made around a copy (`AveragedModel(model)` around `ema.module`). */
  wrapperOf(copy: Value): Value | undefined {
    for (const [wrapper, held] of this.wrapped) if (held === copy) return wrapper;
    return undefined;
  }

  /** Whether `value` belongs to a deep copy the script made (an EMA model, or a part of one), or wraps one. */
  isCopy(value: Value): boolean {
    return this.copied.has(value) || this.wrapped.has(value);
  }

  /** The loops (for, while) running now, innermost last, by node id. */
  private readonly loops: number[] = [];
  /** For each module the script freezes or unfreezes by name, the loops each kind of call ran in. */
  private readonly toggles = new Map<ObjectValue | LayerValue, { frozen: Set<number>; unfrozen: Set<number> }>();
  /** Settings modules run so far, by path (null: read but not a module of settings). */
  private readonly settingsModules = new Map<string, Map<string, Value> | null>();
  /** Module files looked for beside the script and not found. */
  private readonly settingsMissing = new Set<string>();
  /** How deep settings modules import one another (bounded). */
  private settingsDepth = 0;
  /**
   * Modules frozen and unfrozen again within one loop (a GAN's critic, frozen for the generator's step and unfrozen
   * for its own): trained in every iteration, so never counted as frozen.
   */
  private readonly alternating = new Set<ObjectValue | LayerValue>();

  /** Whether the script froze and unfroze `module` (or a submodule of it) within one loop: trained, though it freezes. */
  freezesInTurn(module: Value, depth = 0): boolean {
    if (depth > 24 || (module.kind !== 'layer' && !(module.kind === 'object' && module.role === 'instance'))) return false;
    if (this.alternating.has(module)) return true;
    const children = module.kind === 'layer' ? [...module.children, ...(module.named?.values() ?? [])] : [...module.attrs.values()];
    return children.some((child) => this.freezesInTurn(child, depth + 1));
  }

  /** A requires_grad call of the script's own on `module`: frozen (or not) from here on, and recorded per loop. */
  private setRequiresGrad(module: Value, frozen: boolean): void {
    if (module.kind === 'call' && isLibraryOrVisionModelCall(module)) this.libraryFreezes.push({ model: module, path: '', frozen });
    if (module.kind === 'object' && module.role === 'library-module') {
      const model = module.attrs.get('model');
      if (model) this.libraryFreezes.push({ model, path: module.typeName, frozen });
    }
    this.freeze(module, frozen);
    if (module.kind !== 'layer' && !(module.kind === 'object' && module.role === 'instance')) return;
    let record = this.toggles.get(module);
    if (!record) this.toggles.set(module, (record = { frozen: new Set(), unfrozen: new Set() }));
    const opposite = frozen ? record.unfrozen : record.frozen;
    if (this.loops.some((loop) => opposite.has(loop))) this.alternating.add(module);
    for (const loop of this.loops) (frozen ? record.frozen : record.unfrozen).add(loop);
  }

  private freeze(module: Value, frozen: boolean, depth = 0): void {
    // A submodule of a library model held in the script's module (`nn.Sequential(*list(resnet.children())[:-2])`).
    const library = depth > 0 ? librarySubmodulePath(module.kind === 'method' ? librarySubmodule(module) ?? module : module) : undefined;
    if (library) this.libraryFreezes.push({ model: library.model, path: library.path, frozen });
    if (depth > 24 || (module.kind !== 'layer' && !(module.kind === 'object' && module.role === 'instance'))) return;
    if (frozen) this.frozen.add(module);
    else this.frozen.delete(module);
    const children = module.kind === 'layer' ? [...module.children, ...(module.named?.values() ?? [])] : [...module.attrs.values()];
    for (const child of children) this.freeze(child, frozen, depth + 1);
  }

  constructor(readonly root: PyNode, private readonly options: ProgramOptions = {}) {
    this.values = new NodeValues(treeIndex(root));
    this.globals.vars.set('__name__', { kind: 'string', value: '__main__' });
    // `os.path.join(os.path.dirname(__file__), "configs", "x.yaml")`: where the script names its config files.
    if (this.options.filePath) this.globals.vars.set('__file__', { kind: 'string', value: this.options.filePath });
    this.run();
  }

  /** The value `node` had the first time it ran; undefined for code that never ran (or was not an expression). */
  valueOf(node: PyNode | null | undefined): Value | undefined {
    return node ? this.values.get(node.id) : undefined;
  }

  /** The keyword arguments calls received from `**d`, by call node id (the first time each call ran). */
  private readonly unpacked = new Map<number, ReadonlyMap<string, Value>>();

  /**
   * A keyword argument of `call` as Python binds it: written out (`bf16=True`) or unpacked from a dict
   * (`TrainingArguments(**cfg["training"])`, `AlbertConfig(**json.load(f))`); Python refuses a keyword given both
   * ways, so at most one of the two is there. Undefined where the call never ran or does not receive `key`.
   */
  keywordOf(call: PyNode, key: string): Value | undefined {
    const written = call.childForFieldName('arguments')?.namedChildren.find((arg) => arg?.type === 'keyword_argument' && arg.childForFieldName('name')?.text === key);
    if (written) return this.valueOf(written.childForFieldName('value'));
    return this.unpacked.get(call.id)?.get(key);
  }

  /** The keyword arguments `call` received from `**d` (the first time it ran); undefined where it unpacked none. */
  unpackedKeywords(call: PyNode): ReadonlyMap<string, Value> | undefined {
    return this.unpacked.get(call.id);
  }

  /** If-branches taken at least once, and those skipped because their condition was false. */
  private readonly branchesRun = new Set<number>();
  private readonly branchesSkipped = new Set<number>();

  /**
   * Whether `node` sits in an if-branch whose condition was false every time the program ran it (`if cfg.flag:` with
   * the flag off in the config): code that never runs, as opposed to code the model did not reach.
   */
  neverRuns(node: PyNode): boolean {
    for (let current = node.parent; current; current = current.parent) {
      if (this.branchesSkipped.has(current.id) && !this.branchesRun.has(current.id)) return true;
    }
    return false;
  }

  /** Set while a module's forward is traced (see `trace`). */
  private tracer: TensorTracer | undefined;

  /**
   * Runs `module`'s forward on `inputs` with a tracer that gives tensors their shapes, under a budget of its own
   * (or a method of the script: a Dataset's `__getitem__`, for the shapes of the sample it makes).
   * Returns what it returned, or undefined when the trace could not finish.
   */
  trace(module: ObjectValue | LayerValue | FunctionValue, inputs: Value[], tracer: TensorTracer, method?: string): Value | undefined {
    const [steps, exhausted, depth] = [this.steps, this.exhausted, this.depth];
    this.steps = 0;
    this.tracer = tracer;
    tracer.watchFrames?.(this.frames);
    try {
      // A module without forward() runs the method the step called, entered as its forward.
      const own = method !== undefined && module.kind === 'object' && module.cls ? lookupClassAttribute(module.cls, method) : undefined;
      if (own?.kind === 'function' && module.kind === 'object') {
        tracer.enterModule(module, inputs);
        const result = this.invoke({ ...own, self: module }, [module, ...inputs], new Map(), module.line, false);
        tracer.exitModule(module);
        return result;
      }
      return this.call(module, inputs, new Map(), module.kind === 'function' ? module.node.startPosition.row : module.line);
    } catch (signal) {
      if (signal instanceof BudgetExceeded || signal instanceof ReturnSignal || signal instanceof BreakSignal || signal instanceof ContinueSignal) return undefined;
      throw signal;
    } finally {
      this.tracer = undefined;
      [this.steps, this.exhausted, this.depth] = [steps, exhausted, depth];
    }
  }

  /**
   * Calls a function of the script (a DataLoader's collate_fn given one sample) with a tracer, so that the tensors
   * it makes carry shapes. Undefined when it could not finish.
   */
  traceFunction(fn: Value, args: Value[], tracer: TensorTracer): Value | undefined {
    return fn.kind === 'function' ? this.trace(fn, args, tracer) : undefined;
  }

  /**
   * Evaluates an expression of the script (a call site's argument, `tgt[:, :-1]`) with a tracer, the names it
   * reads bound to `names` (tensors the trace made) and the rest to the module's globals. Undefined when it
   * could not finish.
   */
  evaluateTraced(node: PyNode, names: ReadonlyMap<string, Value>, tracer: TensorTracer): Value | undefined {
    const [steps, exhausted, depth] = [this.steps, this.exhausted, this.depth];
    this.steps = 0;
    this.tracer = tracer;
    tracer.watchFrames?.(this.frames);
    const scope = new Scope(this.globals, 'function');
    for (const [name, value] of names) scope.vars.set(name, value);
    try {
      return this.evalExpr(node, scope);
    } catch (signal) {
      if (signal instanceof BudgetExceeded || signal instanceof ReturnSignal || signal instanceof BreakSignal || signal instanceof ContinueSignal) return undefined;
      throw signal;
    } finally {
      this.tracer = undefined;
      [this.steps, this.exhausted, this.depth] = [steps, exhausted, depth];
    }
  }

  /**
   * Whether the script runs the code around `node` but never reaches `node` itself: its function was called (or it
   * is top-level code) and it sits after a `return` taken first, or in a branch never taken (`build_optimizer`'s
   * `if name == "sgd":` after `if name == "adamw": return AdamW(...)`). False once the step budget ran out.
   */
  passedOver(node: PyNode): boolean {
    return !this.exhausted && this.values.get(node.id) === undefined && this.ranByScript(node);
  }

  /**
   * Whether the script itself runs the code around `node`: top-level code, or a function the script's run called
   * (not one only run afterwards with its parameters' defaults because nothing called it).
   */
  ranByScript(node: PyNode): boolean {
    let fn = node.parent;
    while (fn && fn.type !== 'function_definition') fn = fn.parent;
    return !fn || this.ranInScript.has(fn.id);
  }

  /** Whether the step budget ran out (the values found so far stay valid; later code is unknown). */
  get incomplete(): boolean {
    return this.exhausted;
  }

  private run(): void {
    try {
      this.execBlock(this.root, this.globals);
    } catch (signal) {
      if (!(signal instanceof BudgetExceeded || signal instanceof ReturnSignal || signal instanceof BreakSignal || signal instanceof ContinueSignal)) throw signal;
    }
    this.scriptRunDone = true;
    // Functions and methods nobody called still hold expressions the consumers ask about: run each once.
    for (const fn of treeIndex(this.root).functions) {
      if (this.ran.has(fn.id) || this.exhausted) continue;
      this.probe(fn);
    }
    for (const module of this.alternating) this.freeze(module, false);
  }

  private probe(fn: PyNode): void {
    // A function nobody called closes over the module where its enclosing function never ran; a closure a factory
    // made and handed on (`collate = make_collate(crop_len)` passed as a DataLoader's collate_fn) keeps the
    // variables of the call that made it.
    const defined = this.valueOf(fn.childForFieldName('name'));
    const closure = defined?.kind === 'function' ? defined.closure : this.globals;
    const cls = enclosingClass(fn);
    let self: Value | undefined;
    if (cls) {
      const clsValue = this.valueOf(cls.childForFieldName('name'));
      // A method nobody called (a Dataset's __getitem__) runs on the object the script made, with its state.
      const made = clsValue?.kind === 'class' ? this.instances.find((instance) => instance.cls === clsValue) : undefined;
      self = made ?? (clsValue?.kind === 'class'
        ? { kind: 'object', role: 'instance', typeName: clsValue.name, cls: clsValue, attrs: new Map(), line: fn.startPosition.row }
        : UNKNOWN);
    }
    const fnValue: FunctionValue = { kind: 'function', name: fn.childForFieldName('name')?.text ?? '', node: fn, closure };
    try {
      this.invoke(fnValue, self ? [self] : [], new Map(), fn.startPosition.row, true);
    } catch (signal) {
      if (!(signal instanceof BudgetExceeded)) throw signal;
    }
  }

  private tick(): void {
    if (++this.steps > MAX_STEPS) {
      this.exhausted = true;
      throw new BudgetExceeded();
    }
  }

  // ---- statements -------------------------------------------------------------------------------------------

  private execBlock(block: PyNode, scope: Scope): void {
    for (const statement of block.namedChildren) if (statement) this.exec(statement, scope);
  }

  private exec(node: PyNode, scope: Scope): void {
    this.tick();
    switch (node.type) {
      case 'expression_statement':
        for (const child of node.namedChildren) if (child) this.evalExpr(child, scope);
        return;
      case 'assignment':
        this.execAssignment(node, scope);
        return;
      case 'augmented_assignment':
        this.execAugmented(node, scope);
        return;
      case 'import_statement':
      case 'import_from_statement':
      case 'future_import_statement':
        this.execImport(node, scope);
        return;
      case 'function_definition':
        this.define(node, scope, []);
        return;
      case 'class_definition':
        this.defineClass(node, scope, []);
        return;
      case 'decorated_definition': {
        const decorators = node.namedChildren.filter((c): c is PyNode => c?.type === 'decorator').map((d) => d.text.replace(/^@\s*/, ''));
        const definition = node.childForFieldName('definition');
        if (definition?.type === 'class_definition') this.defineClass(definition, scope, decorators);
        else if (definition) this.define(definition, scope, decorators);
        this.runRegistryDecorators(node, scope);
        return;
      }
      case 'if_statement':
        this.execIf(node, scope);
        return;
      case 'for_statement':
        this.execFor(node, scope);
        return;
      case 'while_statement':
        this.execWhile(node, scope);
        return;
      case 'with_statement': {
        for (const item of withItems(node)) {
          if (enclosingStatement(item)?.id !== node.id) continue;
          const value = item.childForFieldName('value');
          if (value?.type === 'as_pattern') {
            const context = this.evalExpr(value.namedChildren[0], scope);
            const target = value.childForFieldName('alias') ?? value.namedChildren[1];
            const bound = context.kind === 'object' && context.role === 'file' ? context : UNKNOWN;
            if (target) this.assignTarget(target.type === 'as_pattern_target' ? target.namedChildren[0] ?? target : target, bound, scope);
          } else {
            this.evalExpr(value, scope);
          }
        }
        const body = node.childForFieldName('body');
        if (body) this.execBlock(body, scope);
        return;
      }
      case 'try_statement': {
        // The body as the normal path; `else`/`finally` after it (an exception is not modelled).
        const body = node.childForFieldName('body');
        if (body) this.execBlock(body, scope);
        for (const clause of node.namedChildren) {
          if (clause?.type === 'else_clause' || clause?.type === 'finally_clause') {
            const block = clause.childForFieldName('body') ?? clause.namedChildren.find((c) => c?.type === 'block');
            if (block) this.execBlock(block, scope);
          }
        }
        return;
      }
      case 'return_statement': {
        const value = node.namedChildren[0] ? this.evalExpr(node.namedChildren[0], scope) : NONE;
        throw new ReturnSignal(value);
      }
      case 'break_statement':
        throw new BreakSignal();
      case 'continue_statement':
        throw new ContinueSignal();
      case 'delete_statement':
        // Traced, `del x` in forward frees what only that name held (see TensorTracer.watchFrames); elsewhere the
        // program model keeps every binding it saw.
        if (this.tracer) {
          for (const target of node.namedChildren[0]?.type === 'expression_list' ? node.namedChildren[0].namedChildren : node.namedChildren) {
            if (target?.type === 'identifier') scope.vars.delete(target.text);
          }
        }
        return;
      case 'pass_statement':
      case 'global_statement':
      case 'nonlocal_statement':
      case 'comment':
        return;
      case 'block':
        this.execBlock(node, scope);
        return;
      default:
        // assert, raise, print (py2), match: evaluate the expressions they hold.
        for (const child of node.namedChildren) if (child && isExpression(child)) this.evalExpr(child, scope);
    }
  }

  private execIf(node: PyNode, scope: Scope): void {
    const condition = truthy(this.evalExpr(node.childForFieldName('condition'), scope));
    const body = node.childForFieldName('consequence');
    const alternatives = node.namedChildren.filter((c): c is PyNode => c?.type === 'elif_clause' || c?.type === 'else_clause');
    const take = (block: PyNode | null | undefined): void => {
      if (!block) return;
      this.branchesRun.add(block.id);
      this.execBlock(block, scope);
    };
    if (condition !== false) {
      // An unknown condition: the first branch is the one taken (the script's default path).
      take(body);
      return;
    }
    if (body) this.branchesSkipped.add(body.id);
    for (const clause of alternatives) {
      if (clause.type === 'elif_clause') {
        const c = truthy(this.evalExpr(clause.childForFieldName('condition'), scope));
        const block = clause.childForFieldName('consequence');
        if (c === false) {
          if (block) this.branchesSkipped.add(block.id);
          continue;
        }
        take(block);
        return;
      }
      take(clause.childForFieldName('body') ?? clause.namedChildren.find((c) => c?.type === 'block'));
      return;
    }
  }

  private execFor(node: PyNode, scope: Scope): void {
    const left = node.childForFieldName('left');
    const body = node.childForFieldName('body');
    const iterable = this.evalExpr(node.childForFieldName('right'), scope);
    if (!left || !body) return;
    // Loops that build something (layers appended, modules registered) run every iteration; others, such as an
    // evaluation loop over `range(eval_iters)`, need one run to give every expression a value.
    // A traced forward runs every block of its ModuleList.
    const limit = this.tracer || this.builds(body) ? MAX_UNROLL : MAX_PLAIN_UNROLL;
    // A traced forward's loop longer than the bound (a scan over 1,024 time steps) runs its first `limit` passes;
    // the others keep what the last of those kept, and add to its lists what it added (see TensorTracer.repeatPass).
    const tracer = this.tracer;
    const total = tracer?.repeatPass ? passCount(iterable) : undefined;
    const extended = total !== undefined && total > limit;
    const items = extended ? firstPasses(iterable, limit) : iterationItems(iterable);
    if (!items || (items.length > limit && !extended)) {
      this.assignTarget(left, { kind: 'unknown', origin: { line: left.startPosition.row, how: 'loop' } }, scope);
      this.runLoopBody(body, scope, node.id);
      return;
    }
    this.loops.push(node.id);
    const start = { steps: this.steps, modules: this.modulesMade };
    const outer = this.grownLists;
    const grown = (this.grownLists = new Map());
    let lastPass = { mark: 0, before: new Map<ListValue, number>() };
    try {
      for (const [index, item] of items.entries()) {
        this.assignTarget(left, item, scope);
        const before = new Map([...grown].map(([list, from]) => [list, list.items.length] as const));
        if (extended && index === limit - 1) lastPass = { mark: tracer!.passMark!(), before };
        if (!this.iterate(body, scope)) return;
        if (!this.tracer && this.modulesMade === start.modules && this.steps - start.steps > DATA_LOOP_STEPS && index + 1 < items.length) {
          fillDataLoop(grown, before, index + 1, items.length);
          return;
        }
      }
      if (extended) {
        tracer!.repeatPass!(lastPass.mark, total - limit);
        fillDataLoop(grown, lastPass.before, limit, total);
      }
    } finally {
      this.loops.pop();
      // A list grown inside an inner loop grew in this one too.
      for (const [list, from] of grown) if (outer && !outer.has(list)) outer.set(list, from);
      this.grownLists = outer;
    }
  }

  /** Lists appended to within the innermost running for loop, each with its length before the loop grew it. */
  private grownLists: Map<ListValue, number> | undefined;
  /** How many torch.nn layers and script class instances the run has made (a loop that makes none builds data). */
  private get modulesMade(): number {
    return this.layersMade + this.instances.length;
  }

  private layersMade = 0;

  /** Whether a loop's body grows a container or registers a module (BUILDS over its text, once per body). */
  private builds(body: PyNode): boolean {
    let builds = this.bodiesThatBuild.get(body.id);
    if (builds === undefined) this.bodiesThatBuild.set(body.id, (builds = BUILDS.test(body.text)));
    return builds;
  }

  private readonly bodiesThatBuild = new Map<number, boolean>();

  /** Runs one pass of a loop's body; false when a `break` ends the loop (`continue` ends only the pass). */
  private iterate(body: PyNode, scope: Scope): boolean {
    try {
      this.execBlock(body, scope);
    } catch (signal) {
      if (signal instanceof BreakSignal) return false;
      if (!(signal instanceof ContinueSignal)) throw signal;
    }
    return true;
  }

  /**
   * A while loop runs as Python runs it while its condition is known (`while s < image_size: s *= 2`), up to the
   * unrolling bound; a condition on data (unknown) runs the body once, enough to see what it builds and calls.
   */
  private execWhile(node: PyNode, scope: Scope): void {
    const condition = node.childForFieldName('condition');
    const body = node.childForFieldName('body');
    if (!body) return;
    const limit = this.tracer || this.builds(body) ? MAX_UNROLL : MAX_WHILE_UNROLL;
    for (let i = 0; i < limit; i++) {
      const test = truthy(this.evalExpr(condition, scope));
      if (test === false) return;
      if (test === undefined) {
        if (i === 0) this.runLoopBody(body, scope, node.id);
        return;
      }
      this.loops.push(node.id);
      try {
        if (!this.iterate(body, scope)) return;
      } finally {
        this.loops.pop();
      }
    }
  }

  private runLoopBody(body: PyNode | null, scope: Scope, loop?: number): void {
    if (!body) return;
    if (loop !== undefined) this.loops.push(loop);
    try {
      this.execBlock(body, scope);
    } catch (signal) {
      if (signal instanceof BreakSignal || signal instanceof ContinueSignal) return;
      throw signal;
    } finally {
      if (loop !== undefined) this.loops.pop();
    }
  }

  /** Runs an assignment; returns the value assigned (what `a = b = value` gives `a`). */
  private execAssignment(node: PyNode, scope: Scope): Value {
    const right = node.childForFieldName('right');
    const left = node.childForFieldName('left');
    const annotation = node.childForFieldName('type');
    if (!right) {
      // `batch_size: int` in a class body declares a dataclass field without a default.
      if (left?.type === 'identifier' && annotation && scope.kind === 'class') scope.vars.set(left.text, UNKNOWN);
      return UNKNOWN;
    }
    const value = this.evalExpr(right, scope);
    // `a = b = 1`: the right side is itself an assignment.
    if (left) this.assignTarget(left, value, scope);
    return value;
  }

  private execAugmented(node: PyNode, scope: Scope): void {
    const left = node.childForFieldName('left');
    const right = this.evalExpr(node.childForFieldName('right'), scope);
    const operator = node.childForFieldName('operator')?.text ?? '';
    if (!left) return;
    const current = this.evalExpr(left, scope);
    if (operator === '+=' && current.kind === 'list') {
      // Lists grow in place (`layers += [nn.Linear(...), nn.ReLU()]`).
      const added = iterationItems(right);
      if (added) current.items.push(...added);
      else current.items.push(UNKNOWN);
      return;
    }
    if (operator === '+=' && current.kind === 'layer' && isContainer(current.type)) {
      current.children.push(...(iterationItems(right) ?? []));
      return;
    }
    const result = this.tracer?.binary(operator.slice(0, -1), current, right) ?? binary(operator.slice(0, -1), current, right, node.startPosition.row);
    this.assignTarget(left, result, scope);
  }

  private assignTarget(target: PyNode, value: Value, scope: Scope): void {
    switch (target.type) {
      case 'identifier': {
        scope.vars.set(target.text, value);
        if (!this.values.has(target.id)) {
          this.values.set(target.id, value);
          const list = this.assigned.get(target.text) ?? [];
          list.push(value);
          this.assigned.set(target.text, list);
          if ((value.kind === 'dict' || (value.kind === 'object' && value.role !== 'file' && value.role !== 'parser')) && !this.configs.includes(value)) this.configs.push(value);
        }
        return;
      }
      case 'pattern_list':
      case 'tuple_pattern':
      case 'list_pattern':
      case 'tuple':
      case 'list': {
        const targets = target.namedChildren.filter((c): c is PyNode => !!c);
        // `q, k, v = qkv` unpacks a tensor along its first dimension.
        const unpacked = value.kind === 'tensor' && this.tracer ? this.tracer.method(value, 'unbind', [], new Map()) : value;
        const items = iterationItems(unpacked);
        // `kind, *args = entry`: the starred name takes the items the others leave, as a list.
        const star = targets.findIndex((t) => t.type === 'list_splat_pattern');
        const after = star >= 0 ? targets.length - star - 1 : 0;
        targets.forEach((t, i) => {
          if (i === star) {
            const rest: Value = items && items.length >= targets.length - 1 ? { kind: 'list', items: items.slice(i, items.length - after), tuple: false } : UNKNOWN;
            this.assignTarget(t.namedChildren[0] ?? t, rest, scope);
            return;
          }
          const at = star >= 0 && i > star && items ? items.length - (targets.length - i) : i;
          this.assignTarget(t, items?.[at] ?? UNKNOWN, scope);
        });
        return;
      }
      case 'parenthesized_expression':
        if (target.namedChildren[0]) this.assignTarget(target.namedChildren[0], value, scope);
        return;
      case 'attribute': {
        const object = this.evalExpr(target.childForFieldName('object'), scope);
        const name = target.childForFieldName('attribute')?.text ?? '';
        this.values.set(target.id, value);
        this.recordReplacement(object, name, value);
        this.recordListKept(object, name, value);
        this.setAttribute(object, name, value);
        return;
      }
      case 'subscript': {
        const object = this.evalExpr(target.childForFieldName('value'), scope);
        const key = this.evalExpr(target.childForFieldName('subscript'), scope);
        if (key.kind === 'number' && Number.isInteger(key.value)) {
          // `model.classifier[-1] = nn.Linear(...)`: counted from the end of the submodule's children.
          const index = key.value >= 0 ? String(key.value) : this.libraryChildFromEnd(object, key.value);
          if (index !== undefined) this.recordReplacement(object, index, value);
        }
        if (object.kind === 'dict') dictSet(object, key, value);
        else if (object.kind === 'list' && key.kind === 'number' && Number.isInteger(key.value)) {
          const index = key.value < 0 ? object.items.length + key.value : key.value;
          if (index >= 0 && index < object.items.length) object.items[index] = value;
        } else if (object.kind === 'object' && key.kind === 'string') object.attrs.set(key.value, value);
        else if (object.kind === 'layer' && isContainer(object.type)) setContainerEntry(object, key, value);
        return;
      }
      default:
        return;
    }
  }

  /** A vision library model's submodule replaced by a module of the script's (a new classifier head). */
  private recordReplacement(object: Value, name: string, value: Value): void {
    // A module of the script's, or a torchvision class's (a detector's `FastRCNNPredictor(in_features, 2)`).
    if (!isModuleValue(value) && !(value.kind === 'call' && /^torchvision\.\w+(\.\w+)*\.[A-Z]\w*$/.test(value.path))) return;
    const replaced = visionSubmodulePath(object, name);
    if (replaced) this.libraryFreezes.push({ ...replaced, frozen: false, replaced: value });
  }

  /** The name of a library submodule's child at a negative index (`classifier[-1]`: the last of its children). */
  private libraryChildFromEnd(object: Value, index: number): string | undefined {
    const owner = object.kind === 'method' ? librarySubmodule(object) : object;
    const at = owner ? librarySubmodulePath(owner) : undefined;
    const children = at ? this.options.libraryChildren?.(at.model, at.path) : undefined;
    const child = children?.[children.length + index];
    if (child) return child.slice(child.lastIndexOf('.') + 1);
    // A classifier the catalog builds as one piece (`classifier` of Dropout and Linear): its last layer is the head.
    return at && index === -1 && CLASSIFIER_ATTRIBUTE.test(at.path.split('.')[0]!) ? String(index) : undefined;
  }

  /** `model.model.layers = model.model.layers[:k]` on a library model: which of the list's own modules stay. */
  private recordListKept(object: Value, name: string, value: Value): void {
    const owner = object.kind === 'method' ? librarySubmodule(object) : object;
    const at = owner ? librarySubmodulePath(owner) : undefined;
    if (!at) return;
    const path = at.path === '' ? name : `${at.path}.${name}`;
    const items = value.kind === 'list' ? value.items
      : value.kind === 'layer' && (value.type === 'ModuleList' || value.type === 'Sequential') ? value.children : undefined;
    if (!items) return;
    const kept: number[] = [];
    for (const item of items) {
      // Each one a module of the same list of the same model (`layers.3`); anything else is not a pruned copy.
      const held = item.kind === 'object' && item.role === 'library-module' && item.attrs.get('model') === at.model ? /^(.*)\.(\d+)$/.exec(item.typeName) : null;
      if (!held || held[1] !== path) return;
      kept.push(Number(held[2]));
    }
    this.libraryListsKept.push({ model: at.model, path, kept });
  }

  private setAttribute(object: Value, name: string, value: Value): void {
    if (object.kind === 'object' && object.role === 'parameters') {
      if (name === 'requires_grad' && value.kind === 'bool') {
        const owner = object.attrs.get('module');
        if (owner) this.setRequiresGrad(owner, !value.value);
      }
    } else if (object.kind === 'object') {
      object.attrs.set(name, value);
    } else if (object.kind === 'dict') {
      object.entries.set(name, value);
    } else if (object.kind === 'call') {
      object.attrs ??= new Map();
      object.attrs.set(name, value);
    } else if (object.kind === 'layer' && name === 'weight') {
      // Weight tying: `self.head.weight = self.embed.weight` shares one parameter.
      object.tiedWeight = true;
    }
  }

  private execImport(node: PyNode, scope: Scope): void {
    const line = node.startPosition.row;
    // A settings module of the script's own (`config.py` beside it): its names, as Python would bind them.
    const local = (dotted: string): Map<string, Value> | undefined => this.runSettingsModule(`${dotted.split('.').join('/')}.py`, line);
    if (node.type === 'import_statement') {
      for (const child of node.namedChildren) {
        if (!child) continue;
        if (child.type === 'aliased_import') {
          const name = child.childForFieldName('name')?.text ?? '';
          const alias = child.childForFieldName('alias')?.text;
          const settings = alias ? local(name) : undefined;
          if (alias) scope.vars.set(alias, settings ? settingsModule(name, settings, line) : { kind: 'ref', path: name });
        } else if (child.type === 'dotted_name') {
          const top = child.text.split('.')[0]!;
          const settings = child.text === top ? local(top) : undefined;
          scope.vars.set(top, settings ? settingsModule(top, settings, line) : { kind: 'ref', path: top });
        }
      }
      return;
    }
    if (node.type !== 'import_from_statement') return;
    const moduleName = node.childForFieldName('module_name')?.text ?? '';
    const settings = moduleName.startsWith('.') ? undefined : local(moduleName);
    // The value a `from moduleName import name` binds: the settings module's own, a settings module of a package
    // (`from configs import base`), or a library name.
    const imported = (name: string): Value => {
      const own = settings?.get(name);
      if (own) return own;
      const submodule = moduleName.startsWith('.') ? undefined : local(`${moduleName}.${name}`);
      return submodule ? settingsModule(`${moduleName}.${name}`, submodule, line) : libraryName(`${moduleName}.${name}`);
    };
    for (const child of node.namedChildren) {
      if (!child || child.id === node.childForFieldName('module_name')?.id) continue;
      if (child.type === 'aliased_import') {
        const name = child.childForFieldName('name')?.text ?? '';
        const alias = child.childForFieldName('alias')?.text ?? name;
        scope.vars.set(alias, imported(name));
      } else if (child.type === 'dotted_name' && child.id !== node.childForFieldName('module_name')?.id) {
        scope.vars.set(child.text, imported(child.text));
      } else if (child.type === 'wildcard_import' && settings) {
        for (const [name, value] of settings) if (!name.startsWith('_')) scope.vars.set(name, value);
      }
    }
  }

  /**
   * Runs a Python file of settings the script reads (`config.py` beside it, `configs/x.py`), as Python would, and
   * returns its global names. Only a module of settings: assignments, expressions and imports at its top level (a
   * module with functions or classes of its own is a library of the script, not read). Its values count as read from a
   * config at the script's line that reads it. Undefined where the file is missing, unreadable or not settings.
   */
  private runSettingsModule(file: string | undefined, line: number): Map<string, Value> | undefined {
    if (!file || this.settingsDepth > 2 || this.settingsMissing.has(file)) return undefined;
    for (const folder of this.localFolders()) {
      const full = path.resolve(folder, file);
      if (full === this.options.filePath) return undefined;
      const cached = this.settingsModules.get(full);
      if (cached !== undefined) return cached ?? undefined;
      const text = host().readLocalFile(full, 200_000);
      if (text === undefined) continue;
      const root = parseSettingsModule(text);
      if (!root || root.namedChildren.some((c) => !c || !SETTINGS_STATEMENT.has(c.type))) {
        this.settingsModules.set(full, null);
        return undefined;
      }
      const scope = new Scope(undefined, 'module');
      scope.vars.set('__name__', { kind: 'string', value: path.basename(full, '.py') });
      scope.vars.set('__file__', { kind: 'string', value: full });
      this.settingsDepth++;
      try {
        this.execBlock(root, scope);
      } catch (signal) {
        // A stray return or break ends the module; the step budget running out ends the whole run.
        if (!(signal instanceof ReturnSignal || signal instanceof BreakSignal || signal instanceof ContinueSignal)) throw signal;
      } finally {
        this.settingsDepth--;
      }
      const names = new Map<string, Value>();
      for (const [name, value] of scope.vars) if (!name.startsWith('__')) names.set(name, readFromSettings(value, line, 0));
      this.settingsModules.set(full, names);
      return names;
    }
    // Most imports are libraries' (`import torch`): looked for once.
    this.settingsMissing.add(file);
    return undefined;
  }

  /**
   * A decorator the script defines (`@register("gpt")`, `@MODELS.register_module()`) runs on the class or function it
   * decorates, for what it does besides (a registry's `REGISTRY[name] = cls`); the name stays bound to the definition.
   */
  private runRegistryDecorators(node: PyNode, scope: Scope): void {
    const name = node.childForFieldName('definition')?.childForFieldName('name');
    const defined = name ? scope.vars.get(name.text) : undefined;
    if (!defined) return;
    const decorators = node.namedChildren.filter((c): c is PyNode => c?.type === 'decorator');
    for (const decorator of decorators.reverse()) {
      const expression = decorator.namedChildren[0];
      // Only calls and names of the script's own functions: a library's decorator is not evaluated.
      const callee = expression?.type === 'call' ? expression.childForFieldName('function') : expression;
      if (!callee || !(callee.type === 'identifier' || callee.type === 'attribute')) continue;
      if (callee.type === 'identifier' && scope.lookup(callee.text)?.kind !== 'function') continue;
      const decorate = this.evalExpr(expression, scope);
      if (decorate.kind === 'function') this.call(decorate, [defined], new Map(), decorator.startPosition.row);
    }
  }

  private define(node: PyNode, scope: Scope, decorators: string[]): void {
    const name = node.childForFieldName('name');
    if (!name) return;
    const value: FunctionValue = { kind: 'function', name: name.text, node, closure: scope.kind === 'class' ? scope.parent ?? this.globals : scope };
    if (scope.kind === 'class' && decorators.some((d) => PROPERTY_DECORATOR.test(d))) value.property = true;
    if (scope.kind === 'class' && decorators.includes('staticmethod')) value.binding = 'static';
    if (scope.kind === 'class' && decorators.includes('classmethod')) value.binding = 'class';
    scope.vars.set(name.text, value);
    this.values.set(name.id, value);
  }

  private defineClass(node: PyNode, scope: Scope, decorators: string[]): void {
    const name = node.childForFieldName('name');
    if (!name) return;
    const bases = (node.childForFieldName('superclasses')?.namedChildren ?? [])
      .filter((c): c is PyNode => !!c && c.type !== 'keyword_argument')
      .map((base) => this.evalExpr(base, scope));
    const body = new Scope(scope, 'class');
    const cls: ClassValue = {
      kind: 'class', name: name.text, node, attrs: body.vars, fields: [], bases,
      dataclass: decorators.some((d) => /(^|\.)dataclass\b/.test(d)) || bases.some((b) => b.kind === 'ref' && /(NamedTuple|BaseModel)$/.test(b.path)),
    };
    scope.vars.set(name.text, cls);
    this.values.set(name.id, cls);
    const block = node.childForFieldName('body');
    if (!block) return;
    for (const statement of block.namedChildren) {
      if (!statement) continue;
      // Annotated class-level names are a dataclass's fields, in order.
      const assignment = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
      if (assignment?.type === 'assignment' && assignment.childForFieldName('type') && assignment.childForFieldName('left')?.type === 'identifier') {
        cls.fields.push(assignment.childForFieldName('left')!.text);
      }
      this.exec(statement, body);
    }
    // Methods close over the scope the class was defined in.
    for (const [key, value] of body.vars) {
      if (value.kind === 'function') body.vars.set(key, { ...value, closure: scope, owner: cls });
    }
    // An Enum's class-level values are its members: `Size.SMALL.value` is what was assigned, `.name` the member's
    // name, and the class's @property getters read them through `self` (`self.value[0]`).
    if (bases.some((base) => base.kind === 'ref' && ENUM_BASE.test(base.path))) {
      for (const [key, value] of body.vars) {
        if (value.kind === 'function' || key.startsWith('_')) continue;
        const attrs = new Map<string, Value>([['value', value], ['name', { kind: 'string', value: key }]]);
        body.vars.set(key, { kind: 'object', role: 'instance', typeName: cls.name, cls, attrs, line: node.startPosition.row });
      }
    }
  }

  // ---- expressions ------------------------------------------------------------------------------------------

  /** Evaluates an expression, remembering the first value each node had. */
  evalExpr(node: PyNode | null | undefined, scope: Scope): Value {
    if (!node) return UNKNOWN;
    this.tick();
    // Deeply nested expressions (`1 + 1 + ...` thousands long, generated code) are unknown, not a stack overflow.
    if (this.nesting >= MAX_NESTING) return UNKNOWN;
    this.nesting++;
    let value: Value;
    try {
      value = this.evaluate(node, scope);
    } finally {
      this.nesting--;
    }
    if (!this.values.has(node.id)) this.values.set(node.id, value);
    return value;
  }

  private nesting = 0;

  private evaluate(node: PyNode, scope: Scope): Value {
    switch (node.type) {
      case 'integer': {
        const text = node.text.replace(UNDERSCORES, '').toLowerCase();
        const value = PREFIXED_INTEGER.test(text) ? Number(text) : Number(text.replace(NUMBER_SUFFIX, ''));
        const imaginary = !PREFIXED_INTEGER.test(text) && text.endsWith('j') ? { imaginary: true } : {};
        return Number.isFinite(value) ? { kind: 'number', value, origin: literalOrigin(node), ...imaginary } : UNKNOWN;
      }
      case 'float': {
        const text = node.text.replace(UNDERSCORES, '').toLowerCase();
        const imaginary = text.endsWith('j');
        const value = Number(imaginary ? text.slice(0, -1) : text);
        return Number.isFinite(value) ? { kind: 'number', value, origin: literalOrigin(node), real: true, ...(imaginary ? { imaginary } : {}) } : UNKNOWN;
      }
      case 'true': return { kind: 'bool', value: true, origin: literalOrigin(node) };
      case 'false': return { kind: 'bool', value: false, origin: literalOrigin(node) };
      case 'none': return { kind: 'none', origin: literalOrigin(node) };
      case 'string': {
        const text = stringLiteral(node, (expression) => this.evalExpr(expression, scope));
        return text === undefined ? UNKNOWN : { kind: 'string', value: text, origin: literalOrigin(node) };
      }
      case 'concatenated_string': {
        const parts = node.namedChildren.map((c) => (c ? stringLiteral(c, (e) => this.evalExpr(e, scope)) : undefined));
        return parts.every((p) => p !== undefined) ? { kind: 'string', value: parts.join(''), origin: literalOrigin(node) } : UNKNOWN;
      }
      case 'parenthesized_expression':
        return this.evalExpr(node.namedChildren[0], scope);
      case 'identifier':
        return scope.lookup(node.text) ?? builtin(node.text);
      case 'attribute':
        return this.evalAttribute(node, scope);
      case 'subscript':
        return this.evalSubscript(node, scope);
      case 'call':
        return this.evalCall(node, scope);
      case 'unary_operator': {
        const value = this.evalExpr(node.childForFieldName('argument'), scope);
        const operator = node.childForFieldName('operator')?.text ?? node.text.trim()[0];
        if (value.kind === 'number') {
          const real = value.real ? { real: true } : {};
          const imaginary = value.imaginary ? { imaginary: true } : {};
          return { kind: 'number', value: operator === '-' ? -value.value : operator === '~' ? ~value.value : value.value, origin: value.origin ?? literalOrigin(node), ...real, ...imaginary };
        }
        // `-x` of a traced tensor: a new tensor of its shape, as `x * -1` makes it.
        if (value.kind === 'tensor' && operator === '-') return this.tracer?.binary('*', value, { kind: 'number', value: -1 }) ?? UNKNOWN;
        if (value.kind === 'tensor' && operator === '+') return value;
        return UNKNOWN;
      }
      case 'not_operator': {
        const value = truthy(this.evalExpr(node.childForFieldName('argument'), scope));
        return value === undefined ? UNKNOWN : { kind: 'bool', value: !value, origin: literalOrigin(node) };
      }
      case 'binary_operator': {
        const left = this.evalExpr(node.childForFieldName('left'), scope);
        const right = this.evalExpr(node.childForFieldName('right'), scope);
        const operator = node.childForFieldName('operator')?.text ?? '';
        if (operator === '/' && left.kind === 'object' && left.typeName === PATH_TYPE) {
          const part = pathOf(right);
          return part === undefined ? UNKNOWN : pathObject(pathJoin(pathOf(left)!, part), node.startPosition.row);
        }
        return this.tracer?.binary(operator, left, right) ?? binary(operator, left, right, node.startPosition.row);
      }
      case 'boolean_operator': {
        const left = this.evalExpr(node.childForFieldName('left'), scope);
        const operator = node.childForFieldName('operator')?.text;
        const leftTruth = truthy(left);
        if (operator === 'and') return leftTruth === false ? left : leftTruth === true ? this.evalExpr(node.childForFieldName('right'), scope) : UNKNOWN;
        if (leftTruth === true) return left;
        const right = this.evalExpr(node.childForFieldName('right'), scope);
        return leftTruth === false ? right : left.kind === 'unknown' ? right : UNKNOWN;
      }
      case 'comparison_operator':
        return this.evalComparison(node, scope);
      case 'conditional_expression': {
        const [whenTrue, condition, whenFalse] = node.namedChildren;
        const test = truthy(this.evalExpr(condition, scope));
        if (test === false) return this.evalExpr(whenFalse, scope);
        return this.evalExpr(whenTrue, scope);
      }
      case 'list':
      case 'tuple':
      case 'set':
      case 'expression_list': {
        const items: Value[] = [];
        for (const child of node.namedChildren) {
          // A comment between the items is no item.
          if (!child || child.type === 'comment') continue;
          if (child.type === 'list_splat') {
            const spread = iterationItems(this.evalExpr(child.namedChildren[0], scope));
            if (spread) items.push(...spread);
            else items.push(UNKNOWN);
          } else {
            items.push(this.evalExpr(child, scope));
          }
        }
        return { kind: 'list', items, tuple: node.type !== 'list', origin: literalOrigin(node) };
      }
      case 'dictionary': {
        const dict: DictValue = { kind: 'dict', entries: new Map<string, Value>(), origin: literalOrigin(node) };
        for (const pair of node.namedChildren) {
          if (pair?.type === 'pair') {
            const key = this.evalExpr(pair.childForFieldName('key'), scope);
            dictSet(dict, key, this.evalExpr(pair.childForFieldName('value'), scope));
          } else if (pair?.type === 'dictionary_splat') {
            const spread = this.evalExpr(pair.namedChildren[0], scope);
            if (spread.kind === 'dict') {
              const values = [...spread.entries.values()];
              dictKeys(spread).forEach((k, i) => dictSet(dict, k, values[i]!));
            }
            else for (const [k, v] of entriesOf(spread) ?? []) dict.entries.set(k, v);
          }
        }
        return dict;
      }
      case 'list_comprehension':
      case 'generator_expression':
      case 'set_comprehension':
        return this.evalComprehension(node, scope);
      case 'dictionary_comprehension':
        return this.evalDictComprehension(node, scope);
      case 'lambda':
        return { kind: 'function', name: '<lambda>', node, closure: scope };
      case 'assignment':
        // Statements hold assignments as expressions (`a = b = value` nests them). The value is this run's: a
        // traced forward's `h = w = int(x.shape[1] ** 0.5)` gives both names the traced size, not the first run's.
        return this.execAssignment(node, scope);
      case 'augmented_assignment':
        this.execAugmented(node, scope);
        return UNKNOWN;
      case 'named_expression': {
        const value = this.evalExpr(node.childForFieldName('value'), scope);
        const name = node.childForFieldName('name');
        if (name) this.assignTarget(name, value, scope);
        return value;
      }
      case 'await':
        this.evalExpr(node.namedChildren[0], scope);
        return UNKNOWN;
      default:
        for (const child of node.namedChildren) if (child && isExpression(child)) this.evalExpr(child, scope);
        return UNKNOWN;
    }
  }

  private evalComparison(node: PyNode, scope: Scope): Value {
    const operands = node.namedChildren.filter((c): c is PyNode => !!c).map((c) => this.evalExpr(c, scope));
    if (operands.length !== 2) return UNKNOWN;
    const [a, b] = operands as [Value, Value];
    const op = node.text.slice(node.namedChildren[0]!.text.length, node.text.length - node.namedChildren[1]!.text.length).trim().replace(WHITESPACE, ' ');
    // An element-wise comparison of tensors is a tensor (a mask): the trace gives its shape (`x is None` is no such thing).
    if (this.tracer && (a.kind === 'tensor' || b.kind === 'tensor') && a.kind !== 'none' && b.kind !== 'none' && ELEMENTWISE_COMPARISON.test(op)) {
      return this.tracer.binary(op, a, b) ?? UNKNOWN;
    }
    // `x is None` is known whenever either side is known to be None or known not to be.
    if ((op === 'is' || op === 'is not' || op === '==' || op === '!=') && (a.kind === 'none' || b.kind === 'none') && a.kind !== 'unknown' && b.kind !== 'unknown') {
      const same = a.kind === b.kind;
      return { kind: 'bool', value: op === 'is' || op === '==' ? same : !same };
    }
    const scalar = (v: Value) => (v.kind === 'number' || v.kind === 'string' || v.kind === 'bool' ? v.value : v.kind === 'none' ? null : undefined);
    const x = scalar(a);
    const y = scalar(b);
    if (op === 'in' || op === 'not in') {
      // `"MOE_LR" in os.environ`: no variable is set as the CLI runs the script (os.environ.get gives its default).
      if (b.kind === 'ref' && b.path === 'os.environ' && typeof x === 'string') return { kind: 'bool', value: op === 'not in', origin: { line: node.startPosition.row, how: 'environment' } };
      const items = iterationItems(b);
      if (x === undefined || !items) return UNKNOWN;
      const found = items.some((item) => scalar(item) === x);
      return { kind: 'bool', value: op === 'in' ? found : !found };
    }
    if (x === undefined || y === undefined) return UNKNOWN;
    switch (op) {
      case '==': case 'is': return { kind: 'bool', value: x === y };
      case '!=': case 'is not': return { kind: 'bool', value: x !== y };
      case '<': return x !== null && y !== null ? { kind: 'bool', value: x < y } : UNKNOWN;
      case '<=': return x !== null && y !== null ? { kind: 'bool', value: x <= y } : UNKNOWN;
      case '>': return x !== null && y !== null ? { kind: 'bool', value: x > y } : UNKNOWN;
      case '>=': return x !== null && y !== null ? { kind: 'bool', value: x >= y } : UNKNOWN;
      default: return UNKNOWN;
    }
  }

  private evalComprehension(node: PyNode, scope: Scope): Value {
    const body = node.childForFieldName('body');
    const clauses = node.namedChildren.filter((c): c is PyNode => c?.type === 'for_in_clause' || c?.type === 'if_clause');
    const inner = new Scope(scope, 'function');
    const items: Value[] = [];
    let complete = true;
    /** A single loop too long to unroll (or over a tensor), with the number of elements it yields where known. */
    let uniform: { length: number | undefined } | undefined;
    const loop = (index: number): void => {
      if (index === clauses.length) {
        items.push(this.evalExpr(body, inner));
        return;
      }
      const clause = clauses[index]!;
      if (clause.type === 'if_clause') {
        if (truthy(this.evalExpr(clause.namedChildren[0], inner)) !== false) loop(index + 1);
        return;
      }
      const left = clause.childForFieldName('left');
      const iterable = this.evalExpr(clause.childForFieldName('right'), inner);
      const values = iterationItems(iterable);
      if (!left) return;
      if (!values || values.length > MAX_UNROLL) {
        if (clauses.length === 1) uniform = { length: iterableLength(iterable) };
        complete = false;
        this.assignTarget(left, { kind: 'unknown', origin: { line: left.startPosition.row, how: 'loop' } }, inner);
        loop(index + 1);
        return;
      }
      for (const [position, value] of values.entries()) {
        this.assignTarget(left, value, inner);
        loop(index + 1);
        // A long comprehension of plain values (token ids, random draws) keeps its length, not each value: running
        // every element would spend the program's step budget on data and leave the rest of the script unread.
        // Known constants up to a config's length (`[int(c) for c in "1000,50".split(",")]`) are sizes: each is kept.
        const first = items[items.length - 1];
        const configLike = first !== undefined && isKnownConstant(first) && values.length <= MAX_CONFIG_ITEMS;
        if (position === 0 && index === clauses.length - 1 && values.length > MAX_PLAIN_UNROLL && first && isPlain(first) && !configLike) {
          for (let rest = 1; rest < values.length; rest++) items.push(UNKNOWN);
          return;
        }
      }
    };
    loop(0);
    if (complete) return { kind: 'list', items, tuple: false };
    // Windows of one size cut from a tensor (`[series[i:i + lookback] for i in torch.arange(n)]`): every element has
    // the shape the body makes, so the list is n of it (what torch.stack of it stacks), however long.
    const element = items[0];
    const sized = element?.kind === 'call' && items.length === 1 && madeTensorShape(element) !== undefined;
    if (sized && uniform?.length !== undefined && uniform.length > 0 && uniform.length <= MAX_UNIFORM_ITEMS) {
      return { kind: 'list', items: new Array<Value>(uniform.length).fill(element), tuple: false };
    }
    return UNKNOWN;
  }

  /**
   * `{k: v for k, v in d.items() if cond}`: its for clauses nested in order, each `if` clause skipping what it rules
   * out (a condition the source does not decide keeps the entry).
   */
  private evalDictComprehension(node: PyNode, scope: Scope): Value {
    const pair = node.childForFieldName('body');
    const clauses = node.namedChildren.filter((c): c is PyNode => c?.type === 'for_in_clause' || c?.type === 'if_clause');
    if (!pair || clauses[0]?.type !== 'for_in_clause') return UNKNOWN;
    const inner = new Scope(scope, 'function');
    const dict: DictValue = { kind: 'dict', entries: new Map<string, Value>() };
    let unrolled = 0;
    const loop = (index: number): boolean => {
      if (index === clauses.length) {
        const key = this.evalExpr(pair.childForFieldName('key'), inner);
        if (key.kind === 'string' || key.kind === 'number') dictSet(dict, key, this.evalExpr(pair.childForFieldName('value'), inner));
        return true;
      }
      const clause = clauses[index]!;
      if (clause.type === 'if_clause') return truthy(this.evalExpr(clause.namedChildren[0], inner)) === false || loop(index + 1);
      const left = clause.childForFieldName('left');
      const values = iterationItems(this.evalExpr(clause.childForFieldName('right'), inner));
      if (!left || !values || (unrolled += values.length) > MAX_UNROLL) return false;
      for (const value of values) {
        this.assignTarget(left, value, inner);
        if (!loop(index + 1)) return false;
      }
      return true;
    };
    return loop(0) ? dict : UNKNOWN;
  }

  private evalAttribute(node: PyNode, scope: Scope): Value {
    const object = this.evalExpr(node.childForFieldName('object'), scope);
    const name = node.childForFieldName('attribute')?.text ?? '';
    return this.getAttribute(object, name);
  }

  /** What an instance's `__len__` returns (a Dataset's length), unknown without one. */
  private ownLength(object: ObjectValue, line: number): Value {
    const method = object.cls ? lookupClassAttribute(object.cls, '__len__') : undefined;
    return method?.kind === 'function' ? this.call({ ...method, self: object }, [], new Map(), line) : UNKNOWN;
  }

  /** `len(object)` for an instance of a class of the script, asked after the run (a loader's dataset); undefined where unknown. */
  lengthOf(object: ObjectValue): number | undefined {
    try {
      return numberOf(this.ownLength(object, object.line));
    } catch (signal) {
      if (!(signal instanceof BudgetExceeded)) throw signal;
      return undefined;
    }
  }

  getAttribute(object: Value, name: string): Value {
    switch (object.kind) {
      case 'ref': {
        const path = `${object.path}.${name}`;
        if (TORCH_DTYPE.test(path)) return { kind: 'dtype', name };
        // The script run as `python script.py`, with no arguments (as argparse's defaults are read).
        if (path === 'sys.argv') return { kind: 'list', items: [{ kind: 'string', value: this.options.filePath ?? 'script.py' }], tuple: false };
        return libraryName(path);
      }
      case 'object': {
        if (object.typeName === PATH_TYPE) {
          const at = pathOf(object)!;
          if (name === 'parent') return pathObject(pathDirname(at), object.line);
          if (name === 'name') return { kind: 'string', value: pathBasename(at) };
        }
        const own = object.attrs.get(name);
        if (this.tracer && own?.kind === 'layer' && own.type === 'Parameter') return this.tracer.parameter(own);
        // A tensor of a shape the script gives, kept on the module (a buffer: a window, a filterbank, a table).
        if (this.tracer?.buffer && own?.kind === 'call' && object.role === 'instance') {
          // Also an expression of one (`F.normalize(torch.randn(dim, K), dim=0)`, `torch.zeros(n).long()`).
          const made = madeTensorShape(own);
          if (made) return this.tracer.buffer(own, made, isIntegerTensor(own));
          // Or of the lists it was given (`torch.tensor([[(c >> 2) & 1, (c >> 1) & 1, c & 1] for c in range(8)])`).
          const listed = listTensorShape(own);
          if (listed) return this.tracer.buffer(own, listed.dims, listed.integer);
        }
        if (own !== undefined) return object.role === 'namespace' || object.role === 'hf-config' ? readThrough(own, object.typeName === 'Namespace' ? 'argparse-default' : 'config') : own;
        const fromClass = object.cls ? lookupClassAttribute(object.cls, name) : undefined;
        if (fromClass?.kind === 'function') {
          // `self._helper(...)` of a @staticmethod passes no receiver; a @classmethod receives the class.
          if (fromClass.binding === 'static') return fromClass;
          if (fromClass.binding === 'class') return object.cls ? { ...fromClass, self: object.cls } : fromClass;
          return fromClass.property ? this.invoke({ ...fromClass, self: object }, [object], new Map(), fromClass.node.startPosition.row, false) : { ...fromClass, self: object };
        }
        if (fromClass !== undefined) return readThrough(fromClass, 'config');
        // A constructor argument of the torch.nn layer the class extends (`self.normalized_shape`, `self.eps`).
        const base = object.attrs.get(BASE_LAYER);
        if (base?.kind === 'layer') {
          const given = this.getAttribute(base, name);
          if (given.kind !== 'method') return given;
        }
        return { kind: 'method', receiver: object, name };
      }
      case 'dict': {
        // EasyDict / OmegaConf / Box: entries read as attributes.
        const entry = object.entries.get(name);
        if (entry !== undefined) return readThrough(entry, 'config');
        return { kind: 'method', receiver: object, name };
      }
      case 'class':
        // A registry keys the classes it is handed by their names (`REGISTRY[cls.__name__] = cls`).
        if (name === '__name__' || name === '__qualname__') return lookupClassAttribute(object, name) ?? { kind: 'string', value: object.name };
        {
          const attribute = lookupClassAttribute(object, name);
          // `Config.from_dict(...)`: a @classmethod read through its class receives the class.
          if (attribute?.kind === 'function' && attribute.binding === 'class') return { ...attribute, self: object };
          return attribute ?? UNKNOWN;
        }
      case 'layer': {
        const child = object.named?.get(name);
        if (child) return child;
        if (name === 'weight' && this.tracer?.layerWeight) {
          const weight = this.tracer.layerWeight(object);
          if (weight) return weight;
        }
        // A constructor argument read back as an attribute (`self.rnn.hidden_size`, `self.fc.out_features`).
        const position = LAYER_ARGUMENTS[object.type]?.indexOf(name) ?? -1;
        const given = object.kwargs.get(name) ?? (position >= 0 ? object.args[position] : undefined);
        if (given && (given.kind === 'number' || given.kind === 'bool')) return given;
        return { kind: 'method', receiver: object, name };
      }
      case 'call': {
        const own = object.attrs?.get(name);
        if (own) return own;
        // The transpose of a tensor the script made (`sobel_x.T`), sized from it (see madeTensorShape).
        if ((name === 'T' || name === 'mT') && sizedOrListedShape(object)) return { kind: 'call', path: `${object.path}().${name}`, args: [], kwargs: new Map(), line: object.line, receiver: object };
        const width = FEATURE_WIDTH_ATTRIBUTE.test(name) ? this.options.libraryFeatureWidth?.(object) : undefined;
        return width !== undefined ? { kind: 'number', value: width } : { kind: 'method', receiver: object, name };
      }
      case 'method': {
        // `llm.config.hidden_size`: the checkpoint's config, as the catalog knows it.
        if (object.receiver.kind === 'call' && object.name === 'config') {
          const size = this.options.libraryConfigValue?.(object.receiver, name);
          if (size !== undefined) return { kind: 'number', value: size };
        }
        // `backbone.fc.in_features`: the features the library model's classifier reads.
        if (object.receiver.kind === 'call' && name === 'in_features' && CLASSIFIER_ATTRIBUTE.test(object.name)) {
          const width = this.options.libraryFeatureWidth?.(object.receiver);
          if (width !== undefined) return { kind: 'number', value: width };
        }
        // `backbone.fc.weight.shape`: (classes, features) of a library model's linear classifier (MoCo's MLP head
        // reads its width there).
        if (name === 'shape' && object.name === 'weight') {
          const shape = this.classifierWeightShape(object.receiver);
          if (shape) return shape;
        }
        // `model.bert.embeddings`: what looked like a method of a library model is one of its submodules.
        const submodule = librarySubmodule(object);
        return submodule ? { kind: 'method', receiver: submodule, name } : UNKNOWN;
      }
      case 'tensor': {
        const attribute = this.tracer?.attribute(object, name);
        return attribute && attribute.kind !== 'unknown' ? attribute : { kind: 'method', receiver: object, name };
      }
      case 'list': {
        // torch.return_types (`x.max(dim=1).values`, `.indices`): the (values, indices) pair a reduction returns.
        const [values, indices] = object.items;
        if (object.tuple && object.items.length === 2 && values?.kind === 'tensor' && indices?.kind === 'tensor' && indices.integer) {
          if (name === 'values') return values;
          if (name === 'indices') return indices;
        }
        return { kind: 'method', receiver: object, name };
      }
      case 'string':
      case 'number':
        return { kind: 'method', receiver: object, name };
      default:
        return UNKNOWN;
    }
  }

  /**
   * The weight shape of a library vision model's classifier read as a submodule (`backbone.fc`): its classes (the
   * num_classes it was built with, 1000 unless given) by the features it reads. Undefined for another submodule.
   */
  private classifierWeightShape(submodule: Value): ListValue | undefined {
    const model = submodule.kind === 'object' && submodule.role === 'library-module' && CLASSIFIER_ATTRIBUTE.test(submodule.typeName) ? submodule.attrs.get('model') : undefined;
    if (model?.kind !== 'call') return undefined;
    const features = this.options.libraryFeatureWidth?.(model);
    if (features === undefined) return undefined;
    const given = model.kwargs.get('num_classes');
    const classes: Value = given === undefined ? { kind: 'number', value: 1000 } : given.kind === 'number' ? given : UNKNOWN;
    return { kind: 'list', tuple: true, items: [classes, { kind: 'number', value: features }] };
  }

  private evalSubscript(node: PyNode, scope: Scope): Value {
    const object = this.evalExpr(node.childForFieldName('value'), scope);
    const subscript = node.childForFieldName('subscript');
    if (subscript?.type === 'slice' && object.kind === 'tensor' && this.tracer) return this.tracer.index(object, this.indexKey(subscript, scope));
    // A crop of a made tensor (`img[:, top:top + crop, left:left + crop]`): the same tensor at the sizes it keeps.
    if (object.kind === 'call') {
      const cropped = this.croppedTensor(object, node, scope);
      if (cropped) return cropped;
    }
    // A slice of a made tensor (`tokens[i:j]`): same kind of data, sizes unknown until a view names them.
    if (subscript?.type === 'slice' && object.kind === 'call' && TORCH_MADE_TENSOR.test(object.path)) {
      return { ...object, path: `${object.path}[]`, line: node.startPosition.row };
    }
    // `model.bert.encoder.layer[:8]` of a library model: its submodules by index (a slice from a known start to a
    // known stop; the list's length is not known).
    const libraryList = object.kind === 'method' ? librarySubmodule(object) : undefined;
    if (libraryList && subscript) {
      const key = subscript.type === 'slice' ? this.indexKey(subscript, scope) : this.evalExpr(subscript, scope);
      const item = (i: number): Value => ({ ...libraryList, typeName: `${libraryList.typeName}.${i}`, attrs: new Map(libraryList.attrs) });
      if (key.kind === 'number' && Number.isInteger(key.value) && key.value >= 0) return item(key.value);
      const parts = key.kind === 'list' && key.items[0]?.kind === 'dict' ? key.items[0].entries : undefined;
      const start = parts?.get('start');
      const from = start === undefined || start.kind === 'none' ? 0 : numberOf(start);
      const to = numberOf(parts?.get('stop'));
      if (parts && !parts.has('step') && from !== undefined && to !== undefined && from >= 0 && to >= from && to <= 1024) {
        return { kind: 'list', items: Array.from({ length: to - from }, (_, k) => item(from + k)), tuple: false };
      }
      return UNKNOWN;
    }
    if (subscript?.type === 'slice') {
      // `model.blocks[:6]`: a slice of a ModuleList / Sequential is a container of the same modules.
      const sequence = object.kind === 'list' ? object.items : object.kind === 'layer' && (object.type === 'ModuleList' || object.type === 'Sequential') ? object.children
        : object.kind === 'object' && object.role === 'instance' ? iterationItems(object) : undefined;
      if (!sequence) return UNKNOWN;
      const key = this.indexKey(subscript, scope);
      const parts = key.kind === 'list' && key.items[0]?.kind === 'dict' ? key.items[0].entries : new Map<string, Value>();
      const n = sequence.length;
      const step = parts.has('step') ? numberOf(parts.get('step')) : 1;
      if (step === undefined || step === 0) return UNKNOWN;
      // Python's slice bounds: negative counts from the end; defaults depend on the step's sign.
      const bound = (value: Value | undefined, fallback: number): number | undefined => {
        if (value === undefined || value.kind === 'none') return fallback;
        const i = numberOf(value);
        if (i === undefined) return undefined;
        const j = i < 0 ? n + i : i;
        return step > 0 ? Math.min(Math.max(j, 0), n) : Math.min(Math.max(j, -1), n - 1);
      };
      const from = bound(parts.get('start'), step > 0 ? 0 : n - 1);
      const to = bound(parts.get('stop'), step > 0 ? n : -1);
      if (from === undefined || to === undefined) return UNKNOWN;
      const items: Value[] = [];
      for (let i = from; step > 0 ? i < to : i > to; i += step) items.push(sequence[i]!);
      return { kind: 'list', items, tuple: object.kind === 'list' && object.tuple };
    }
    if (object.kind === 'tensor' && this.tracer) return this.tracer.index(object, this.indexKey(subscript, scope));
    const key = this.evalExpr(subscript, scope);
    if (object.kind === 'call' && key.kind === 'call' && !this.tracer) {
      const picked = pickedRows(object, key, node.startPosition.row);
      if (picked) return picked;
    }
    // `models.__dict__[name]` (or `vars(models)[name]`): the module's attribute of that name, as getattr reads it.
    if (object.kind === 'ref' && object.path.endsWith('.__dict__') && key.kind === 'string') {
      return { kind: 'ref', path: `${object.path.slice(0, -'.__dict__'.length)}.${key.value}` };
    }
    if (object.kind === 'dict' && (key.kind === 'string' || key.kind === 'number' || (key.kind === 'list' && key.tuple))) {
      const entry = dictGet(object, key);
      return entry !== undefined ? readThrough(entry, 'config') : UNKNOWN;
    }
    if (object.kind === 'object' && key.kind === 'string') {
      const entry = object.attrs.get(key.value);
      return entry !== undefined ? readThrough(entry, 'config') : UNKNOWN;
    }
    // `self[0]` in a subclass of nn.Sequential / nn.ModuleList: its modules by position.
    if (object.kind === 'object' && object.role === 'instance' && key.kind === 'number' && Number.isInteger(key.value)) {
      const items = iterationItems(object);
      if (!items) return UNKNOWN;
      return items[key.value < 0 ? items.length + key.value : key.value] ?? UNKNOWN;
    }
    if (object.kind === 'list' && key.kind === 'number' && Number.isInteger(key.value)) {
      const index = key.value < 0 ? object.items.length + key.value : key.value;
      return object.items[index] ?? UNKNOWN;
    }
    if (object.kind === 'layer' && key.kind === 'number') return object.children[key.value < 0 ? object.children.length + key.value : key.value] ?? UNKNOWN;
    // `self.heads["cls"]`: a ModuleDict entry by name.
    if (object.kind === 'layer' && key.kind === 'string') return object.named?.get(key.value) ?? UNKNOWN;
    return UNKNOWN;
  }

  /**
   * A made tensor (`torch.randn(4, tile, tile)`) sliced on every axis it names to sizes the script determines: a
   * slice `a:a + n` keeps n (whatever a is, as Python's slicing does inside the bounds), `i:j` with both known
   * keeps j - i, `:` keeps the axis. The crop replaces the tensor among those the data code makes. Undefined when
   * any axis is indexed by something else or a size is not known.
   */
  private croppedTensor(object: Extract<Value, { kind: 'call' }>, node: PyNode, scope: Scope): Extract<Value, { kind: 'call' }> | undefined {
    const shape = tensorShape(object);
    if (!shape) return undefined;
    const parts = node.namedChildren.filter((c): c is PyNode => !!c && c.type !== 'comment').slice(1);
    if (parts.length === 0 || parts.length > shape.dims.length || parts.some((part) => part.type !== 'slice')) return undefined;
    const dims = [...shape.dims];
    for (let axis = 0; axis < parts.length; axis++) {
      const part = parts[axis]!;
      // Which expression is start, stop or step: by the colons around it.
      const slots: Array<PyNode | undefined> = [undefined, undefined, undefined];
      let slot = 0;
      const named = new Set(part.namedChildren.filter((c): c is PyNode => !!c && c.type !== 'comment').map((c) => c.id));
      for (const child of part.children) {
        if (!child) continue;
        if (child.type === ':') slot++;
        else if (named.has(child.id) && slot < 3) slots[slot] = child;
      }
      const [start, stop, step] = slots;
      if (step) return undefined;
      const size = dims[axis]!;
      if (!start && !stop) continue;
      let length = this.offsetSliceLength(start, stop, scope);
      if (length === undefined) {
        const from = start ? numberOf(this.evalExpr(start, scope)) : 0;
        const to = stop ? numberOf(this.evalExpr(stop, scope)) : size;
        if (from === undefined || to === undefined) return undefined;
        const clamp = (i: number) => Math.min(Math.max(i < 0 ? size + i : i, 0), size);
        length = clamp(to) - clamp(from);
      }
      if (!Number.isInteger(length) || length <= 0 || length > size) return undefined;
      dims[axis] = length;
    }
    if (dims.every((d, i) => d === shape.dims[i])) return undefined;
    const sizes: Value = { kind: 'list', items: dims.map((d) => ({ kind: 'number', value: d }) as Value), tuple: true };
    const args = object.path === 'torch.randint' ? [...object.args.slice(0, object.args.length >= 3 ? 2 : 1), sizes]
      : object.path === 'torch.full' ? [sizes, ...object.args.slice(1)] : [sizes];
    const kwargs = new Map([...object.kwargs].filter(([key]) => key !== 'size'));
    const cropped: Extract<Value, { kind: 'call' }> = { ...object, args, kwargs, line: node.startPosition.row };
    const made = this.tensorCalls.find((entry) => entry.value === object);
    if (made) made.value = cropped;
    this.crops.set(object, cropped);
    return cropped;
  }

  /**
   * The length of a slice `a:a + n` (or `a:n + a`): n, whatever a is, as Python's slicing gives inside the bounds (a
   * random crop's offset). Undefined for any other slice.
   */
  private offsetSliceLength(start: PyNode | undefined, stop: PyNode | undefined, scope: Scope): number | undefined {
    if (!start || stop?.type !== 'binary_operator' || stop.childForFieldName('operator')?.text !== '+') return undefined;
    const left = stop.childForFieldName('left');
    const right = stop.childForFieldName('right');
    if (left?.text === start.text) return numberOf(this.evalExpr(right, scope));
    if (right?.text === start.text) return numberOf(this.evalExpr(left, scope));
    return undefined;
  }

  /**
   * A tensor index as values: a tuple of items, each a number, None, `...` (the string '...') or a slice (a dict
   * with the entries `start`, `stop`, `step` that the source gives).
   */
  private indexKey(node: PyNode | null, scope: Scope): Value {
    if (!node) return UNKNOWN;
    // `x[:, 0]` holds one subscript per comma: all named children after the subscripted value.
    const subscriptNode = node.parent;
    if (subscriptNode?.type === 'subscript') {
      const parts = subscriptNode.namedChildren.filter((c): c is PyNode => !!c && c.type !== 'comment').slice(1);
      if (parts.length > 1) node = { ...node, type: 'expression_list', namedChildren: parts } as unknown as PyNode;
    }
    const item = (part: PyNode): Value => {
      if (part.type === 'slice') {
        const entries = new Map<string, Value>();
        const text = part.text;
        const pieces = text.split(':');
        const nodes = part.namedChildren.filter((c): c is PyNode => !!c);
        // Which of start/stop/step each expression is: by the colons around it.
        let index = 0;
        const slots: Array<PyNode | undefined> = [];
        pieces.forEach((piece, position) => {
          if (piece.trim() === '') return;
          const child = nodes[index++];
          slots[position] = child;
          entries.set(['start', 'stop', 'step'][position]!, child ? this.evalExpr(child, scope) : UNKNOWN);
        });
        // A crop at an offset the script draws at random (`base[:, i:i + size]`) keeps `size`.
        const length = this.offsetSliceLength(slots[0], slots[1], scope);
        if (length !== undefined) entries.set('length', { kind: 'number', value: length });
        entries.set('slice', { kind: 'bool', value: true });
        return { kind: 'dict', entries };
      }
      if (part.type === 'ellipsis') return { kind: 'string', value: '...' };
      return this.evalExpr(part, scope);
    };
    if (node.type === 'tuple' || node.type === 'expression_list') {
      return { kind: 'list', items: node.namedChildren.filter((c): c is PyNode => !!c).map(item), tuple: true };
    }
    return { kind: 'list', items: [item(node)], tuple: true };
  }

  // ---- calls ------------------------------------------------------------------------------------------------

  private evalArguments(call: PyNode, scope: Scope): { args: Value[]; kwargs: Map<string, Value> } {
    const args: Value[] = [];
    // Most calls pass no keywords: they share one empty map (no code changes a call's kwargs once made).
    let kwargs = NO_KWARGS;
    let splatted: Map<string, Value> | undefined;
    const list = call.childForFieldName('arguments');
    if (list?.type === 'generator_expression') {
      args.push(this.evalExpr(list, scope));
      return { args, kwargs };
    }
    for (const argument of list?.namedChildren ?? []) {
      if (!argument || argument.type === 'comment') continue;
      if (argument.type === 'keyword_argument') {
        const name = argument.childForFieldName('name')?.text;
        const value = this.evalExpr(argument.childForFieldName('value'), scope);
        if (kwargs === NO_KWARGS) kwargs = new Map();
        if (name) kwargs.set(name, value);
      } else if (argument.type === 'list_splat') {
        const spread = iterationItems(this.evalExpr(argument.namedChildren[0], scope));
        if (spread) args.push(...spread);
        else args.push({ kind: 'unknown' });
      } else if (argument.type === 'dictionary_splat') {
        if (kwargs === NO_KWARGS) kwargs = new Map();
        for (const [k, v] of entriesOf(this.evalExpr(argument.namedChildren[0], scope)) ?? []) {
          kwargs.set(k, v);
          (splatted ??= new Map()).set(k, v);
        }
      } else {
        args.push(this.evalExpr(argument, scope));
      }
    }
    if (splatted && !this.unpacked.has(call.id)) this.unpacked.set(call.id, splatted);
    return { args, kwargs };
  }

  private evalCall(node: PyNode, scope: Scope): Value {
    const calleeNode = node.childForFieldName('function');
    const callee = this.evalExpr(calleeNode, scope);
    const { args, kwargs } = this.evalArguments(node, scope);
    const line = node.startPosition.row;
    // `super().__init__(...)`: the base class's constructor, with the same receiver.
    if (calleeNode?.type === 'attribute' && calleeNode.childForFieldName('object')?.type === 'call' &&
      calleeNode.childForFieldName('object')?.childForFieldName('function')?.text === 'super') {
      return this.callSuper(calleeNode, scope, args, kwargs, line);
    }
    this.pendingCallNode = node;
    return this.call(callee, args, kwargs, line);
  }

  /**
   * `super().method(...)` (or `super(Cls, self).method(...)`): the next class after the method's own class in the
   * method resolution order of the receiver's class, as Python looks it up; a torch.nn class there runs what
   * torch.nn's own method does (`nn.Sequential.__init__(*layers)` registers the layers).
   */
  private callSuper(calleeNode: PyNode, scope: Scope, args: Value[], kwargs: Map<string, Value>, line: number): Value {
    const method = calleeNode.childForFieldName('attribute')?.text ?? '';
    const superArgs = calleeNode.childForFieldName('object')?.childForFieldName('arguments')?.namedChildren.filter((c): c is PyNode => !!c && c.type !== 'comment') ?? [];
    const named = superArgs.length === 2 ? this.evalExpr(superArgs[0], scope) : undefined;
    const self = superArgs.length === 2 ? this.evalExpr(superArgs[1], scope) : scope.lookup('self');
    const owner = named?.kind === 'class' ? named : this.currentOwner;
    if (!owner || self?.kind !== 'object') return UNKNOWN;
    const order = self.cls ? methodResolutionOrder(self.cls) : undefined;
    const at = order ? order.indexOf(owner) : -1;
    if (order && at >= 0) {
      const found = resolveMethod(order, at + 1, method);
      if (found?.kind === 'function') return this.invoke({ ...found, self }, [self, ...args], kwargs, line, false);
      if (found?.kind === 'ref') return this.callLibraryMethod(self, found, method, args, kwargs, line);
      return UNKNOWN;
    }
    for (const base of owner.bases) {
      if (base.kind !== 'class') continue;
      const fn = lookupClassAttribute(base, method);
      if (fn?.kind === 'function') return this.invoke({ ...fn, self }, [self, ...args], kwargs, line, false);
    }
    return UNKNOWN;
  }

  /**
   * A method of a torch.nn class that a script's class extends, run on an instance of it: `__init__` registers
   * what the class's constructor registers, `forward` runs the container or layer; other library classes do
   * nothing the model knows.
   */
  private callLibraryMethod(self: ObjectValue, base: RefValue, method: string, args: Value[], kwargs: Map<string, Value>, line: number): Value {
    const type = TORCH_NN.exec(base.path)?.[1];
    if (!type) return method === '__init__' ? NONE : UNKNOWN;
    if (method === '__init__') {
      this.initLibraryBase(self, type, args, kwargs, line);
      return NONE;
    }
    if (method === 'forward') return this.forwardLibraryBase(self, type, args, kwargs, line);
    return UNKNOWN;
  }

  /** What `nn.Sequential.__init__`, `nn.ModuleList.__init__`, `nn.LayerNorm.__init__`, … register on self. */
  private initLibraryBase(self: ObjectValue, type: string, args: Value[], kwargs: Map<string, Value>, line: number): void {
    if (type === 'Module') return;
    if (type === 'Sequential') {
      const named = args.length === 1 && args[0]!.kind === 'dict' ? args[0]!.entries : undefined;
      if (named) for (const [key, value] of named) self.attrs.set(key, value);
      else args.forEach((value, i) => self.attrs.set(String(i), value));
      return;
    }
    if (type === 'ModuleList') {
      const items = iterationItems(args[0] ?? kwargs.get('modules') ?? { kind: 'list', items: [], tuple: false }) ?? [];
      items.forEach((value, i) => self.attrs.set(String(i), value));
      return;
    }
    if (type === 'ModuleDict') {
      const given = args[0] ?? kwargs.get('modules');
      for (const [key, value] of given ? entriesOf(given) ?? pairsOf(given) ?? [] : []) self.attrs.set(key, value);
      return;
    }
    const layer = this.callLibrary(`torch.nn.${type}`, args, kwargs, line);
    if (layer.kind === 'layer') self.attrs.set(BASE_LAYER, layer);
  }

  /** `nn.Sequential.forward`: the registered modules in order; a torch.nn layer's forward on the layer it holds. */
  private forwardLibraryBase(self: ObjectValue, type: string, args: Value[], kwargs: Map<string, Value>, line: number): Value {
    if (!this.tracer) return UNKNOWN;
    if (type === 'Sequential') {
      let x: Value = args[0] ?? UNKNOWN;
      for (const child of moduleItems(self)) x = this.call(child, [x], new Map(), line);
      return x;
    }
    const layer = self.attrs.get(BASE_LAYER);
    return layer?.kind === 'layer' ? this.call(layer, args, kwargs, line) : UNKNOWN;
  }

  private currentOwner: ClassValue | undefined;

  /** A call site of a module (outside a trace); `method` where a module without forward() ran one of its methods. */
  private recordModuleCall(module: Value, args: Value[], node: PyNode | undefined, method?: string): void {
    const sites = this.moduleCalls.get(module) ?? [];
    const nodes = this.moduleCallNodes.get(module) ?? [];
    const methods = this.moduleCallMethods.get(module) ?? [];
    if (sites.length < 8) {
      sites.push(args);
      if (node && nodes.length === sites.length - 1) nodes.push(node);
      if (method !== undefined) methods[sites.length - 1] = method;
    }
    this.moduleCalls.set(module, sites);
    this.moduleCallNodes.set(module, nodes);
    if (method !== undefined) this.moduleCallMethods.set(module, methods);
  }

  /** Calls a value with evaluated arguments. */
  call(callee: Value, args: Value[], kwargs: Map<string, Value>, line: number): Value {
    const node = this.pendingCallNode;
    this.pendingCallNode = undefined;
    if (!this.tracer && (callee.kind === 'layer' || (callee.kind === 'object' && callee.role === 'instance'))) {
      this.recordModuleCall(callee, args, node);
    } else if (!this.tracer && callee.kind === 'function' && callee.self && forwardlessModule(callee.self)) {
      this.recordModuleCall(callee.self, args, node, callee.name);
    }
    if (!this.tracer && node && callee.kind === 'function' && callee.self && isModuleInstance(callee.self) && callee.name !== 'forward') {
      const calls = this.moduleMethodCalls.get(callee.self) ?? [];
      if (calls.length < 16 && !calls.some((c) => c.node.id === node.id)) calls.push({ method: callee.name, node });
      this.moduleMethodCalls.set(callee.self, calls);
    }
    switch (callee.kind) {
      case 'function':
        return this.invoke(callee, callee.self ? [callee.self, ...args] : args, kwargs, line, false);
      case 'class':
        return this.instantiate(callee, args, kwargs, line);
      case 'ref':
        return this.callLibrary(callee.path, args, kwargs, line);
      case 'method':
        return this.callMethod(callee.receiver, callee.name, args, kwargs, line);
      case 'layer': {
        // Calling a layer runs its forward: a tensor, known only while a trace gives tensors shapes.
        if (!this.tracer) return UNKNOWN;
        if (callee.type === 'Sequential') {
          this.tracer.enterModule(callee, args);
          let x: Value = args[0] ?? UNKNOWN;
          for (const child of callee.children) x = this.call(child, [x], new Map(), line);
          this.tracer.exitModule(callee);
          return x;
        }
        // Entered like a block: a Sequential of plain layers is checkpointed layer by layer, in segments.
        this.tracer.enterModule(callee, args);
        const output = this.tracer.layer(callee, args, kwargs) ?? UNKNOWN;
        this.tracer.exitModule(callee);
        return output;
      }
      case 'call':
        // `functools.partial(f, *a, **k)(*b, **j)` is `f(*a, *b, **k, **j)`: a norm-layer factory, a model zoo's entry.
        if (callee.path === 'functools.partial' && callee.args[0]) {
          return this.call(callee.args[0], [...callee.args.slice(1), ...args], new Map([...callee.kwargs, ...kwargs]), line);
        }
        return this.tracer?.libraryModel?.(callee, 'forward', args) ?? UNKNOWN;
      case 'object':
        // A submodule of a library model the script holds (`list(resnet.children())[4]`), run on a tensor.
        if (callee.role === 'library-module' && this.tracer?.libraryPart) {
          const model = callee.attrs.get('model');
          return (model?.kind === 'call' ? this.tracer.libraryPart(model, callee.typeName, args) : undefined) ?? UNKNOWN;
        }
        if (callee.cls && callee.role === 'instance') {
          const module = isModuleClass(callee.cls);
          const order = module ? methodResolutionOrder(callee.cls) : undefined;
          const forward = !module ? lookupClassAttribute(callee.cls, '__call__')
            : order ? resolveMethod(order, 0, 'forward') : lookupClassAttribute(callee.cls, 'forward');
          if ((forward?.kind !== 'function' && forward?.kind !== 'ref') || (module && !this.tracer)) return UNKNOWN;
          this.tracer?.enterModule(callee, args);
          // A forward the class inherits from torch.nn (a subclass of nn.Sequential that adds no forward).
          const result = forward.kind === 'ref' ? this.callLibraryMethod(callee, forward, 'forward', args, kwargs, line)
            : this.invoke({ ...forward, self: callee }, [callee, ...args], kwargs, line, false);
          this.tracer?.exitModule(callee);
          return result;
        }
        return UNKNOWN;
      default:
        return UNKNOWN;
    }
  }

  /** Runs a function's body with its parameters bound. */
  private invoke(fn: FunctionValue, args: Value[], kwargs: Map<string, Value>, line: number, probe: boolean): Value {
    if (this.depth >= MAX_CALL_DEPTH) return UNKNOWN;
    const scope = new Scope(fn.closure, 'function');
    this.bindParameters(fn, scope, args, kwargs, probe);
    this.ran.add(fn.node.id);
    if (!this.scriptRunDone) this.ranInScript.add(fn.node.id);
    if (fn.node.type === 'lambda') {
      this.depth++;
      try {
        return this.evalExpr(fn.node.childForFieldName('body'), scope);
      } finally {
        this.depth--;
      }
    }
    const body = fn.node.childForFieldName('body');
    if (!body) return NONE;
    this.depth++;
    const previousOwner = this.currentOwner;
    const previousFunction = this.currentFunction;
    const previousFrame = this.currentFrame;
    this.currentOwner = fn.owner;
    this.currentFunction = fn.name;
    this.currentFrame = { fn, scope };
    this.frames.push(scope);
    try {
      this.execBlock(body, scope);
      return NONE;
    } catch (signal) {
      if (signal instanceof ReturnSignal) return signal.value;
      if (signal instanceof BreakSignal || signal instanceof ContinueSignal) return UNKNOWN;
      throw signal;
    } finally {
      this.frames.pop();
      this.depth--;
      this.currentOwner = previousOwner;
      this.currentFunction = previousFunction;
      this.currentFrame = previousFrame;
    }
    void line;
  }

  private bindParameters(fn: FunctionValue, scope: Scope, args: Value[], kwargs: Map<string, Value>, probe: boolean): void {
    const parameters = fn.node.childForFieldName('parameters')?.namedChildren ?? [];
    let index = 0;
    const remaining = new Map(kwargs);
    let keywordOnly = false;
    for (const parameter of parameters) {
      if (!parameter) continue;
      const kind = parameter.type;
      if (kind === 'list_splat_pattern') {
        const name = parameter.namedChildren[0]?.text;
        if (name) scope.vars.set(name, { kind: 'list', items: args.slice(index), tuple: true });
        index = args.length;
        keywordOnly = true;
        continue;
      }
      if (kind === 'keyword_separator') {
        keywordOnly = true;
        continue;
      }
      if (kind === 'positional_separator') continue;
      if (kind === 'dictionary_splat_pattern') {
        const name = parameter.namedChildren[0]?.text;
        if (name) scope.vars.set(name, { kind: 'dict', entries: remaining });
        continue;
      }
      const nameNode = kind === 'identifier' ? parameter : parameter.childForFieldName('name') ?? parameter.namedChildren[0];
      const name = nameNode?.text;
      if (!name) continue;
      let value: Value | undefined;
      if (remaining.has(name)) {
        value = remaining.get(name);
        remaining.delete(name);
      } else if (!keywordOnly && index < args.length) {
        value = args[index++];
      }
      if (value !== undefined && !probe) value = readThrough(value, 'call-argument');
      if (value === undefined) {
        const defaultNode = parameter.childForFieldName('value');
        value = defaultNode ? this.evalExpr(defaultNode, fn.closure) : UNKNOWN;
      }
      scope.vars.set(name, value);
      if (nameNode && !this.values.has(nameNode.id)) {
        this.values.set(nameNode.id, value);
        // A plain function's parameters are settings (`def main(batch_size=32)`); a method's are a class's inputs.
        if (!fn.owner && fn.node.type !== 'lambda') {
          const list = this.assigned.get(name) ?? [];
          list.push(value);
          this.assigned.set(name, list);
        }
      }
    }
  }

  /**
   * Lightning's `self.save_hyperparameters()` in `__init__`: `self.hparams` holds the arguments the constructor ran
   * with (by name), or only the names given (`save_hyperparameters("lr", "momentum")`), or the dict or namespace given.
   */
  private savedHyperparameters(args: Value[], line: number): ObjectValue {
    const attrs = new Map<string, Value>();
    const given = args[0];
    if (given && (given.kind === 'dict' || (given.kind === 'object' && given.role !== 'instance'))) {
      for (const [key, value] of given.kind === 'dict' ? given.entries : given.attrs) attrs.set(key, value);
    } else if (this.currentFrame) {
      const names = args.map(stringOf);
      const wanted = names.length > 0 && names.every((name) => name !== undefined) ? new Set(names) : undefined;
      for (const name of parameterNames(this.currentFrame.fn.node)) {
        const value = this.currentFrame.scope.vars.get(name);
        if (name !== 'self' && value !== undefined && (!wanted || wanted.has(name))) attrs.set(name, value);
      }
    }
    return { kind: 'object', role: 'namespace', typeName: 'AttributeDict', attrs, line };
  }

  private instantiate(cls: ClassValue, args: Value[], kwargs: Map<string, Value>, line: number): Value {
    const instance: ObjectValue = { kind: 'object', role: 'instance', typeName: cls.name, cls, attrs: new Map(), line };
    if (cls.dataclass) {
      // Fields in order, given positionally or by keyword, else their defaults.
      const all = dataclassFields(cls);
      all.forEach((field, i) => {
        const given = kwargs.get(field) ?? args[i];
        let value = given !== undefined ? readThrough(given, 'call-argument') : cls.attrs.get(field) ?? lookupClassAttribute(cls, field) ?? UNKNOWN;
        // `field(default_factory=TrainConfig)` / `field(default=8)`: the default it names, made per instance.
        if (given === undefined && value.kind === 'call' && /(^|\.)field$/.test(value.path)) {
          const factory = value.kwargs.get('default_factory');
          value = factory ? this.call(factory, [], new Map(), line) : value.kwargs.get('default') ?? UNKNOWN;
        }
        instance.attrs.set(field, value);
      });
      const post = lookupClassAttribute(cls, '__post_init__');
      if (post?.kind === 'function') this.invoke({ ...post, self: instance }, [instance], new Map(), line, false);
      return instance;
    }
    // The first __init__ in the class's method resolution order: the script's own, or a torch.nn class's (a subclass
    // of nn.Sequential with no __init__ of its own registers the modules it is given).
    const order = methodResolutionOrder(cls);
    const init = order ? resolveMethod(order, 0, '__init__') : lookupClassAttribute(cls, '__init__');
    if (init?.kind === 'function') this.invoke({ ...init, self: instance }, [instance, ...args], kwargs, line, false);
    else if (init?.kind === 'ref') this.callLibraryMethod(instance, init, '__init__', args, kwargs, line);
    this.instances.push(instance);
    return instance;
  }

  /** Library functions whose results the consumers read: layers, configs, argparse, config files. */
  private callLibrary(path: string, args: Value[], kwargs: Map<string, Value>, line: number): Value {
    const name = path.slice(path.lastIndexOf('.') + 1);
    if (this.tracer) {
      const traced = this.tracer.function(path, args, kwargs);
      if (traced !== undefined) return traced;
    }
    const layer = TORCH_NN.exec(path) ?? TORCHVISION_OPS_LAYER.exec(path);
    if (TORCH_PARAMETER.test(path)) {
      return { kind: 'layer', type: 'Parameter', args, kwargs, children: [], line };
    }
    if (layer && !/^(Module|DataParallel|DistributedDataParallel)$/.test(layer[1]!)) {
      const type = layer[1]!;
      this.layersMade++;
      const value: LayerValue = { kind: 'layer', type, args, kwargs, children: [], line };
      if (type === 'Sequential' || type === 'ModuleList') {
        // A ModuleList of something the program model cannot iterate holds modules it does not know (never none).
        value.children = type === 'Sequential' ? args : iterationItems(args[0] ?? { kind: 'list', items: [], tuple: false }) ?? [UNKNOWN];
        if (type === 'Sequential' && args.length === 1 && args[0]?.kind === 'call' && /OrderedDict$/.test(args[0].path)) {
          value.children = orderedDictValues(args[0]);
        }
        // `nn.Sequential(OrderedDict(...))` (an OrderedDict is a dict here): named children, in insertion order.
        if (type === 'Sequential' && args.length === 1 && args[0]?.kind === 'dict') {
          value.children = [...args[0].entries.values()];
          value.named = new Map(args[0].entries);
        }
      } else if (type === 'ModuleDict') {
        value.named = new Map(entriesOf(args[0] ?? UNKNOWN) ?? pairsOf(args[0] ?? UNKNOWN) ?? []);
        value.children = [...value.named.values()];
      }
      if (type === 'Sequential' && args.length === 1 && args[0]?.kind === 'call' && /OrderedDict$/.test(args[0].path)) {
        value.named = new Map(args[0].args[0] ? pairsOf(args[0].args[0]) ?? [] : []);
      }
      if (type === 'Transformer') {
        value.named = transformerParts(args, kwargs, line);
        value.children = [...value.named.values()];
      }
      return value;
    }
    // `weight_norm(nn.Conv1d(...))` / `spectral_norm(...)` (torch.nn.utils, or its parametrizations): the layer
    // itself, its weight reparametrized.
    const normalized = WEIGHT_NORMALIZATION.exec(path);
    if (normalized && args[0]?.kind === 'layer') {
      args[0].weightNormalized = normalized[1] === 'weight_norm' ? 'weight' : 'spectral';
      return args[0];
    }
    // transformers.HfArgumentParser(Args) / ((ModelArgs, DataArgs)): parses into the dataclasses it is given.
    if (HF_ARGUMENT_PARSER.test(path)) {
      const types = args[0] ?? kwargs.get('dataclass_types') ?? UNKNOWN;
      return { kind: 'object', role: 'parser', typeName: 'HfArgumentParser', attrs: new Map([['dataclass_types', types]]), line };
    }
    // torch.utils.checkpoint.checkpoint(fn, *args): runs fn on the arguments (recomputed in backward).
    if (CHECKPOINT_CALL.test(path) && args[0]) {
      // The module it checkpoints (`checkpoint(blk, x)`, `checkpoint(blk.forward, x)`), told to the trace first.
      const unit = args[0].kind === 'function' && args[0].self && args[0].name === 'forward' ? args[0].self : args[0];
      if ((unit.kind === 'object' && unit.role === 'instance') || unit.kind === 'layer') this.tracer?.checkpointed?.(unit);
      const forwarded = new Map([...kwargs].filter(([key]) => !/^(use_reentrant|preserve_rng_state|determinism_check|debug|context_fn)$/.test(key)));
      return this.call(args[0], args.slice(1), forwarded, line);
    }
    // torch.compile(model) is the model, run through inductor: its calls run its forward, as the model's own do.
    if (path === 'torch.compile' && args[0] && (args[0].kind === 'object' || args[0].kind === 'layer' || args[0].kind === 'function')) return args[0];
    // torch.utils.checkpoint.checkpoint_sequential(functions, segments, input): runs the modules (a Sequential, or a
    // list of them) one after another on the input; the segments change what backward recomputes, not the result.
    if (CHECKPOINT_SEQUENTIAL_CALL.test(path)) {
      const functions = args[0] ?? kwargs.get('functions');
      const input = args[2] ?? kwargs.get('input');
      if (!functions || !input) return UNKNOWN;
      if (functions.kind === 'list') return functions.items.reduce<Value>((x, module) => this.call(module, [x], new Map(), line), input);
      return this.call(functions, [input], new Map(), line);
    }
    // numpy arrays (a Dataset's `np.random.randn(3, n).astype(np.float32)`, then `torch.from_numpy`): read as the
    // torch tensors they become, with the same sizes (a randint with a size is an array, without one a number).
    const numpyPath = path.replace(NUMPY_ALIAS, 'numpy.');
    const asTorch = NUMPY_ARRAY_FACTORIES.get(numpyPath);
    if (asTorch && (numpyPath !== 'numpy.random.randint' || args.length >= 3 || kwargs.has('size'))) return this.callLibrary(asTorch, args, kwargs, line);
    if (TENSOR_FROM_ARRAY.test(path) && args[0]?.kind === 'call' && TENSOR_FACTORY.test(args[0].path)) return args[0];
    // `np.stack([rng.integers(0, c, n) for c in cards], axis=1)`: made arrays of one shape, stacked along a new axis.
    if ((path === 'torch.stack' || numpyPath === 'numpy.stack') && !this.tracer) {
      const stacked = stackedTensor(args[0] ?? kwargs.get('tensors') ?? kwargs.get('arrays'), args[1] ?? kwargs.get('dim') ?? kwargs.get('axis'), line);
      if (stacked) return stacked;
    }
    const bound = randomBound(numpyPath, args, kwargs);
    if (bound) return bound;
    switch (path) {
      case 'range': return rangeOf(args, line);
      case 'len': {
        // An instance of a class of the script answers with its own __len__ (a Dataset's length).
        const own = args[0]?.kind === 'object' && args[0].role === 'instance' ? this.ownLength(args[0], line) : UNKNOWN;
        if (own.kind !== 'unknown') return own;
        const items = args[0] && (iterationItems(args[0]) ?? (args[0].kind === 'string' ? [...args[0].value] : undefined));
        return items ? { kind: 'number', value: items.length, origin: { line, how: 'literal' } } : UNKNOWN;
      }
      case 'int':
      case 'float': {
        const value = args[0];
        if (!value) return { kind: 'number', value: 0, origin: { line, how: 'literal' } };
        // One element of a tensor of random draws (`int(self.lengths[i])`): a draw, read as its largest value.
        if (value.kind === 'tensor' && value.drawn && value.shape.every((d) => d === 1)) {
          const { least, most } = value.drawn;
          return { kind: 'number', value: most, origin: { line, how: 'literal' }, ...(least < most ? { least } : {}) };
        }
        // One draw the trace keeps as its call (`int(torch.randint(lo, hi, (1,)))`, a sample's length): the same.
        const oneDraw = value.kind === 'call' && tensorShape(value)?.dims.every((d) => d === 1) ? drawnRange(value) : undefined;
        if (oneDraw) {
          const { least, most } = oneDraw;
          return { kind: 'number', value: most, origin: { line, how: 'literal' }, ...(least < most ? { least } : {}) };
        }
        const extreme = value.kind === 'call' ? listedExtreme(value) : undefined;
        if (extreme) return { ...extreme, value: name === 'int' ? Math.trunc(extreme.value) : extreme.value, origin: extreme.origin ?? { line, how: 'literal' } };
        const n = value.kind === 'string' ? Number(value.value) : numberOf(value);
        if (n === undefined || !Number.isFinite(n)) return UNKNOWN;
        const least = value.kind === 'number' && value.least !== undefined ? { least: name === 'int' ? Math.trunc(value.least) : value.least } : {};
        return { kind: 'number', value: name === 'int' ? Math.trunc(n) : n, origin: 'origin' in value ? value.origin : undefined, ...least, ...(name === 'float' ? { real: true } : {}) };
      }
      case 'str': {
        // `str(HERE / "configs" / "x.json")`: a path's text.
        const given = args[0];
        if (given?.kind === 'object' && given.typeName === PATH_TYPE) {
          const at = pathOf(given);
          return at !== undefined ? { kind: 'string', value: at } : UNKNOWN;
        }
        return given?.kind === 'number' ? { kind: 'string', value: String(given.value) } : given?.kind === 'string' ? given : UNKNOWN;
      }
      case 'bool': return args[0] ? (truthy(args[0]) === undefined ? UNKNOWN : { kind: 'bool', value: truthy(args[0])! }) : { kind: 'bool', value: false };
      case 'list':
      case 'tuple':
      case 'sorted':
      case 'reversed': {
        const items = args[0] ? iterationItems(args[0]) : [];
        if (!items) return UNKNOWN;
        const copy = path === 'reversed' ? [...items].reverse() : [...items];
        return { kind: 'list', items: copy, tuple: path === 'tuple' };
      }
      case 'dict':
      case 'collections.OrderedDict':
      case 'easydict.EasyDict':
      case 'addict.Dict':
      case 'box.Box':
      case 'munch.Munch':
      case 'ml_collections.ConfigDict':
      case 'omegaconf.OmegaConf.create':
      case 'OmegaConf.create': {
        const entries = new Map<string, Value>();
        if (args[0]) for (const [k, v] of entriesOf(args[0]) ?? pairsOf(args[0]) ?? []) entries.set(k, v);
        for (const [k, v] of kwargs) entries.set(k, v);
        return { kind: 'dict', entries, origin: { line, how: 'literal' } };
      }
      // `ChainMap(overrides, defaults)`: a key is looked up in each map in turn, the first that has it wins.
      case 'collections.ChainMap': {
        const maps = args.map(entriesOf);
        if (maps.some((m) => !m)) return UNKNOWN;
        const entries = new Map<string, Value>();
        for (const map of [...maps].reverse()) for (const [k, v] of map!) entries.set(k, v);
        return { kind: 'dict', entries, origin: { line, how: 'literal' } };
      }
      case 'zip': {
        const lists = args.map(iterationItems);
        if (lists.some((l) => !l)) return UNKNOWN;
        const n = Math.min(...lists.map((l) => l!.length));
        return { kind: 'list', items: Array.from({ length: n }, (_, i) => ({ kind: 'list', items: lists.map((l) => l![i]!), tuple: true }) as ListValue), tuple: false };
      }
      case 'enumerate': {
        const items = args[0] ? iterationItems(args[0]) : undefined;
        const start = numberOf(args[1] ?? kwargs.get('start')) ?? 0;
        if (!items) return UNKNOWN;
        return { kind: 'list', items: items.map((item, i) => ({ kind: 'list', items: [{ kind: 'number', value: i + start }, item], tuple: true }) as ListValue), tuple: false };
      }
      case 'any':
      case 'all': {
        // `any(re.match(p, name) for p in PATTERNS)`: known where every item's truth is.
        const truths = args[0] ? iterationItems(args[0])?.map(truthy) : undefined;
        if (!truths || truths.some((truth) => truth === undefined)) return UNKNOWN;
        return { kind: 'bool', value: path === 'any' ? truths.some(Boolean) : truths.every(Boolean) };
      }
      case 're.match':
      case 're.search':
      case 're.fullmatch': {
        // A parameter name tested against a pattern (freezing by name): whether it matches, as a match's truth.
        const matched = args[0]?.kind === 'string' && args[1]?.kind === 'string' ? patternMatches(path, args[0].value, args[1].value) : undefined;
        return matched === undefined ? UNKNOWN : matched ? { kind: 'bool', value: true } : NONE;
      }
      case 'min':
      case 'max':
      case 'sum':
      case 'abs':
      case 'round': {
        // `sum(head(x) for head, x in zip(heads, maps))`: tensors added one after another (an FPN's fused levels).
        const tensors = path === 'sum' && args[0] && this.tracer ? iterationItems(args[0]) : undefined;
        if (tensors && tensors.length > 0 && tensors.some((item) => item.kind === 'tensor')) {
          return tensors.slice(1).reduce<Value>((total, item) => this.tracer!.binary('+', total, item) ?? UNKNOWN, tensors[0]!);
        }
        const numbers = (args.length === 1 && path !== 'abs' && path !== 'round' ? iterationItems(args[0]!) ?? [] : args.slice(0, 1).concat(path === 'round' ? [] : args.slice(1))).map(numberOf);
        if (numbers.length === 0 || numbers.some((n) => n === undefined)) return UNKNOWN;
        const ns = numbers as number[];
        const value = path === 'min' ? Math.min(...ns) : path === 'max' ? Math.max(...ns) : path === 'sum' ? ns.reduce((a, b) => a + b, 0)
          : path === 'abs' ? Math.abs(ns[0]!) : Math.round(ns[0]!);
        return { kind: 'number', value, origin: { line, how: 'literal' } };
      }
      case 'math.log2':
      case 'math.log':
      case 'math.log10':
      case 'math.sqrt':
      case 'math.ceil':
      case 'math.floor':
      case 'math.exp':
      case 'math.pow':
      case 'math.prod':
      case 'math.gcd': {
        const numbers = (path === 'math.prod' && args[0] ? iterationItems(args[0]) ?? [] : args).map(numberOf);
        if (numbers.length === 0 || numbers.some((n) => n === undefined)) return UNKNOWN;
        const [x, y] = numbers as number[];
        const gcd = (a: number, b: number): number => (b === 0 ? Math.abs(a) : gcd(b, a % b));
        const value = path === 'math.log2' ? Math.log2(x!) : path === 'math.log' ? (y ? Math.log(x!) / Math.log(y) : Math.log(x!))
          : path === 'math.log10' ? Math.log10(x!) : path === 'math.sqrt' ? Math.sqrt(x!) : path === 'math.ceil' ? Math.ceil(x!)
          : path === 'math.floor' ? Math.floor(x!) : path === 'math.exp' ? Math.exp(x!) : path === 'math.pow' ? x! ** (y ?? 1)
          : path === 'math.gcd' ? gcd(x!, y ?? 0) : (numbers as number[]).reduce((a, b) => a * b, 1);
        return Number.isFinite(value) ? { kind: 'number', value, origin: { line, how: 'literal' } } : UNKNOWN;
      }
      case 'getattr': {
        const [object, attribute, fallback] = args;
        if (!object || attribute?.kind !== 'string') return UNKNOWN;
        const value = this.getAttribute(object, attribute.value);
        return value.kind === 'unknown' && fallback ? fallback : value;
      }
      // `vars(models)`: a module's namespace, read by name below (`vars(models)[args.arch]`).
      case 'vars':
        return args[0]?.kind === 'ref' ? { kind: 'ref', path: `${args[0].path}.__dict__` } : UNKNOWN;
      case 'setattr': {
        const [object, attribute, value] = args;
        if (object && attribute?.kind === 'string' && value) this.setAttribute(object, attribute.value, value);
        return NONE;
      }
      case 'open':
        return { kind: 'object', role: 'file', typeName: 'file', attrs: new Map([['path', args[0] ?? UNKNOWN]]), line };
      // `Path(__file__).parent / "configs" / "x.json"`: a path object, so that a config file named that way is read.
      case 'pathlib.Path':
      case 'pathlib.PurePath': {
        const parts = args.map(pathOf);
        return parts.length > 0 && parts.every((p): p is string => p !== undefined) ? pathObject(pathJoin(...parts), line) : UNKNOWN;
      }
      // configparser: its sections fill in when the script reads an INI file (`cp.read(path)`).
      case 'configparser.ConfigParser':
      case 'configparser.RawConfigParser':
      case 'configparser.SafeConfigParser':
        return { kind: 'dict', entries: new Map(), ini: 'parser' };
      case 'types.SimpleNamespace':
      case 'argparse.Namespace':
        return { kind: 'object', role: 'namespace', typeName: name, attrs: new Map(kwargs), line };
      case 'argparse.ArgumentParser':
        return this.newParser(kwargs, line);
      // A command line written as one string, split as the shell would.
      case 'shlex.split': {
        const text = args[0] ?? kwargs.get('s');
        if (text?.kind !== 'string') return UNKNOWN;
        const words = shellWords(text.value).map((word): Value => withOrigin({ kind: 'string', value: word }, text.origin));
        return { kind: 'list', items: words, tuple: false, ...(text.origin ? { origin: text.origin } : {}) };
      }
      case 'os.environ.get':
      case 'os.getenv': {
        const fallback = args[1] ?? kwargs.get('default');
        return fallback ? withOrigin(fallback, 'origin' in fallback && fallback.origin ? { line: fallback.origin.line, how: 'environment' } : undefined) : NONE;
      }
      // Paths built from the script's own location, so that a config file named that way is read.
      case 'os.path.join': {
        const parts = args.map(stringOf);
        return parts.length > 0 && parts.every((p): p is string => p !== undefined) ? { kind: 'string', value: pathJoin(...parts) } : UNKNOWN;
      }
      case 'os.path.dirname':
      case 'os.path.abspath':
      case 'os.path.realpath':
      case 'os.path.normpath': {
        const given = stringOf(args[0]);
        if (given === undefined) return UNKNOWN;
        return { kind: 'string', value: name === 'dirname' ? pathDirname(given) : pathNormalize(given) };
      }
      case 'yaml.safe_load':
      case 'yaml.load':
      case 'yaml.full_load':
      // `json.loads(text)`: a file's text (`Path(...).read_text()`), or a string the script writes out
      // (`json.loads("""{...}""")`, a config kept in the script).
      case 'json.loads':
        if (args[0]?.kind === 'string') return parseConfigFile(path === 'json.loads' ? 'inline.json' : 'inline.yaml', args[0].value, line) ?? UNKNOWN;
        return args[0]?.kind === 'object' && args[0].role === 'file' ? this.loadConfigFile(args[0], line) : UNKNOWN;
      // `csv.DictReader(open("sweep.csv"))`: its rows, dicts of strings keyed by the header; `csv.reader`: lists.
      case 'csv.DictReader':
      case 'csv.reader': {
        const text = this.readLocalText(pathOf(args[0] ?? kwargs.get('f')));
        const delimiter = stringOf(args[path === 'csv.reader' ? 1 : 3] ?? kwargs.get('delimiter')) ?? ',';
        return text === undefined || delimiter.length !== 1 ? UNKNOWN : parseCsvFile(text, line, path === 'csv.reader' ? 'reader' : 'dict', delimiter);
      }
      case 'json.load':
      case 'toml.load':
      case 'tomllib.load':
      case 'omegaconf.OmegaConf.load':
      case 'OmegaConf.load':
        return this.loadConfigFile(args[0], line);
      // A settings module in Python, run as Python runs it: `runpy.run_path("configs/x.py")` returns its globals.
      case 'runpy.run_path': {
        const settings = this.runSettingsModule(pathOf(args[0] ?? kwargs.get('path_name')), line);
        return settings ? { kind: 'dict', entries: settings } : UNKNOWN;
      }
      // `importlib.import_module("configs.x")`: the module next to the script, its names as attributes.
      case 'importlib.import_module': {
        const name = stringOf(args[0] ?? kwargs.get('name'));
        const settings = name && !name.startsWith('.') ? this.runSettingsModule(`${name.split('.').join('/')}.py`, line) : undefined;
        return settings ? settingsModule(name!, settings, line) : UNKNOWN;
      }
      default:
        break;
    }
    // A Hugging Face config class: its keyword arguments are its attributes (`LlamaConfig(**cfg)`).
    if (HF_CONFIG_CLASS.test(path) && !NOT_A_MODEL_CONFIG.test(path)) {
      return { kind: 'object', role: 'hf-config', typeName: name, attrs: new Map(kwargs), line };
    }
    if (DATACLASS_COPY.test(path) && args[0]?.kind === 'object') {
      // `dataclasses.replace(defaults, batch_size=16)`: a new instance of the same class, the changes given over the
      // original's fields; `asdict` makes a dict of the fields.
      if (/(^|\.)replace$/.test(path)) return { ...args[0], attrs: new Map([...args[0].attrs, ...kwargs]), line };
      return { kind: 'dict', entries: new Map(args[0].attrs) };
    }
    // `spectral_norm(nn.Conv2d(...))`, `weight_norm(...)`: the module itself, its weight reparametrised in place.
    if (WEIGHT_REPARAMETRISATION.test(path) && args[0] && isModuleValue(args[0])) return args[0];
    if (/^copy\.deepcopy$/.test(path) && args[0]) return this.deepCopy(args[0], line);
    if (/^copy\.copy$/.test(path) && args[0]) return shallowCopy(args[0]);
    // An EMA / SWA wrapper keeps a deep copy of the model (`ema.module`), on the device it names or the model's.
    if (AVERAGED_MODEL.test(path) && args[0] && (isModuleValue(args[0]) || (args[0].kind === 'call' && isLibraryOrVisionModelCall(args[0])))) {
      const copy = this.deepCopy(args[0], line);
      const wrapper: CallResultValue = { kind: 'call', path, args, kwargs, line, attrs: new Map([['module', copy]]) };
      this.wrapped.set(wrapper, copy);
      const device = deviceNamed(kwargs.get('device') ?? NONE);
      if (device !== undefined) this.moveTo(wrapper, device);
      return wrapper;
    }
    if (path === 'isinstance') {
      const answer = args.length === 2 ? isInstance(args[0]!, args[1]!) : undefined;
      return answer === undefined ? UNKNOWN : { kind: 'bool', value: answer };
    }
    if (path === 'hasattr' || path === 'callable') return UNKNOWN;
    if (path === 'print' || path === 'warnings.warn') return NONE;
    const result: Extract<Value, { kind: 'call' }> = { kind: 'call', path, args, kwargs, line };
    if (!this.tracer && TENSOR_FACTORY.test(path) && this.tensorCalls.length < 64) this.tensorCalls.push({ value: result, inFunction: this.currentFunction });
    return result;
  }

  /** Methods on values: list/dict/str methods, argparse, nn.Module registration, `.to()`-style chains. */
  /**
   * A method of a library vision model or of one of its submodules that the caller's catalog answers: `children()`
   * (its submodules, which a script slices into an nn.Sequential), timm's `feature_info.channels()` /
   * `.reduction()`, and, while forward is traced, a submodule called on a tensor (`resnet.layer3(x)`).
   */
  private libraryModuleMethod(receiver: Value, method: string, args: Value[]): Value | undefined {
    const at = librarySubmodulePath(receiver);
    if (!at) return undefined;
    const submodule = (path: string): ObjectValue => ({ kind: 'object', role: 'library-module', typeName: path, attrs: new Map([['model', at.model]]), line: at.model.line });
    if (method === 'children' || method === 'named_children') {
      const paths = this.options.libraryChildren?.(at.model, at.path);
      if (!paths) return undefined;
      const items = paths.map((path): Value => (method === 'children' ? submodule(path)
        : { kind: 'list', items: [{ kind: 'string', value: path.slice(path.lastIndexOf('.') + 1) }, submodule(path)], tuple: true }));
      return { kind: 'list', items, tuple: false };
    }
    if (method === 'named_parameters') return this.libraryNamedParameters(at, submodule);
    // The token table, whatever the family names it (`embed_tokens`, `wte`, `word_embeddings`).
    if (method === 'get_input_embeddings' && at.path === '') return submodule(INPUT_EMBEDDINGS);
    if (at.path === 'feature_info' && (method === 'channels' || method === 'reduction')) {
      const info = this.options.libraryFeatureInfo?.(at.model);
      if (!info) return undefined;
      return { kind: 'list', items: (method === 'channels' ? info.channels : info.reductions).map((value): Value => ({ kind: 'number', value })), tuple: false };
    }
    if (this.tracer?.libraryPart && (at.path !== '' || !/^(forward|forward_features)$/.test(method))) {
      return this.tracer.libraryPart(at.model, at.path === '' ? method : `${at.path}.${method}`, args);
    }
    return undefined;
  }

  /**
   * `named_parameters()` of a library vision model (or a submodule): one (name, parameter) pair per submodule the
   * caller's catalog names at the finest level it knows (`trunk_output.block1.weight`), so that a loop that freezes
   * parameters by name (`name.startswith("stem.")`, `re.match(r"^features\.[01]\.", name)`) freezes those
   * submodules. A name inside a submodule the catalog builds as one piece reads as that submodule's.
   */
  private libraryNamedParameters(at: { model: CallResultValue; path: string }, submodule: (path: string) => ObjectValue): Value | undefined {
    const leaves: string[] = [];
    const visit = (path: string, depth: number): void => {
      const children = depth < 6 && leaves.length < MAX_LIBRARY_PARAMETER_NAMES ? this.options.libraryChildren?.(at.model, path) : undefined;
      if (children) for (const child of children) visit(child, depth + 1);
      else if (path !== '' && leaves.length < MAX_LIBRARY_PARAMETER_NAMES) leaves.push(path);
    };
    visit(at.path, 0);
    if (leaves.length === 0) return undefined;
    const prefix = at.path === '' ? '' : `${at.path}.`;
    const items = leaves.map((path): Value => ({ kind: 'list', tuple: true, items: [
      { kind: 'string', value: `${path.slice(prefix.length)}.weight` },
      { kind: 'object', role: 'parameters', typeName: 'parameters', attrs: new Map([['module', submodule(path)]]), line: at.model.line },
    ] }));
    return { kind: 'list', items, tuple: false };
  }

  private callMethod(receiver: Value, method: string, args: Value[], kwargs: Map<string, Value>, line: number): Value {
    if (receiver.kind === 'tensor') return this.tracer ? this.tracer.method(receiver, method, args, kwargs) : UNKNOWN;
    const library = this.libraryModuleMethod(receiver, method, args);
    if (library) return library;
    if (method === 'save_hyperparameters' && receiver.kind === 'object' && receiver.role === 'instance') {
      receiver.attrs.set('hparams', this.savedHyperparameters(args, line));
      return NONE;
    }
    if (method === 'register_buffer' && receiver.kind === 'object' && receiver.role === 'instance') {
      const name = stringOf(args[0] ?? kwargs.get('name'));
      const tensor = args[1] ?? kwargs.get('tensor');
      if (name !== undefined && tensor) {
        let registered = this.buffers.get(receiver);
        if (!registered) this.buffers.set(receiver, (registered = new Map()));
        registered.set(name, { value: tensor, line });
        // Read back as `self.name` in forward (a window, a table of corners), as an attribute set in __init__ is.
        if (!receiver.attrs.has(name)) receiver.attrs.set(name, tensor);
      }
      return NONE;
    }
    if (receiver.kind === 'list') {
      switch (method) {
        case 'append':
          if (this.grownLists && !this.grownLists.has(receiver)) this.grownLists.set(receiver, receiver.items.length);
          receiver.items.push(args[0] ?? UNKNOWN);
          return NONE;
        case 'extend':
          if (this.grownLists && !this.grownLists.has(receiver)) this.grownLists.set(receiver, receiver.items.length);
          receiver.items.push(...(args[0] ? iterationItems(args[0]) ?? [UNKNOWN] : []));
          return NONE;
        case 'insert': {
          const at = numberOf(args[0]);
          if (at !== undefined && args[1]) receiver.items.splice(at < 0 ? receiver.items.length + at : at, 0, args[1]);
          return NONE;
        }
        case 'pop': return receiver.items.pop() ?? UNKNOWN;
        case 'copy': return { kind: 'list', items: [...receiver.items], tuple: false };
        case 'index': return UNKNOWN;
        default: return UNKNOWN;
      }
    }
    if (receiver.kind === 'dict' && receiver.ini) {
      const answered = this.iniMethod(receiver, method, args, kwargs, line);
      if (answered) return answered;
    }
    if (receiver.kind === 'dict') {
      switch (method) {
        case 'get': {
          const value = dictGet(receiver, args[0]);
          return value !== undefined ? readThrough(value, 'config') : args[1] ?? NONE;
        }
        case 'setdefault': {
          const key = stringOf(args[0]);
          if (key === undefined) return UNKNOWN;
          if (!receiver.entries.has(key)) receiver.entries.set(key, args[1] ?? NONE);
          return receiver.entries.get(key)!;
        }
        case 'update':
          for (const [k, v] of [...(args[0] ? entriesOf(args[0]) ?? [] : []), ...kwargs]) receiver.entries.set(k, v);
          return NONE;
        case 'items': {
          const values = [...receiver.entries.values()];
          return { kind: 'list', items: dictKeys(receiver).map((k, i) => ({ kind: 'list', items: [k, values[i]!], tuple: true }) as ListValue), tuple: false };
        }
        case 'keys': return { kind: 'list', items: dictKeys(receiver), tuple: false };
        case 'values': return { kind: 'list', items: [...receiver.entries.values()], tuple: false };
        case 'copy': return {
          kind: 'dict', entries: new Map(receiver.entries), ...(receiver.numberKeys ? { numberKeys: new Set(receiver.numberKeys) } : {}),
          ...(receiver.tupleKeys ? { tupleKeys: new Map(receiver.tupleKeys) } : {}),
        };
        case 'pop': {
          const key = stringOf(args[0]);
          const value = key !== undefined ? receiver.entries.get(key) : undefined;
          if (key !== undefined) receiver.entries.delete(key);
          return value ?? args[1] ?? UNKNOWN;
        }
        default: return UNKNOWN;
      }
    }
    if (receiver.kind === 'object' && receiver.typeName === PATH_TYPE) {
      const at = pathOf(receiver)!;
      switch (method) {
        // The text or the open file: read as the file they come from (see loadConfigFile).
        case 'read_text':
        case 'read_bytes':
        case 'open': return { kind: 'object', role: 'file', typeName: 'file', attrs: new Map([['path', receiver]]), line };
        case 'resolve':
        case 'absolute':
        case 'expanduser': return receiver;
        case 'joinpath': {
          const parts = args.map(pathOf);
          return parts.every((p): p is string => p !== undefined) ? pathObject(pathJoin(at, ...parts), line) : UNKNOWN;
        }
        default: return UNKNOWN;
      }
    }
    if (receiver.kind === 'number') {
      const value = receiver.value;
      switch (method) {
        // `int(r).bit_length()`: how many upsampling steps a feature map of stride r needs (FPN heads).
        case 'bit_length': return Number.isInteger(value) ? { kind: 'number', value: value === 0 ? 0 : Math.floor(Math.log2(Math.abs(value))) + 1 } : UNKNOWN;
        case 'is_integer': return { kind: 'bool', value: Number.isInteger(value) };
        default: return UNKNOWN;
      }
    }
    if (receiver.kind === 'string') {
      switch (method) {
        case 'lower': return { ...receiver, value: receiver.value.toLowerCase() };
        case 'upper': return { ...receiver, value: receiver.value.toUpperCase() };
        case 'strip': return { ...receiver, value: receiver.value.trim() };
        case 'startswith':
        case 'endswith': {
          // `name.startswith(("stem.", "layer1."))`: a prefix, or any of a tuple of them.
          const given = args[0]?.kind === 'list' ? args[0].items : args[0] ? [args[0]] : [];
          if (given.length === 0 || given.some((item) => item.kind !== 'string')) return UNKNOWN;
          const text = receiver.value;
          return { kind: 'bool', value: given.some((item) => (method === 'startswith' ? text.startsWith((item as StringValue).value) : text.endsWith((item as StringValue).value))) };
        }
        case 'replace': return args[0]?.kind === 'string' && args[1]?.kind === 'string' ? { ...receiver, value: receiver.value.split(args[0].value).join(args[1].value) } : UNKNOWN;
        case 'split': return { kind: 'list', items: receiver.value.split(stringOf(args[0]) ?? /\s+/).map((part) => ({ kind: 'string', value: part }) as Value), tuple: false };
        case 'format': return UNKNOWN;
        case 'join': {
          // `",".join(["1000"] * 10)`: strings only (Python refuses anything else).
          const parts = args[0] ? iterationItems(args[0]) : undefined;
          return parts?.every((part) => part.kind === 'string') ? { kind: 'string', value: parts.map((part) => (part as StringValue).value).join(receiver.value) } : UNKNOWN;
        }
        default: return UNKNOWN;
      }
    }
    // Where a module (or a library model) is moved: a GPU, or back to the CPU.
    if ((method === 'to' || method === 'cuda' || method === 'cpu' || method === 'to_empty') && (isModuleValue(receiver) || receiver.kind === 'call')) {
      const device = method === 'cuda' ? true : method === 'cpu' ? false : deviceNamed(args[0] ?? kwargs.get('device') ?? NONE);
      if (device !== undefined) this.moveTo(receiver, device);
    }
    // .to(), .cuda(), .train(), .half(), .requires_grad_() return the module (or the library object) itself.
    const chained = CHAINED_METHOD.test(method);
    if (method === 'requires_grad_' && (receiver.kind === 'layer' || receiver.kind === 'object' || (receiver.kind === 'call' && isLibraryOrVisionModelCall(receiver)))) {
      // `module.requires_grad_(False)` freezes it and its submodules; on a parameters() object, its module.
      const on = args[0] ?? kwargs.get('requires_grad') ?? { kind: 'bool', value: true };
      const module = receiver.kind === 'object' && receiver.role === 'parameters' ? receiver.attrs.get('module') : receiver;
      if (on.kind === 'bool' && module) this.setRequiresGrad(module, !on.value);
      return receiver;
    }
    if (method === 'parameters' && (receiver.kind === 'layer' || (receiver.kind === 'object' && (receiver.role === 'instance' || receiver.role === 'library-module')) ||
      (receiver.kind === 'call' && (isLibraryModelCall(receiver) || VISION_LIBRARY_MODEL.test(receiver.path))))) {
      return { kind: 'object', role: 'parameters', typeName: 'parameters', attrs: new Map([['module', receiver]]), line };
    }
    if (receiver.kind === 'layer') {
      if (method === 'add_module' && isContainer(receiver.type) && args[0]) {
        setContainerEntry(receiver, args[0], args[1] ?? UNKNOWN);
        return NONE;
      }
      if ((method === 'append' || method === 'add_module') && isContainer(receiver.type)) {
        receiver.children.push(args[method === 'append' ? 0 : 1] ?? UNKNOWN);
        return NONE;
      }
      if (method === 'extend' && isContainer(receiver.type)) {
        receiver.children.push(...(args[0] ? iterationItems(args[0]) ?? [] : []));
        return NONE;
      }
      // A ModuleDict (or a Sequential built from an OrderedDict) read as a dict: `for name, head in self.heads.items()`.
      if (receiver.named && /^(items|keys|values)$/.test(method)) {
        const entries = [...receiver.named];
        const items = method === 'items' ? entries.map(([k, v]) => ({ kind: 'list', items: [{ kind: 'string', value: k }, v], tuple: true }) as ListValue)
          : method === 'keys' ? entries.map(([k]) => ({ kind: 'string', value: k }) as Value) : entries.map(([, v]) => v);
        return { kind: 'list', items, tuple: false };
      }
      return chained ? receiver : UNKNOWN;
    }
    // argparse: add_argument records a default under its dest; parse_args returns the Namespace.
    if (receiver.kind === 'object' && receiver.role === 'parser' && receiver.typeName === 'HfArgumentParser') {
      // The script run with no arguments: one instance of each dataclass, with its defaults (parse_dict: the
      // dict's entries over them); values from a JSON/YAML file are not read.
      if (method !== 'parse_args_into_dataclasses' && method !== 'parse_dict') return UNKNOWN;
      const given = method === 'parse_dict' ? entriesOf(args[0] ?? UNKNOWN) : new Map<string, Value>();
      if (!given) return UNKNOWN;
      const types = receiver.attrs.get('dataclass_types') ?? UNKNOWN;
      const classes = types.kind === 'class' ? [types] : iterationItems(types) ?? [];
      const items = classes.map((cls): Value => {
        if (cls.kind !== 'class') return UNKNOWN;
        const fields = dataclassFields(cls);
        const instance = this.instantiate(cls, [], new Map([...given].filter(([key]) => fields.includes(key))), line);
        if (instance.kind === 'object') for (const [key, value] of instance.attrs) instance.attrs.set(key, readThrough(value, 'argparse-default'));
        return instance;
      });
      return { kind: 'list', items, tuple: true };
    }
    if (receiver.kind === 'object' && receiver.role === 'parser') {
      if (method === 'add_argument') {
        const option = addArgument(receiver, args, kwargs);
        if (option) this.argumentSpecs.get(receiver)?.options.push(option);
        return NONE;
      }
      if (method === 'add_argument_group' || method === 'add_mutually_exclusive_group') return receiver;
      // Sub-commands (`sub = parser.add_subparsers(dest="command"); p = sub.add_parser("train", parents=[common])`): each
      // sub-command's parser is kept on the action object under its name, the action on its parser.
      if (method === 'add_subparsers') {
        const action: ObjectValue = { kind: 'object', role: 'parser', typeName: SUBCOMMANDS, attrs: new Map(), line };
        this.subcommands.set(receiver, { action, dest: stringOf(kwargs.get('dest')) });
        return action;
      }
      if (method === 'add_parser' && receiver.typeName === SUBCOMMANDS) {
        const name = stringOf(args[0]);
        const parser = this.newParser(kwargs, line);
        if (name !== undefined && !receiver.attrs.has(name)) receiver.attrs.set(name, parser);
        return parser;
      }
      if (method === 'set_defaults') {
        for (const [k, v] of kwargs) receiver.attrs.set(k, readThrough(v, 'argparse-default'));
        return NONE;
      }
      if (method === 'parse_args' || method === 'parse_known_args') {
        const namespace: ObjectValue = { kind: 'object', role: 'namespace', typeName: 'Namespace', attrs: new Map(receiver.attrs), line };
        // With sub-commands, the one the given argument list names (`parse_args(argv or ["train"])`), else the first
        // declared: its parser's values join the namespace, and its name goes under the action's dest.
        const subcommands = this.subcommands.get(receiver);
        if (subcommands && subcommands.action.attrs.size > 0) {
          const given = iterationItems(args[0] ?? kwargs.get('args') ?? UNKNOWN)?.map(stringOf) ?? [];
          const name = given.find((arg): arg is string => arg !== undefined && subcommands.action.attrs.has(arg)) ?? [...subcommands.action.attrs.keys()][0]!;
          const chosen = subcommands.action.attrs.get(name);
          if (subcommands.dest) namespace.attrs.set(subcommands.dest, { kind: 'string', value: name });
          if (chosen?.kind === 'object') for (const [key, value] of chosen.attrs) namespace.attrs.set(key, value);
        }
        const extras: Value[] = [];
        if (!subcommands || subcommands.action.attrs.size === 0) {
          const given = this.givenArguments(receiver, args[0] ?? kwargs.get('args'), method === 'parse_known_args', line);
          for (const [key, value] of given?.values ?? []) namespace.attrs.set(key, value);
          for (const token of given?.extras ?? []) extras.push({ kind: 'string', value: token.text, origin: token.origin });
        }
        return method === 'parse_args' ? namespace : { kind: 'list', items: [namespace, { kind: 'list', items: extras, tuple: false }], tuple: true };
      }
      return UNKNOWN;
    }
    if (receiver.kind === 'object') {
      // A script's subclass of nn.ModuleList / nn.Sequential grows as the container does, its modules numbered.
      const container = receiver.role === 'instance' && receiver.cls ? torchNnBase(receiver.cls) : undefined;
      if ((container === 'ModuleList' || container === 'Sequential') && /^(append|extend|insert)$/.test(method)) {
        const items = [...receiver.attrs].filter(([key]) => /^\d+$/.test(key)).map(([, value]) => value);
        if (method === 'append') items.push(args[0] ?? UNKNOWN);
        else if (method === 'extend') items.push(...(args[0] ? iterationItems(args[0]) ?? [] : []));
        else {
          const at = numberOf(args[0]);
          if (at === undefined || !args[1]) return NONE;
          items.splice(at < 0 ? items.length + at : at, 0, args[1]);
        }
        for (const key of [...receiver.attrs.keys()]) if (/^\d+$/.test(key)) receiver.attrs.delete(key);
        items.forEach((value, i) => receiver.attrs.set(String(i), value));
        return method === 'insert' ? NONE : receiver;
      }
      if (method === 'add_module' || method === 'register_module') {
        const name = stringOf(args[0]);
        if (name !== undefined) receiver.attrs.set(name, args[1] ?? UNKNOWN);
        return NONE;
      }
      // `self.register_buffer("window", torch.hann_window(n))`: read back as `self.window` in forward.
      if (method === 'register_buffer' && receiver.role === 'instance') {
        const name = stringOf(args[0] ?? kwargs.get('name') ?? UNKNOWN);
        if (name !== undefined && !receiver.attrs.has(name)) receiver.attrs.set(name, args[1] ?? kwargs.get('tensor') ?? UNKNOWN);
        return NONE;
      }
      return chained ? receiver : UNKNOWN;
    }
    if (receiver.kind === 'call') {
      if (this.tracer?.libraryModel && /^(forward|forward_features)$/.test(method)) {
        const output = this.tracer.libraryModel(receiver, method, args);
        if (output) return output;
      }
      // `rng = random.Random(seed); rng.randint(lo, hi)`: a draw, read as its upper bound (see randomBound).
      if (/^(random\.Random|numpy\.random\.default_rng|np\.random\.default_rng)$/.test(receiver.path)) {
        // A numpy Generator's arrays (`rng.standard_normal((n, k))`, `rng.integers(0, c, n)`): made tensors of that size.
        const sized = receiver.path.startsWith('random') ? undefined : generatorArray(method, args, kwargs);
        if (sized) return this.callLibrary(sized.path, sized.args, new Map(), line);
        const bound = randomBound(receiver.path.startsWith('random') ? `random.${method}` : `numpy.random.Generator.${method}`, args, kwargs);
        if (bound) return bound;
      }
      // `torch.randn(T, n).cumsum(0)`: an element-wise method leaves a tensor the script sized with its shape.
      if (SHAPE_KEEPING_METHOD.test(method) && tensorShape(receiver)) return receiver;
      return chained ? receiver : { kind: 'call', path: `${receiver.path}().${method}`, args, kwargs, line, receiver };
    }
    return UNKNOWN;
  }

  /** A module (or an EMA wrapper's copy) moved to a GPU (`true`) or to the CPU. */
  private moveTo(module: Value, gpu: boolean): void {
    for (const target of [module, this.wrapped.get(module)]) {
      if (!target) continue;
      if (gpu) this.onDevice.add(target);
      else this.onDevice.delete(target);
    }
  }

  /**
   * `copy.deepcopy(value)`: new containers, modules and layers all the way down, sharing what the original shares
   * (a tied weight stays tied within the copy); library objects and scalars are kept as they are. A module copy is
   * frozen where the original was and on the device the original is on. Past MAX_COPY_VALUES, the original itself.
   */
  private deepCopy(value: Value, line: number): Value {
    const made = new Map<Value, Value>();
    let count = 0;
    const copy = (v: Value, depth: number): Value => {
      const done = made.get(v);
      if (done) return done;
      if (++count > MAX_COPY_VALUES || depth > 48) throw new BudgetExceeded();
      let out: Value;
      switch (v.kind) {
        case 'list': {
          const list: ListValue = { ...v, items: [] };
          made.set(v, list);
          list.items = v.items.map((item) => copy(item, depth + 1));
          out = list;
          break;
        }
        case 'dict': {
          const dict: DictValue = { ...v, entries: new Map() };
          made.set(v, dict);
          for (const [key, item] of v.entries) dict.entries.set(key, copy(item, depth + 1));
          out = dict;
          break;
        }
        case 'object': {
          if (v.role === 'file' || v.role === 'parser' || v.role === 'parameters') return v;
          const object: ObjectValue = { ...v, attrs: new Map() };
          made.set(v, object);
          for (const [key, item] of v.attrs) object.attrs.set(key, copy(item, depth + 1));
          out = object;
          break;
        }
        case 'layer': {
          const layer: LayerValue = { ...v, children: [] };
          made.set(v, layer);
          layer.children = v.children.map((child) => copy(child, depth + 1));
          if (v.named) layer.named = new Map([...v.named].map(([key, child]) => [key, copy(child, depth + 1)]));
          out = layer;
          break;
        }
        case 'call':
          // A library model (`timm.create_model(...)`): a new object of the same architecture.
          out = { ...v, ...(v.attrs ? { attrs: new Map(v.attrs) } : {}) };
          made.set(v, out);
          break;
        default:
          return v;
      }
      if ((out.kind === 'layer' || out.kind === 'object') && (v.kind === 'layer' || v.kind === 'object') && this.frozen.has(v)) this.frozen.add(out);
      if (this.onDevice.has(v)) this.onDevice.add(out);
      this.copied.add(out);
      this.tick();
      return out;
    };
    let result: Value;
    try {
      result = copy(value, 0);
    } catch (signal) {
      if (!(signal instanceof BudgetExceeded) || this.exhausted) throw signal;
      return value;
    }
    if (isModuleValue(value) || value.kind === 'call') this.copies.set(result, { source: value, line });
    return result;
  }

  /**
   * configparser's methods: a parser reads INI files into its sections and answers `get/getint/getfloat/getboolean
   * (section, option, fallback=)`; a section (`cp["model"]`) answers the same without the section. Undefined for
   * what a plain dict answers the same way.
   */
  private iniMethod(receiver: DictValue, method: string, args: Value[], kwargs: Map<string, Value>, line: number): Value | undefined {
    if (receiver.ini === 'parser') {
      switch (method) {
        case 'read': {
          const given = args[0] ?? kwargs.get('filenames');
          const files = given?.kind === 'list' ? given.items : given ? [given] : [];
          const read: Value[] = [];
          for (const file of files) {
            const sections = this.loadIniFile(file, line);
            if (!sections) continue;
            read.push(file);
            for (const [name, section] of sections) receiver.entries.set(name, mergedSection(receiver.entries.get(name), section));
          }
          return { kind: 'list', items: read, tuple: false };
        }
        case 'read_string': {
          const text = stringOf(args[0]);
          if (text !== undefined) for (const [name, section] of parseIniFile(text, line)) receiver.entries.set(name, mergedSection(receiver.entries.get(name), section));
          return NONE;
        }
        case 'sections': return { kind: 'list', items: [...receiver.entries.keys()].filter((k) => k !== 'DEFAULT').map((k) => ({ kind: 'string', value: k }) as Value), tuple: false };
        case 'get':
        case 'getint':
        case 'getfloat':
        case 'getboolean': {
          const name = stringOf(args[0] ?? kwargs.get('section'));
          const section = name !== undefined ? receiver.entries.get(name) : undefined;
          const option = stringOf(args[1] ?? kwargs.get('option'));
          const value = section?.kind === 'dict' && option !== undefined ? section.entries.get(option.toLowerCase()) : undefined;
          return iniOption(value, method, kwargs.get('fallback'));
        }
        default: return undefined;
      }
    }
    switch (method) {
      case 'get':
      case 'getint':
      case 'getfloat':
      case 'getboolean': {
        const option = stringOf(args[0] ?? kwargs.get('option'));
        const value = option !== undefined ? receiver.entries.get(option.toLowerCase()) : undefined;
        return iniOption(value, method, args[1] ?? kwargs.get('fallback'));
      }
      default: return undefined;
    }
  }

  /** A parser of `argparse.ArgumentParser(...)` or `add_parser(...)`, with its parents' arguments and its @file prefix. */
  private newParser(kwargs: Map<string, Value>, line: number): ObjectValue {
    const parents = kwargs.get('parents');
    const parser = newParser(parents, line);
    const inherited = (parents ? iterationItems(parents) ?? [] : []).flatMap((p) => this.argumentSpecs.get(p)?.options ?? []);
    this.argumentSpecs.set(parser, { options: [...inherited], fromfilePrefix: stringOf(kwargs.get('fromfile_prefix_chars')) });
    return parser;
  }

  /**
   * The values an argument list given to parse_args sets (`parse_args(["--lr", "0.1"])`; `parse_args(sys.argv[1:] or
   * ["@run.args"])`, sys.argv empty as the CLI runs the script): undefined where none is given (or None: the empty
   * command line), and where the list or a file it names is not determined, recorded in unreadArgumentLists (the
   * defaults are read then, and the estimate says so).
   */
  private givenArguments(parser: ObjectValue, list: Value | undefined, known: boolean, line: number): { values: Map<string, Value>; extras: Token[] } | undefined {
    if (list === undefined || list.kind === 'none') return undefined;
    const spec = this.argumentSpecs.get(parser);
    const items = iterationItems(list);
    const unread = (argument: string | undefined): undefined => {
      this.unreadArgumentLists.push({ line, argument });
      return undefined;
    };
    if (!spec || !items) return unread(undefined);
    const tokens: Token[] = [];
    for (const item of items) {
      const text = stringOf(item);
      if (text === undefined || item.kind !== 'string') return unread(undefined);
      tokens.push({ text, origin: { line: item.origin?.line ?? line, how: 'call-argument' } });
    }
    const expanded = expandArgumentFiles(tokens, spec.fromfilePrefix, (name) => this.readLocalText(name), { line, how: 'config' });
    if (!Array.isArray(expanded)) return unread(`@${expanded.unread}`);
    const parsed = parseArgumentList(spec, expanded, known);
    return 'unread' in parsed ? unread(parsed.unread) : parsed;
  }

  /**
   * Where a file the script names by a relative path is looked for: beside the script, then the working directory
   * (once, where the script lies in it: every import of a library is looked for as a settings module there).
   */
  private localFolders(): string[] {
    const folders = [this.options.filePath ? path.dirname(this.options.filePath) : undefined, host().workingDirectory()].filter((f): f is string => !!f);
    return folders.length === 2 && path.resolve(folders[0]!) === path.resolve(folders[1]!) ? [folders[0]!] : folders;
  }

  /** The text of a file the script names by a path, looked for as loadConfigFile looks; undefined when unread. */
  private readLocalText(file: string | undefined): string | undefined {
    if (!file) return undefined;
    for (const folder of this.localFolders()) {
      const text = host().readLocalFile(path.resolve(folder, file), 1_000_000);
      if (text !== undefined) return text;
    }
    return undefined;
  }

  /** The sections of an INI file the script names, read as loadConfigFile finds files; undefined when unread. */
  private loadIniFile(handle: Value, line: number): Map<string, Value> | undefined {
    const file = pathOf(handle);
    if (!file) return undefined;
    for (const folder of this.localFolders()) {
      const text = host().readLocalFile(path.resolve(folder, file), 1_000_000);
      if (text !== undefined) return parseIniFile(text, line);
    }
    return undefined;
  }

  private loadConfigFile(handle: Value | undefined, line: number): Value {
    const file = pathOf(handle);
    if (!file) return UNKNOWN;
    for (const folder of this.localFolders()) {
      const full = path.resolve(folder, file);
      // Undefined when missing, over 1 MB, or where there is no local disk (a browser).
      const text = host().readLocalFile(full, 1_000_000);
      if (text === undefined) continue;
      const parsed = parseConfigFile(full, text, line);
      if (parsed) return parsed;
    }
    return UNKNOWN;
  }
}

// ---- helpers ------------------------------------------------------------------------------------------------

/** A section read again (a second INI file): its options over the earlier ones. */
function mergedSection(earlier: Value | undefined, later: Value): Value {
  if (earlier?.kind !== 'dict' || later.kind !== 'dict') return later;
  return { ...later, entries: new Map([...earlier.entries, ...later.entries]) };
}

/**
 * An INI option as configparser's getters convert it: a string (get), an int, a float, or a boolean (1/yes/true/on,
 * 0/no/false/off); the fallback where the option is missing; unknown where the text does not convert.
 */
function iniOption(value: Value | undefined, getter: string, fallback: Value | undefined): Value {
  if (value === undefined) return fallback ?? UNKNOWN;
  const text = stringOf(value);
  if (text === undefined || getter === 'get') return value;
  const origin = 'origin' in value && value.origin ? { origin: value.origin } : {};
  if (getter === 'getboolean') {
    const word = text.trim().toLowerCase();
    if (/^(1|yes|true|on)$/.test(word)) return { kind: 'bool', value: true, ...origin };
    if (/^(0|no|false|off)$/.test(word)) return { kind: 'bool', value: false, ...origin };
    return UNKNOWN;
  }
  const number = getter === 'getint' ? (/^\s*[-+]?\d+\s*$/.test(text) ? Number.parseInt(text, 10) : NaN) : Number(text);
  return Number.isFinite(number) && text.trim() !== '' ? { kind: 'number', value: number, ...origin } : UNKNOWN;
}

const BUILTIN_NAMES = new Set(['range', 'len', 'int', 'float', 'str', 'bool', 'list', 'tuple', 'dict', 'zip', 'enumerate', 'min', 'max',
  'sum', 'abs', 'round', 'getattr', 'setattr', 'open', 'sorted', 'reversed', 'print', 'isinstance', 'hasattr', 'callable', 'super', 'set', 'vars', 'any', 'all']);

/**
 * `isinstance(value, classinfo)` where the source decides it: instances of the script's classes (through their
 * method resolution order), torch.nn layers and modules, `functools.partial` objects, Python's containers and
 * strings. Undefined where it does not (a library object, an unknown value, an int that may be a float).
 */
function isInstance(value: Value, classinfo: Value, depth = 0): boolean | undefined {
  if (depth > 4 || value.kind === 'unknown') return undefined;
  if (classinfo.kind === 'list') {
    const answers = classinfo.items.map((item) => isInstance(value, item, depth + 1));
    return answers.some((a) => a === true) ? true : answers.every((a) => a === false) ? false : undefined;
  }
  if (classinfo.kind === 'class') {
    if (value.kind === 'object' && value.role === 'instance' && value.cls) return (methodResolutionOrder(value.cls) ?? [value.cls]).includes(classinfo);
    return value.kind === 'call' || value.kind === 'method' ? undefined : false;
  }
  if (classinfo.kind !== 'ref') return undefined;
  const path = classinfo.path;
  if (path === 'functools.partial') {
    if (value.kind === 'call') return value.path === 'functools.partial';
    return value.kind === 'method' ? undefined : false;
  }
  const nn = TORCH_NN.exec(path)?.[1];
  if (nn) {
    if (value.kind === 'layer') return nn === 'Module' || nn === value.type;
    if (value.kind === 'object' && value.role === 'instance' && value.cls) {
      if (!isModuleClass(value.cls)) return false;
      return nn === 'Module' || (methodResolutionOrder(value.cls) ?? []).some((entry) => entry.kind === 'ref' && TORCH_NN.exec(entry.path)?.[1] === nn);
    }
    return value.kind === 'call' || value.kind === 'method' || value.kind === 'tensor' ? undefined : false;
  }
  const scalar = value.kind === 'number' || value.kind === 'string' || value.kind === 'bool' || value.kind === 'none' || value.kind === 'list' || value.kind === 'dict';
  if (!scalar) return undefined;
  switch (path) {
    case 'str': return value.kind === 'string';
    case 'list': return value.kind === 'list' && !value.tuple;
    case 'tuple': return value.kind === 'list' && value.tuple;
    case 'dict': return value.kind === 'dict';
    case 'bool': return value.kind === 'bool';
    // 2.0 and 2 are one number here: a number may be either; a bool is an int.
    case 'int':
    case 'float': return value.kind === 'number' ? undefined : value.kind === 'bool' ? path === 'int' : false;
    default: return undefined;
  }
}

/**
 * The device `.to(...)` names: a GPU (`"cuda"`, `"cuda:1"`, an index, `torch.device("cuda")`, or a device the source
 * does not determine, as a training script's is), the CPU (`"cpu"`, `"mps"`, `"meta"`), or none (a dtype, a
 * memory format: the module stays where it is).
 */
/** Whether a device value names a GPU (true), the CPU or another device (false), or cannot tell (undefined). */
export function deviceNamed(value: Value): boolean | undefined {
  switch (value.kind) {
    case 'string': return /^cuda\b/.test(value.value) ? true : /^(cpu|mps|meta|xpu)\b/.test(value.value) ? false : undefined;
    case 'number': return true;
    case 'unknown': return true;
    case 'call':
      if (/(^|\.)device$/.test(value.path)) return value.args[0] ? deviceNamed(value.args[0]) ?? true : true;
      return undefined;
    default: return undefined;
  }
}

/** `copy.copy(value)`: a new list, dict or object holding the same items. */
function shallowCopy(value: Value): Value {
  switch (value.kind) {
    case 'list': return { ...value, items: [...value.items] };
    case 'dict': return { ...value, entries: new Map(value.entries) };
    case 'object': return value.role === 'instance' || value.role === 'namespace' ? { ...value, attrs: new Map(value.attrs) } : value;
    default: return value;
  }
}

/** Conventional names a snippet may use without its import (a cell, a pasted excerpt). */
const CONVENTIONAL_IMPORTS: Record<string, string> = { torch: 'torch', nn: 'torch.nn', F: 'torch.nn.functional' };

/**
 * A random integer a script draws (`random.randint(lo, hi)`, a sample's length), read as the largest value the draw
 * can take: what memory must hold is the longest sample, and a batch padded to its longest member reaches it. Python's
 * randint includes hi; numpy's randint and randrange exclude it. Undefined when the bound is not a known number.
 */
function randomBound(path: string, args: Value[], kwargs: Map<string, Value>): NumberValue | undefined {
  const inclusive = path === 'random.randint';
  if (!inclusive && !EXCLUSIVE_RANDOM.test(path)) return undefined;
  const high = kwargs.get('high') ?? kwargs.get('b') ?? kwargs.get('stop') ?? (args.length >= 2 ? args[1] : path === 'random.randint' ? undefined : args[0]);
  if (high?.kind !== 'number' || !Number.isInteger(high.value)) return undefined;
  const value = inclusive ? high.value : high.value - 1;
  // The smallest value it can take: the low bound given with the high one (0 where only a stop is given).
  const low = kwargs.get('low') ?? kwargs.get('a') ?? kwargs.get('start') ?? (args.length >= 2 ? args[0] : path === 'random.randint' ? undefined : { kind: 'number', value: 0 } as Value);
  const least = low?.kind === 'number' && Number.isInteger(low.value) && low.value <= value ? low.value : undefined;
  return value > 0 ? { kind: 'number', value, ...(high.origin ? { origin: high.origin } : {}), ...(least !== undefined && least < value ? { least } : {}) } : undefined;
}

/**
 * The largest (or smallest) of a tensor the script makes from a list of numbers (`torch.tensor([s.shape[1] for s in
 * specs]).max()`, a collate_fn's longest sample, which it pads the batch to). A drawn number counts at its largest,
 * and the result can be no less than the largest of the draws' least values. Undefined where an item is not a number.
 */
function listedExtreme(call: CallResultValue): NumberValue | undefined {
  const reduction = /\(\)\.(max|amax|min|amin)$/.exec(call.path)?.[1];
  const made = call.receiver;
  const listed = made && /^torch\.(tensor|as_tensor|LongTensor|IntTensor)$/.test(made.path) ? made.args[0] : undefined;
  if (!reduction || call.args.length > 0 || listed?.kind !== 'list' || listed.items.length === 0) return undefined;
  const items = listed.items.filter((item): item is NumberValue => item.kind === 'number');
  if (items.length !== listed.items.length) return undefined;
  const largest = reduction.endsWith('max');
  const pick = (values: number[]): number => (largest ? Math.max(...values) : Math.min(...values));
  const chosen = items.find((item) => item.value === pick(items.map((item) => item.value)))!;
  const least = pick(items.map((item) => item.least ?? item.value));
  return { kind: 'number', value: chosen.value, ...(chosen.origin ? { origin: chosen.origin } : {}), ...(least < chosen.value ? { least } : {}) };
}

/** The leading positional parameters of common torch.nn layers, which scripts read back as attributes. */
const RECURRENT_ARGUMENTS = ['input_size', 'hidden_size', 'num_layers', 'bias', 'batch_first', 'dropout', 'bidirectional'];
/** Decorators that make a method a computed attribute. */
/** The enum module's member-making bases (`class Size(enum.Enum)`, `from enum import IntEnum`). */
const ENUM_BASE = /^enum\.(Enum|IntEnum|StrEnum|Flag|IntFlag)$/;
const PROPERTY_DECORATOR = /^(property|(functools\.)?cached_property)$/;
const CELL_ARGUMENTS = ['input_size', 'hidden_size', 'bias'];
const CONV_ARGUMENTS = ['in_channels', 'out_channels', 'kernel_size', 'stride', 'padding'];
const LAYER_ARGUMENTS: Record<string, readonly string[]> = {
  Linear: ['in_features', 'out_features'], Embedding: ['num_embeddings', 'embedding_dim'],
  LSTM: RECURRENT_ARGUMENTS, GRU: RECURRENT_ARGUMENTS, RNN: RECURRENT_ARGUMENTS,
  LSTMCell: CELL_ARGUMENTS, GRUCell: CELL_ARGUMENTS, RNNCell: CELL_ARGUMENTS,
  Conv1d: CONV_ARGUMENTS, Conv2d: CONV_ARGUMENTS, Conv3d: CONV_ARGUMENTS,
  BatchNorm1d: ['num_features'], BatchNorm2d: ['num_features'], LayerNorm: ['normalized_shape'], MultiheadAttention: ['embed_dim', 'num_heads'],
};

function builtin(name: string): Value {
  if (BUILTIN_NAMES.has(name)) return { kind: 'ref', path: name };
  const conventional = CONVENTIONAL_IMPORTS[name];
  return conventional ? { kind: 'ref', path: conventional } : UNKNOWN;
}

function isContainer(type: string): boolean {
  return type === 'Sequential' || type === 'ModuleList' || type === 'ModuleDict';
}

/**
 * `self.blocks[f"x{i}_{j}"] = Block(...)` / `add_module(name, m)` on a container layer: a ModuleDict (or a container
 * whose children are all named) keeps the module under its name, a new name appended, an old one replaced in place;
 * `blocks[i] = m` replaces the i-th child. Other names append the module, as before.
 */
function setContainerEntry(container: LayerValue, key: Value, value: Value): void {
  if (key.kind === 'number' && Number.isInteger(key.value)) {
    const index = key.value < 0 ? container.children.length + key.value : key.value;
    if (index >= 0 && index < container.children.length) container.children[index] = value;
    return;
  }
  if (key.kind !== 'string') {
    container.children.push(value);
    return;
  }
  const allNamed = container.type === 'ModuleDict' || (container.named?.size ?? 0) === container.children.length;
  if (!allNamed) {
    container.children.push(value);
    return;
  }
  const named = container.named ?? new Map<string, Value>();
  named.set(key.value, value);
  container.named = named;
  container.children = [...named.values()];
}

function isExpression(node: PyNode): boolean {
  return node.type !== 'comment' && node.type !== 'block' && !node.type.endsWith('_statement') && !node.type.endsWith('_clause');
}

function enclosingStatement(node: PyNode): PyNode | null {
  let current = node.parent;
  while (current && current.type !== 'with_statement') current = current.parent;
  return current;
}

/** The with_items of a with statement's own clause: those of its body belong to the statements there. */
function withItems(node: PyNode): PyNode[] {
  const body = node.childForFieldName('body');
  const items: PyNode[] = [];
  for (const child of node.children) {
    if (!child || child.id === body?.id) continue;
    if (child.type === 'with_item') items.push(child);
    for (const item of child.descendantsOfType('with_item')) if (item) items.push(item);
  }
  return items;
}

function enclosingClass(fn: PyNode): PyNode | undefined {
  const block = fn.parent?.type === 'decorated_definition' ? fn.parent.parent : fn.parent;
  return block?.parent?.type === 'class_definition' ? block.parent : undefined;
}

/**
 * Rows of a made tensor picked by a 1-D index tensor (`obs[perm[i:i + mb]]`, a minibatch of a rollout buffer): as
 * many rows as the index has, then the tensor's other sizes. Undefined where either is not known.
 */
function pickedRows(object: CallResultValue, index: CallResultValue, line: number): CallResultValue | undefined {
  const rows = /^torch\.(randperm|randint)(\[\])*$/.test(index.path) ? tensorShape({ ...index, path: index.path.replace(/(\[\])+$/, '') })?.dims : undefined;
  // A made tensor's sizes, a reshape's included (`buf.reshape(-1, obs_dim)`: the -1 undefined); its rows are the index's.
  const dims = partialTensorShape(object)?.dims;
  const base = /^torch\.(randint|randn|rand|zeros|ones|empty|full)/.exec(object.path)?.[0];
  // Made from sizes alone (randint and full take other arguments first).
  if (!base || base === 'torch.randint' || base === 'torch.full') return undefined;
  if (!rows || rows.length !== 1 || !dims || dims.length < 2 || dims.slice(1).some((d) => d === undefined)) return undefined;
  const sizes: Value = { kind: 'list', items: [rows[0]!, ...(dims.slice(1) as number[])].map((d) => ({ kind: 'number', value: d }) as Value), tuple: true };
  return { kind: 'call', path: base, args: [sizes], kwargs: new Map(), line };
}

/** An instance of a script's module class that defines no forward() (an actor-critic called through `act`). */
/** A script module's instance (`model = Net()`). */
function isModuleInstance(value: Value): boolean {
  return value.kind === 'object' && value.role === 'instance' && !!value.cls && isModuleClass(value.cls);
}

function forwardlessModule(value: Value): boolean {
  if (value.kind !== 'object' || value.role !== 'instance' || !value.cls || !isModuleClass(value.cls)) return false;
  const order = methodResolutionOrder(value.cls);
  return order !== undefined && resolveMethod(order, 0, 'forward') === undefined;
}

/**
 * The first definition of `name` in a method resolution order, from position `start`: a script's class attribute
 * (a method, with the class that defines it), or the torch.nn class whose own method it is (every torch.nn class has
 * an `__init__`; all but nn.Module, ModuleList and ModuleDict a `forward`). Other library classes are passed over.
 */
function resolveMethod(order: ReadonlyArray<ClassValue | RefValue>, start: number, name: string): Value | undefined {
  for (let i = start; i < order.length; i++) {
    const entry = order[i]!;
    if (entry.kind === 'class') {
      const own = entry.attrs.get(name);
      if (own !== undefined) return own;
      continue;
    }
    const type = TORCH_NN.exec(entry.path)?.[1];
    if (!type) continue;
    if (name === '__init__') return entry;
    if (name === 'forward' && !/^(Module|ModuleList|ModuleDict|ParameterList|ParameterDict)$/.test(type)) return entry;
  }
  return undefined;
}

/**
 * The modules an instance of a script's subclass of nn.Sequential / nn.ModuleList holds, in registration order
 * (what iterating it yields): its registered attributes that are modules.
 */
function moduleItems(object: ObjectValue): Value[] {
  return [...object.attrs].filter(([key, value]) => key !== BASE_LAYER && isModuleValue(value)).map(([, value]) => value);
}

export function lookupClassAttribute(cls: ClassValue, name: string, depth = 0): Value | undefined {
  const own = cls.attrs.get(name);
  if (own !== undefined) return own;
  if (depth > 8) return undefined;
  for (const base of cls.bases) {
    if (base.kind !== 'class') continue;
    const inherited = lookupClassAttribute(base, name, depth + 1);
    if (inherited !== undefined) return inherited;
  }
  return undefined;
}

function dataclassFields(cls: ClassValue, depth = 0): string[] {
  const inherited = depth > 8 ? [] : cls.bases.flatMap((base) => (base.kind === 'class' && base.dataclass ? dataclassFields(base, depth + 1) : []));
  return [...inherited, ...cls.fields.filter((f) => !inherited.includes(f))];
}

/** The items a `for` loop would see, when the source determines them. */
/** A call that builds a library model (`AutoModel.from_pretrained(...)`, `from_config(...)`): its submodules have names. */
/** A vision library's model builder (`timm.create_model(...)`, `torchvision.models.resnet18(...)`): its parameters() are its own. */
/**
 * Whether Python's re.match / re.search / re.fullmatch finds `pattern` in `text`; undefined where the pattern uses
 * syntax JavaScript reads otherwise (named groups, inline flags, possessive forms) or does not compile.
 */
function patternMatches(path: string, pattern: string, text: string): boolean | undefined {
  if (/\(\?P|\(\?[aiLmsux]|\\[AZ]|[*+?}]\+/.test(pattern)) return undefined;
  try {
    const regex = new RegExp(path === 're.fullmatch' ? `^(?:${pattern})$` : path === 're.match' ? `^(?:${pattern})` : pattern);
    return regex.test(text);
  } catch {
    return undefined;
  }
}

/** The most parameter names `named_parameters()` of a library model yields (one per submodule the catalog names). */
const MAX_LIBRARY_PARAMETER_NAMES = 256;
const VISION_LIBRARY_MODEL = /^(timm\.create_model|torchvision\.models\.(\w+\.)?[a-z]\w*)$/;

/**
 * The submodules `nn.Transformer(...)` builds, as torch does: an encoder (num_encoder_layers encoder layers and a final
 * LayerNorm) and a decoder (num_decoder_layers decoder layers and a final LayerNorm), or the custom ones it is given.
 */
function transformerParts(args: Value[], kwargs: Map<string, Value>, line: number): Map<string, Value> {
  const given = (index: number, name: string): Value | undefined => kwargs.get(name) ?? args[index];
  const number = (value: number): Value => ({ kind: 'number', value });
  const dModel = given(0, 'd_model') ?? number(512);
  const layerKwargs = new Map<string, Value>([
    ['d_model', dModel], ['nhead', given(1, 'nhead') ?? number(8)], ['dim_feedforward', given(4, 'dim_feedforward') ?? number(2048)],
    ['dropout', given(5, 'dropout') ?? number(0.1)], ['batch_first', given(10, 'batch_first') ?? { kind: 'bool', value: false }],
    ['norm_first', given(11, 'norm_first') ?? { kind: 'bool', value: false }],
  ]);
  const layer = (type: string, layerArgs: Value[], layerKwargsOf: Map<string, Value>): LayerValue => ({ kind: 'layer', type, args: layerArgs, kwargs: layerKwargsOf, children: [], line });
  const stack = (type: 'TransformerEncoder' | 'TransformerDecoder', count: Value): LayerValue =>
    layer(type, [layer(`${type}Layer`, [], new Map(layerKwargs)), count], new Map([['norm', layer('LayerNorm', [dModel], new Map())]]));
  const custom = (index: number, name: string): Value | undefined => {
    const value = given(index, name);
    return value && value.kind !== 'none' ? value : undefined;
  };
  return new Map([
    ['encoder', custom(7, 'custom_encoder') ?? stack('TransformerEncoder', given(2, 'num_encoder_layers') ?? number(6))],
    ['decoder', custom(8, 'custom_decoder') ?? stack('TransformerDecoder', given(3, 'num_decoder_layers') ?? number(6))],
  ]);
}

function isLibraryModelCall(value: Extract<Value, { kind: 'call' }>): boolean {
  if (TRANSFORMERS_MODEL_CLASS.test(value.path) && !NOT_A_TRANSFORMERS_MODEL.test(value.path)) return true;
  return /\.(from_pretrained|from_config)$/.test(value.path) && !/(Tokenizer|Processor|Config|FeatureExtractor)\w*\.from_/.test(value.path);
}

/** A library model whose submodules have names: a Hub model, or a torchvision / timm vision model. */
function isLibraryOrVisionModelCall(value: Extract<Value, { kind: 'call' }>): boolean {
  return isLibraryModelCall(value) || VISION_LIBRARY_MODEL.test(value.path);
}

/**
 * The vision library model and the dotted path of the submodule `object.name` (or `object[name]`) names, where
 * `object` is such a model or one of its submodules: what `model.fc = nn.Linear(...)` replaces.
 */
function visionSubmodulePath(object: Value, name: string): { model: Value; path: string } | undefined {
  if (object.kind === 'call' && VISION_LIBRARY_MODEL.test(object.path)) return { model: object, path: name };
  const submodule = object.kind === 'method' ? librarySubmodule(object) : object.kind === 'object' && object.role === 'library-module' ? object : undefined;
  const model = submodule?.attrs.get('model');
  return submodule && model?.kind === 'call' && VISION_LIBRARY_MODEL.test(model.path) ? { model, path: `${submodule.typeName}.${name}` } : undefined;
}

/** The names of a function's plain and defaulted parameters, in order (not `*args` / `**kwargs`). */
function parameterNames(fn: PyNode): string[] {
  const names: string[] = [];
  for (const parameter of fn.childForFieldName('parameters')?.namedChildren ?? []) {
    if (!parameter || /splat_pattern|separator/.test(parameter.type)) continue;
    const name = parameter.type === 'identifier' ? parameter.text : (parameter.childForFieldName('name') ?? parameter.namedChildren[0])?.text;
    if (name) names.push(name);
  }
  return names;
}

/** The statements a module of settings holds at its top level. */
const SETTINGS_STATEMENT = new Set(['expression_statement', 'import_statement', 'import_from_statement', 'future_import_statement', 'comment', 'if_statement', 'pass_statement']);

/** A settings module's syntax tree, copied (its nodes get ids of their own); undefined before the grammar is loaded. */
function parseSettingsModule(text: string): PyNode | undefined {
  const parser = loadedParser();
  const tree = parser?.parse(text);
  if (!tree) return undefined;
  try {
    return copyTree(tree, text);
  } finally {
    tree.delete();
  }
}

/** A settings module bound to a name (`import config`): its names are its attributes, read as a config's. */
function settingsModule(name: string, names: Map<string, Value>, line: number): ObjectValue {
  return { kind: 'object', role: 'namespace', typeName: `module ${name}`, attrs: names, line };
}

/** A value of a settings module: its scalars read from a config at the script's line that reads the module. */
function readFromSettings(value: Value, line: number, depth: number): Value {
  const origin: Origin = { line, how: 'config' };
  if (depth > 16) return value;
  switch (value.kind) {
    case 'number':
    case 'string':
    case 'bool':
    case 'none':
      return { ...value, origin };
    case 'list':
      return { ...value, items: value.items.map((item) => readFromSettings(item, line, depth + 1)) };
    case 'dict':
      return { ...value, entries: new Map([...value.entries].map(([key, entry]) => [key, readFromSettings(entry, line, depth + 1)])) };
    default:
      return value;
  }
}

/** A transformers model class called on a config (`BertForSequenceClassification(config)`): a library model too. */
const TRANSFORMERS_MODEL_CLASS = /^transformers\.(\w+\.)*[A-Z]\w*(Model|LMHeadModel|For[A-Z]\w*)$/;
/** Classes of transformers whose names read like a model's but are not (`DataCollatorForLanguageModeling`). */
const NOT_A_TRANSFORMERS_MODEL = /(DataCollator|Tokenizer|Processor|Config|FeatureExtractor|Trainer|Arguments|Pipeline)\w*$/;

/**
 * A data loop stopped after `done` of its `total` passes: each list it grew the same number of items in every pass
 * gets the passes left as copies of the last pass's items, so its length is the loop's.
 */
function fillDataLoop(grown: Map<ListValue, number>, beforeLast: Map<ListValue, number>, done: number, total: number): void {
  for (const [list, from] of grown) {
    // A list first grown in the last pass is that pass's own (a temporary), not the loop's.
    if (done > 1 && !beforeLast.has(list)) continue;
    const perPass = (list.items.length - from) / done;
    const lastStart = beforeLast.get(list) ?? from;
    const last = list.items.slice(lastStart);
    if (!Number.isInteger(perPass) || perPass === 0 || last.length !== perPass || list.items.length + perPass * (total - done) > MAX_FILLED_ITEMS) continue;
    for (let pass = done; pass < total; pass++) list.items.push(...last);
  }
}

/** A data loop's lists are filled to at most this many items (beyond, they keep what the passes run made). */
const MAX_FILLED_ITEMS = 100_000;

/** A numpy Generator method that makes an array of a given size, as the torch call making a tensor of that size. */
function generatorArray(method: string, args: Value[], kwargs: Map<string, Value>): { path: string; args: Value[] } | undefined {
  const size = (index: number): Value | undefined => kwargs.get('size') ?? args[index];
  switch (method) {
    case 'standard_normal':
    case 'random': {
      const given = size(0);
      return given ? { path: method === 'random' ? 'torch.rand' : 'torch.randn', args: [given] } : undefined;
    }
    case 'normal':
    case 'uniform': {
      const given = size(2);
      return given ? { path: 'torch.randn', args: [given] } : undefined;
    }
    case 'integers': {
      const given = size(2);
      const [low, high] = [args[0] ?? kwargs.get('low'), args[1] ?? kwargs.get('high')];
      return given && low && high ? { path: 'torch.randint', args: [low, high, given.kind === 'list' ? given : { kind: 'list', items: [given], tuple: true }] } : undefined;
    }
    default:
      return undefined;
  }
}

/** Made tensors of one shape stacked along a new axis (`torch.stack`, `np.stack`): one made tensor of the new shape. */
function stackedTensor(items: Value | undefined, axis: Value | undefined, line: number): CallResultValue | undefined {
  const parts = items?.kind === 'list' ? items.items : undefined;
  if (!parts || parts.length === 0 || parts.length > MAX_UNROLL) return undefined;
  const shapes = parts.map((part) => (part.kind === 'call' ? tensorShape(part) : undefined));
  const first = shapes[0];
  if (!first || shapes.some((shape) => !shape || shape.dims.join() !== first.dims.join())) return undefined;
  const given = axis === undefined || axis.kind === 'none' ? 0 : numberOf(axis);
  if (given === undefined || !Number.isInteger(given)) return undefined;
  const at = given < 0 ? first.dims.length + 1 + given : given;
  if (at < 0 || at > first.dims.length) return undefined;
  const dims = [...first.dims.slice(0, at), parts.length, ...first.dims.slice(at)];
  const integer = parts.every((part) => part.kind === 'call' && isIntegerTensor(part));
  return {
    kind: 'call', path: 'torch.zeros', args: [{ kind: 'list', items: dims.map((value): Value => ({ kind: 'number', value })), tuple: true }],
    kwargs: integer ? new Map<string, Value>([['dtype', { kind: 'dtype', name: 'long' }]]) : new Map(), line,
  };
}

/** The submodule path `get_input_embeddings()` of a library model stands for: its token table. */
export const INPUT_EMBEDDINGS = 'input_embeddings';

/** A library model and the dotted path of one of its submodules (`''`: the model itself). */
function librarySubmodulePath(value: Value): { model: CallResultValue; path: string } | undefined {
  if (value.kind === 'call' && isLibraryOrVisionModelCall(value)) return { model: value, path: '' };
  const model = value.kind === 'object' && value.role === 'library-module' ? value.attrs.get('model') : undefined;
  return model?.kind === 'call' && value.kind === 'object' ? { model, path: value.typeName } : undefined;
}

/** `model.bert` (read as a method of a library model, or of one of its submodules) as the submodule it names. */
function librarySubmodule(value: Extract<Value, { kind: 'method' }>): ObjectValue | undefined {
  const receiver = value.receiver;
  if (receiver.kind === 'call' && isLibraryOrVisionModelCall(receiver)) {
    return { kind: 'object', role: 'library-module', typeName: value.name, attrs: new Map([['model', receiver]]), line: receiver.line };
  }
  if (receiver.kind === 'object' && receiver.role === 'library-module') {
    return { ...receiver, typeName: `${receiver.typeName}.${value.name}`, attrs: new Map(receiver.attrs) };
  }
  return undefined;
}

export function iterationItems(value: Value): Value[] | undefined {
  switch (value.kind) {
    case 'list': return value.items;
    case 'dict': return dictKeys(value);
    case 'string': return [...value.value].map((c) => ({ kind: 'string', value: c }) as Value);
    case 'layer': return value.type === 'Sequential' || value.type === 'ModuleList' ? value.children : undefined;
    case 'object': {
      // One parameter stands for all of them (a loop body that freezes each freezes the module).
      if (value.role === 'parameters') return [value];
      // A script's subclass of nn.Sequential / nn.ModuleList yields its modules; of nn.ModuleDict, its keys.
      const container = value.role === 'instance' && value.cls ? torchNnBase(value.cls) : undefined;
      if (container === 'Sequential' || container === 'ModuleList') return moduleItems(value);
      if (container === 'ModuleDict') return [...value.attrs].filter(([, v]) => isModuleValue(v)).map(([k]) => ({ kind: 'string', value: k }) as Value);
      return undefined;
    }
    default: return undefined;
  }
}

function entriesOf(value: Value): Map<string, Value> | undefined {
  if (value.kind === 'dict') return value.entries;
  if (value.kind === 'object' && (value.role === 'namespace' || value.role === 'hf-config' || value.role === 'instance')) return value.attrs;
  return undefined;
}

/** `dict([("a", 1), ...])` and `OrderedDict([...])`. */
function pairsOf(value: Value): Map<string, Value> | undefined {
  const items = iterationItems(value);
  if (!items) return undefined;
  const out = new Map<string, Value>();
  for (const item of items) {
    if (item.kind !== 'list' || item.items.length !== 2 || item.items[0]!.kind !== 'string') return undefined;
    out.set((item.items[0] as { value: string }).value, item.items[1]!);
  }
  return out;
}

function orderedDictValues(call: Extract<Value, { kind: 'call' }>): Value[] {
  const pairs = call.args[0] ? pairsOf(call.args[0]) : undefined;
  return pairs ? [...pairs.values()] : [];
}

/** The passes a loop over `iterable` makes: its items, or a range too long to unroll (see rangeOf); undefined if not known. */
export function passCount(iterable: Value): number | undefined {
  if (iterable.kind === 'call' && iterable.path === 'range') return rangeBounds(iterable.args)?.count;
  return iterationItems(iterable)?.length;
}

/** The first `n` items of a loop's iterable (a range too long to unroll included). */
function firstPasses(iterable: Value, n: number): Value[] | undefined {
  if (iterable.kind === 'call' && iterable.path === 'range') {
    const bounds = rangeBounds(iterable.args);
    if (!bounds) return undefined;
    return Array.from({ length: Math.min(n, bounds.count) }, (_, i) => ({ kind: 'number', value: bounds.start + i * bounds.step, origin: { line: iterable.line, how: 'loop' } }) as Value);
  }
  return iterationItems(iterable)?.slice(0, n);
}

function rangeBounds(args: Value[]): { start: number; step: number; count: number } | undefined {
  const numbers = args.map(numberOf);
  if (numbers.length === 0 || numbers.some((n) => n === undefined || !Number.isInteger(n))) return undefined;
  const [start, stop, step] = numbers.length === 1 ? [0, numbers[0]!, 1] : [numbers[0]!, numbers[1]!, numbers[2] ?? 1];
  if (step === 0) return undefined;
  return { start, step, count: Math.max(0, Math.ceil((stop - start) / step)) };
}

function rangeOf(args: Value[], line: number): Value {
  const numbers = args.map(numberOf);
  if (numbers.some((n) => n === undefined || !Number.isInteger(n))) return UNKNOWN;
  const [start, stop, step] = numbers.length === 1 ? [0, numbers[0]!, 1] : [numbers[0]!, numbers[1]!, numbers[2] ?? 1];
  if (step === 0) return UNKNOWN;
  const count = Math.max(0, Math.ceil((stop - start) / step));
  if (count > MAX_UNROLL) return { kind: 'call', path: 'range', args, kwargs: new Map(), line };
  return {
    kind: 'list',
    items: Array.from({ length: count }, (_, i) => ({ kind: 'number', value: start + i * step, origin: { line, how: 'loop' } }) as Value),
    tuple: true,
  };
}

/** Python's `&`, `|`, `^` on integers (a corner's bits, `(c >> 2) & 1`), exact beyond 32 bits; undefined for floats. */
function bitwise(operator: '&' | '|' | '^', x: number, y: number): number | undefined {
  if (!Number.isSafeInteger(x) || !Number.isSafeInteger(y)) return undefined;
  const [a, b] = [BigInt(x), BigInt(y)];
  return Number(operator === '&' ? a & b : operator === '|' ? a | b : a ^ b);
}

function binary(operator: string, a: Value, b: Value, line: number): Value {
  const origin: Origin = { line, how: 'literal' };
  if (a.kind === 'number' && b.kind === 'number') {
    const x = a.value;
    const y = b.value;
    let value: number | undefined;
    switch (operator) {
      case '+': value = x + y; break;
      case '-': value = x - y; break;
      case '*': value = x * y; break;
      case '/': value = y === 0 ? undefined : x / y; break;
      case '//': value = y === 0 ? undefined : Math.floor(x / y); break;
      case '%': value = y === 0 ? undefined : ((x % y) + y) % y; break;
      case '**': value = x ** y; break;
      case '<<': value = x * 2 ** y; break;
      case '>>': value = Math.floor(x / 2 ** y); break;
      case '&':
      case '|':
      case '^': value = a.real || b.real ? undefined : bitwise(operator, x, y); break;
      default: value = undefined;
    }
    // A value computed from one named constant keeps that constant's line (`4 * D_MODEL`).
    const keep = a.origin && a.origin.how !== 'literal' ? a.origin : b.origin && b.origin.how !== 'literal' ? b.origin : origin;
    // Python's true division, and arithmetic with a float, make a float.
    const real = operator === '/' || a.real || b.real ? { real: true } : {};
    // A product or quotient with one imaginary number stays imaginary (`0.5j * math.pi`); other complex arithmetic
    // is not followed.
    const imaginary = a.imaginary !== b.imaginary && (operator === '*' || operator === '/') ? { imaginary: true } : {};
    if ((a.imaginary || b.imaginary) && !('imaginary' in imaginary)) return UNKNOWN;
    return value === undefined || !Number.isFinite(value) ? UNKNOWN : { kind: 'number', value, origin: keep, ...real, ...imaginary };
  }
  if (operator === '+' && a.kind === 'list' && b.kind === 'list') return { kind: 'list', items: [...a.items, ...b.items], tuple: a.tuple };
  if (operator === '*' && a.kind === 'list' && b.kind === 'number' && b.value >= 0 && a.items.length * b.value <= MAX_UNROLL) {
    return { kind: 'list', items: Array.from({ length: b.value }, () => a.items).flat(), tuple: a.tuple };
  }
  if (operator === '+' && a.kind === 'string' && b.kind === 'string') return { kind: 'string', value: a.value + b.value, origin };
  if (operator === '%' && a.kind === 'string') return UNKNOWN;
  if (operator === '|' && a.kind === 'dict' && b.kind === 'dict') {
    const merged: DictValue = { kind: 'dict', entries: new Map() };
    for (const dict of [a, b]) dictKeys(dict).forEach((key, i) => dictSet(merged, key, [...dict.entries.values()][i]!));
    return merged;
  }
  // A tensor the script sized, scaled or shifted by a number (`torch.randn(T, n) * 0.01`, a parameter's initial
  // frequencies `math.pi * torch.arange(n).float().repeat(d, 1)`): its shape is the tensor's.
  if (/^([+\-*/]|\/\/|\*\*)$/.test(operator)) {
    const sized = a.kind === 'call' && b.kind === 'number' ? a : b.kind === 'call' && a.kind === 'number' ? b : undefined;
    if (sized?.kind === 'call' && sizedOrListedShape(sized)) return sized;
    // Two tensors the script made combined element by element (a signal plus noise, `torch.sin(...) + 0.1 *
    // torch.randn(T, C)`): the broadcast of the two, which is one of them where the other fits in it. A term whose
    // shape is not known stands for one that fits (noise has the signal's shape): the sized term gives the shape.
    if (a.kind === 'call' && b.kind === 'call' && operator !== '**') {
      const [left, right] = [madeTensorShape(a), madeTensorShape(b)];
      if (left && right) return fitsIn(right, left) ? a : fitsIn(left, right) ? b : UNKNOWN;
      if (left && !right && !isIntegerTensor(b)) return a;
      if (right && !left && !isIntegerTensor(a)) return b;
    }
  }
  return UNKNOWN;
}

/** Whether a tensor of shape `inner` broadcasts to `outer` without growing it. */
function fitsIn(inner: readonly number[], outer: readonly number[]): boolean {
  if (inner.length > outer.length) return false;
  return inner.every((size, i) => size === 1 || size === outer[outer.length - inner.length + i]);
}

/** The text of a string literal; f-strings are formatted when every interpolation is known. */
function stringLiteral(node: PyNode, evaluate: (expression: PyNode) => Value): string | undefined {
  if (node.type !== 'string') return undefined;
  let out = '';
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === 'string_content') out += child.text;
    else if (child.type === 'escape_sequence') out += unescape(child.text);
    else if (child.type === 'interpolation') {
      const expression = child.namedChildren[0];
      const value = expression ? evaluate(expression) : UNKNOWN;
      if (value.kind === 'number' || value.kind === 'string' || value.kind === 'bool') out += String(value.value);
      else return undefined;
    }
  }
  return out;
}

function unescape(sequence: string): string {
  const map: Record<string, string> = { '\\n': '\n', '\\t': '\t', '\\\\': '\\', "\\'": "'", '\\"': '"', '\\r': '\r' };
  return map[sequence] ?? sequence;
}

/** The typeName of a `pathlib.Path`: a file object (role 'file') whose `path` is the string it names. */
const PATH_TYPE = 'Path';

function pathObject(at: string, line: number): ObjectValue {
  return { kind: 'object', role: 'file', typeName: PATH_TYPE, attrs: new Map([['path', { kind: 'string', value: at }]]), line };
}

/** The path a string, a Path or an open file (of either) names. */
function pathOf(value: Value | undefined, depth = 0): string | undefined {
  if (value?.kind === 'string') return value.value;
  return value?.kind === 'object' && value.role === 'file' && depth < 4 ? pathOf(value.attrs.get('path'), depth + 1) : undefined;
}

/** The typeName of the object `add_subparsers` returns. */
const SUBCOMMANDS = '_SubParsersAction';

/** An argparse parser, starting from the arguments of its `parents=[...]` (copied, as argparse does). */
function newParser(parents: Value | undefined, line: number): ObjectValue {
  const attrs = new Map<string, Value>();
  for (const parent of parents ? iterationItems(parents) ?? [] : []) {
    if (parent.kind === 'object' && parent.role === 'parser') for (const [key, value] of parent.attrs) attrs.set(key, value);
  }
  return { kind: 'object', role: 'parser', typeName: 'ArgumentParser', attrs, line };
}

/** Records the argument's default under its dest; returns how an argument list sets it (see argv.ts). */
function addArgument(parser: ObjectValue, args: Value[], kwargs: Map<string, Value>): ArgumentOption | undefined {
  const flags = args.map(stringOf).filter((f): f is string => f !== undefined);
  const long = flags.find((f) => f.startsWith('--')) ?? flags.find((f) => !f.startsWith('-')) ?? flags[0];
  const dest = stringOf(kwargs.get('dest')) ?? long?.replace(/^-+/, '').replace(/-/g, '_');
  if (!dest) return undefined;
  let value = kwargs.get('default');
  const action = stringOf(kwargs.get('action'));
  if (value === undefined) value = action === 'store_true' ? { kind: 'bool', value: false } : action === 'store_false' ? { kind: 'bool', value: true } : NONE;
  // `type=int` with a string default converts it, as argparse does.
  const type = kwargs.get('type');
  if (value.kind === 'string' && type?.kind === 'ref' && (type.path === 'int' || type.path === 'float')) {
    const n = Number(value.value);
    if (Number.isFinite(n)) value = { kind: 'number', value: type.path === 'int' ? Math.trunc(n) : n, origin: value.origin };
  }
  parser.attrs.set(dest, readThrough(value, 'argparse-default'));
  const nargs = kwargs.get('nargs');
  const typePath = type?.kind === 'ref' ? type.path : type === undefined ? undefined : '?';
  return {
    flags: flags.filter((f) => f.startsWith('-')),
    dest,
    action: action ?? 'store',
    ...(typePath !== undefined ? { type: typePath } : {}),
    ...(nargs?.kind === 'number' ? { nargs: nargs.value } : nargs?.kind === 'string' && /^[?*+]$/.test(nargs.value) ? { nargs: nargs.value as '?' | '*' | '+' } : {}),
    ...(kwargs.get('const') ? { constant: kwargs.get('const') } : {}),
  };
}

export type { Value, How, DictValue };
