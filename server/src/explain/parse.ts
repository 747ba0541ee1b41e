// Reads PyTorch's CUDA out-of-memory errors out of any text: a terminal selection, a training log, a traceback.
// Every wording the caching allocator has printed is recognised (c10/cuda/CUDACachingAllocator.cpp):
//   current  "CUDA out of memory. Tried to allocate X. GPU 0 has a total capacity of Y of which Z is free.
//             [Process P has W memory in use.] [Including non-PyTorch memory, this process has W memory in use.]
//             [A allowed; ]Of the allocated memory A is allocated by PyTorch, [with P allocated in private pools
//             (e.g., CUDA Graphs), ]and R is reserved by PyTorch but unallocated. If reserved but unallocated
//             memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True ..."
//   2.1      the same with "total capacty" (sic) and a max_split_size_mb hint
//   <= 2.0   "CUDA out of memory. Tried to allocate X (GPU 0; Y total capacity; A already allocated; Z free;
//             [L allowed; ]R reserved in total by PyTorch)" (before 1.4: "U cached)", U = reserved − allocated)
// Fields are read one by one with whitespace-tolerant patterns, so a message wrapped by a terminal or a logger
// still parses, and a truncated one yields what it has.
import { SIZE_PATTERN, sizeFrom, type PrintedSize } from './sizes';

export type OomFormat = 'current' | 'pytorch-2.1' | 'legacy' | 'partial';

/** One "Process N has X memory in use" entry; pid null is "Including non-PyTorch memory, this process". */
export interface ProcessMemory {
  pid: number | null;
  used: PrintedSize;
}

export interface TracebackFrame {
  file: string;
  /** 1-based, as Python prints it. */
  line: number;
  function?: string;
  code?: string;
}

export interface OomMessage {
  format: OomFormat;
  /** CUDA, or HIP on ROCm builds. */
  backend: string;
  /** The exception class printed before the message (torch.OutOfMemoryError, RuntimeError...), if any. */
  exception?: string;
  gpu?: number;
  requested?: PrintedSize;
  totalCapacity?: PrintedSize;
  free?: PrintedSize;
  /** The per-process limit set with torch.cuda.set_per_process_memory_fraction. */
  allowed?: PrintedSize;
  processes: ProcessMemory[];
  /** Memory in live tensors ("is allocated by PyTorch", "already allocated"). */
  allocated?: PrintedSize;
  privatePools?: PrintedSize;
  /** Reserved by PyTorch but unallocated (current and 2.1 wording; "cached" before 1.4). */
  reservedUnallocated?: PrintedSize;
  /** <= 2.0 wording: everything PyTorch reserved ("reserved in total by PyTorch"). */
  reservedTotal?: PrintedSize;
  /** The allocator setting the message itself suggests. */
  hint?: 'expandable_segments' | 'max_split_size_mb';
  /** 0-based line of the text where the message starts. */
  line: number;
  /** The message with its whitespace collapsed. */
  text: string;
}

export interface OomReport {
  message: OomMessage;
  /** The traceback printed before the message, outermost call first. */
  frames: TracebackFrame[];
  /** The innermost frame outside Python's and the libraries' own files: the user's code. */
  userFrame?: TracebackFrame;
}

const ANCHOR = /\b(CUDA|HIP)\s+out\s+of\s+memory\b/g;
/** How far after the anchor one message may reach (the longest current message is under 900 characters). */
const MAX_MESSAGE_CHARACTERS = 2000;

const S = SIZE_PATTERN;
const FIELD = {
  requested: new RegExp(String.raw`Tried\s+to\s+allocate\s+${S}`, 'i'),
  currentTotal: new RegExp(String.raw`GPU\s+(\d+)\s+has\s+a\s+total\s+(capac(?:i)?ty)\s+of\s+${S}\s+of\s+which\s+${S}\s+is\s+free`, 'i'),
  process: new RegExp(String.raw`(Including\s+non-PyTorch\s+memory,\s+this\s+process|Process\s+(\d+))\s+has\s+${S}\s+memory\s+in\s+use`, 'gi'),
  allowed: new RegExp(String.raw`${S}\s+allowed\s*;`, 'i'),
  allocatedByPyTorch: new RegExp(String.raw`Of\s+the\s+allocated\s+memory\s+${S}\s+is\s+allocated\s+by\s+PyTorch`, 'i'),
  privatePools: new RegExp(String.raw`with\s+${S}\s+allocated\s+in\s+private\s+pools`, 'i'),
  reservedUnallocated: new RegExp(String.raw`${S}\s+is\s+reserved\s+by\s+PyTorch\s+but\s+unallocated`, 'i'),
  legacyGpu: /\(\s*GPU\s+(\d+)\s*;/i,
  legacyTotal: new RegExp(String.raw`${S}\s+total\s+capacity\s*;`, 'i'),
  legacyAllocated: new RegExp(String.raw`${S}\s+already\s+allocated`, 'i'),
  legacyFree: new RegExp(String.raw`${S}\s+free\s*;`, 'i'),
  legacyReserved: new RegExp(String.raw`${S}\s+reserved\s+in\s+total\s+by\s+PyTorch`, 'i'),
  legacyCached: new RegExp(String.raw`${S}\s+cached\s*\)`, 'i'),
};

function size(match: RegExpExecArray | null, numberGroup = 1): PrintedSize | undefined {
  if (!match) return undefined;
  return sizeFrom(match[numberGroup]!, match[numberGroup + 1]!);
}

/** Collapses whitespace, joins shell-style line continuations and drops per-line launcher prefixes ([rank0]:). */
function normalize(raw: string): string {
  return raw.replace(/\\\r?\n/g, ' ').replace(/\r?\n\s*\[(?:rank|default)\d*\]:/g, ' ').replace(/\s+/g, ' ').trim();
}

function parseMessage(window: string, backend: string, line: number, exception: string | undefined): OomMessage {
  const text = normalize(window);
  const message: OomMessage = { format: 'partial', backend, processes: [], line, text };
  if (exception) message.exception = exception;
  message.requested = size(FIELD.requested.exec(text));
  const current = FIELD.currentTotal.exec(text);
  if (current) {
    message.format = current[2]!.toLowerCase() === 'capacty' ? 'pytorch-2.1' : 'current';
    message.gpu = Number(current[1]);
    message.totalCapacity = size(current, 3);
    message.free = size(current, 5);
    for (const proc of text.matchAll(FIELD.process)) {
      const used = sizeFrom(proc[3]!, proc[4]!);
      if (used) message.processes.push({ pid: proc[2] === undefined ? null : Number(proc[2]), used });
    }
    message.allocated = size(FIELD.allocatedByPyTorch.exec(text));
    message.privatePools = size(FIELD.privatePools.exec(text));
    message.reservedUnallocated = size(FIELD.reservedUnallocated.exec(text));
  } else {
    const total = size(FIELD.legacyTotal.exec(text));
    if (total) {
      message.format = 'legacy';
      const gpu = FIELD.legacyGpu.exec(text);
      if (gpu) message.gpu = Number(gpu[1]);
      message.totalCapacity = total;
      message.allocated = size(FIELD.legacyAllocated.exec(text));
      message.free = size(FIELD.legacyFree.exec(text));
      message.reservedTotal = size(FIELD.legacyReserved.exec(text));
      // Before 1.4 the allocator printed amount_cached − amount_allocated as "cached": reserved but unallocated.
      if (!message.reservedTotal) message.reservedUnallocated = size(FIELD.legacyCached.exec(text));
    }
  }
  message.allowed = size(FIELD.allowed.exec(text));
  if (/expandable_segments/i.test(text)) message.hint = 'expandable_segments';
  else if (/max_split_size_mb/i.test(text)) message.hint = 'max_split_size_mb';
  return message;
}

/** Library and interpreter files: the frame to show is the innermost one outside them. */
const LIBRARY_FILE = /(?:site-packages|dist-packages)[\\/]|[\\/]lib(?:64)?[\\/]python\d[\d.]*[\\/]|[\\/]torch[\\/]|^<|[\\/]Lib[\\/]/;

export function isLibraryFile(file: string): boolean {
  return LIBRARY_FILE.test(file);
}

/** Python's `File "x.py", line 12, in f` and IPython's `File /x.py:12, in f()`, after any [rank0]: prefix. */
const FRAME_LINE = /^\s*(?:\[[\w-]*\d*\]:\s*)?File\s+(?:"([^"]+)",\s+line\s+(\d+)|([^\s,][^,]*?):(\d+))(?:,\s+in\s+(.+?))?\s*$/;
const TRACEBACK_HEADER = /Traceback \(most recent call last\):/g;

function parseFrames(block: string): TracebackFrame[] {
  const frames: TracebackFrame[] = [];
  const lines = block.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const match = FRAME_LINE.exec(lines[i]!);
    if (!match) continue;
    const frame: TracebackFrame = { file: match[1] ?? match[3]!, line: Number(match[2] ?? match[4]) };
    if (match[5]) frame.function = match[5];
    const next = lines[i + 1]?.replace(/^\s*\[[\w-]*\d*\]:/, '').trim();
    // The source line follows its frame, unless the file was not readable (then the next frame follows).
    if (next && !FRAME_LINE.test(lines[i + 1]!) && !/^[\^~\s]+$/.test(next) && !/^[A-Za-z_][\w.]*(?:Error|Exception)\s*:/.test(next)) frame.code = next;
    frames.push(frame);
  }
  return frames;
}

function lineOf(text: string, offset: number): number {
  let line = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** Every out-of-memory error in the text, in order, each with the traceback printed before it. */
export function findOomErrors(text: string): OomReport[] {
  const anchors = [...text.matchAll(ANCHOR)];
  const reports: OomReport[] = [];
  let previousEnd = 0;
  for (let k = 0; k < anchors.length; k++) {
    const anchor = anchors[k]!;
    const start = anchor.index;
    let end = Math.min(text.length, start + MAX_MESSAGE_CHARACTERS, anchors[k + 1]?.index ?? text.length);
    // A message ends at a blank line or where the next traceback starts.
    const rest = text.slice(start, end);
    const stop = rest.search(/\r?\n\s*\r?\n|\r?\n(?:\[[\w-]*\d*\]:\s*)?Traceback \(most recent call last\)/);
    if (stop !== -1) end = start + stop;
    const lineStart = text.lastIndexOf('\n', start - 1) + 1;
    const before = text.slice(lineStart, start);
    const exception = /([A-Za-z_][\w.]*(?:Error|Exception))\s*:\s*$/.exec(before)?.[1];
    const message = parseMessage(text.slice(start, end), anchor[1]!.toUpperCase(), lineOf(text, start), exception);
    // The traceback belongs to this message when it starts after the previous message.
    const headers = [...text.slice(previousEnd, start).matchAll(TRACEBACK_HEADER)];
    const lastHeader = headers[headers.length - 1];
    const frames = lastHeader ? parseFrames(text.slice(previousEnd + lastHeader.index, lineStart)) : [];
    const userFrame = [...frames].reverse().find((frame) => !isLibraryFile(frame.file));
    reports.push(userFrame ? { message, frames, userFrame } : { message, frames });
    previousEnd = end;
  }
  return reports;
}
