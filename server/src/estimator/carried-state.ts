// Arguments a training loop hands back to the model it called: `logits, mems = model(inp, mems)` (a Transformer-XL's
// memory of the previous segment), `out, hidden = rnn(x, hidden)`. From the second step on, forward runs on what the
// previous call returned, not on the value the first call was given (`[None] * n_layer`): a later segment attends
// over the carried memory as well as its own tokens, and the memory stays alive through the whole step.
import type { PyNode } from '../engine/program/node';
import { enclosingLoops } from '../engine/syntax';

/** Where the call's result holds an argument's next value: an element of the tuple it returns, or the whole result. */
export type CarriedFrom = number | 'whole';

/**
 * The positional arguments of a call in a loop that the same statement binds again from the call's result, by their
 * position among the call's positional arguments: `logits, mems = model(inp, mems)` carries argument 1 from element 1.
 * Only a plain name counts (`mems`, not `mems[0]`), assigned by the statement that makes the call.
 */
export function carriedArguments(call: PyNode, argumentNodes: readonly PyNode[]): Map<number, CarriedFrom> {
  const carried = new Map<number, CarriedFrom>();
  const assignment = call.parent;
  // The call is the assignment's whole right side (`a, b = model(...)`), in a loop that runs it again.
  if (assignment?.type !== 'assignment' || assignment.childForFieldName('right')?.id !== call.id) return carried;
  if (enclosingLoops(call).length === 0) return carried;
  const left = assignment.childForFieldName('left');
  if (!left) return carried;
  const targets = left.type === 'identifier' ? undefined : left.type === 'pattern_list' || left.type === 'tuple_pattern' ? left.namedChildren : [];
  argumentNodes.forEach((argument, position) => {
    if (argument.type !== 'identifier') return;
    if (!targets) {
      if (left.text === argument.text) carried.set(position, 'whole');
      return;
    }
    const at = targets.findIndex((target) => target?.type === 'identifier' && target.text === argument.text);
    if (at >= 0) carried.set(position, at);
  });
  return carried;
}
