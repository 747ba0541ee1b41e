// The values the program model computes for a script: what Python would hold at run time, as far as the source
// alone determines it. Anything the source does not determine (data, the file system beyond a named config file,
// results of library calls it does not model) is `unknown`.
import type { PyNode } from './node';

/** How a value was found, as `oomguard estimate --json` reports it (`how`). */
export type How = 'literal' | 'argparse-default' | 'config' | 'call-argument' | 'loop' | 'environment';

/** Where a value was written: the 0-based line of its literal, and how it reached the place that reads it. */
export interface Origin {
  line: number;
  how: How;
}

/**
 * `least`: a random draw's smallest value (`random.randint(480, 640)`: 480), where `value` is its largest. `real`:
 * a Python float (written with a point or an exponent, made by `float()` or `/`), which `torch.full(size, 0.0)` fills
 * a float tensor with where `torch.full(size, 0)` makes int64. `imaginary`: a Python complex literal (`1j`, `0.5j`),
 * `value` its imaginary part: arithmetic of a float tensor with it makes a complex one.
 */
export interface NumberValue { kind: 'number'; value: number; origin?: Origin; least?: number; real?: boolean; imaginary?: boolean }
export interface StringValue { kind: 'string'; value: string; origin?: Origin }
export interface BoolValue { kind: 'bool'; value: boolean; origin?: Origin }
export interface NoneValue { kind: 'none'; origin?: Origin }
export interface ListValue { kind: 'list'; items: Value[]; tuple: boolean; origin?: Origin }
/**
 * A dict with string keys (other keys are dropped). `attributes`: an EasyDict/OmegaConf-style dict read as `cfg.x`.
 * `ini`: a configparser parser (its sections as entries) or one of its sections (option strings as entries).
 */
/**
 * A dict keyed by strings, or by integers (`{8: [...], 16: [...]}`): an integer key is stored as its decimal text
 * and listed in numberKeys, so that `d[8]` finds it and `d["8"]` does not (see dictGet, dictSet, dictKeys).
 */
/**
 * A tuple of such keys (`X[(i, j)]`, a nested U-Net's nodes by level and column) is stored under its text, the
 * tuple itself kept in tupleKeys so that `keys()` gives it back.
 */
export interface DictValue {
  kind: 'dict'; entries: Map<string, Value>; numberKeys?: Set<string>; tupleKeys?: Map<string, Value>; origin?: Origin; ini?: 'parser' | 'section';
}
/** `torch.float16` and friends. */
export interface DtypeValue { kind: 'dtype'; name: string; origin?: Origin }

export type ObjectRole =
  /** An instance of a class of the script (nn.Module subclasses, dataclasses, plain classes). */
  | 'instance'
  /** argparse's Namespace, SimpleNamespace: attributes only. */
  | 'namespace'
  /** argparse.ArgumentParser: collects add_argument defaults. */
  | 'parser'
  /** A Hugging Face `XxxConfig(...)` object. */
  | 'hf-config'
  /** An open file (the path it names). */
  | 'file'
  /** What `module.parameters()` returns, and each parameter of it (`attrs.module` is the module). */
  | 'parameters'
  /**
   * A submodule of a library model (`model.bert.encoder.layer[3]` of a from_pretrained model): `typeName` is its
   * dotted path from the model, `attrs.model` the call that built the model.
   */
  | 'library-module';

export interface ObjectValue {
  kind: 'object';
  role: ObjectRole;
  typeName: string;
  cls?: ClassValue;
  /** Attributes in assignment order (for nn.Modules, the order submodules are registered). */
  attrs: Map<string, Value>;
  origin?: Origin;
  /** 0-based line of the call that created it. */
  line: number;
}

export interface FunctionValue {
  kind: 'function';
  name: string;
  node: PyNode;
  closure: Scope;
  /** The receiver of a bound method. */
  self?: Value;
  /** The class a method was found on (for `super()`). */
  owner?: ClassValue;
  /** A `@property` getter: reading the attribute runs it (`cfg.batch_size` derived from other fields). */
  property?: boolean;
  /**
   * How reading the method through an instance binds it: a `@staticmethod` takes no receiver, a `@classmethod`
   * the class; undefined for an ordinary method (bound to the instance).
   */
  binding?: 'static' | 'class';
}

export interface ClassValue {
  kind: 'class';
  name: string;
  node: PyNode;
  /** Class-level names: methods, dataclass fields with their defaults. */
  attrs: Map<string, Value>;
  /** Field names in order, for dataclasses (annotated class-level names). */
  fields: string[];
  bases: Value[];
  dataclass: boolean;
}

/** A name from a library the script imports (`torch.nn.Linear`, `timm.create_model`), not modelled further. */
export interface RefValue { kind: 'ref'; path: string }

/** An instance of a torch.nn layer class (`nn.Linear(512, 10)`), or a container of them. */
export interface LayerValue {
  kind: 'layer';
  /** The torch.nn class name: `Linear`, `Sequential`, `ModuleList`, `TransformerEncoder`, … */
  type: string;
  args: Value[];
  kwargs: Map<string, Value>;
  /** Sequential / ModuleList / ModuleDict contents, in order. */
  children: Value[];
  line: number;
  /** ModuleDict entries and named Sequential children, read as attributes (`self.transformer.wte`). */
  named?: Map<string, Value>;
  /** Its weight was replaced by another layer's (`head.weight = embed.weight`): counted once, at the other. */
  tiedWeight?: boolean;
  /**
   * `weight_norm(layer)`: its weight is a direction and a magnitude per output (one more parameter each);
   * `spectral_norm(layer)`: the same parameters (its power-iteration vectors are buffers).
   */
  weightNormalized?: 'weight' | 'spectral';
}

/** The result of calling a library function with the arguments it was given (`timm.create_model("vit_b")`). */
export interface CallResultValue {
  kind: 'call';
  path: string;
  args: Value[];
  kwargs: Map<string, Value>;
  line: number;
  /** Attributes the script set on the result (`config.num_hidden_layers = 12`). */
  attrs?: Map<string, Value>;
  /** The call a method was called on (`torch.arange(1, n + 1).repeat(d, 1)`: the arange), for the shape it has. */
  receiver?: CallResultValue;
}

/** A tensor while a module's forward is traced: its full shape (batch 1) and whether it holds integers (token ids). */
export interface TensorValue {
  kind: 'tensor';
  id: number;
  shape: number[];
  integer: boolean;
  /**
   * Where the tensor's elements are not laid out in the order of its dimensions (a transposed or permuted view;
   * attention's output, stored batch x tokens x heads x head_dim): each dimension's place in memory, outermost 0.
   * reshape() and contiguous() copy such a tensor. A layout of another length than the shape (the view changed the
   * number of dimensions) is no longer known, and stays strided.
   */
  layout?: readonly number[];
  /**
   * Integers drawn uniformly from least..most (both included), where the script says so (`torch.randint(50, 401,
   * (n,))`, a dataset's lengths): an element read as a number is such a draw (see NumberValue.least).
   */
  drawn?: { least: number; most: number };
}

/** A method looked up on a value (`layers.append`, `cfg.get`, `model.to`), not yet called. */
export interface MethodValue { kind: 'method'; receiver: Value; name: string }

export interface UnknownValue { kind: 'unknown'; origin?: Origin }

export type Value =
  | NumberValue | StringValue | BoolValue | NoneValue | ListValue | DictValue | DtypeValue | ObjectValue
  | FunctionValue | ClassValue | RefValue | LayerValue | CallResultValue | MethodValue | TensorValue | UnknownValue;

export const UNKNOWN: UnknownValue = { kind: 'unknown' };
export const NONE: NoneValue = { kind: 'none' };

/** A Python scope: module, function or class body. Functions see their closure, never a class body. */
export class Scope {
  readonly vars = new Map<string, Value>();
  constructor(readonly parent: Scope | undefined, readonly kind: 'module' | 'function' | 'class') {}

  lookup(name: string): Value | undefined {
    for (let scope: Scope | undefined = this; scope; scope = scope.parent) {
      const value = scope.vars.get(name);
      if (value !== undefined) return value;
    }
    return undefined;
  }
}

/** A copy of a value with another origin (scalars only; containers keep theirs). */
export function withOrigin<T extends Value>(value: T, origin: Origin | undefined): T {
  if (!origin) return value;
  switch (value.kind) {
    case 'number':
    case 'string':
    case 'bool':
    case 'none':
    case 'dtype':
    case 'unknown':
      return { ...value, origin };
    default:
      return value;
  }
}

/** The same value, read through a config (`cfg["x"]`, `args.x`): its `how` says so, its line stays. */
export function readThrough(value: Value, how: How): Value {
  const origin = 'origin' in value ? value.origin : undefined;
  if (!origin || origin.how !== 'literal') return value;
  return withOrigin(value, { line: origin.line, how });
}

/** torch.nn classes a script's class may derive from: nn.Module itself, its containers and its layers (`nn.LayerNorm`). */
export const TORCH_NN_CLASS = /^torch\.nn\.(?:modules\.\w+\.)?([A-Z]\w*)$/;

export function isModuleClass(cls: ClassValue, depth = 0): boolean {
  if (depth > 8) return false;
  return cls.bases.some((base) =>
    (base.kind === 'ref' && (/(^|\.)(Module|LightningModule|PreTrainedModel)$/.test(base.path) || TORCH_NN_CLASS.test(base.path))) ||
    (base.kind === 'class' && isModuleClass(base, depth + 1)));
}

/**
 * A class's method resolution order, as Python's C3 linearization gives it: the script's classes and the library
 * classes they derive from (a torch.nn class other than nn.Module derives from nn.Module). Undefined where C3 finds
 * no order (Python raises a TypeError there) or the hierarchy is deeper than any script's.
 */
export function methodResolutionOrder(cls: ClassValue): ReadonlyArray<ClassValue | RefValue> | undefined {
  // A class's bases never change once it is defined: its order is found once (asked at every instance, method call
  // and isinstance of the class).
  if (orders.has(cls)) return orders.get(cls);
  const order = linearization(cls);
  orders.set(cls, order);
  return order;
}

const orders = new WeakMap<ClassValue, ReadonlyArray<ClassValue | RefValue> | undefined>();

function linearization(cls: ClassValue): Array<ClassValue | RefValue> | undefined {
  const memo = new Map<ClassValue, Array<ClassValue | RefValue> | undefined>();
  const key = (entry: ClassValue | RefValue): ClassValue | string => (entry.kind === 'ref' ? entry.path : entry);
  const linearize = (entry: ClassValue | RefValue, depth: number): Array<ClassValue | RefValue> | undefined => {
    if (depth > 16) return undefined;
    if (entry.kind === 'ref') {
      const nn = TORCH_NN_CLASS.exec(entry.path);
      return nn && nn[1] !== 'Module' ? [entry, { kind: 'ref', path: 'torch.nn.Module' }] : [entry];
    }
    if (memo.has(entry)) return memo.get(entry);
    const bases = entry.bases.filter((b): b is ClassValue | RefValue => b.kind === 'class' || b.kind === 'ref');
    const sequences: Array<Array<ClassValue | RefValue>> = [];
    for (const base of bases) {
      const linear = linearize(base, depth + 1);
      if (!linear) return undefined;
      sequences.push([...linear]);
    }
    sequences.push([...bases]);
    const out: Array<ClassValue | RefValue> = [entry];
    for (let guard = 0; guard < 256; guard++) {
      const remaining = sequences.filter((s) => s.length > 0);
      if (remaining.length === 0) {
        memo.set(entry, out);
        return out;
      }
      // The first head that is in no other sequence's tail.
      const head = remaining.map((s) => s[0]!).find((candidate) => !remaining.some((s) => s.slice(1).some((x) => key(x) === key(candidate))));
      if (!head) return undefined;
      out.push(head);
      for (const s of remaining) if (key(s[0]!) === key(head)) s.shift();
    }
    return undefined;
  };
  return linearize(cls, 0);
}

/**
 * The torch.nn class a script's class extends for its behaviour (`class Stage(nn.Sequential)`, `class LayerNorm2d(
 * nn.LayerNorm)`): the first torch.nn class other than nn.Module in its method resolution order, by name.
 */
export function torchNnBase(cls: ClassValue): string | undefined {
  for (const entry of methodResolutionOrder(cls) ?? []) {
    if (entry.kind !== 'ref') continue;
    const nn = TORCH_NN_CLASS.exec(entry.path);
    if (nn && nn[1] !== 'Module') return nn[1];
  }
  return undefined;
}

/** Whether a value is a module: a torch.nn layer or container, or an instance of a module class of the script. */
export function isModuleValue(value: Value): value is LayerValue | ObjectValue {
  return value.kind === 'layer' || (value.kind === 'object' && value.role === 'instance' && !!value.cls && isModuleClass(value.cls));
}

export function truthy(value: Value): boolean | undefined {
  switch (value.kind) {
    case 'number': return value.value !== 0;
    case 'string': return value.value !== '';
    case 'bool': return value.value;
    case 'none': return false;
    case 'list': return value.items.length > 0;
    case 'dict': return value.entries.size > 0;
    case 'unknown': return undefined;
    default: return true;
  }
}

export function numberOf(value: Value | undefined): number | undefined {
  if (!value) return undefined;
  if (value.kind === 'number') return value.value;
  if (value.kind === 'bool') return value.value ? 1 : 0;
  return undefined;
}

/** A tuple key's text: a control character no script key starts with, then its parts (strings quoted). */
const TUPLE_KEY_MARK = '\u0001';

function tupleKeyText(key: Value, depth = 0): string | undefined {
  if (key.kind === 'string') return JSON.stringify(key.value);
  if (key.kind === 'number' && Number.isInteger(key.value)) return String(key.value);
  if (key.kind !== 'list' || !key.tuple || depth > 4) return undefined;
  const parts = key.items.map((item) => tupleKeyText(item, depth + 1));
  return parts.every((part) => part !== undefined) ? `(${parts.join(',')})` : undefined;
}

/**
 * Where a dict stores a Python key: a string as itself, an integer as its decimal text, a tuple of these as its
 * marked text; undefined for other keys.
 */
function storedKey(key: Value | undefined): { text: string; number: boolean; tuple?: Value } | undefined {
  if (key?.kind === 'string') return { text: key.value, number: false };
  if (key?.kind === 'number' && Number.isInteger(key.value)) return { text: String(key.value), number: true };
  const text = key?.kind === 'list' && key.tuple ? tupleKeyText(key) : undefined;
  return text !== undefined ? { text: TUPLE_KEY_MARK + text, number: false, tuple: key } : undefined;
}

/** The entry of a dict under a string, integer or tuple key (`cfg["lr"]`, `strides[8]`, `nodes[(i, j)]`). */
export function dictGet(dict: DictValue, key: Value | undefined): Value | undefined {
  const stored = storedKey(key);
  if (!stored || (dict.numberKeys?.has(stored.text) ?? false) !== stored.number) return undefined;
  return dict.entries.get(stored.text);
}

/** Sets a dict's entry under a string, integer or tuple key; false where the key is none of these. */
export function dictSet(dict: DictValue, key: Value | undefined, value: Value): boolean {
  const stored = storedKey(key);
  if (!stored) return false;
  if (stored.number) (dict.numberKeys ??= new Set()).add(stored.text);
  else dict.numberKeys?.delete(stored.text);
  if (stored.tuple) (dict.tupleKeys ??= new Map()).set(stored.text, stored.tuple);
  dict.entries.set(stored.text, value);
  return true;
}

/** A dict's keys as the script wrote them: integers for integer keys, tuples for tuple keys, strings for the rest. */
export function dictKeys(dict: DictValue): Value[] {
  return [...dict.entries.keys()].map((k): Value => dict.tupleKeys?.get(k)
    ?? (dict.numberKeys?.has(k) ? { kind: 'number', value: Number(k) } : { kind: 'string', value: k }));
}

export function stringOf(value: Value | undefined): string | undefined {
  return value?.kind === 'string' ? value.value : undefined;
}

/**
 * The range `torch.randint(low, high, size)` draws from (high excluded; `torch.randint(high, size)` from 0): a
 * lengths vector, a dataset's per-item lengths. Undefined for another call or bounds the script does not fix.
 */
export function drawnRange(call: CallResultValue): { least: number; most: number } | undefined {
  if (call.path !== 'torch.randint') return undefined;
  const sized = call.args.length >= 3 || (call.args.length === 2 && call.kwargs.has('size'));
  const low = call.kwargs.get('low') ?? (sized ? call.args[0] : undefined) ?? { kind: 'number', value: 0 };
  const high = call.kwargs.get('high') ?? (sized ? call.args[1] : call.args[0]);
  const [least, bound] = [numberOf(low), numberOf(high)];
  if (least === undefined || bound === undefined || !Number.isInteger(least) || !Number.isInteger(bound) || bound - 1 < least) return undefined;
  return { least, most: bound - 1 };
}

/** Torch functions that make a tensor of the sizes they are given (`torch.zeros(2, 3)`, `size=(2, 3)`). */
const SIZED_FACTORY = /^torch\.(randint|randn|rand|zeros|ones|empty|full|randperm|normal)$/;
/**
 * A tensor such a function (or `torch.multinomial`) makes, sliced or not, reshaped to sizes the script gives:
 * `tokens[i:j].view(B, T)` (nanoGPT's DataLoaderLite), `torch.multinomial(noise, b * k).view(-1, k)`.
 */
const RESHAPED_FACTORY = /^torch\.(multinomial|randint|randn|rand|zeros|ones|empty|full|randperm|normal)(\[\])*\(\)\.(view|reshape)$/;
/** Torch functions whose result has their argument's shape (`torch.log(A)` of a sized tensor). */
const ELEMENT_WISE_FUNCTION = /^torch\.(log|exp|sqrt|rsqrt|abs|neg|sin|cos|tanh|sigmoid|square|reciprocal|log1p|expm1|clone|nn\.functional\.normalize)$/;
/** Casts to a floating dtype, as methods of a tensor. */
const FLOAT_CAST_METHOD = /\(\)\.(float|double|half|bfloat16)$/;
/** Casts to an integer or boolean dtype, as methods of a tensor (`torch.zeros(n).long()`, a buffer of indices). */
const INTEGER_CAST_METHOD = /\(\)\.(long|int|short|byte|char|bool)$/;

/**
 * How a call makes a tensor, for the readers of its shape below (tensorShape, madeTensorShape, partialTensorShape,
 * listTensorShape): a constructor is recognised here once, and each reader sizes the kinds it reads.
 */
type TensorMaking =
  | { kind: 'sized'; sizes: Value[] }
  | { kind: 'reshaped'; sizes: Value[] }
  | { kind: 'element-wise'; of: Value | undefined }
  | { kind: 'real-view'; of: Value | undefined }
  | { kind: 'range'; bounds: Value[] }
  | { kind: 'repeated'; of: CallResultValue; times: Value[] }
  | { kind: 'transposed'; of: CallResultValue }
  | { kind: 'unsqueezed'; of: CallResultValue; dim: Value | undefined }
  | { kind: 'lists'; lists: ListValue }
  | { kind: 'joined'; parts: readonly Value[]; stack: boolean; dim: Value | undefined };

function tensorMaking(call: CallResultValue): TensorMaking | undefined {
  // Sizes given one by one or as one tuple (`torch.randn(B, T)`, `torch.zeros((B, T))`).
  const spread = (given: readonly Value[]): Value[] => (given.length === 1 && given[0]!.kind === 'list' ? given[0]!.items : [...given]);
  if (SIZED_FACTORY.test(call.path)) {
    const size = call.kwargs.get('size');
    // `torch.randint([low,] high, size)`, `torch.full(size, fill)`, `torch.normal(mean, std, size)`: the sizes are
    // one argument of several.
    const positional = call.path === 'torch.randint' ? call.args.slice(call.args.length >= 3 ? 2 : 1, call.args.length >= 3 ? 3 : 2)
      : call.path === 'torch.full' ? call.args.slice(0, 1) : call.path === 'torch.normal' ? call.args.slice(2, 3) : call.args;
    return { kind: 'sized', sizes: spread(size ? [size] : positional) };
  }
  if (RESHAPED_FACTORY.test(call.path)) return { kind: 'reshaped', sizes: spread(call.args) };
  if (ELEMENT_WISE_FUNCTION.test(call.path)) return { kind: 'element-wise', of: call.args[0] };
  // A cast of a sized tensor (`torch.arange(n).float()`) keeps its shape.
  if ((FLOAT_CAST_METHOD.test(call.path) || INTEGER_CAST_METHOD.test(call.path)) && call.receiver) return { kind: 'element-wise', of: call.receiver };
  if (call.path === 'torch.view_as_real') return { kind: 'real-view', of: call.args[0] };
  if (call.path === 'torch.arange') return { kind: 'range', bounds: call.args };
  if (/\(\)\.repeat$/.test(call.path) && call.receiver) return { kind: 'repeated', of: call.receiver, times: spread(call.args) };
  // A matrix's transpose (`sobel.T`) and a new axis (`kernels.unsqueeze(1)`, a filter bank shaped for conv2d).
  if (/\(\)\.(T|mT)$/.test(call.path) && call.receiver) return { kind: 'transposed', of: call.receiver };
  if (/\(\)\.unsqueeze$/.test(call.path) && call.receiver) return { kind: 'unsqueezed', of: call.receiver, dim: call.kwargs.get('dim') ?? call.args[0] };
  if (/^torch\.(tensor|as_tensor)$/.test(call.path) && call.args[0]?.kind === 'list') return { kind: 'lists', lists: call.args[0] };
  if (call.path === 'torch.stack' || call.path === 'torch.cat') {
    const parts = joinedParts(call);
    if (parts) return { kind: 'joined', parts, stack: call.path === 'torch.stack', dim: call.kwargs.get('dim') ?? call.args[1] };
  }
  return undefined;
}

/** A size the script gives, where it is a whole number above 0 (`-1`, left to the others, is not). */
function givenSize(item: Value): number | undefined {
  return item.kind === 'number' && Number.isInteger(item.value) && item.value > 0 ? item.value : undefined;
}

/** Where a size came from: its own origin, else the call's line, as a literal. */
function sizeOrigin(item: Value | undefined, call: CallResultValue): { line: number; how: How } {
  const origin = item && 'origin' in item ? item.origin : undefined;
  return origin ? { line: origin.line, how: origin.how } : { line: call.line, how: 'literal' };
}

/** The shape a tensor-creating call is given: `torch.zeros(1, 1, d)`, `torch.randint(0, V, (N, S))`. */
export function tensorShape(call: CallResultValue): { dims: number[]; line: number; how: How; dimOrigins?: Array<{ line: number; how: How }>; least?: Array<number | undefined> } | undefined {
  const made = tensorMaking(call);
  if (made?.kind !== 'sized' && made?.kind !== 'reshaped') return undefined;
  const dims = made.sizes.map(givenSize);
  if (dims.length === 0 || dims.some((d) => d === undefined)) return undefined;
  const last = sizeOrigin(made.sizes[made.sizes.length - 1], call);
  if (made.kind === 'reshaped') return { dims: dims as number[], ...last, dimOrigins: made.sizes.map((item) => sizeOrigin(item, call)) };
  // Sizes drawn at random (`torch.rand(3, h, w)` with h, w from randint): the smallest each can be.
  const least = made.sizes.map((item) => (item.kind === 'number' ? item.least : undefined));
  return { dims: dims as number[], ...last, ...(least.some((l) => l !== undefined) ? { least } : {}) };
}

/**
 * Bytes per element of a tensor the script makes: a cast's dtype (`.long()`, `.half()`), else its dtype= (int64 for
 * randint), else that of the tensor an element-wise function was given (`F.normalize(torch.randn(d, k))`); fp32 by
 * default.
 */
export function madeTensorElementBytes(call: CallResultValue, depth = 0): number {
  const cast = FLOAT_CAST_METHOD.test(call.path) || INTEGER_CAST_METHOD.test(call.path) ? call.path.slice(call.path.lastIndexOf('.') + 1) : undefined;
  if (cast) return dtypeBytes(cast);
  const dtype = call.kwargs.get('dtype');
  // Floating dtypes are dtype values; torch.long, torch.bool and the other integer types stay references.
  if (dtype?.kind === 'dtype') return dtypeBytes(dtype.name);
  if (dtype?.kind === 'ref') return dtypeBytes(dtype.path.replace(/^torch\./, ''));
  const made = tensorMaking(call);
  if (made?.kind === 'element-wise' && made.of?.kind === 'call' && depth < 16) return madeTensorElementBytes(made.of, depth + 1);
  return call.path === 'torch.randint' ? 8 : 4;
}

function dtypeBytes(name: string): number {
  if (/^(long|int64|float64|double|complex64)$/.test(name)) return 8;
  if (/^(half|float16|bfloat16|int16|short)$/.test(name)) return 2;
  if (/^(bool|uint8|int8|byte|char)$/.test(name)) return 1;
  return 4;
}

/**
 * The shape of a tensor the script makes before forward from sized parts, for a parameter or buffer built from it
 * (Mamba's `nn.Parameter(torch.log(torch.arange(1, n + 1).repeat(d, 1)))`): what tensorShape sizes, an element-wise
 * function of it, `torch.arange` of known bounds, and `.repeat(...)` of a sized tensor. Undefined when any part is
 * not known.
 */
export function madeTensorShape(call: CallResultValue): number[] | undefined {
  const made = tensorMaking(call);
  switch (made?.kind) {
    case 'sized':
    case 'reshaped':
      return tensorShape(call)?.dims;
    case 'element-wise':
      return made.of?.kind === 'call' ? madeTensorShape(made.of) : undefined;
    case 'real-view': {
      // A complex tensor's real and imaginary parts side by side: one more dimension of 2.
      const base = made.of?.kind === 'call' ? madeTensorShape(made.of) : undefined;
      return base ? [...base, 2] : undefined;
    }
    case 'range': {
      const [first, second, third] = made.bounds.map(numberOf);
      const [start, stop, step] = made.bounds.length === 1 ? [0, first, 1] : [first, second, third ?? 1];
      if (start === undefined || stop === undefined || step === undefined || step === 0) return undefined;
      const n = Math.ceil((stop - start) / step);
      return n > 0 ? [n] : undefined;
    }
    case 'repeated': {
      const base = sizedOrListedShape(made.of);
      const times = made.times.map(numberOf);
      if (!base || times.some((t) => t === undefined) || times.length < base.length) return undefined;
      // Python's repeat: the shape gains leading dimensions of 1 up to the number of repeats given.
      const padded = [...new Array<number>(times.length - base.length).fill(1), ...base];
      return padded.map((d, i) => d * times[i]!);
    }
    case 'transposed': {
      const base = sizedOrListedShape(made.of);
      return base && base.length >= 2 ? [...base.slice(0, -2), base[base.length - 1]!, base[base.length - 2]!] : undefined;
    }
    case 'unsqueezed': {
      const base = sizedOrListedShape(made.of);
      const given = made.dim ? numberOf(made.dim) : undefined;
      if (!base || given === undefined || given < -base.length - 1 || given > base.length) return undefined;
      const at = given < 0 ? base.length + 1 + given : given;
      return [...base.slice(0, at), 1, ...base.slice(at)];
    }
    case 'joined': {
      // Sized tensors joined (`torch.stack([torch.cat([src, loops]), torch.cat([dst, loops])])`, a graph's edge list):
      // stack adds an axis of the parts' count, cat adds their sizes along its axis.
      // A part may be a literal (`torch.tensor([bos])`, a decoder input's start token).
      const shapes = made.parts.map((part) => (part.kind === 'call' ? sizedOrListedShape(part) : undefined));
      if (shapes.length === 0 || shapes.some((shape) => !shape)) return undefined;
      const [first, ...others] = shapes as number[][];
      const rank = first!.length + (made.stack ? 1 : 0);
      const given = numberOf(made.dim ?? NONE) ?? 0;
      const dim = given < 0 ? rank + given : given;
      if (dim < 0 || dim >= rank || others.some((shape) => shape.length !== first!.length)) return undefined;
      if (made.stack) return [...first!.slice(0, dim), shapes.length, ...first!.slice(dim)];
      if (others.some((shape) => shape.some((d, i) => i !== dim && d !== first![i]))) return undefined;
      return first!.map((d, i) => (i === dim ? shapes.reduce((sum, shape) => sum + shape![i]!, 0) : d));
    }
    default:
      return undefined;
  }
}

/**
 * The shape of a tensor the script makes from sized parts (madeTensorShape) or from nested lists (listTensorShape,
 * `torch.tensor([[0.0, 1.0], [1.0, 0.0]])`): what an expression built on either (a transpose, a stack) starts from.
 */
export function sizedOrListedShape(call: CallResultValue): number[] | undefined {
  return madeTensorShape(call) ?? listTensorShape(call)?.dims;
}

/** The tensors `torch.stack` / `torch.cat` joins, from their list argument. */
function joinedParts(call: CallResultValue): readonly Value[] | undefined {
  const list = call.kwargs.get('tensors') ?? call.args[0];
  return list?.kind === 'list' ? list.items : undefined;
}

/**
 * Whether a tensor madeTensorShape sizes holds integers: made so (`randint`, `randperm`, an integer dtype),
 * `torch.arange` of integer bounds, or joined from integer parts.
 */
export function madeTensorIsInteger(call: CallResultValue): boolean {
  if (makesIntegers(call.path, call.args, call.kwargs)) return true;
  if (call.path === 'torch.arange') return !call.kwargs.has('dtype') && call.args.every((arg) => arg.kind === 'number' && Number.isInteger(arg.value) && !arg.real);
  if (call.path === 'torch.stack' || call.path === 'torch.cat') {
    const parts = joinedParts(call);
    return !!parts && parts.length > 0 && parts.every((part) => part.kind === 'call' && madeTensorIsInteger(part));
  }
  if (/^torch\.(tensor|as_tensor)$/.test(call.path)) return listTensorShape(call)?.integer ?? false;
  return false;
}

/**
 * The shape a tensor-creating call is given where only some sizes are known: a collate function's
 * `torch.full((len(batch), crop_len), pad, dtype=torch.long)` knows its sequence but not its batch, and drawn
 * indices laid out per sample (`torch.multinomial(noise, b * k).view(-1, k)`, negative samples) leave the first to
 * the batch. Each unknown size is undefined; the origin is the last known size's.
 */
export function partialTensorShape(call: CallResultValue): { dims: Array<number | undefined>; line: number; how: How; integer: boolean } | undefined {
  const made = tensorMaking(call);
  if ((made?.kind !== 'sized' && made?.kind !== 'reshaped') || made.sizes.length === 0) return undefined;
  const known = [...made.sizes].reverse().find((item) => item.kind === 'number');
  return { dims: made.sizes.map(givenSize), ...sizeOrigin(known, call), integer: makesIntegers(call.path, call.args, call.kwargs) || /^torch\.multinomial\b/.test(call.path) };
}

/** Whether a made tensor (or a slice or view of one) holds integers: token ids, labels, indices. */
export function isIntegerTensor(call: CallResultValue): boolean {
  if (INTEGER_CAST_METHOD.test(call.path)) return !call.path.endsWith('.bool');
  if (FLOAT_CAST_METHOD.test(call.path)) return false;
  return makesIntegers(call.path, call.args, call.kwargs);
}

/**
 * Whether a torch function that makes a tensor from sizes makes integers: `randint`, `randperm`, an integer
 * `dtype=`, or `torch.full((n,), pad_id)` without a dtype (PyTorch takes the dtype from the fill value: int64 for a
 * Python int).
 */
export function makesIntegers(path: string, args: readonly Value[], kwargs: ReadonlyMap<string, Value>): boolean {
  if (/^torch\.(randint|randperm)\b/.test(path) || isIntegerDtype(kwargs.get('dtype'))) return true;
  if (path !== 'torch.full' || kwargs.has('dtype')) return false;
  const fill = kwargs.get('fill_value') ?? args[1];
  return fill?.kind === 'number' && Number.isInteger(fill.value) && !fill.real;
}

/** Whether a `dtype=` value is an integer dtype (`torch.full((n,), pad_id, dtype=torch.long)`). */
export function isIntegerDtype(dtype: Value | undefined): boolean {
  const name = dtype?.kind === 'dtype' ? dtype.name : dtype?.kind === 'ref' ? dtype.path.replace(/^torch\./, '') : '';
  return /^(long|int|int64|int32|int16|uint8|int8)$/.test(name);
}

/** Nesting of Python lists a tensor is made from that is followed (a tensor of more axes is not made from lists). */
const MAX_LIST_NESTING = 6;

/**
 * The shape of a tensor made from nested Python lists (`torch.tensor([ids for ids in choices])`, a dataset's padded
 * token lists): each axis is the length of the lists at that depth, where every list there has the same length.
 * Integer where the numbers the program model knows are all integers; a `dtype=` decides where given. Undefined where the lists
 * are ragged or not known.
 */
export function listTensorShape(call: CallResultValue): { dims: number[]; integer: boolean } | undefined {
  const made = tensorMaking(call);
  if (made?.kind !== 'lists') return undefined;
  const dims: number[] = [];
  let level: Value[] = [made.lists];
  while (level.every((item) => item.kind === 'list') && dims.length < MAX_LIST_NESTING) {
    const lists = level as ListValue[];
    const length = lists[0]!.items.length;
    if (length === 0 || lists.some((list) => list.items.length !== length)) return undefined;
    dims.push(length);
    level = lists.flatMap((list) => list.items);
  }
  // Below the lists, numbers (some of them draws the program model leaves unknown), never more lists.
  if (level.some((item) => item.kind === 'list' || item.kind === 'dict')) return undefined;
  const numbers = level.filter((item): item is NumberValue => item.kind === 'number');
  const integer = numbers.length > 0 && numbers.every((item) => Number.isInteger(item.value));
  const dtype = call.kwargs.get('dtype');
  return { dims, integer: dtype ? isIntegerDtype(dtype) : integer };
}

/**
 * What a forward trace knows about tensors: the interpreter hands it every operation on a tensor (a layer called,
 * a torch function, a tensor method, an operator, an index) and uses the value it returns; undefined means "not an
 * operation on tensors" and the interpreter goes on as usual.
 */
export interface TensorTracer {
  layer(layer: LayerValue, args: Value[], kwargs: Map<string, Value>): Value | undefined;
  function(path: string, args: Value[], kwargs: Map<string, Value>): Value | undefined;
  method(receiver: TensorValue, name: string, args: Value[], kwargs: Map<string, Value>): Value;
  attribute(receiver: TensorValue, name: string): Value;
  binary(operator: string, a: Value, b: Value): Value | undefined;
  index(receiver: TensorValue, key: Value): Value;
  /** An `nn.Parameter` read inside forward, as a tensor. */
  parameter(layer: LayerValue): Value;
  /** A layer's weight read as a tensor inside forward (`x @ self.embed.weight.t()`, a tied head); undefined where unknown. */
  layerWeight?(layer: LayerValue): Value | undefined;
  /** A tensor the module holds without gradient (a buffer), made by `made` with `shape`: one tensor per value. */
  buffer?(made: CallResultValue, shape: number[], integer: boolean): Value;
  /**
   * A library model (`timm.create_model(...)`, a torchvision builder) a script's module calls in its forward
   * (`self.encoder(x)`, `self.encoder.forward_features(x)`): its output, undefined where the tracer does not know it.
   */
  libraryModel?(model: CallResultValue, method: string, args: Value[]): Value | undefined;
  /**
   * A submodule of a library model (`resnet.layer3`, one of `resnet.children()`) called on a tensor, by its dotted
   * path in the model: its output, undefined where the tracer does not know the submodule.
   */
  libraryPart?(model: CallResultValue, path: string, args: Value[]): Value | undefined;
  /** A point to count a loop's pass from: what forward has kept so far (see repeatPass). */
  passMark?(): number;
  /**
   * A loop of forward longer than the unrolling bound ran its first passes: the `times` passes left each keep what
   * the last one run kept since `mark` (every time step of a scan keeps its own state).
   */
  repeatPass?(mark: number, times: number): void;
  /**
   * The scopes of the functions running while forward is traced, outermost first (the array itself, which grows and
   * shrinks as calls run): the tensors their locals hold are alive, kept for backward or not.
   */
  watchFrames?(frames: readonly Scope[]): void;
  enterModule(module: ObjectValue | LayerValue, inputs: Value[]): void;
  /** A module forward gives torch.utils.checkpoint.checkpoint itself (`checkpoint(blk, x)`), before it runs. */
  checkpointed?(module: ObjectValue | LayerValue): void;
  exitModule(module: ObjectValue | LayerValue): void;
}
