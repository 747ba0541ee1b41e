// A training function run more than once on other images: a notebook that trains at one image size, frees the
// GPU (`del model, optimizer; torch.cuda.empty_cache()`), then builds the model again for a larger size and trains
// it with a smaller batch. Each run's batches are read from the loader and the model that call is given; the peak
// is that of the run whose batches hold the most pixels.
import { enclosingLoops } from '../engine/syntax';
import type { PyNode as Node } from '../engine/program/node';
import type { ProgramModel } from '../engine/program/interpreter';
import { numberOf, tensorShape, type CallResultValue, type ObjectValue, type Value } from '../engine/program/values';
import { datasetSample } from './dataset-samples';
import { loopLoader } from './growth';
import { libraryVisionCall } from './library-models';
import { treeIndex } from '../engine/program/tree-index';

/** One call of the function holding the training loop: its loader's batches, and the model it is given. */
export interface ImageRun {
  batch: number;
  imageSize: number;
  /** The library vision model (`timm.create_model(...)`) the call is given, if any. */
  model: CallResultValue | undefined;
  /** The call's line. */
  line: number;
}

const DATA_LOADER = /(^|\.)DataLoader$/;
const TENSOR_DATASET = /(^|\.)TensorDataset$/;

/**
 * The batch size and the (square) image side of a DataLoader over images: a TensorDataset's, or a Dataset class's
 * whose `__getitem__` returns a (C, H, W) image first.
 */
function loaderImages(program: ProgramModel, loader: Value | undefined): { batch: number; imageSize: number } | undefined {
  if (loader?.kind !== 'call' || !DATA_LOADER.test(loader.path)) return undefined;
  const batch = numberOf(loader.kwargs.get('batch_size') ?? loader.args[1]);
  const dataset = loader.kwargs.get('dataset') ?? loader.args[0];
  const images = dataset?.kind === 'call' && TENSOR_DATASET.test(dataset.path) ? dataset.args[0] : undefined;
  const shape = images?.kind === 'call' ? tensorShape(images) : undefined;
  const dims = shape?.dims ?? (dataset?.kind === 'object' && dataset.role === 'instance' ? sampleImageDims(program, dataset) : undefined) ?? [];
  // (N, C, H, W) with 1, 3 or 4 channels and a square image.
  if (batch === undefined || batch <= 0 || dims.length !== 4 || ![1, 3, 4].includes(dims[1]!) || dims[2] !== dims[3]) return undefined;
  return { batch, imageSize: dims[2]! };
}

/** The batch axis and image dims of the first tensor a dataset's sample holds (`return image, label`). */
function sampleImageDims(program: ProgramModel, dataset: ObjectValue): number[] | undefined {
  const sample = datasetSample(program, dataset);
  const first = sample?.kind === 'list' ? sample.items[0] : sample;
  return first?.kind === 'tensor' && first.shape.length === 3 ? [1, ...first.shape] : undefined;
}

/** The parameter names of a function definition, in order (`self` included where written). */
function parameterNames(fn: Node): string[] {
  return (fn.childForFieldName('parameters')?.namedChildren ?? []).map((p) => {
    if (!p) return '';
    if (p.type === 'identifier') return p.text;
    return p.childForFieldName('name')?.text ?? p.namedChildren.find((c) => c?.type === 'identifier')?.text ?? '';
  });
}

/** The argument node a call gives a parameter (by position or by keyword). */
function argumentFor(call: Node, index: number, name: string): Node | undefined {
  const args = (call.childForFieldName('arguments')?.namedChildren ?? []).filter((a): a is Node => a !== null && a.type !== 'comment');
  const keyword = args.find((a) => a.type === 'keyword_argument' && a.childForFieldName('name')?.text === name);
  if (keyword) return keyword.childForFieldName('value') ?? undefined;
  const positional = args.filter((a) => a.type !== 'keyword_argument');
  return index >= 0 && index < positional.length ? positional[index] : undefined;
}

/** The call's arguments, positional and keyword values alike. */
function argumentValues(call: Node): Node[] {
  return (call.childForFieldName('arguments')?.namedChildren ?? [])
    .filter((a): a is Node => a !== null && a.type !== 'comment')
    .map((a) => (a.type === 'keyword_argument' ? a.childForFieldName('value') ?? a : a));
}

/**
 * The runs of the function holding the training loop (the loop's loader is one of its parameters), in source
 * order, where every run's loader is a DataLoader of images; undefined where there is only one run, or a run
 * whose images are not read.
 */
export function imageRuns(program: ProgramModel, backwardCall: Node): ImageRun[] | undefined {
  const loop = enclosingLoops(backwardCall).find((outer) => outer.type === 'for_statement');
  const { node: iterable } = loopLoader(program, loop);
  let fn: Node | null = loop?.parent ?? null;
  while (fn && fn.type !== 'function_definition') fn = fn.parent;
  const fnName = fn?.childForFieldName('name')?.text;
  if (!fn || !fnName || iterable?.type !== 'identifier') return undefined;
  const parameters = parameterNames(fn);
  const loaderIndex = parameters.indexOf(iterable.text);
  if (loaderIndex < 0) return undefined;
  let root: Node = fn;
  while (root.parent) root = root.parent;
  const calls = treeIndex(root).calls
    .filter((c) => c.childForFieldName('function')?.text === fnName)
    .sort((a, b) => a.startIndex - b.startIndex);
  if (calls.length < 2) return undefined;
  const runs: ImageRun[] = [];
  for (const call of calls) {
    const images = loaderImages(program, program.valueOf(argumentFor(call, loaderIndex, iterable.text) ?? null));
    if (!images) return undefined;
    const model = argumentValues(call).map((a) => program.valueOf(a))
      .find((v): v is CallResultValue => v?.kind === 'call' && libraryVisionCall(v) !== undefined);
    runs.push({ ...images, model, line: call.startPosition.row });
  }
  return runs;
}

/** The run whose batches hold the most pixels, where it is not the first (the one the rest of detection reads). */
export function largestLaterRun(runs: readonly ImageRun[]): { first: ImageRun; largest: ImageRun } | undefined {
  const pixels = (run: ImageRun): number => run.batch * run.imageSize ** 2;
  const largest = runs.reduce((a, b) => (pixels(b) > pixels(a) ? b : a));
  return largest === runs[0] ? undefined : { first: runs[0]!, largest };
}
