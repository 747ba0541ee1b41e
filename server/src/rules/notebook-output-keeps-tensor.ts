// OOM118: in a Jupyter notebook, a code cell that ends with a bare expression whose value is a CUDA tensor or a
// model output. IPython's display hook stores every displayed result in its output history (`Out[n]`, `_`, `__`),
// so the tensor (and its autograd graph, when it has one) outlives the cell, whatever `del` and `empty_cache()`
// do later. The fix ends the line with `;`, which tells IPython not to display (and not to store) the result.
import type { Node } from '../engine/parser';
import type { Definition, SemanticModel } from '../engine/semantic/model';
import { callArguments, children, dottedName } from '../engine/syntax';
import { insertAt } from '../fixes/edits';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

/** Methods whose result is not a GPU tensor: Python values, CPU copies, metadata, or nothing (in-place updates). */
const OFF_GPU_METHODS = new Set([
  'item', 'tolist', 'numpy', 'cpu', 'size', 'dim', 'numel', 'nelement', 'element_size', 'data_ptr', 'stride',
  'get_device', 'is_contiguous', 'tobytes', 'backward', 'zero_grad', 'step', 'train', 'eval', 'parameters',
  'named_parameters', 'state_dict', 'load_state_dict', 'register_buffer', 'apply', 'append', 'extend', 'update',
  'keys', 'items', 'values', 'format', 'join', 'numpy_', 'save_pretrained', 'to_dict', 'describe', 'head', 'plot',
  'show', 'savefig', 'log', 'print', 'write', 'summary', 'equal', 'is_floating_point', 'is_complex', 'type',
  'requires_grad_', 'retain_grad', 'register_hook', 'manual_seed',
]);

/** Attributes that are not tensors (`x.shape`) or belong to a model rather than to its output. */
const NON_TENSOR_ATTRIBUTES = new Set(['shape', 'dtype', 'device', 'ndim', 'is_cuda', 'requires_grad', 'is_leaf', 'names', 'layout', 'config', 'training']);

/** A device argument that names the GPU: `"cuda"`, `"cuda:0"`, `torch.device("cuda")`, `device`, `args.device`. */
function namesGpu(model: SemanticModel, node: Node | undefined): boolean {
  if (!node) return false;
  if (node.type === 'string') return /cuda|gpu/i.test(node.text);
  if (node.type === 'integer') return true; // `.to(0)`, `.cuda(0)`
  if (node.type === 'call') {
    const qualified = model.qualify(node.childForFieldName('function')) ?? '';
    if (/(^|\.)device$/.test(qualified)) return namesGpu(model, callArguments(node).positional[0]);
    return false;
  }
  const name = dottedName(node);
  if (!name) return false;
  const last = name.split('.').pop()!.toLowerCase();
  if (/cpu/.test(last)) return false;
  return /(^|_)(device|dev|gpu|cuda)$/.test(last) || last === 'device';
}

/** A `.to(...)` call that moves to the CPU (`.to("cpu")`, `.to(torch.device("cpu"))`, `.to(device="cpu")`). */
function movesToCpu(model: SemanticModel, call: Node): boolean {
  const { positional, keywords } = callArguments(call);
  const target = keywords.get('device') ?? positional[0];
  if (!target) return false;
  if (target.type === 'string') return /cpu/i.test(target.text);
  if (target.type === 'call' && /(^|\.)device$/.test(model.qualify(target.childForFieldName('function')) ?? '')) {
    const inner = callArguments(target).positional[0];
    return inner?.type === 'string' && /cpu/i.test(inner.text);
  }
  return /cpu/i.test(dottedName(target) ?? '');
}

/** What an expression leaves in IPython's output history: a tensor with its autograd graph, a GPU tensor, or nothing to say. */
type Kept = 'graph' | 'tensor' | undefined;

/** Judges whether expressions evaluate to GPU tensors or model outputs, through the names the notebook assigns. */
class TensorJudge {
  private readonly memo = new Map<number, boolean>();
  private readonly inProgress = new Set<number>();

  constructor(private readonly model: SemanticModel) {}

  /** What a tuple of these expressions leaves: the most any of them does. */
  keptByAll(parts: readonly Node[]): Kept {
    const kept = parts.map((part) => this.kept(part));
    return kept.includes('graph') ? 'graph' : kept.includes('tensor') ? 'tensor' : undefined;
  }

  /** What displaying `expression` leaves in the output history. */
  kept(expression: Node): Kept {
    switch (expression.type) {
      case 'parenthesized_expression':
      case 'tuple':
      case 'list':
      case 'expression_list':
        // A tuple or list of tensors counts like a tensor.
        return this.keptByAll(children(expression));
      case 'call': {
        // `.item()`, `.cpu()`, `.tolist()`, `.to("cpu")`: what is shown is no longer on the GPU.
        const fn = expression.childForFieldName('function');
        const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text ?? '' : '';
        if (OFF_GPU_METHODS.has(method) || (method === 'to' && movesToCpu(this.model, expression))) return undefined;
        break;
      }
      case 'attribute':
        if (NON_TENSOR_ATTRIBUTES.has(expression.childForFieldName('attribute')?.text ?? '')) return undefined;
        break;
    }
    if (this.isModule(expression)) return undefined;
    if (this.model.isAttached(expression) || (expression.type === 'identifier' && this.model.holdsAttached(expression))) return 'graph';
    return this.isGpuTensor(expression) ? 'tensor' : undefined;
  }

  /** The model itself (`model`, `model.encoder`, `nn.Linear(4, 2).cuda()`): displaying it keeps nothing new. */
  private isModule(node: Node | null | undefined): boolean {
    if (!node) return false;
    if (node.type === 'identifier' || node.type === 'attribute') return this.model.isModelRef(node);
    if (node.type !== 'call') return false;
    const fn = node.childForFieldName('function');
    const qualified = this.model.qualify(fn) ?? '';
    const name = qualified.split('.').pop() ?? '';
    if (/^torch\.nn\.[A-Z]/.test(qualified) || this.model.isClassName(name) || /from_pretrained|from_config|create_model/.test(name)) return true;
    // `model.to(device)`, `model.cuda()`, `model.eval()` return the model.
    return fn?.type === 'attribute' && /^(to|cuda|half|float|bfloat16|double|train|eval|requires_grad_)$/.test(name) && this.isModule(fn.childForFieldName('object'));
  }

  isGpuTensor(node: Node | null | undefined): boolean {
    if (!node) return false;
    const known = this.memo.get(node.id);
    if (known !== undefined) return known;
    if (this.inProgress.has(node.id)) return false;
    this.inProgress.add(node.id);
    const result = this.compute(node);
    this.inProgress.delete(node.id);
    this.memo.set(node.id, result);
    return result;
  }

  private compute(node: Node): boolean {
    const model = this.model;
    switch (node.type) {
      case 'identifier':
      case 'attribute': {
        if (node.type === 'attribute' && NON_TENSOR_ATTRIBUTES.has(node.childForFieldName('attribute')?.text ?? '')) return false;
        if (this.isModule(node)) return false;
        // A list the notebook fills with tensors (`losses.append(loss)` in a loop of another cell).
        if (node.type === 'identifier' && (model.holdsAttached(node) || this.holdsGpuTensors(node))) return true;
        const name = dottedName(node);
        if (name) {
          const definitions = model.reachingDefinitions(name, node);
          if (definitions.length > 0) return definitions.some((definition) => this.definitionIsGpuTensor(definition));
        }
        // `outputs.logits`, `out.last_hidden_state`: a field of a model output.
        return node.type === 'attribute' && this.isGpuTensor(node.childForFieldName('object'));
      }
      case 'call':
        return this.callIsGpuTensor(node);
      case 'subscript':
        return this.isGpuTensor(node.childForFieldName('value'));
      case 'binary_operator':
        return this.isGpuTensor(node.childForFieldName('left')) || this.isGpuTensor(node.childForFieldName('right'));
      case 'comparison_operator':
        return children(node).some((child) => this.isGpuTensor(child));
      case 'unary_operator':
        return this.isGpuTensor(node.childForFieldName('argument'));
      case 'parenthesized_expression':
      case 'tuple':
      case 'list':
      case 'expression_list':
        return children(node).some((child) => this.isGpuTensor(child));
      case 'conditional_expression': {
        const [body, , alternative] = children(node);
        return this.isGpuTensor(body) || this.isGpuTensor(alternative);
      }
      default:
        return false;
    }
  }

  /** Whether a module-level list is filled with GPU tensors (`preds.append(logits.detach())`). */
  private holdsGpuTensors(node: Node): boolean {
    for (const method of ['append', 'extend', 'insert']) {
      for (const call of this.model.callsNamed(method)) {
        const fn = call.childForFieldName('function');
        if (fn?.type !== 'attribute' || dottedName(fn.childForFieldName('object')) !== node.text) continue;
        const { positional } = callArguments(call);
        if (this.isGpuTensor(method === 'insert' ? positional[1] : positional[0])) return true;
      }
    }
    return false;
  }

  private definitionIsGpuTensor(definition: Definition): boolean {
    const value = definition.value;
    if (definition.kind === 'augmented') return this.isGpuTensor(definition.site.childForFieldName('right'));
    if (!value || definition.kind === 'for' || definition.kind === 'param' || definition.kind === 'import' || definition.kind === 'with') return false;
    if (definition.index !== undefined && (value.type === 'tuple' || value.type === 'expression_list')) {
      return this.isGpuTensor(children(value)[definition.index]);
    }
    return this.isGpuTensor(value);
  }

  private callIsGpuTensor(call: Node): boolean {
    const model = this.model;
    const fn = call.childForFieldName('function');
    if (!fn) return false;
    const { positional, keywords } = callArguments(call);
    const anyArgument = () => positional.some((arg) => this.isGpuTensor(arg)) || [...keywords.values()].some((arg) => this.isGpuTensor(arg));
    // A forward pass or a loss: a model output, wherever it was computed.
    if (model.isDirectForwardCall(call)) return true;
    // A function of the notebook says for itself what it returns (the graph check follows it).
    if (model.resolveLocalFunction(call)) return false;
    if (model.isLossFunctionRef(fn)) return positional.length > 0 || keywords.size > 0;
    const qualified = model.qualify(fn) ?? '';
    if (/^torch\./.test(qualified)) {
      if (/^torch\.nn\.[A-Z]/.test(qualified)) return false;
      // `torch.randn(..., device="cuda")`, `torch.cat(outputs)`.
      return namesGpu(model, keywords.get('device')) || anyArgument();
    }
    if (fn.type !== 'attribute') return false;
    const method = fn.childForFieldName('attribute')?.text ?? '';
    const receiver = fn.childForFieldName('object');
    if (OFF_GPU_METHODS.has(method)) return false;
    if (method === 'to' && movesToCpu(model, call)) return false;
    if (this.isModule(receiver)) {
      // `model.generate(ids)` returns token ids on the model's device.
      return method === 'generate';
    }
    if (method === 'cuda') return true;
    if (method === 'to' && namesGpu(model, keywords.get('device') ?? positional[0])) return true;
    // A tensor method on a GPU tensor (`logits.softmax(-1)`, `loss.detach()`, `x.float()`) stays on the GPU.
    return this.isGpuTensor(receiver);
  }
}

/** The last statement of a cell (comments after it do not count), if it lies wholly in the cell. */
function lastStatement(statements: readonly Node[], first: number, last: number): Node | undefined {
  let found: Node | undefined;
  for (const statement of statements) {
    if (statement.startPosition.row > last) break;
    if (statement.startPosition.row < first || !statement.isNamed || statement.type === 'comment') continue;
    found = statement;
  }
  return found && found.endPosition.row <= last ? found : undefined;
}

/** The text a statement is shown by in the message: its first line without a comment, shortened. */
function shortText(node: Node): string {
  const lines = node.text.split(/\r\n|\r|\n/);
  let first = lines[0]!;
  // A comment after the first line of a multi-line expression (no quote before it that could hide a `#`).
  if (!/["']/.test(first)) first = first.replace(/\s*#.*$/, '');
  if (first.length > 40) return `${first.slice(0, 37)}...`;
  return lines.length > 1 ? `${first}...` : first;
}

export const notebookOutputKeepsTensor: Rule = {
  ...ruleCode('OOM118'),
  code: 'OOM118',
  notebookOnly: true,
  check({ model, text, inRegion, cells }) {
    const reports: RuleReport[] = [];
    if (!cells) return reports;
    const statements = model.root.children;
    const judge = new TensorJudge(model);
    for (const cell of cells) {
      const statement = lastStatement(statements, cell.startLine, cell.startLine + cell.lineCount - 1);
      if (!statement || statement.type !== 'expression_statement' || !inRegion(statement)) continue;
      // `a, b` at the end of a cell is a tuple, shown (and kept) as one result.
      const parts = statement.namedChildren.filter((child) => child.type !== 'comment');
      const expression = parts[0];
      if (!expression || ['assignment', 'augmented_assignment', 'yield', 'await', 'string', 'concatenated_string'].includes(expression.type)) continue;
      // `loss;`: IPython neither displays nor stores a result that ends with a semicolon.
      if (/^[ \t]*;/.test(text.slice(statement.endIndex))) continue;
      const kept = parts.length === 1 ? judge.kept(expression) : judge.keptByAll(parts);
      if (!kept) continue;
      const shown = shortText(parts.length === 1 ? expression : statement);
      reports.push({
        node: statement,
        message: kept === 'graph'
          ? t("The cell ends with '{0}', which carries an autograd graph: IPython keeps every displayed result in its output history (Out[n], _), so its tensors, the graph and the activations it saved stay in GPU memory after the cell, even after del and torch.cuda.empty_cache(). End the line with ';' (or show .item()).", shown)
          : t("The cell ends with '{0}', which holds GPU memory: IPython keeps every displayed result in its output history (Out[n], _), so it stays in GPU memory after the cell, even after del and torch.cuda.empty_cache(). End the line with ';' (or show .shape or .item()).", shown),
        fixes: [{
          title: t("End the line with ';' so that IPython does not keep the result"),
          safe: true,
          preferred: true,
          edits: [insertAt({ line: statement.endPosition.row, character: statement.endPosition.column }, ';')],
        }],
      });
    }
    return reports;
  },
};
