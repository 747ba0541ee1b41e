// Distributed scripts: whether a file runs as one process per GPU (it calls init_process_group, wraps a model in
// DistributedDataParallel / FullyShardedDataParallel / fully_shard, or reads LOCAL_RANK), which code only rank 0 runs,
// and whether the file (or a framework it uses) pins each process to its own GPU. Comments and strings never count:
// only calls, subscripts and argparse options do.
import type { Node } from '../parser';
import { callArguments, calleeName, children, contains, dottedName, enclosingFunction, stringLiteral } from '../syntax';
import type { SemanticModel } from './model';

const WRAPPERS = new Set(['DistributedDataParallel', 'FullyShardedDataParallel', 'fully_shard']);

/** The names that call a distributed wrapper: the classes themselves and names assigned them (`DDP = nn.parallel.DistributedDataParallel`). */
function wrapperNames(model: SemanticModel): Set<string> {
  return model.memo('distributed-wrapper-names', () => {
    const names = new Set(WRAPPERS);
    // A name can stand for a wrapper only if the wrapper's own name is written somewhere (in the assignment or in the
    // import it resolves through): without it, the assignments need not be read.
    if (![...WRAPPERS].some((word) => model.spells(word))) return names;
    for (const assignment of model.assignments) {
      const right = assignment.childForFieldName('right');
      if (right?.type !== 'identifier' && right?.type !== 'attribute') continue;
      const target = dottedName(assignment.childForFieldName('left'));
      const tail = (model.qualify(right) ?? '').split('.').pop() ?? '';
      if (target && (right?.type === 'identifier' || right?.type === 'attribute') && WRAPPERS.has(tail)) names.add(target);
    }
    return names;
  });
}

/** Every mark is spelled out in the text: a region without these words has none. */
const MARK_WORDS = /init_process_group|DistributedDataParallel|FullyShardedDataParallel|fully_shard|DDP|FSDP|LOCAL_RANK|local[_-]rank/;
/** MARK_WORDS one by one, as the model counts them (SemanticModel.spells). */
const MARK_WORD_LIST = ['init_process_group', 'DistributedDataParallel', 'FullyShardedDataParallel', 'fully_shard', 'DDP', 'FSDP', 'LOCAL_RANK', 'local_rank', 'local-rank'];

/** The marks of a distributed script in one region of the file (a statement, or the whole module). */
export function distributedMarkers(model: SemanticModel, region: Node): Node[] {
  const marks: Node[] = [];
  const wrappers = wrapperNames(model);
  if (!MARK_WORDS.test(region.text) && ![...wrappers].some((name) => region.text.includes(name))) return marks;
  const inside = (node: Node) => contains(region, node);
  for (const call of model.callsNamed('init_process_group')) if (inside(call)) marks.push(call);
  for (const call of model.nodesWithin('calls', region)) {
    const qualified = model.qualify(call.childForFieldName('function')) ?? '';
    if (WRAPPERS.has(qualified.split('.').pop() ?? '') || wrappers.has(qualified)) marks.push(call);
  }
  for (const read of localRankReads(model, region)) marks.push(read);
  return marks;
}

/**
 * Reads of LOCAL_RANK: `os.environ["LOCAL_RANK"]`, `os.environ.get("LOCAL_RANK")`, `os.getenv("LOCAL_RANK")`, and an
 * argparse option `--local_rank` / `--local-rank` (what torch.distributed.launch passes).
 */
function localRankReads(model: SemanticModel, region: Node): Node[] {
  const reads: Node[] = [];
  for (const name of ['get', 'getenv']) {
    for (const call of model.callsNamed(name)) {
      if (!contains(region, call) || stringLiteral(callArguments(call).positional[0]) !== 'LOCAL_RANK') continue;
      const qualified = model.qualify(call.childForFieldName('function')) ?? '';
      if (qualified === 'os.environ.get' || qualified === 'os.getenv') reads.push(call);
    }
  }
  for (const call of model.callsNamed('add_argument')) {
    if (!contains(region, call)) continue;
    if (callArguments(call).positional.some((arg) => /^--local[_-]rank$/.test(stringLiteral(arg) ?? ''))) reads.push(call);
  }
  for (const subscript of region.descendantsOfType('subscript')) {
    if (subscript && stringLiteral(subscript.childForFieldName('subscript')) === 'LOCAL_RANK' && model.qualify(subscript.childForFieldName('value')) === 'os.environ') {
      reads.push(subscript);
    }
  }
  return reads;
}

/** Whether the file is a distributed script (see the module comment). */
export function isDistributedScript(model: SemanticModel): boolean {
  return model.memo('distributed-script', () => {
    // Most scripts spell no mark at all (the wrapper names the file assigns need a wrapper's own name written
    // somewhere, one of these words too); the model counts the words statement by statement from version to version.
    if (!MARK_WORD_LIST.some((word) => model.spells(word))) return false;
    return distributedMarkers(model, model.root).length > 0;
  });
}


/** `torch.cuda.set_device(...)` calls within a region (a statement, or the whole module). */
export function setDeviceCalls(model: SemanticModel, region: Node): Node[] {
  return model.callsNamed('set_device').filter((call) => contains(region, call) && /^torch\.cuda\.set_device$/.test(model.qualify(call.childForFieldName('function')) ?? ''));
}

/** `torch.cuda.set_device(...)` anywhere in the file. */
export function setsCudaDevice(model: SemanticModel): boolean {
  return model.memo('sets-cuda-device', () => setDeviceCalls(model, model.root).length > 0);
}

/** Calls within a region that make a framework place each process on its own GPU (see usesDevicePlacingFramework). */
export function devicePlacingCalls(model: SemanticModel, region: Node): Node[] {
  const found: Node[] = [];
  for (const call of model.nodesWithin('calls', region)) {
    const qualified = model.qualify(call.childForFieldName('function')) ?? '';
    if (
      (/^(accelerate|lightning|pytorch_lightning)(\.|$)/.test(qualified) && /\.(Accelerator|Trainer|Fabric)$/.test(qualified)) ||
      (/^(transformers|trl)(\.|$)/.test(qualified) && /Trainer$/.test(qualified)) ||
      qualified === 'deepspeed.initialize'
    ) {
      found.push(call);
    }
  }
  return found;
}

/**
 * Whether a framework places each process on its own GPU: Accelerate's `Accelerator`, Lightning (`Trainer`, `Fabric`,
 * a `LightningModule`), a Hugging Face or TRL `Trainer` (it runs on Accelerate), or `deepspeed.initialize`.
 */
export function usesDevicePlacingFramework(model: SemanticModel): boolean {
  return model.memo('device-placing-framework', () => {
    if (model.classes.some((cls) => cls.isLightning)) return true;
    return devicePlacingCalls(model, model.root).length > 0;
  });
}

/** `rank == 0`, `local_rank == 0`, `dist.get_rank() == 0`, `is_main_process`, `accelerator.is_local_main_process`. */
export function isRankZeroCondition(condition: Node | null | undefined): boolean {
  if (!condition) return false;
  switch (condition.type) {
    case 'parenthesized_expression':
      return isRankZeroCondition(children(condition)[0]);
    case 'boolean_operator':
      // One `and` operand is enough: `if rank == 0 and os.path.exists(path):`.
      return condition.childForFieldName('operator')?.text === 'and' &&
        (isRankZeroCondition(condition.childForFieldName('left')) || isRankZeroCondition(condition.childForFieldName('right')));
    case 'comparison_operator': {
      const operands = children(condition);
      const operators = condition.children.filter((child) => !child.isNamed).map((child) => child.text);
      if (operands.length !== 2 || operators.length !== 1 || operators[0] !== '==') return false;
      const [a, b] = operands as [Node, Node];
      const zero = (node: Node) => node.type === 'integer' && node.text === '0';
      const other = zero(a) ? b : zero(b) ? a : undefined;
      return !!other && isRankExpression(other);
    }
    case 'identifier':
    case 'attribute': {
      const last = condition.text.split('.').pop() ?? '';
      return /^(is_main_process|is_local_main_process|is_world_process_zero|is_local_process_zero|is_global_zero|is_master|master_process|is_main|main_process|is_rank_zero|rank_zero)$/.test(last);
    }
    case 'call':
      // `is_main_process()`, `accelerator.is_main_process()` (some helpers are functions).
      return /^(is_main_process|is_master|is_rank_zero|is_local_main_process)$/.test(calleeName(condition) ?? '');
    default:
      return false;
  }
}

/** `rank`, `local_rank`, `args.local_rank`, `global_rank`, `dist.get_rank()`, `torch.distributed.get_rank()`. */
function isRankExpression(node: Node): boolean {
  if (node.type === 'call') return /^(get_rank|get_local_rank|get_global_rank)$/.test(calleeName(node) ?? '');
  const last = (node.type === 'identifier' || node.type === 'attribute') ? node.text.split('.').pop() ?? '' : '';
  return /^(rank|local_rank|global_rank|node_rank|process_index|local_process_index|ddp_rank|ddp_local_rank|world_rank)$/.test(last);
}

/** Whether `node` lies in the body of an `if` (not its `else`) whose condition is a rank-0 guard, within its function. */
function guardedHere(node: Node): boolean {
  const fn = enclosingFunction(node);
  for (let current = node.parent; current && current.id !== fn.id; current = current.parent) {
    if (current.type !== 'if_statement') continue;
    const consequence = current.childForFieldName('consequence');
    if (consequence && contains(consequence, node) && isRankZeroCondition(current.childForFieldName('condition'))) return true;
  }
  return false;
}

/** Whether only rank 0 runs `node`: a rank-0 `if` around it, or around every call of the function that holds it. */
export function onlyRankZeroRuns(model: SemanticModel, node: Node, depth = 3): boolean {
  if (guardedHere(node)) return true;
  const info = model.functionOf(node);
  if (!info || depth === 0) return false;
  const callers = model.callersOf(info);
  return callers.length > 0 && callers.every((caller) => onlyRankZeroRuns(model, caller, depth - 1));
}

