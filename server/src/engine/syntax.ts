// Small helpers over tree-sitter nodes that every part of the engine uses.
import type { Node } from './parser';
import type { Range } from './types';
import { NodeMemo } from './node-memo';

export function rangeOf(node: Node): Range {
  // The copy's own fields: its startPosition and endPosition make a new Point on every read.
  return {
    start: { line: node.startRow, character: node.startColumn },
    end: { line: node.endRow, character: node.endColumn },
  };
}

/** What the walks below read of a node: tree-sitter's nodes, the engine's copy and the program model's slice have it. */
interface WalkedNode<N> {
  readonly type: string;
  readonly parent: N | null;
  readonly startIndex: number;
  readonly endIndex: number;
  childForFieldName(field: string): N | null;
}

/** Whether `inner` lies inside `outer` (or is it). Compares offsets, which are stable within one tree. */
/** The index of the first item that starts at or after `offset` (items sorted by start). */
export function lowerBoundBy<T>(items: readonly T[], offset: number, startOf: (item: T) => number): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (startOf(items[mid]!) < offset) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The index of the first node that starts at or after `offset` (nodes in document order); offset + 1: the first after it. */
export function lowerBound(nodes: ReadonlyArray<{ startIndex: number }>, offset: number): number {
  return lowerBoundBy(nodes, offset, (node) => node.startIndex);
}

/** The nodes of a list in document order (the model's calls, assignments, returns…) that start inside `region`. */
export function nodesWithin<T extends { startIndex: number }>(nodes: readonly T[], region: { startIndex: number; endIndex: number }): T[] {
  const result: T[] = [];
  for (let i = lowerBound(nodes, region.startIndex); i < nodes.length && nodes[i]!.startIndex < region.endIndex; i++) result.push(nodes[i]!);
  return result;
}

export function contains<N extends WalkedNode<N>>(outer: N, inner: N): boolean {
  return outer.startIndex <= inner.startIndex && inner.endIndex <= outer.endIndex;
}

export function isBefore(a: Node, b: Node): boolean {
  return a.startIndex < b.startIndex;
}

const SCOPE_TYPES = new Set(['function_definition', 'lambda', 'class_definition', 'module']);

/** The nearest enclosing function, lambda, class body or module. */
export function enclosingScope<N extends WalkedNode<N>>(node: N): N {
  let current = node.parent;
  while (current && !SCOPE_TYPES.has(current.type)) current = current.parent;
  return current ?? node;
}

/** The nearest enclosing function definition (or the module for top-level code). Class bodies are skipped. */
export function enclosingFunction(node: Node): Node {
  let current = node.parent;
  while (current && current.type !== 'function_definition' && current.type !== 'module') current = current.parent;
  return current ?? node;
}

export const LOOP_TYPES = new Set(['for_statement', 'while_statement']);

/** The innermost node under `root` whose span holds a position (a finding's start: 0-based line and character). */
export function nodeAtPosition(root: Node, position: { line: number; character: number }): Node {
  const { line, character } = position;
  const startsBy = (n: Node) => n.startRow < line || (n.startRow === line && n.startColumn <= character);
  const endsAfter = (n: Node) => n.endRow > line || (n.endRow === line && n.endColumn > character);
  let node = root;
  for (let child = node.children.find((c) => c && startsBy(c) && endsAfter(c)); child; child = node.children.find((c) => c && startsBy(c) && endsAfter(c))) {
    node = child;
  }
  return node;
}

/** The innermost loop whose body holds `node`, within its function (enclosingLoops(node)[0], without the list). */
export function innermostLoop<N extends WalkedNode<N>>(node: N): N | undefined {
  for (let current = node.parent; current && current.type !== 'function_definition' && current.type !== 'module'; current = current.parent) {
    if (!LOOP_TYPES.has(current.type)) continue;
    const body = current.childForFieldName('body');
    if (body && contains(body, node)) return current;
  }
  return undefined;
}

/** Loops around `node`, innermost first, stopping at the enclosing function. */
export function enclosingLoops<N extends WalkedNode<N>>(node: N): N[] {
  const loops: N[] = [];
  let current = node.parent;
  while (current && current.type !== 'function_definition' && current.type !== 'module') {
    // A node in a loop's `else:` or iterable is not repeated by that loop.
    if (LOOP_TYPES.has(current.type)) {
      const body = current.childForFieldName('body');
      if (body && contains(body, node)) loops.push(current);
    }
    current = current.parent;
  }
  return loops;
}

/** The statement that holds `node` (its nearest ancestor whose parent is a block or the module). */
export function enclosingStatement(node: Node): Node {
  let current: Node = node;
  while (current.parent && current.parent.type !== 'block' && current.parent.type !== 'module') {
    current = current.parent;
  }
  return current;
}

/** Dotted text of an identifier/attribute chain (`self.model.encoder`), or undefined for anything else. */
export function dottedName(node: Node | null | undefined): string | undefined {
  if (!node) return undefined;
  if (node.type === 'identifier') return node.text;
  if (node.type === 'attribute') {
    const object = dottedName(node.childForFieldName('object'));
    const attribute = node.childForFieldName('attribute');
    return object && attribute ? `${object}.${attribute.text}` : undefined;
  }
  return undefined;
}

/** The last name of a call's callee: `append` for `xs.append(…)`, `model` for `model(…)`. */
export function calleeName(call: Node): string | undefined {
  const fn = call.childForFieldName('function');
  if (!fn) return undefined;
  if (fn.type === 'identifier') return fn.text;
  if (fn.type === 'attribute') return fn.childForFieldName('attribute')?.text;
  return undefined;
}

/** The receiver of a method call: `xs` for `xs.append(…)`. */
export function callReceiver(call: Node): Node | undefined {
  const fn = call.childForFieldName('function');
  if (fn?.type === 'attribute') return fn.childForFieldName('object') ?? undefined;
  return undefined;
}

export interface CallArguments {
  positional: readonly Node[];
  keywords: ReadonlyMap<string, Node>;
}

/** The keywords of a call that passes none (most calls): one shared map, never written. */
const NO_KEYWORDS: ReadonlyMap<string, Node> = new Map();

export function callArguments(call: Node): CallArguments {
  const positional: Node[] = [];
  let keywords: Map<string, Node> | undefined;
  const args = call.childForFieldName('arguments');
  if (args?.type === 'argument_list') {
    // The children with the punctuation among them, skipped here: namedChildren would copy them into a new array.
    for (const child of args.children) {
      if (!child.isNamed) continue;
      if (child.type === 'keyword_argument') {
        const name = child.childForFieldName('name')?.text;
        const value = child.childForFieldName('value');
        if (name && value) (keywords ??= new Map()).set(name, value);
      } else if (child.type !== 'comment') {
        positional.push(child);
      }
    }
  } else if (args) {
    positional.push(args);
  }
  return { positional, keywords: keywords ?? NO_KEYWORDS };
}

const wordsCache = new Map<string, string[]>();

/** Splits `trainLoader`, `train_loader`, `netG` into lower-case words (cached: scripts reuse few names). */
export function nameWords(name: string): string[] {
  let words = wordsCache.get(name);
  if (!words) {
    words = splitWords(name);
    if (wordsCache.size > 50_000) wordsCache.clear();
    wordsCache.set(name, words);
  }
  return words;
}

function splitWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}

/** The literal value of a plain string node (no interpolation), or undefined. */
export function stringLiteral(node: Node | null | undefined): string | undefined {
  if (!node) return undefined;
  if (node.type === 'concatenated_string') {
    let text = '';
    for (const part of node.namedChildren) {
      const value = stringLiteral(part);
      if (value === undefined) return undefined;
      text += value;
    }
    return text;
  }
  if (node.type !== 'string') return undefined;
  let text = '';
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === 'interpolation') return undefined;
    if (child.type === 'string_content' || child.type === 'escape_sequence') text += child.text;
  }
  return text;
}

/**
 * A node's named children. The copy's nodes have no null children (web-tree-sitter's typings allowed them): the list
 * is the node's own, not a copy, so that the many callers that read one child allocate nothing.
 */
export function children(node: Node): readonly Node[] {
  return node.namedChildren;
}

/**
 * Per top-level statement, the words its text was found to contain while it was current. Only the words it contains
 * are kept: a model counts a word over all of its statements (SemanticModel.spells), so for a statement of a model
 * that counted the word, a word missing here is one its text did not contain. An entry per statement and word asked
 * (190,000 for the 200-script bench corpus, most of them "no") cost more than the scans that found them.
 */
const spelledWords = new NodeMemo<Set<string>>();

function noteSpelling(statement: Node, word: string): void {
  let words = spelledWords.get(statement);
  if (!words) spelledWords.set(statement, (words = new Set()));
  words.add(word);
}

/** Whether a top-level statement's current text contains `word` (noted, for spelledWhenCounted). */
export function statementSpells(statement: Node, word: string): boolean {
  const spells = statement.text.includes(word);
  if (spells) noteSpelling(statement, word);
  return spells;
}

/**
 * Whether a statement contained `word` when a model that counted the word over its statements (spells, or
 * statementSpells on each) looked at it: the answer holds once its nodes read a later version's text.
 */
export function spelledWhenCounted(statement: Node, word: string): boolean {
  return spelledWords.get(statement)?.has(word) ?? false;
}

/**
 * How many of `statements` (top-level statements in document order, all reading their current `source`) contain
 * `word`, each one that does noted as statementSpells notes it. One forward scan of the text with indexOf instead of
 * a substring per statement and word: a 360-line script has about 50 statements, and a file is asked about 20 words.
 */
export function countStatementsSpelling(statements: readonly Node[], source: string, word: string): number {
  let count = 0;
  // The first occurrence at or after the current statement's start (-1: none left in the text).
  let found = statements.length > 0 ? source.indexOf(word, statements[0]!.startIndex) : -1;
  for (const statement of statements) {
    if (found < 0) break;
    if (found < statement.startIndex) found = source.indexOf(word, statement.startIndex);
    // A later occurrence ends later: when the first one in the statement runs past its end, all do.
    if (found >= 0 && found + word.length <= statement.endIndex) {
      noteSpelling(statement, word);
      count++;
    }
  }
  return count;
}
