// A plain JavaScript copy of a tree-sitter tree. The rules ask many small questions of the tree (parents, fields,
// ranges); asked of web-tree-sitter's nodes, each one is a call into WebAssembly and a new wrapper object. One
// cursor walk per document version copies the tree into these objects, and every later question is a field read.
import type { Point, Tree } from 'web-tree-sitter';

export class SyntaxNode {
  parent: SyntaxNode | null = null;
  readonly children: SyntaxNode[] = [];
  /** The field name of each child (`left`, `body`, …), null where the grammar names none. */
  readonly childFields: Array<string | null> = [];
  hasError = false;
  private namedCache: SyntaxNode[] | undefined;

  constructor(
    readonly source: string,
    readonly id: number,
    readonly type: string,
    readonly isNamed: boolean,
    readonly isMissing: boolean,
    readonly startIndex: number,
    readonly endIndex: number,
    readonly startPosition: Point,
    readonly endPosition: Point,
  ) {}

  get text(): string {
    return this.source.slice(this.startIndex, this.endIndex);
  }

  get isError(): boolean {
    return this.type === 'ERROR';
  }

  get namedChildren(): SyntaxNode[] {
    this.namedCache ??= this.children.filter((child) => child.isNamed);
    return this.namedCache;
  }

  childForFieldName(field: string): SyntaxNode | null {
    const index = this.childFields.indexOf(field);
    return index < 0 ? null : this.children[index]!;
  }

  childrenForFieldName(field: string): SyntaxNode[] {
    return this.children.filter((_, i) => this.childFields[i] === field);
  }

  /** Descendants (not the node itself) of the given types, in document order. */
  descendantsOfType(types: string | readonly string[]): SyntaxNode[] {
    const wanted = typeof types === 'string' ? new Set([types]) : new Set(types);
    const found: SyntaxNode[] = [];
    const stack = [...this.children].reverse();
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (wanted.has(node.type)) found.push(node);
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
    }
    return found;
  }
}

/** Copies a tree-sitter tree into SyntaxNodes with one cursor walk. */
export function copyTree(tree: Tree, source: string): SyntaxNode {
  const cursor = tree.walk();
  let nextId = 0;
  const make = () =>
    new SyntaxNode(
      source,
      nextId++,
      cursor.nodeType,
      cursor.nodeIsNamed,
      cursor.nodeIsMissing,
      cursor.startIndex,
      cursor.endIndex,
      cursor.startPosition,
      cursor.endPosition,
    );
  const root = make();
  let current = root;
  for (;;) {
    if (cursor.gotoFirstChild()) {
      const child = make();
      child.parent = current;
      current.children.push(child);
      current.childFields.push(cursor.currentFieldName);
      current = child;
      continue;
    }
    for (;;) {
      // Errors propagate upwards as each node is left for good.
      current.hasError ||= current.type === 'ERROR' || current.isMissing;
      if (current.parent) current.parent.hasError ||= current.hasError;
      if (cursor.gotoNextSibling()) {
        const parent = current.parent!;
        const sibling = make();
        sibling.parent = parent;
        parent.children.push(sibling);
        parent.childFields.push(cursor.currentFieldName);
        current = sibling;
        break;
      }
      if (!cursor.gotoParent()) {
        cursor.delete();
        return root;
      }
      current = current.parent!;
    }
  }
}
