// Whether code runs with autograd recording off, read from the syntax around it. The estimator asks this of the
// calls it sizes; the rules' semantic model answers the same question with aliases and callers resolved.
import type { PyNode } from './node';

const NO_GRAD_CONTEXT = /(^|\.)(no_grad|inference_mode)\(/;
const NO_GRAD_DECORATOR = /(^|\.)(no_grad|inference_mode)\b/;

/** Whether `node` runs under `with torch.no_grad()` / `inference_mode()`, or in a function decorated with one. */
export function underNoGrad(node: PyNode): boolean {
  for (let up = node.parent; up; up = up.parent) {
    if (up.type === 'with_statement') {
      const clause = up.namedChildren.find((child) => child?.type === 'with_clause');
      if (clause && NO_GRAD_CONTEXT.test(clause.text)) return true;
    }
    if (up.type === 'decorated_definition') {
      if (up.namedChildren.some((child) => child?.type === 'decorator' && NO_GRAD_DECORATOR.test(child.text))) return true;
    }
  }
  return false;
}
