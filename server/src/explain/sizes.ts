// Sizes as PyTorch prints them in its out-of-memory messages, and back.
// c10's format_size() divides by powers of 1024 and prints "bytes", "KiB", "MiB" or "GiB" with two decimals;
// older allocators (and the MPS one) print "KB", "MB", "GB" for the same powers of 1024.

/** A size read from the message: the bytes it stands for and the text exactly as it was printed. */
export interface PrintedSize {
  bytes: number;
  text: string;
}

const UNIT_BYTES: Record<string, number> = {
  b: 1, byte: 1, bytes: 1,
  kib: 1024, kb: 1024,
  mib: 1024 ** 2, mb: 1024 ** 2,
  gib: 1024 ** 3, gb: 1024 ** 3,
  tib: 1024 ** 4, tb: 1024 ** 4,
};

/** The pattern of one printed size; whitespace (even a wrapped line) may separate the number and its unit. */
export const SIZE_PATTERN = String.raw`(\d+(?:\.\d+)?)\s*(bytes|byte|[KMGT]i?B|B)\b`;

/** Reads "1.22 GiB", "0 bytes", "512.00 KB"; undefined when the text is not a size. */
export function parseSize(text: string): PrintedSize | undefined {
  const match = new RegExp(`^\\s*${SIZE_PATTERN}\\s*$`, 'i').exec(text);
  if (!match) return undefined;
  return sizeFrom(match[1]!, match[2]!);
}

/** A size from the number and unit groups of SIZE_PATTERN. */
export function sizeFrom(number: string, unit: string): PrintedSize | undefined {
  const factor = UNIT_BYTES[unit.toLowerCase()];
  const value = Number(number);
  if (factor === undefined || !Number.isFinite(value)) return undefined;
  return { bytes: Math.round(value * factor), text: `${number} ${unit}` };
}

/** Formats bytes the way c10's format_size() does, so computed figures read like the message's own. */
export function formatBytes(bytes: number): string {
  const size = Math.max(0, Math.round(bytes));
  if (size <= 1024) return `${size} bytes`;
  if (size <= 1024 ** 2) return `${(size / 1024).toFixed(2)} KiB`;
  if (size <= 1024 ** 3) return `${(size / 1024 ** 2).toFixed(2)} MiB`;
  return `${(size / 1024 ** 3).toFixed(2)} GiB`;
}
