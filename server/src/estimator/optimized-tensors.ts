// Tensors an optimizer trains in place of a module's parameters: an image optimised through a frozen network
// (style transfer, feature visualisation, adversarial inputs). The tensor is what gets gradients and optimizer
// states; the network only runs, keeping what backward needs to reach its input.
import { madeTensorShape, tensorShape, type How, type Value } from '../engine/program/values';

/** Methods that return a tensor of their receiver's shape: a copy, a cast, or the receiver changed in place. */
const SAME_SHAPE_METHOD = /\(\)\.(clone|detach|contiguous|float|to|cuda|requires_grad_|[a-z]+_)$/;

export interface OptimizedTensors {
  /** Elements of all the tensors the optimizers hold. */
  elements: number;
  /** The first tensor's shape: its first axis is the step's batch. */
  dims: number[];
  /** Where the first tensor's first axis was written, and how it reached it. */
  line: number;
  how: How;
  /** The line of the first optimizer. */
  optimizerLine: number;
}

/**
 * The tensors the optimizers are given, where every optimizer holds only tensors the script makes with a shape it
 * determines (`LBFGS([img])` with `img = content.clone().requires_grad_(True)`); undefined where any holds a
 * module's parameters or a tensor of unknown shape.
 */
export function optimizedTensors(optimizers: readonly Value[]): OptimizedTensors | undefined {
  let found: OptimizedTensors | undefined;
  for (const optimizer of optimizers) {
    if (optimizer.kind !== 'call') return undefined;
    const given = optimizer.args[0] ?? optimizer.kwargs.get('params');
    const items = given?.kind === 'list' ? given.items : undefined;
    if (!items || items.length === 0) return undefined;
    for (const item of items) {
      const shaped = shapeThroughCopies(item);
      if (!shaped) return undefined;
      const elements = shaped.dims.reduce((product, d) => product * d, 1);
      found = found ? { ...found, elements: found.elements + elements } : { elements, ...shaped, optimizerLine: optimizer.line };
    }
  }
  return found;
}

/** The shape of a tensor made by a sized factory, read through the copies and in-place changes made of it. */
function shapeThroughCopies(value: Value): Omit<OptimizedTensors, 'elements' | 'optimizerLine'> | undefined {
  let at: Value | undefined = value;
  for (let depth = 0; depth < 8 && at?.kind === 'call'; depth++) {
    const dims = madeTensorShape(at);
    if (dims) {
      const origin = tensorShape(at);
      return { dims, line: origin?.dimOrigins?.[0]?.line ?? origin?.line ?? at.line, how: origin?.dimOrigins?.[0]?.how ?? origin?.how ?? 'literal' };
    }
    at = SAME_SHAPE_METHOD.test(at.path) ? at.receiver : undefined;
  }
  return undefined;
}
