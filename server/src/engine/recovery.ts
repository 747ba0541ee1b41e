// Mid-edit tolerance. tree-sitter recovers from most syntax errors locally, but an unclosed bracket can swallow
// the rest of the file into one ERROR node, and the user would lose every finding while typing. For analysis
// only, the lines where errors start are blanked (same length, so every position stays valid) and the text is
// re-parsed, a few times at most. The user's text is never changed.
import type { Node, Tree } from 'web-tree-sitter';
import { parsePython } from './parser';
import { computeLineStarts } from './lines';

const MAX_ROUNDS = 4;

function firstErrorLine(root: Node): number | undefined {
  if (!root.hasError) return undefined;
  const cursor = root.walk();
  // Depth-first, entering only subtrees that contain an error.
  for (;;) {
    const node = cursor.currentNode;
    if (node.isError || node.isMissing) return node.startPosition.row;
    if (node.hasError && cursor.gotoFirstChild()) continue;
    while (!cursor.gotoNextSibling()) {
      if (!cursor.gotoParent()) return undefined;
    }
  }
}

function blankLine(text: string, line: number): string {
  const starts = computeLineStarts(text);
  const start = starts[line];
  if (start === undefined) return text;
  let end = starts[line + 1] ?? text.length;
  while (end > start && (text[end - 1] === '\n' || text[end - 1] === '\r')) end--;
  return text.slice(0, start) + ' '.repeat(end - start) + text.slice(end);
}

function errorSize(root: Node): number {
  let size = 0;
  for (const node of root.descendantsOfType('ERROR')) if (node) size += node.endIndex - node.startIndex;
  return size;
}

/**
 * A tree to analyse for `text`: the tree itself when it has no error, else the parse of a copy whose
 * error lines are blanked, if that covers less of the file with errors. The caller owns (deletes) a new tree.
 */
export interface RecoveredTree {
  tree: Tree;
  /** The text `tree` was parsed from: the user's text, or a copy with error lines blanked. */
  text: string;
}

export async function recoverTree(text: string, tree: Tree): Promise<RecoveredTree> {
  // Errors that tree-sitter kept to one line cost the other lines nothing.
  if (!tree.rootNode.hasError || !tree.rootNode.descendantsOfType('ERROR').some((node) => !!node && node.endPosition.row > node.startPosition.row)) {
    return { tree, text };
  }
  let best = tree;
  let bestText = text;
  let bestSize = errorSize(tree.rootNode);
  let latest = tree;
  let current = text;
  for (let round = 0; round < MAX_ROUNDS && bestSize > 0; round++) {
    const line = firstErrorLine(latest.rootNode);
    if (line === undefined) break;
    current = blankLine(current, line);
    const candidate = await parsePython(current);
    if (!candidate) break;
    if (latest !== tree && latest !== best) latest.delete();
    latest = candidate;
    const size = errorSize(candidate.rootNode);
    if (size <= bestSize) {
      if (best !== tree) best.delete();
      best = candidate;
      bestText = current;
      bestSize = size;
    }
  }
  if (latest !== tree && latest !== best) latest.delete();
  return { tree: best, text: bestText };
}
