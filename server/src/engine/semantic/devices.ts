// Which device a call puts tensors (or a module) on: the CUDA device without an index (`.cuda()`, `.to("cuda")`,
// `torch.device("cuda")`, `device="cuda"`), a CUDA device with one (`.cuda(local_rank)`, `f"cuda:{rank}"`), or
// the CPU. Distributed placement (OOM111), CUDA work in DataLoader workers (OOM112) and growing GPU buffers (OOM117)
// ask here.
import type { Node } from '../parser';
import { callArguments, calleeName, callReceiver, children, dottedName, stringLiteral } from '../syntax';
import { possibleValues } from './bindings';
import type { SemanticModel } from './model';

/** Where a device expression points: CUDA without an index, CUDA with one, the CPU, or not known. */
export type DeviceKind = 'cuda' | 'cuda-indexed' | 'cpu' | 'other' | 'unknown';

/**
 * The kinds a device expression may take (a conditional gives two). With `literal`, only what is written at the
 * expression counts: names are not followed to what they were assigned.
 */
export function deviceKinds(model: SemanticModel, node: Node | undefined, depth = 3, literal = false): Set<DeviceKind> {
  const kinds = new Set<DeviceKind>();
  if (!node || depth < 0) return new Set(['unknown']);
  const written = stringLiteral(node);
  if (written !== undefined) {
    kinds.add(kindOfString(written));
    return kinds;
  }
  switch (node.type) {
    case 'string':
      // An f-string: `f"cuda:{local_rank}"` names an index; anything else is unknown.
      kinds.add(/^[rRbBuU]*[fF][rRbB]*("""|'''|"|')cuda:/.test(node.text) ? 'cuda-indexed' : 'unknown');
      return kinds;
    case 'binary_operator':
      // `"cuda:" + str(rank)`, `"cuda:%d" % rank`.
      kinds.add(/^(cuda:|cuda:%d)$/.test(stringLiteral(node.childForFieldName('left')) ?? '') ? 'cuda-indexed' : 'unknown');
      return kinds;
    case 'integer':
      // `.to(0)`, `.to(local_rank)`: an integer is a CUDA device index.
      kinds.add('cuda-indexed');
      return kinds;
    case 'conditional_expression': {
      const [whenTrue, , whenFalse] = children(node);
      for (const branch of [whenTrue, whenFalse]) for (const kind of deviceKinds(model, branch, depth - 1, literal)) kinds.add(kind);
      return kinds;
    }
    case 'parenthesized_expression':
      return deviceKinds(model, children(node)[0], depth, literal);
    case 'call':
      kinds.add(deviceOfCall(model, node, depth, literal));
      return kinds;
    case 'identifier':
    case 'attribute': {
      if (looksLikeRankName(node.text)) {
        kinds.add('cuda-indexed');
        return kinds;
      }
      if (literal) {
        kinds.add('unknown');
        return kinds;
      }
      const { values, unknown } = possibleValues(model, node);
      if (unknown) kinds.add('unknown');
      for (const value of values) {
        if (value.element || value.index !== undefined) kinds.add('unknown');
        else for (const kind of deviceKinds(model, value.node, depth - 1, literal)) kinds.add(kind);
      }
      if (kinds.size === 0) kinds.add('unknown');
      return kinds;
    }
    default:
      kinds.add('unknown');
      return kinds;
  }
}

function kindOfString(text: string): DeviceKind {
  if (text === 'cuda') return 'cuda';
  if (/^cuda:\d+$/.test(text)) return 'cuda-indexed';
  if (text === 'cpu') return 'cpu';
  return 'other';
}

/** `local_rank`, `args.local_rank`, `rank`, `gpu`, `device_id`: names that hold a device index. */
function looksLikeRankName(text: string): boolean {
  const last = text.split('.').pop() ?? '';
  return /^(local_rank|rank|gpu|gpu_id|device_id|device_index|local_gpu|cuda_device)$/i.test(last);
}

/** `torch.device("cuda")`, `torch.device("cuda", i)`, `torch.cuda.current_device()`. */
function deviceOfCall(model: SemanticModel, call: Node, depth: number, literal = false): DeviceKind {
  const qualified = model.qualify(call.childForFieldName('function')) ?? '';
  if (qualified === 'torch.device') {
    const { positional, keywords } = callArguments(call);
    const type = positional[0] ?? keywords.get('type');
    const index = positional[1] ?? keywords.get('index');
    const kinds = deviceKinds(model, type, depth - 1, literal);
    if (kinds.has('cuda')) return index ? 'cuda-indexed' : 'cuda';
    if (kinds.size === 1) return [...kinds][0]!;
    return 'unknown';
  }
  if (qualified === 'torch.cuda.current_device') return 'cuda-indexed';
  // `"cuda:{}".format(rank)`
  const receiver = callReceiver(call);
  if (calleeName(call) === 'format' && /^cuda:/.test(stringLiteral(receiver) ?? '')) return 'cuda-indexed';
  return 'unknown';
}

/** Calls that place a tensor or module on a device they are given. */
const MOVING_METHODS = new Set(['to', 'to_empty']);

/**
 * Where a call puts tensors or a module on CUDA: `.cuda(...)`, `.to(<device>)`, `.to_empty(device=...)`, or a
 * `device=` argument (tensor creation). Undefined when it places nothing on CUDA (or only on the CPU, or on a device
 * the source does not determine). `torch.device(...)` on its own creates nothing: callers decide whether it counts.
 */
export function cudaPlacementOf(model: SemanticModel, call: Node, literal = false): 'cuda' | 'cuda-indexed' | undefined {
  const method = calleeName(call);
  const fn = call.childForFieldName('function');
  const { positional, keywords } = callArguments(call);
  if (method === 'cuda' && fn?.type === 'attribute') {
    // `x.cuda()`, `x.cuda(non_blocking=True)`: the current device, GPU 0 unless set_device was called.
    return positional.length > 0 || keywords.has('device') ? 'cuda-indexed' : 'cuda';
  }
  let device: Node | undefined;
  if (method && MOVING_METHODS.has(method) && fn?.type === 'attribute') device = keywords.get('device') ?? positional[0];
  else device = keywords.get('device');
  if (!device) return undefined;
  const kinds = deviceKinds(model, device, 3, literal);
  if (kinds.has('cuda')) return 'cuda';
  if (kinds.has('cuda-indexed')) return 'cuda-indexed';
  return undefined;
}

/** `torch.device("cuda")` (no index): not a placement itself, but the first place a script names the bare device. */
export function isIndexlessDeviceCall(model: SemanticModel, call: Node): boolean {
  return calleeName(call) === 'device' && deviceOfCall(model, call, 3, true) === 'cuda';
}

/** Calls that can place something: `.cuda()`, `.to(...)`, `.to_empty(...)`, `torch.device(...)`, or a `device=` argument. */
function mayPlace(call: Node): boolean {
  const fn = call.childForFieldName('function');
  const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
  return method === 'cuda' || method === 'to' || method === 'to_empty' || method === 'device' || callArguments(call).keywords.has('device');
}

/** The device argument of a placement call: `.to(d)`, `.to_empty(device=d)`, `torch.device(d)`, `f(..., device=d)`. */
function deviceArgument(call: Node): Node | undefined {
  const { positional, keywords } = callArguments(call);
  const method = calleeName(call);
  return keywords.get('device') ?? (method === 'to' || method === 'to_empty' || method === 'device' ? positional[0] : undefined);
}

/**
 * The places within a region that put work on CUDA without a device index, as written: `.cuda()`, `.to("cuda")`,
 * `torch.device("cuda")`, `device="cuda"`, and `device = "cuda"` where that name is then given as a device
 * (`.to(device)` counts where `device` is made, not where it is used). In document order.
 */
export function indexlessPlacementsWithin(model: SemanticModel, region: Node): Node[] {
  const found: Node[] = [];
  const calls: Node[] = [];
  calls.push(...model.nodesWithin('calls', region));
  for (const call of calls) {
    if (!mayPlace(call)) continue;
    if (cudaPlacementOf(model, call, true) === 'cuda' || isIndexlessDeviceCall(model, call)) found.push(call);
  }
  for (const assignment of model.nodesWithin('assignments', region)) {
    const right = assignment.childForFieldName('right');
    const name = dottedName(assignment.childForFieldName('left'));
    if (!name || !right || (right.type !== 'string' && right.type !== 'conditional_expression')) continue;
    if (!deviceKinds(model, right, 3, true).has('cuda') || !usedAsDevice(model, name)) continue;
    found.push(assignment);
  }
  return found.sort((a, b) => a.startIndex - b.startIndex);
}

/** The names given as devices to placements within a region (`device` in `.to(device)`). */
export function deviceNamesWithin(model: SemanticModel, region: Node): string[] {
  const names = new Set<string>();
  for (const call of model.nodesWithin('calls', region)) {
    const name = mayPlace(call) ? dottedName(deviceArgument(call)) : undefined;
    if (name) names.add(name);
  }
  return [...names].sort();
}

/** Whether a name is given as the device of a placement somewhere in the file. */
function usedAsDevice(model: SemanticModel, name: string): boolean {
  // The names given as devices, collected once: asked per name, a scan of every call each time would add up.
  return model.memo('names-used-as-device', () => {
    const names = new Set<string>();
    for (const call of model.calls) {
      const name = mayPlace(call) ? dottedName(deviceArgument(call)) : undefined;
      if (name) names.add(name);
    }
    return names;
  }).has(name);
}

/** Methods whose result lives on the CPU whatever they are called on. */
const OFF_GPU_METHODS = new Set(['cpu', 'numpy', 'tolist', 'item']);

/** Whether an expression's value is on the CPU: `.cpu()`, `.numpy()`, `.to("cpu")`, `torch.from_numpy(...)`. */
export function isOnCpu(model: SemanticModel, node: Node): boolean {
  if (node.type === 'parenthesized_expression') return !!children(node)[0] && isOnCpu(model, children(node)[0]!);
  if (node.type !== 'call') return false;
  const method = calleeName(node);
  const fn = node.childForFieldName('function');
  if (fn?.type === 'attribute' && method && OFF_GPU_METHODS.has(method)) return true;
  if (fn?.type === 'attribute' && method === 'to') {
    const { positional, keywords } = callArguments(node);
    const kinds = deviceKinds(model, keywords.get('device') ?? positional[0]);
    return kinds.size === 1 && kinds.has('cpu');
  }
  const qualified = model.qualify(fn) ?? '';
  if (qualified === 'torch.from_numpy') return true;
  // `torch.tensor([...])` without a device is made on the CPU.
  if (/^torch\.(tensor|as_tensor)$/.test(qualified)) return !callArguments(node).keywords.has('device');
  // `x.float()` on a CPU value stays there.
  const receiver = callReceiver(node);
  return fn?.type === 'attribute' && !!receiver && /^(float|long|int|half|double|detach|clone|view|reshape|squeeze|unsqueeze)$/.test(method ?? '') && isOnCpu(model, receiver);
}
