// The estimator's view of the program model: the values of the expressions that carry hyper-parameters, as the
// plain data the estimator works with, each with the line it came from and how it was found.
import { hubConfigValue, libraryBackbone, libraryChildren, libraryFeatureInfo, libraryTokenWidth } from './library-models';
import { ProgramModel } from '../engine/program/interpreter';
import type { PyNode as Node, PyTree as Tree } from '../engine/program/node';
import type { How, Value } from '../engine/program/values';

export type PyValue = number | string | boolean | null | PyValue[] | { [key: string]: PyValue } | { dtype: string };

export interface Binding {
  value: PyValue;
  line: number;
  how: How;
}

/** One program model per tree (the server's document copy, or the CLI's parse). */
const programs = new WeakMap<object, ProgramModel>();

export function programOf(tree: Tree, filePath?: string): ProgramModel {
  let program = programs.get(tree.rootNode);
  if (!program) {
    program = new ProgramModel(tree.rootNode, { filePath, libraryFeatureWidth: (model) => libraryBackbone(model)?.features ?? libraryTokenWidth(model), libraryChildren,
      libraryFeatureInfo, libraryConfigValue: hubConfigValue });
    programs.set(tree.rootNode, program);
  }
  return program;
}

/** Plain data for a program value (undefined where the source does not determine it). */
export function toPy(value: Value | undefined, depth = 0): PyValue | undefined {
  if (!value || depth > 16) return undefined;
  switch (value.kind) {
    case 'number':
    case 'string':
    case 'bool':
      return value.value;
    case 'none':
      return null;
    case 'dtype':
      return { dtype: value.name };
    case 'list': {
      const items = value.items.map((item) => toPy(item, depth + 1));
      return items.every((item) => item !== undefined) ? (items as PyValue[]) : undefined;
    }
    case 'dict': {
      const out: Record<string, PyValue> = {};
      for (const [key, entry] of value.entries) {
        const converted = toPy(entry, depth + 1);
        if (converted !== undefined) out[key] = converted;
      }
      return out;
    }
    default:
      return undefined;
  }
}

function originOf(value: Value | undefined): { line: number; how: How } | undefined {
  return value && 'origin' in value ? value.origin : undefined;
}

/** The values the estimator reads, from the program model of one script. */
export class Bindings {
  constructor(readonly program: ProgramModel) {}

  static fromTree(tree: Tree, filePath?: string): Bindings {
    return new Bindings(programOf(tree, filePath));
  }

  value(node: Node | null | undefined): Value | undefined {
    return this.program.valueOf(node);
  }

  /** The value of an expression as plain data; undefined when the script does not determine it. */
  evaluate(node: Node | null | undefined): PyValue | undefined {
    return toPy(this.program.valueOf(node));
  }

  /** The line a value comes from: where its literal was written, else the expression's own line. */
  lineOf(node: Node): number {
    return originOf(this.program.valueOf(node))?.line ?? node.startPosition.row;
  }

  howOf(node: Node): How {
    return originOf(this.program.valueOf(node))?.how ?? 'literal';
  }

  /**
   * A quantity named `name` anywhere the script keeps its settings: a variable assigned in any scope (the first
   * assignment that ran), then an argparse default, a config dict entry, a dataclass field or namespace attribute.
   * Function parameters are not settings: a module's `max_len=4096` default is its capacity, not the data's.
   */
  lookup(name: string): Binding | undefined {
    for (const value of this.program.assigned.get(name) ?? []) {
      const found = binding(value);
      if (found) return found;
    }
    for (const holder of this.program.configs) {
      const entry = holder.kind === 'dict' ? holder.entries.get(name) : holder.attrs.get(name);
      const found = entry && binding(entry, holder.kind === 'object' && holder.typeName === 'Namespace' ? 'argparse-default' : 'config');
      if (found) return found;
    }
    return undefined;
  }
}

function binding(value: Value, how?: How): Binding | undefined {
  const py = toPy(value);
  const origin = originOf(value);
  if (py === undefined || !origin) return undefined;
  return { value: py, line: origin.line, how: how && origin.how === 'literal' ? how : origin.how };
}

/** The text of a plain string literal (no f-string interpolation). */
export function stringValue(node: Node): string | undefined {
  if (node.type !== 'string') return undefined;
  if (node.namedChildren.some((c) => c?.type === 'interpolation')) return undefined;
  return node.namedChildren.filter((c) => c?.type === 'string_content').map((c) => c?.text ?? '').join('');
}

/** A call without keyword arguments: one shared, empty map (read only). */
const NO_KEYWORDS: ReadonlyMap<string, Node> = new Map();

/**
 * A call's arguments in one reading of its argument list: the keyword arguments by name, and the plain positional
 * ones (not `*args` or `**kwargs`).
 */
export function callArguments(call: Node): { keywords: ReadonlyMap<string, Node>; positional: Node[] } {
  let keywords: Map<string, Node> | undefined;
  const positional: Node[] = [];
  for (const arg of call.childForFieldName('arguments')?.namedChildren ?? []) {
    if (!arg) continue;
    if (arg.type === 'keyword_argument') {
      const name = arg.childForFieldName('name')?.text;
      const value = arg.childForFieldName('value');
      if (name && value) (keywords ??= new Map()).set(name, value);
    } else if (arg.type !== 'comment' && arg.type !== 'list_splat' && arg.type !== 'dictionary_splat') {
      positional.push(arg);
    }
  }
  return { keywords: keywords ?? NO_KEYWORDS, positional };
}
