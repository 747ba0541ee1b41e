// OOM112: CUDA work inside code that DataLoader worker processes run (a Dataset's __getitem__/__iter__, a collate_fn
// or a worker_init_fn) when the DataLoader has workers: each worker process creates a CUDA context of its own.
import type { Node } from '../engine/parser';
import { possibleValues } from '../engine/semantic/bindings';
import { cudaPlacementOf } from '../engine/semantic/devices';
import type { ClassInfo, FunctionInfo, SemanticModel } from '../engine/semantic/model';
import { callArguments, calleeName, children, contains, dottedName, enclosingFunction } from '../engine/syntax';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

/** DataLoader's positional parameters: dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn, ... */
const POSITION = { dataset: 0, num_workers: 5, collate_fn: 6, worker_init_fn: 10 } as const;

/** torch.cuda calls that create no context: seeding is deferred, and the queries read the driver only. */
const LAZY_CUDA = new Set(['manual_seed', 'manual_seed_all', 'seed', 'seed_all', 'is_available', 'device_count', 'is_initialized', 'get_arch_list']);

/** Classes whose call makes a dataset out of other datasets: their datasets' workers are the loader's. */
const DATASET_WRAPPERS = /^(Subset|ConcatDataset|ChainDataset|random_split|StackDataset)$/;

function argument(call: Node, name: keyof typeof POSITION): Node | undefined {
  const { positional, keywords } = callArguments(call);
  return keywords.get(name) ?? positional[POSITION[name]];
}

/** Whether `num_workers` is 0 for sure: the literal 0, or a name only ever assigned 0. */
function isZero(model: SemanticModel, node: Node): boolean {
  if (node.type === 'integer') return Number(node.text) === 0;
  if (node.type !== 'identifier' && node.type !== 'attribute') return false;
  const { values, unknown } = possibleValues(model, node);
  return !unknown && values.length > 0 && values.every((value) => value.node.type === 'integer' && Number(value.node.text) === 0);
}

/** The class of this file a call instantiates (`FaceDataset(...)`), if any. */
function localClass(model: SemanticModel, callee: Node | null): ClassInfo | undefined {
  if (callee?.type !== 'identifier' || model.qualify(callee) !== callee.text) return undefined;
  return model.classNamed(callee.text);
}

/** The methods of a class (and of its local base classes) named `names`. */
function methodsOf(model: SemanticModel, cls: ClassInfo, names: ReadonlySet<string>, seen = new Set<number>()): FunctionInfo[] {
  if (seen.has(cls.node.id)) return [];
  seen.add(cls.node.id);
  const own = model.functions.filter((fn) => fn.classInfo?.node.id === cls.node.id && names.has(fn.name));
  const inherited = cls.baseNames.flatMap((base) => {
    const parent = model.classNamed(base.split('.').pop()!);
    return parent ? methodsOf(model, parent, new Set([...names].filter((name) => !own.some((fn) => fn.name === name))), seen) : [];
  });
  return [...own, ...inherited];
}

const DATASET_METHODS = new Set(['__getitem__', '__getitems__', '__iter__']);

/** The local Dataset classes a DataLoader's `dataset` argument may hold. */
function datasetClasses(model: SemanticModel, node: Node | undefined, depth = 3): ClassInfo[] {
  if (!node || depth < 0) return [];
  const { values } = possibleValues(model, node);
  return values.flatMap((value) => {
    if (value.node.type !== 'call' || value.element) return [];
    const cls = localClass(model, value.node.childForFieldName('function'));
    if (cls) return [cls];
    // `Subset(FaceDataset(...), idx)`, `ConcatDataset([a, b])`.
    if (DATASET_WRAPPERS.test(calleeName(value.node) ?? '')) {
      return callArguments(value.node).positional.flatMap((arg) =>
        arg.type === 'list' || arg.type === 'tuple' ? children(arg).flatMap((element) => datasetClasses(model, element, depth - 1)) : datasetClasses(model, arg, depth - 1));
    }
    return [];
  });
}

/**
 * The code a `collate_fn=` / `worker_init_fn=` argument runs: a function of this file (also through
 * `functools.partial`), a lambda, the `__call__` of an instance of a local class, or a method of a local class.
 */
function callbackCode(model: SemanticModel, node: Node | undefined, depth = 3): Node[] {
  if (!node || depth < 0) return [];
  if (node.type === 'lambda') return [node];
  if (node.type === 'call') {
    if (calleeName(node) === 'partial') return callbackCode(model, callArguments(node).positional[0], depth - 1);
    const cls = localClass(model, node.childForFieldName('function'));
    return cls ? methodsOf(model, cls, new Set(['__call__'])).map((fn) => fn.node) : [];
  }
  const name = dottedName(node);
  if (!name) return [];
  const last = name.split('.').pop()!;
  const functions = model.functions.filter((fn) => fn.name === last && (node.type === 'attribute' ? !!fn.classInfo : !fn.classInfo));
  if (functions.length > 0) return functions.map((fn) => fn.node);
  return possibleValues(model, node).values.flatMap((value) => (value.element || value.index !== undefined ? [] : callbackCode(model, value.node, depth - 1)));
}

/** Whether a call does CUDA work: places on CUDA, pins memory, or calls into torch.cuda (seeding and queries aside). */
function isCudaWork(model: SemanticModel, call: Node): boolean {
  const fn = call.childForFieldName('function');
  if (fn?.type === 'attribute' && calleeName(call) === 'pin_memory') return true;
  const qualified = model.qualify(fn) ?? '';
  if (/^torch\.cuda\./.test(qualified)) {
    const rest = qualified.slice('torch.cuda.'.length);
    return !LAZY_CUDA.has(rest) && !/^(amp|nvtx)\./.test(rest);
  }
  return cudaPlacementOf(model, call) !== undefined;
}

/** The first CUDA call in a function or lambda (calls in functions nested inside it are theirs, not its). */
function firstCudaWork(model: SemanticModel, code: Node): Node | undefined {
  const calls = code.type === 'lambda' ? code.descendantsOfType('call').filter((call): call is Node => !!call) : model.callsWithin(code);
  return calls.filter((call) => code.type !== 'lambda' || enclosingFunction(call).id === enclosingFunction(code).id)
    .sort((a, b) => a.startIndex - b.startIndex)
    .find((call) => isCudaWork(model, call));
}

function displayName(model: SemanticModel, code: Node): string {
  if (code.type === 'lambda') return 'lambda';
  const info = model.functionInfo(code);
  return info?.classInfo ? `${info.classInfo.name}.${info.name}` : info?.name ?? '';
}

export const cudaInDataloaderWorker: Rule = {
  ...ruleCode('OOM112'),
  code: 'OOM112',
  check({ model, spells, inRegion }) {
    const reports: RuleReport[] = [];
    // Only files that build a DataLoader and do some CUDA work can have this.
    if (!spells('DataLoader') || !(spells('cuda') || spells('pin_memory'))) return reports;
    const workerCode = new Map<number, Node>();
    for (const loader of model.callsNamed('DataLoader')) {
      const workers = argument(loader, 'num_workers');
      // No workers (absent means 0): the loader runs everything in the training process.
      if (!workers || isZero(model, workers)) continue;
      for (const cls of datasetClasses(model, argument(loader, 'dataset'))) {
        for (const method of methodsOf(model, cls, DATASET_METHODS)) workerCode.set(method.node.id, method.node);
      }
      for (const code of [...callbackCode(model, argument(loader, 'collate_fn')), ...callbackCode(model, argument(loader, 'worker_init_fn'))]) {
        workerCode.set(code.id, code);
      }
    }
    for (const code of workerCode.values()) {
      const call = firstCudaWork(model, code);
      // One finding per worker function, at its first CUDA call.
      if (!call || !inRegion(call) || !contains(code, call)) continue;
      reports.push({
        node: call,
        message: t("'{0}' runs in the DataLoader's worker processes (num_workers is not 0), and this CUDA call makes every worker create its own CUDA context on the GPU, about 0.5 GiB per worker, next to the training process. Return CPU tensors from the worker code and move the batch to the GPU in the training loop (pin_memory=True on the DataLoader speeds up that copy).", displayName(model, code)),
      });
    }
    return reports.sort((a, b) => a.node.startIndex - b.node.startIndex);
  },
};
