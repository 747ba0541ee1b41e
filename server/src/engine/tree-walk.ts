// The cursor walk that copies a tree-sitter tree (syntax-tree.ts). web-tree-sitter's TreeCursor writes its four
// words into the runtime's transfer buffer before every question and reads them back after every move: sixteen
// memory accesses through a DataView around each call into WebAssembly, most of what a copy cost. The runtime's
// own cursor functions leave the cursor in that buffer between calls, so when they can be reached (the Emscripten
// module is the options object given to Parser.init, see parser.ts) the copy calls them directly: the cursor is
// written into the buffer once when a walk starts and read back once when it ends. Without them (another build of
// web-tree-sitter), the walk asks the public TreeCursor, with the same answers.
import type { Tree, TreeCursor } from 'web-tree-sitter';

/** The questions and moves of a copy, on the node a cursor is at. */
export interface TreeWalk {
  typeId(): number;
  startIndex(): number;
  endIndex(): number;
  /** The field of the node in its parent (0: none). */
  fieldId(): number;
  isMissing(): boolean;
  gotoFirstChild(): boolean;
  gotoNextSibling(): boolean;
  gotoParent(): boolean;
  /** Hands the cursor back: its own state is the walk's again (a cursor must not be used while a walk is on). */
  finish(): void;
}

/** The runtime functions a direct walk calls; each takes the tree's address and reads the cursor from the buffer. */
export interface CursorRuntime {
  _ts_tree_cursor_current_node_type_id_wasm(tree: number): number;
  _ts_tree_cursor_start_index_wasm(tree: number): number;
  _ts_tree_cursor_end_index_wasm(tree: number): number;
  _ts_tree_cursor_current_field_id_wasm(tree: number): number;
  _ts_tree_cursor_current_node_is_missing_wasm(tree: number): number;
  _ts_tree_cursor_goto_first_child_wasm(tree: number): number;
  _ts_tree_cursor_goto_next_sibling_wasm(tree: number): number;
  _ts_tree_cursor_goto_parent_wasm(tree: number): number;
  /** Returns the transfer buffer's address (and writes the language versions into its first two words). */
  _ts_init(): number;
  /** The runtime's memory as 32-bit words; replaced when the memory grows, so read it afresh each time. */
  HEAP32: Int32Array;
}

const RUNTIME_FUNCTIONS = [
  '_ts_tree_cursor_current_node_type_id_wasm', '_ts_tree_cursor_start_index_wasm', '_ts_tree_cursor_end_index_wasm',
  '_ts_tree_cursor_current_field_id_wasm', '_ts_tree_cursor_current_node_is_missing_wasm', '_ts_tree_cursor_goto_first_child_wasm',
  '_ts_tree_cursor_goto_next_sibling_wasm', '_ts_tree_cursor_goto_parent_wasm', '_ts_init',
] as const;

/** The runtime when its functions can be reached; `runtime` is it unless a test turned the direct walk off. */
let reachable: CursorRuntime | undefined;
let runtime: CursorRuntime | undefined;
let transferWord = 0;

/**
 * Called once the runtime is initialised with the module object it was given: the direct walk is used when that
 * object carries the cursor functions and the memory, and the public cursor otherwise.
 */
export function useCursorRuntime(module: object): void {
  const candidate = module as Partial<Record<(typeof RUNTIME_FUNCTIONS)[number], unknown>> & { HEAP32?: unknown };
  if (!RUNTIME_FUNCTIONS.every((name) => typeof candidate[name] === 'function') || !(candidate.HEAP32 instanceof Int32Array)) return;
  reachable = runtime = module as CursorRuntime;
  transferWord = runtime._ts_init() >> 2;
}

/** Whether copies call the runtime directly. */
export function directWalkAvailable(): boolean {
  return runtime !== undefined;
}

/** Turns the direct walk off or back on (tests check that both walks give the same copy). */
export function setDirectWalk(enabled: boolean): void {
  runtime = enabled ? reachable : undefined;
}

/** The cursor's four words (web-tree-sitter keeps them as the object's indexed properties). */
type CursorWords = Record<0 | 1 | 2 | 3, number>;

class DirectWalk implements TreeWalk {
  private readonly tree: number;

  constructor(private readonly runtime: CursorRuntime, tree: Tree, private readonly cursor: TreeCursor) {
    this.tree = (tree as unknown as Record<0, number>)[0];
    const words = cursor as unknown as CursorWords;
    const heap = runtime.HEAP32;
    heap[transferWord] = words[0];
    heap[transferWord + 1] = words[1];
    heap[transferWord + 2] = words[2];
    heap[transferWord + 3] = words[3];
  }

  typeId(): number {
    return this.runtime._ts_tree_cursor_current_node_type_id_wasm(this.tree);
  }

  startIndex(): number {
    return this.runtime._ts_tree_cursor_start_index_wasm(this.tree);
  }

  endIndex(): number {
    return this.runtime._ts_tree_cursor_end_index_wasm(this.tree);
  }

  fieldId(): number {
    return this.runtime._ts_tree_cursor_current_field_id_wasm(this.tree);
  }

  isMissing(): boolean {
    return this.runtime._ts_tree_cursor_current_node_is_missing_wasm(this.tree) === 1;
  }

  gotoFirstChild(): boolean {
    return this.runtime._ts_tree_cursor_goto_first_child_wasm(this.tree) === 1;
  }

  gotoNextSibling(): boolean {
    return this.runtime._ts_tree_cursor_goto_next_sibling_wasm(this.tree) === 1;
  }

  gotoParent(): boolean {
    return this.runtime._ts_tree_cursor_goto_parent_wasm(this.tree) === 1;
  }

  finish(): void {
    // A move may have reallocated the cursor's stack: the object takes the words the runtime left.
    const words = this.cursor as unknown as CursorWords;
    const heap = this.runtime.HEAP32;
    words[0] = heap[transferWord]!;
    words[1] = heap[transferWord + 1]!;
    words[2] = heap[transferWord + 2]!;
    words[3] = heap[transferWord + 3]!;
  }
}

class PublicCursorWalk implements TreeWalk {
  constructor(private readonly cursor: TreeCursor) {}

  typeId(): number {
    return this.cursor.nodeTypeId;
  }

  startIndex(): number {
    return this.cursor.startIndex;
  }

  endIndex(): number {
    return this.cursor.endIndex;
  }

  fieldId(): number {
    return this.cursor.currentFieldId;
  }

  isMissing(): boolean {
    return this.cursor.nodeIsMissing;
  }

  gotoFirstChild(): boolean {
    return this.cursor.gotoFirstChild();
  }

  gotoNextSibling(): boolean {
    return this.cursor.gotoNextSibling();
  }

  gotoParent(): boolean {
    return this.cursor.gotoParent();
  }

  finish(): void {}
}

/**
 * A walk from where `cursor` (a cursor of `tree`) is. Until finish(), nothing else may call into the runtime: the
 * direct walk's cursor lives in the runtime's shared transfer buffer.
 */
export function startWalk(tree: Tree, cursor: TreeCursor): TreeWalk {
  return runtime ? new DirectWalk(runtime, tree, cursor) : new PublicCursorWalk(cursor);
}
