// Static evaluation of the few Python expressions that carry hyper-parameters: literals, names bound to
// constants, argparse defaults (`args.batch_size`), dict entries (`config["lr"]`), simple arithmetic.
import type { PyNode as Node, PyTree as Tree } from './syntax';

export type PyValue = number | string | boolean | null | PyValue[] | { [key: string]: PyValue } | { dtype: string };

export interface Binding {
  value: PyValue;
  line: number;
}

/** Name -> value tables built from one file. */
export class Bindings {
  readonly names = new Map<string, Binding>();

  static fromTree(tree: Tree): Bindings {
    const bindings = new Bindings();
    const root = tree.rootNode;
    // Keyword defaults of functions (`def main(batch_size=32)`), then assignments and argparse defaults in order.
    for (const param of root.descendantsOfType('default_parameter')) {
      const name = param?.childForFieldName('name');
      const value = param?.childForFieldName('value');
      if (name && value) bindings.bind(name.text, value, name.startPosition.row);
    }
    for (const param of root.descendantsOfType('typed_default_parameter')) {
      const name = param?.childForFieldName('name');
      const value = param?.childForFieldName('value');
      if (name && value) bindings.bind(name.text, value, name.startPosition.row);
    }
    const statements = [...root.descendantsOfType('assignment'), ...root.descendantsOfType('call')]
      .filter((n): n is Node => n !== null)
      .sort((a, b) => a.startIndex - b.startIndex);
    for (const node of statements) {
      if (node.type === 'assignment') {
        const left = node.childForFieldName('left');
        const right = node.childForFieldName('right');
        if (!left || !right) continue;
        if (left.type === 'identifier') bindings.bind(left.text, right, left.startPosition.row);
        else if (left.type === 'attribute') bindings.bind(left.childForFieldName('attribute')?.text ?? '', right, left.startPosition.row);
        else if (left.type === 'subscript') {
          const key = bindings.evaluate(left.childForFieldName('subscript'));
          if (typeof key === 'string') bindings.bind(key, right, left.startPosition.row);
        }
      } else {
        bindings.bindArgparse(node);
      }
    }
    return bindings;
  }

  private bind(name: string, valueNode: Node, line: number): void {
    if (!name) return;
    const value = this.evaluate(valueNode);
    if (value === undefined) return;
    this.names.set(name, { value, line });
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && !('dtype' in value)) {
      // Dict literals: entries resolve as `config["batch_size"]` and, when nothing else has the name, as `batch_size`.
      for (const [key, entry] of Object.entries(value)) {
        if (!this.names.has(key)) this.names.set(key, { value: entry, line });
      }
    }
  }

  private bindArgparse(call: Node): void {
    const fn = call.childForFieldName('function');
    if (!fn || !fn.text.endsWith('add_argument')) return;
    const args = call.childForFieldName('arguments');
    if (!args) return;
    let dest: string | undefined;
    let defaultNode: Node | undefined;
    for (const arg of args.namedChildren) {
      if (!arg) continue;
      if (arg.type === 'string' && !dest) {
        const flag = stringValue(arg);
        if (flag?.startsWith('--')) dest = flag.slice(2).replace(/-/g, '_');
        else if (flag && !flag.startsWith('-')) dest = flag;
      } else if (arg.type === 'keyword_argument') {
        const key = arg.childForFieldName('name')?.text;
        const value = arg.childForFieldName('value');
        if (key === 'dest' && value) dest = stringValue(value) ?? dest;
        if (key === 'default' && value) defaultNode = value;
      }
    }
    if (dest && defaultNode) this.bind(dest, defaultNode, defaultNode.startPosition.row);
  }

  /** A copy in which a function's parameters are bound to the arguments of one call. */
  child(values: Map<string, PyValue>, line: number): Bindings {
    const scoped = new Bindings();
    for (const [name, binding] of this.names) scoped.names.set(name, binding);
    for (const [name, value] of values) scoped.names.set(name, { value, line });
    return scoped;
  }

  /** The line a value comes from: where a name it reads was bound, else the expression's own line. */
  lineOf(node: Node): number {
    if (node.type === 'identifier') return this.names.get(node.text)?.line ?? node.startPosition.row;
    if (node.type === 'attribute') {
      const attr = node.childForFieldName('attribute')?.text;
      return (attr ? this.names.get(attr)?.line : undefined) ?? node.startPosition.row;
    }
    return node.startPosition.row;
  }

  lookup(name: string): Binding | undefined {
    return this.names.get(name);
  }

  /** Evaluates an expression node; undefined when it is not a constant this file determines. */
  evaluate(node: Node | null | undefined, depth = 0): PyValue | undefined {
    if (!node || depth > 12) return undefined;
    switch (node.type) {
      case 'integer': {
        const v = Number(node.text.replace(/_/g, ''));
        return Number.isFinite(v) ? v : undefined;
      }
      case 'float': return Number(node.text.replace(/_/g, ''));
      case 'true': return true;
      case 'false': return false;
      case 'none': return null;
      case 'string': return stringValue(node);
      case 'concatenated_string': return undefined;
      case 'parenthesized_expression': return this.evaluate(node.namedChildren[0], depth + 1);
      case 'identifier': return this.names.get(node.text)?.value;
      case 'attribute': {
        const text = node.text;
        const dtype = /(?:^|\.)(bfloat16|float16|half|float32|float)$/.exec(text);
        if (dtype && text.startsWith('torch')) return { dtype: dtype[1] };
        const attr = node.childForFieldName('attribute')?.text;
        return attr ? this.names.get(attr)?.value : undefined;
      }
      case 'subscript': {
        const base = this.evaluate(node.childForFieldName('value'), depth + 1);
        const key = this.evaluate(node.childForFieldName('subscript'), depth + 1);
        if (base && typeof base === 'object' && !Array.isArray(base) && typeof key === 'string') return (base as Record<string, PyValue>)[key];
        if (Array.isArray(base) && typeof key === 'number') return base[key];
        return undefined;
      }
      case 'unary_operator': {
        const v = this.evaluate(node.childForFieldName('argument'), depth + 1);
        return typeof v === 'number' && node.text.trim().startsWith('-') ? -v : v;
      }
      case 'binary_operator': {
        const a = this.evaluate(node.childForFieldName('left'), depth + 1);
        const b = this.evaluate(node.childForFieldName('right'), depth + 1);
        const op = node.childForFieldName('operator')?.text;
        if (typeof a !== 'number' || typeof b !== 'number') return undefined;
        switch (op) {
          case '+': return a + b;
          case '-': return a - b;
          case '*': return a * b;
          case '/': return b === 0 ? undefined : a / b;
          case '//': return b === 0 ? undefined : Math.floor(a / b);
          case '**': return a ** b;
          case '%': return b === 0 ? undefined : a % b;
          default: return undefined;
        }
      }
      case 'list':
      case 'tuple':
      case 'set': {
        const items = node.namedChildren.map((c) => this.evaluate(c, depth + 1));
        return items.every((v) => v !== undefined) ? (items as PyValue[]) : undefined;
      }
      case 'dictionary': {
        const out: Record<string, PyValue> = {};
        for (const pair of node.namedChildren) {
          if (pair?.type !== 'pair') continue;
          const key = this.evaluate(pair.childForFieldName('key'), depth + 1);
          const value = this.evaluate(pair.childForFieldName('value'), depth + 1);
          if (typeof key === 'string' && value !== undefined) out[key] = value;
        }
        return out;
      }
      case 'call': {
        const fn = node.childForFieldName('function')?.text ?? '';
        const args = node.childForFieldName('arguments')?.namedChildren.filter((c): c is Node => c !== null) ?? [];
        if (fn === 'int' || fn === 'float') {
          const v = this.evaluate(args[0], depth + 1);
          const n = typeof v === 'string' ? Number(v) : v;
          return typeof n === 'number' && Number.isFinite(n) ? (fn === 'int' ? Math.trunc(n) : n) : undefined;
        }
        if (/(^|\.)(environ\.get|getenv)$/.test(fn) && args[1]) return this.evaluate(args[1], depth + 1);
        if (fn === 'dict') {
          const out: Record<string, PyValue> = {};
          for (const a of args) {
            if (a.type !== 'keyword_argument') continue;
            const v = this.evaluate(a.childForFieldName('value'), depth + 1);
            const k = a.childForFieldName('name')?.text;
            if (k && v !== undefined) out[k] = v;
          }
          return out;
        }
        return undefined;
      }
      default: return undefined;
    }
  }
}

/** The text of a plain string literal (no f-string interpolation). */
export function stringValue(node: Node): string | undefined {
  if (node.type !== 'string') return undefined;
  if (node.namedChildren.some((c) => c?.type === 'interpolation')) return undefined;
  const content = node.namedChildren.filter((c) => c?.type === 'string_content').map((c) => c?.text ?? '').join('');
  return content;
}

/** Keyword arguments of a call, by name. */
export function keywordArguments(call: Node): Map<string, Node> {
  const out = new Map<string, Node>();
  for (const arg of call.childForFieldName('arguments')?.namedChildren ?? []) {
    if (arg?.type !== 'keyword_argument') continue;
    const name = arg.childForFieldName('name')?.text;
    const value = arg.childForFieldName('value');
    if (name && value) out.set(name, value);
  }
  return out;
}

export function positionalArguments(call: Node): Node[] {
  return (call.childForFieldName('arguments')?.namedChildren ?? [])
    .filter((a): a is Node => a !== null && a.type !== 'keyword_argument' && a.type !== 'comment' &&
      a.type !== 'list_splat' && a.type !== 'dictionary_splat');
}
