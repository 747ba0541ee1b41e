// A sparse adjacency the script builds on the GPU (a graph network's `torch.sparse_coo_tensor(indices, values,
// (n, n))`): alive through every step beside the node features. Its storage, measured on the H200
// (test/gpu/estimator/results/probe_packed.json): COO holds int64 indices (2 x nnz) and the values (nnz x dtype);
// coalescing keeps the same; CSR holds its row pointers (n + 1, int64), column indices and values.
import type { ProgramModel } from '../engine/program/interpreter';
import { deviceNamed } from '../engine/program/interpreter';
import type { PyNode } from '../engine/program/node';
import { tensorShape, type Value } from '../engine/program/values';

const SPARSE_CONSTRUCTOR = /(^|\.)sparse_(coo|csr)_tensor$/;

/** Elements of a tensor the script makes with known sizes, also joined (`torch.cat([src, dst])`, `torch.stack`). */
function madeElements(value: Value | undefined, depth = 0): number | undefined {
  if (!value || depth > 4) return undefined;
  if (value.kind === 'list') {
    const parts = value.items.map((item) => madeElements(item, depth + 1));
    return parts.every((p) => p !== undefined) ? parts.reduce((a, b) => a! + b!, 0) : undefined;
  }
  if (value.kind !== 'call') return undefined;
  if (/^torch\.(cat|concat|concatenate|stack)$/.test(value.path)) return madeElements(value.args[0], depth + 1);
  const shape = tensorShape(value);
  return shape ? shape.dims.reduce((a, b) => a * b, 1) : undefined;
}

/** Whether any tensor a value is made of is made on the GPU (`device="cuda"`, a device variable naming it). */
function madeOnGpu(value: Value | undefined, depth = 0): boolean {
  if (!value || depth > 4) return false;
  if (value.kind === 'list') return value.items.some((item) => madeOnGpu(item, depth + 1));
  if (value.kind !== 'call') return false;
  const device = value.kwargs.get('device');
  if (device && deviceNamed(device) === true) return true;
  return [...value.args, ...value.kwargs.values()].some((arg) => madeOnGpu(arg, depth + 1));
}

/** Whether the constructed tensor is moved to the GPU where it is made (`torch.sparse_coo_tensor(...).cuda()`). */
function movedToGpu(call: PyNode, program: ProgramModel): boolean {
  for (let node: PyNode | null = call.parent; node?.type === 'attribute' || node?.type === 'call'; node = node.parent) {
    if (node.type !== 'call') continue;
    const fn = node.childForFieldName('function');
    const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
    if (method === 'cuda') return true;
    const target = node.childForFieldName('arguments')?.namedChildren[0];
    if (method === 'to' && target && deviceNamed(program.valueOf(target) ?? { kind: 'unknown' }) === true) return true;
  }
  return false;
}

export interface SparseAdjacency {
  /** Bytes it holds on the GPU. */
  bytes: number;
  nonzeros: number;
  line: number;
}

/**
 * The largest sparse tensor with a known number of nonzeros among those `calls` construct on the GPU. A script that
 * normalises its adjacency builds it again from the first one's indices (the same nonzeros), and keeps one: the
 * largest is the one counted.
 */
export function sparseAdjacency(program: ProgramModel, calls: readonly PyNode[]): SparseAdjacency | undefined {
  let found: SparseAdjacency | undefined;
  for (const call of calls) {
    const fn = call.childForFieldName('function')?.text ?? '';
    const kind = SPARSE_CONSTRUCTOR.exec(fn)?.[2];
    if (!kind || program.neverRuns(call)) continue;
    const args = call.childForFieldName('arguments')?.namedChildren.filter((n): n is PyNode => !!n && n.type !== 'keyword_argument' && n.type !== 'comment') ?? [];
    const values = program.valueOf(args[kind === 'coo' ? 1 : 2]);
    const indices = program.valueOf(args[kind === 'coo' ? 0 : 1]);
    const counted = madeElements(values);
    const nonzeros = counted ?? (kind === 'coo' ? (madeElements(indices) ?? 0) / 2 : madeElements(indices));
    if (!nonzeros || !(madeOnGpu(values) || madeOnGpu(indices) || movedToGpu(call, program))) continue;
    const valueBytes = values?.kind === 'call' && values.kwargs.get('dtype')?.kind === 'dtype' && /64|double/.test((values.kwargs.get('dtype') as { name: string }).name) ? 8 : 4;
    const rows = kind === 'csr' ? madeElements(program.valueOf(args[0])) ?? 0 : 0;
    const bytes = nonzeros * ((kind === 'coo' ? 16 : 8) + valueBytes) + rows * 8;
    if (!found || bytes > found.bytes) found = { bytes, nonzeros, line: call.startPosition.row };
  }
  return found;
}
