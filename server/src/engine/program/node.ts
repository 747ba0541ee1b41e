// The slice of a syntax tree the program model reads. Both web-tree-sitter's nodes and the engine's plain-object
// copy (engine/syntax-tree.ts) have this shape, so the CLI (one parse) and the server (the document's copy) share it.
export interface PyNode {
  readonly id: number;
  readonly type: string;
  readonly text: string;
  readonly startIndex: number;
  readonly endIndex: number;
  readonly startPosition: { row: number; column: number };
  readonly parent: PyNode | null;
  readonly children: ReadonlyArray<PyNode | null>;
  readonly namedChildren: ReadonlyArray<PyNode | null>;
  childForFieldName(field: string): PyNode | null;
  descendantsOfType(types: string | string[]): ReadonlyArray<PyNode | null>;
}

export interface PyTree {
  readonly rootNode: PyNode;
}
