// OOM116: .backward(create_graph=True) written in a loop body: each parameter's .grad then holds a graph that refers
// back to the parameter, a reference cycle that keeps the graphs of past iterations alive.
import type { Node } from '../engine/parser';
import type { SemanticModel } from '../engine/semantic/model';
import { callArguments, callReceiver, children, contains, enclosingFunction, enclosingLoops, enclosingStatement } from '../engine/syntax';
import type { Fix, TextEdit } from '../engine/types';
import { addTorchImport, replaceNode, torchNameAt } from '../fixes/edits';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';
import type { TextLike } from '../engine/piece-text';

interface BackwardParts {
  tensor: Node;
  gradient?: Node;
  retainGraph?: Node;
}

/** The tensor, gradient and retain_graph of `t.backward(g, ...)` or `torch.autograd.backward(t, g, ...)`, if plain. */
function backwardParts(model: SemanticModel, call: Node): BackwardParts | undefined {
  const { positional, keywords } = callArguments(call);
  const functional = /^torch\.autograd\.backward$/.test(model.qualify(call.childForFieldName('function')) ?? '');
  const allowed = functional ? ['tensors', 'grad_tensors', 'retain_graph', 'create_graph'] : ['gradient', 'retain_graph', 'create_graph'];
  // `inputs=` and other keywords change what is differentiated; a helper's backward (accelerator) is not a tensor's.
  if ([...keywords.keys()].some((key) => !allowed.includes(key))) return undefined;
  if (functional) {
    const tensor = positional[0] ?? keywords.get('tensors');
    return tensor && positional.length <= 2 ? { tensor, gradient: positional[1] ?? keywords.get('grad_tensors'), retainGraph: keywords.get('retain_graph') } : undefined;
  }
  const tensor = callReceiver(call);
  if (!tensor || model.backwardSubject(call) !== tensor || positional.length > 1) return undefined;
  return { tensor, gradient: positional[0] ?? keywords.get('gradient'), retainGraph: keywords.get('retain_graph') };
}

/**
 * The unsafe fix: where the code after the backward reads the gradient of one tensor made in this iteration
 * (`x.grad` for an input `x`), compute that gradient with torch.autograd.grad instead and read it from a name. The
 * parameters then no longer receive this backward's gradient in `.grad`.
 */
function autogradFix(model: SemanticModel, text: TextLike, call: Node): Fix | undefined {
  const statement = enclosingStatement(call);
  if (statement.type !== 'expression_statement' || children(statement)[0]?.id !== call.id) return undefined;
  const parts = backwardParts(model, call);
  const loop = enclosingLoops(call)[0];
  if (!parts || !loop) return undefined;
  const fn = enclosingFunction(call);
  // Every `.grad` the rest of the iteration touches (`torch.autograd.grad(...)` calls a function: not one).
  const reads = loop.descendantsOfType('attribute').filter((node): node is Node =>
    !!node && node.startIndex > call.endIndex && node.childForFieldName('attribute')?.text === 'grad' && enclosingFunction(node).id === fn.id &&
    !(node.parent?.type === 'call' && node.parent.childForFieldName('function')?.id === node.id));
  if (reads.length === 0) return undefined;
  const leaf = reads[0]!.childForFieldName('object');
  if (leaf?.type !== 'identifier' || reads.some((read) => read.childForFieldName('object')?.text !== leaf.text)) return undefined;
  // The tensor must be made in this iteration (an input with requires_grad), not a parameter or a comprehension name.
  const madeHere = model.reachingDefinitions(leaf.text, call).some((definition) => definition.kind !== 'param' && contains(loop, definition.site));
  if (!madeHere) return undefined;
  // Only reads: `x.grad = None`, `x.grad.zero_()` or `del x.grad` would need `.grad` itself.
  const onlyRead = reads.every((read) => {
    const parent = read.parent;
    if (parent?.type === 'assignment' && parent.childForFieldName('left')?.id === read.id) return false;
    if (parent?.type === 'augmented_assignment' || parent?.type === 'delete_statement') return false;
    const method = parent?.type === 'attribute' && parent.parent?.type === 'call' ? parent.childForFieldName('attribute')?.text ?? '' : '';
    return !method.endsWith('_');
  });
  if (!onlyRead) return undefined;
  const taken = new Set(fn.descendantsOfType('identifier').map((node) => node?.text));
  let name = `${leaf.text}_grad`;
  for (let i = 2; taken.has(name); i++) name = `${leaf.text}_grad${i}`;
  const torch = torchNameAt(model.root, call);
  const edits: TextEdit[] = torch ? [] : [addTorchImport(model.root, text)];
  const extra = [parts.gradient ? `grad_outputs=${parts.gradient.text}` : '', parts.retainGraph ? `retain_graph=${parts.retainGraph.text}` : ''].filter(Boolean);
  const tensorText = parts.tensor.type === 'parenthesized_expression' ? children(parts.tensor)[0]?.text ?? parts.tensor.text : parts.tensor.text;
  edits.push(replaceNode(call, `${name} = ${torch ?? 'torch'}.autograd.grad(${tensorText}, ${leaf.text}, ${[...extra, 'create_graph=True'].join(', ')})[0]`));
  for (const read of reads) edits.push(replaceNode(read, name));
  return { title: t('Compute the gradient of {0} with torch.autograd.grad(..., create_graph=True)', leaf.text), safe: false, edits };
}

export const createGraphBackwardInLoop: Rule = {
  ...ruleCode('OOM116'),
  code: 'OOM116',
  check({ model, text, spells, region }) {
    const reports: RuleReport[] = [];
    // The query cannot match a file that never writes the keyword.
    if (!spells('create_graph')) return reports;
    for (const match of model.queryMatches('create-graph-backward-in-loop', region)) {
      const call = match.get('call');
      // Written in a loop body (not in a helper the loop calls); a single call outside loops is not flagged.
      if (!call || enclosingLoops(call).length === 0) continue;
      const fix = autogradFix(model, text, call);
      reports.push({
        node: call,
        fixes: fix ? [fix] : [],
        message: t('backward(create_graph=True) stores in each parameter\'s .grad a gradient that carries its own graph, which refers back to the parameter: a reference cycle (PyTorch warns about it), so in a loop the graphs of past iterations, with their saved activations, can stay in GPU memory step after step. Compute the gradients you need with torch.autograd.grad(loss, inputs, create_graph=True), or set p.grad = None for every parameter after use.'),
      });
    }
    return reports;
  },
};

