// Turns a parsed out-of-memory error (and, when its script is at hand, the script's estimate and findings) into
// plain sentences: what was asked for, what was free, where the GPU's memory went, and what to try first.
// Every figure is either printed in the message or computed from its figures or from the estimate.
import { maxBatchSize } from '../estimator/model';
import { t } from '../l10n';
import type { OomMessage, OomReport, TracebackFrame } from './parse';
import type { ScriptContext, StepTensor } from './script';
import { formatBytes, type PrintedSize } from './sizes';

export type CauseKind =
  | 'larger-than-gpu' | 'memory-limit' | 'fragmentation' | 'other-processes' | 'outside-pytorch' | 'live-tensors' | 'request';

export interface Figure {
  key: string;
  label: string;
  bytes: number;
  /** As printed in the message, or formatted from the computed bytes. */
  text: string;
  /** True when computed from other figures rather than printed. */
  computed: boolean;
}

export interface Cause {
  kind: CauseKind;
  /** The memory this cause accounts for; causes are ordered by it. */
  bytes: number;
  /** True when this cause alone is enough for the request to fail (or, removed, for it to succeed). */
  decisive: boolean;
  title: string;
  detail: string[];
  tryThis: string[];
}

export interface ScriptSummary {
  file: string;
  model: string;
  batchSize: number;
  precision: string;
  /** The estimator's reserved peak plus the CUDA context for one step (absent: the model could not be read). */
  estimatedPeak?: number;
  /** What torch.cuda.max_memory_allocated() would report for one step, by the estimate. */
  estimatedAllocated?: number;
  fitsOnThisGpu?: boolean;
  maxBatchSizeOnThisGpu?: number;
  assumptions: string[];
  findings: Array<{ code: string; line: number; message: string }>;
  tensors: StepTensor[];
  /** The step tensor whose size matches the failed request, if one does. */
  matchingTensor?: StepTensor;
}

export interface Explanation {
  message: OomMessage;
  frame?: TracebackFrame;
  /** Where the frame's file is on this machine, when it was found. */
  frameFile?: string;
  summary: string[];
  figures: Figure[];
  causes: Cause[];
  script?: ScriptSummary;
}

/** How close a step tensor must be to the request to be named as it: the allocator rounds large blocks to 2 MiB. */
function matches(requested: number, tensor: number): boolean {
  return Math.abs(requested - tensor) <= Math.max(0.1 * tensor, 2 * 1024 ** 2);
}

function fmt(size: PrintedSize | undefined): string {
  return size ? size.text : '';
}

/** The figures of the message, plus the ones that follow from them. */
function figuresOf(m: OomMessage): Figure[] {
  const figures: Figure[] = [];
  const printed = (key: string, label: string, size: PrintedSize | undefined) => {
    if (size) figures.push({ key, label, bytes: size.bytes, text: size.text, computed: false });
  };
  const computed = (key: string, label: string, bytes: number) => {
    figures.push({ key, label, bytes, text: formatBytes(bytes), computed: true });
  };
  printed('requested', t('requested'), m.requested);
  printed('total', t('GPU total capacity'), m.totalCapacity);
  printed('free', t('free on the GPU'), m.free);
  if (m.requested && m.free && m.requested.bytes > m.free.bytes) computed('shortfall', t('missing (requested − free)'), m.requested.bytes - m.free.bytes);
  printed('allowed', t('allowed for this process'), m.allowed);
  for (const proc of m.processes) {
    printed(proc.pid === null ? 'process' : `process-${proc.pid}`, proc.pid === null ? t('this process, including non-PyTorch memory') : t('process {0}', proc.pid), proc.used);
  }
  printed('allocated', t('allocated by PyTorch (live tensors)'), m.allocated);
  printed('privatePools', t('of which in private pools (CUDA Graphs)'), m.privatePools);
  const reserved = reservedOf(m);
  if (m.reservedTotal) printed('reserved', t('reserved by PyTorch in total'), m.reservedTotal);
  else if (reserved !== undefined) computed('reserved', t('reserved by PyTorch in total'), reserved);
  if (m.reservedUnallocated) printed('fragmentation', t('reserved but unallocated (fragmentation)'), m.reservedUnallocated);
  else if (m.reservedTotal && m.allocated) computed('fragmentation', t('reserved but unallocated (fragmentation)'), Math.max(0, m.reservedTotal.bytes - m.allocated.bytes));
  const self = m.processes.find((proc) => proc.pid === null);
  if (self && reserved !== undefined && self.used.bytes > reserved) computed('nonPyTorch', t('this process outside PyTorch\'s allocator'), self.used.bytes - reserved);
  const others = otherProcesses(m);
  if (m.processes.length === 0 && m.totalCapacity && m.free && reserved !== undefined) {
    const outside = m.totalCapacity.bytes - m.free.bytes - reserved;
    if (outside > 0) computed('outside', t('used outside PyTorch\'s allocator (CUDA context, libraries, other processes)'), outside);
  } else if (others > 0 && m.processes.filter((proc) => proc.pid !== null).length > 1) {
    computed('others', t('other processes in total'), others);
  }
  return figures;
}

function reservedOf(m: OomMessage): number | undefined {
  if (m.reservedTotal) return m.reservedTotal.bytes;
  if (m.allocated && m.reservedUnallocated) return m.allocated.bytes + m.reservedUnallocated.bytes;
  return undefined;
}

function fragmentationOf(m: OomMessage): number | undefined {
  if (m.reservedUnallocated) return m.reservedUnallocated.bytes;
  if (m.reservedTotal && m.allocated) return Math.max(0, m.reservedTotal.bytes - m.allocated.bytes);
  return undefined;
}

function otherProcesses(m: OomMessage): number {
  return m.processes.filter((proc) => proc.pid !== null).reduce((sum, proc) => sum + proc.used.bytes, 0);
}

function summaryOf(m: OomMessage, frame: TracebackFrame | undefined): string[] {
  const lines: string[] = [];
  const gpu = m.gpu === undefined ? t('the GPU') : t('GPU {0}', m.gpu);
  if (m.requested && m.totalCapacity && m.free && m.free.bytes >= m.requested.bytes) {
    lines.push(t('PyTorch asked for {0} more on {1}, which has {2} in total; the driver reported {3} free, more than the request, yet the allocation failed (another process may have taken that memory in the meantime).', fmt(m.requested), gpu, fmt(m.totalCapacity), fmt(m.free)));
  } else if (m.requested && m.totalCapacity && m.free) {
    lines.push(t('PyTorch asked for {0} more on {1}, which has {2} in total, but only {3} was free.', fmt(m.requested), gpu, fmt(m.totalCapacity), fmt(m.free)));
  } else if (m.requested) {
    lines.push(t('PyTorch asked for {0} more on {1} and the GPU could not provide it.', fmt(m.requested), gpu));
  } else {
    lines.push(t('{0} ran out of memory; the message gives no figures.', m.backend));
  }
  const reserved = reservedOf(m);
  const fragmentation = fragmentationOf(m);
  if (m.allocated && fragmentation !== undefined && reserved !== undefined) {
    lines.push(t('PyTorch held {0}: {1} in live tensors and {2} cached in blocks that no tensor used but that could not serve this request.', formatBytes(reserved), fmt(m.allocated), formatBytes(fragmentation)));
  }
  const self = m.processes.find((proc) => proc.pid === null);
  if (self) {
    if (self.used.bytes === 0) lines.push(t('The driver reported 0 bytes for this process, which happens inside containers where NVML cannot see process ids.'));
    else if (reserved !== undefined && self.used.bytes > reserved) lines.push(t('This process used {0} in all; {1} of it was outside PyTorch\'s allocator (the CUDA context and libraries such as cuBLAS, cuDNN and NCCL).', fmt(self.used), formatBytes(self.used.bytes - reserved)));
  }
  const others = m.processes.filter((proc) => proc.pid !== null);
  if (others.length > 0) {
    lines.push(t('Other processes on the same GPU held {0} ({1}).', formatBytes(otherProcesses(m)), others.map((proc) => t('process {0}: {1}', proc.pid ?? '', proc.used.text)).join(', ')));
  } else if (!self && m.totalCapacity && m.free && reserved !== undefined && m.totalCapacity.bytes - m.free.bytes - reserved > 0) {
    lines.push(t('The other {0} in use was outside PyTorch\'s allocator: the CUDA context, libraries, or other processes.', formatBytes(m.totalCapacity.bytes - m.free.bytes - reserved)));
  }
  if (frame) {
    const where = frame.function ? t('in {0}() at {1}:{2}', frame.function, frame.file, frame.line) : t('at {0}:{1}', frame.file, frame.line);
    lines.push(frame.code ? t('It failed {0}: {1}', where, frame.code) : t('It failed {0}.', where));
  }
  return lines;
}

function causesOf(m: OomMessage, script: ScriptSummary | undefined): Cause[] {
  const causes: Cause[] = [];
  const requested = m.requested?.bytes;
  const free = m.free?.bytes ?? 0;
  const total = m.totalCapacity?.bytes;
  const fragmentation = fragmentationOf(m);
  // A cause is decisive when the request did not fit but would have with that cause's memory added back.
  const fits = (extra: number) => requested !== undefined && free < requested && free + extra >= requested;
  const tensorTry: string[] = [];
  if (script?.matchingTensor) {
    tensorTry.push(t('The request matches the {0} of {1}: {2} = {3}. Shrink that product: a smaller batch size or sequence length, or compute it in chunks.', script.matchingTensor.name, script.file, script.matchingTensor.formula, formatBytes(script.matchingTensor.bytes)));
  }

  if (requested !== undefined && total !== undefined && requested > total) {
    causes.push({
      kind: 'larger-than-gpu', bytes: requested, decisive: true,
      title: t('One allocation of {0} is larger than the whole GPU ({1})', fmt(m.requested), fmt(m.totalCapacity)),
      detail: [t('No amount of freeing helps: this single tensor cannot exist on this GPU.')],
      tryThis: [...tensorTry, t('Reduce the size of that one tensor: the batch size, the sequence length or image size, or split the operation into chunks.')],
    });
  }
  if (m.allowed && total !== undefined && m.allowed.bytes < total) {
    causes.push({
      kind: 'memory-limit', bytes: total - m.allowed.bytes, decisive: fits(total - m.allowed.bytes),
      title: t('The process may use only {0} of the {1} GPU', fmt(m.allowed), fmt(m.totalCapacity)),
      detail: [t('torch.cuda.set_per_process_memory_fraction() limits this process to {0}; {1} of the GPU is off limits.', fmt(m.allowed), formatBytes(total - m.allowed.bytes))],
      tryThis: [t('Raise or remove the torch.cuda.set_per_process_memory_fraction() limit.')],
    });
  }
  if (fragmentation !== undefined && fragmentation > 0) {
    const decisive = requested !== undefined && (total === undefined || requested <= total) && fits(fragmentation);
    causes.push({
      kind: 'fragmentation', bytes: fragmentation, decisive,
      title: t('{0} reserved by PyTorch but unusable (fragmentation)', formatBytes(fragmentation)),
      detail: [decisive
        ? t('Free memory plus this cached memory ({0}) would have covered the request of {1}, had it been one contiguous block.', formatBytes(free + fragmentation), fmt(m.requested))
        : t('This is memory in partly used cached blocks; PyTorch had already released every fully free block before failing.')],
      tryThis: m.format === 'current'
        ? [t('Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True before the script starts: segments then grow in place instead of leaving unusable slivers.')]
        : [t('Set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:<size in MiB> (as this PyTorch suggests) so that cached blocks of that size or larger are not split; current PyTorch releases offer PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True instead.')],
    });
  }
  const others = otherProcesses(m);
  if (others > 0) {
    causes.push({
      kind: 'other-processes', bytes: others, decisive: requested !== undefined && (total === undefined || requested <= total) && fits(others),
      title: t('{0} used by other processes on the same GPU', formatBytes(others)),
      detail: [t('Another training run, a notebook kernel or an inference server holds this memory.')],
      tryThis: [t('Check nvidia-smi, stop the processes you do not need, or pick a free GPU with CUDA_VISIBLE_DEVICES.')],
    });
  }
  const reserved = reservedOf(m);
  const self = m.processes.find((proc) => proc.pid === null);
  let outside: number | undefined;
  if (self && reserved !== undefined && self.used.bytes > reserved) outside = self.used.bytes - reserved;
  else if (m.processes.length === 0 && total !== undefined && m.free && reserved !== undefined) outside = total - free - reserved;
  if (outside !== undefined && outside > 0) {
    causes.push({
      kind: 'outside-pytorch', bytes: outside, decisive: false,
      title: self ? t('{0} used by this process outside PyTorch\'s allocator', formatBytes(outside)) : t('{0} used outside PyTorch\'s allocator', formatBytes(outside)),
      detail: [self
        ? t('The CUDA context, cuBLAS/cuDNN workspaces, NCCL buffers and other libraries take this memory; torch.cuda.memory_allocated() does not count it.')
        : t('The CUDA context, libraries and any other process on the GPU take this memory; the message does not say which.')],
      tryThis: [self ? t('Keep one CUDA-using library per process where you can; this memory is mostly fixed per process.') : t('Check nvidia-smi for other processes on this GPU.')],
    });
  }
  if (m.allocated && m.allocated.bytes > 0) {
    const detail: string[] = [t('Weights, gradients, optimizer states and the activations saved for backward live here.')];
    const tryThis: string[] = [];
    if (script?.estimatedAllocated !== undefined) {
      detail.push(t('The estimator expects {0} allocated at the peak of one step of {1} ({2}, batch size {3}, {4}).', formatBytes(script.estimatedAllocated), script.file, script.model, script.batchSize, script.precision));
      if (m.allocated.bytes > script.estimatedAllocated) {
        detail.push(t('PyTorch held {0} more than the estimated peak allocation ({1}): tensors kept alive across steps, a larger batch or sequence than detected, or a second model would explain it.', formatBytes(m.allocated.bytes - script.estimatedAllocated), formatBytes(script.estimatedAllocated)));
      }
      if (script.findings.length > 0) tryThis.push(t('Fix what OOM Guard found in {0}: {1}.', script.file, script.findings.map((f) => `${f.code} (${t('line {0}', f.line)})`).join(', ')));
      if (script.maxBatchSizeOnThisGpu !== undefined && script.maxBatchSizeOnThisGpu < script.batchSize) {
        tryThis.push(script.maxBatchSizeOnThisGpu > 0
          ? t('Lower the batch size from {0} to {1} (the estimator\'s largest that fits {2}), and use gradient accumulation to keep the effective batch.', script.batchSize, script.maxBatchSizeOnThisGpu, fmt(m.totalCapacity))
          : t('Even a batch size of 1 does not fit {0} by the estimate: use a smaller model, LoRA, an 8-bit optimizer or sharding across GPUs.', fmt(m.totalCapacity)));
      }
    }
    tryThis.push(t('Use less memory per step: mixed precision (torch.autocast), gradient checkpointing, a smaller batch with gradient accumulation.'));
    causes.push({
      kind: 'live-tensors', bytes: m.allocated.bytes, decisive: false,
      title: t('{0} in live tensors', fmt(m.allocated)),
      detail, tryThis,
    });
  }
  if (m.requested && !causes.some((cause) => cause.kind === 'larger-than-gpu')) {
    const detail: string[] = [];
    if (script && !script.matchingTensor && script.tensors.length > 0) {
      detail.push(t('No single tensor of the estimated step matches it; the largest are: {0}.', script.tensors.slice(0, 3).map((x) => `${x.name} ${formatBytes(x.bytes)}`).join('; ')));
    }
    causes.push({
      kind: 'request', bytes: m.requested.bytes, decisive: false,
      title: t('The allocation that failed: {0}', fmt(m.requested)),
      detail,
      tryThis: tensorTry,
    });
  }
  // Nothing given back would have made room (the card is full of live tensors, the cache holds little): the job
  // itself does not fit, and using less memory per step is what would have prevented the failure. That comes first,
  // ahead of a fragmentation figure that could not have served the request anyway.
  const live = causes.find((cause) => cause.kind === 'live-tensors');
  const largest = Math.max(...causes.filter((cause) => cause.kind !== 'request').map((cause) => cause.bytes));
  // Only when the live tensors are the largest use of the card: memory outside PyTorch or another process that
  // dwarfs them is the story then.
  if (live && requested !== undefined && live.bytes >= largest && !causes.some((cause) => cause.decisive)) {
    live.decisive = true;
    live.title = t('The job does not fit: {0} in live tensors, and what was free or cached could not serve {1}', fmt(m.allocated), fmt(m.requested));
  }
  // Decisive causes first, then the rest by the memory they account for.
  return causes.sort((a, b) => Number(b.decisive) - Number(a.decisive) || b.bytes - a.bytes);
}

function summarizeScript(context: ScriptContext, m: OomMessage): ScriptSummary {
  const e = context.estimate;
  const resolved = !e.unresolved;
  const estimatedPeak = resolved ? e.peakReserved + e.cudaContext : undefined;
  const summary: ScriptSummary = {
    file: context.file,
    model: e.detected.model.name ?? '',
    batchSize: e.detected.batchSize.value,
    precision: e.detected.precision.value,
    estimatedPeak,
    estimatedAllocated: resolved ? e.peakAllocated : undefined,
    assumptions: e.assumptions,
    findings: context.findings.map((f) => ({ code: f.code, line: f.range.start.line + 1, message: f.message })),
    tensors: resolved ? context.tensors : [],
  };
  if (m.totalCapacity) {
    if (estimatedPeak !== undefined) summary.fitsOnThisGpu = estimatedPeak <= m.totalCapacity.bytes;
    summary.maxBatchSizeOnThisGpu = maxBatchSize(e.config, m.totalCapacity.bytes) ?? 0;
  }
  const requested = m.requested?.bytes;
  if (requested !== undefined) {
    const match = context.tensors.find((tensor) => matches(requested, tensor.bytes));
    if (match) summary.matchingTensor = match;
  }
  return summary;
}

export interface ExplainOptions {
  /** The frame's file on this machine, when it was found. */
  frameFile?: string;
  script?: ScriptContext;
}

export function buildExplanation(report: OomReport, options: ExplainOptions = {}): Explanation {
  const m = report.message;
  const script = options.script ? summarizeScript(options.script, m) : undefined;
  const explanation: Explanation = {
    message: m,
    summary: summaryOf(m, report.userFrame),
    figures: figuresOf(m),
    causes: causesOf(m, script),
  };
  if (report.userFrame) explanation.frame = report.userFrame;
  if (options.frameFile) explanation.frameFile = options.frameFile;
  if (script) {
    explanation.script = script;
    if (script.fitsOnThisGpu === false && script.estimatedPeak !== undefined) {
      explanation.summary.push(t('By the estimate, one step of {0} needs {1} with the CUDA context, more than this GPU\'s {2}.', script.file, formatBytes(script.estimatedPeak), fmt(m.totalCapacity)));
    }
  }
  return explanation;
}
