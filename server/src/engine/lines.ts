// Finding the line of an offset, shared by the document store (LSP positions) and the tree copy (rows).

/** The index of the last line that starts at or before `offset` (line starts in ascending order). */
export function lineIndexAt(lineStarts: readonly number[], offset: number): number {
  let low = 0;
  let high = lineStarts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (lineStarts[mid]! <= offset) low = mid;
    else high = mid - 1;
  }
  return low;
}
