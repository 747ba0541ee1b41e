// What a name may hold: the expressions assigned to it that reach a use, across scopes where Python looks them up
// (a function reads module-level names), through parameters (the arguments its callers pass, or the default), and
// through `self.x` (what the class's methods assign to it). Rules that ask which model an optimizer receives, which
// dataset a DataLoader loads or which device a tensor goes to all ask here.
import type { Node } from '../parser';
import { callArguments, calleeName, children, dottedName, enclosingFunction } from '../syntax';
import type { FunctionInfo, SemanticModel } from './model';

export interface PossibleValue {
  /** An expression the name may hold (never a plain name: names are followed). */
  node: Node;
  /** For `a, b = call(...)`: the position of the name in the pattern, when `node` is the call. */
  index?: number;
  /** The name is the target of `for x in node:`, so it holds an element of `node`. */
  element?: boolean;
}

export interface PossibleValues {
  values: PossibleValue[];
  /** Some definition could not be followed (a parameter nobody passes, an attribute never assigned, a name never bound). */
  unknown: boolean;
}

export interface Parameter {
  name: string;
  /** Position among the parameters, `self` included. */
  index: number;
  defaultValue?: Node;
  splat: boolean;
}

/** The parameters of a function definition, in order. */
export function parametersOf(fn: Node): Parameter[] {
  const result: Parameter[] = [];
  const list = fn.childForFieldName('parameters');
  for (const parameter of list ? children(list) : []) {
    const index = result.length;
    switch (parameter.type) {
      case 'identifier':
        result.push({ name: parameter.text, index, splat: false });
        break;
      case 'typed_parameter': {
        const name = children(parameter).find((child) => child.type === 'identifier');
        if (name) result.push({ name: name.text, index, splat: false });
        else result.push({ name: parameter.text.replace(/^\*+/, '').split(':')[0]!.trim(), index, splat: true });
        break;
      }
      case 'default_parameter':
      case 'typed_default_parameter': {
        const name = parameter.childForFieldName('name')?.text;
        if (name) result.push({ name, index, defaultValue: parameter.childForFieldName('value') ?? undefined, splat: false });
        break;
      }
      case 'list_splat_pattern':
      case 'dictionary_splat_pattern':
        result.push({ name: parameter.text.replace(/^\*+/, ''), index, splat: true });
        break;
      default:
        break;
    }
  }
  return result;
}

/** Whether a function is called with its first parameter bound already (`self.f(x)`, `obj.f(x)`, `Cls(x)` for __init__). */
function boundOffset(info: FunctionInfo): number {
  if (!info.classInfo) return 0;
  if (info.decorators.some((decorator) => /staticmethod/.test(decorator.text))) return 0;
  return 1;
}

/**
 * The calls that bind a function's arguments: `f(...)`, `self.f(...)`, `Cls(...)` for `Cls.__init__`, and
 * `functools.partial(f, ...)`, which binds some of them ahead.
 */
export function callSitesOf(model: SemanticModel, info: FunctionInfo): Node[] {
  return model.memoFor('call-sites', info.node.id, () => {
    if (info.name === '__init__' && info.classInfo) {
      const cls = info.classInfo;
      return model.callsNamed(cls.name).filter((call) => {
        const qualified = model.qualify(call.childForFieldName('function')) ?? '';
        return qualified === cls.name || qualified.endsWith(`.${cls.name}`);
      });
    }
    const partials = info.classInfo ? [] : model.callsNamed('partial').filter((call) => callArguments(call).positional[0]?.text === info.name);
    return [...model.callersOf(info), ...partials];
  });
}

/** The argument a call passes for a parameter (by keyword or position), or undefined. */
export function argumentFor(call: Node, info: FunctionInfo, parameter: Parameter): Node | undefined {
  const args = callArguments(call);
  const { keywords } = args;
  // `functools.partial(f, a, b=...)`: the arguments after the function are f's.
  const positional = calleeName(call) === 'partial' && args.positional[0]?.text === info.name ? args.positional.slice(1) : args.positional;
  const byKeyword = keywords.get(parameter.name);
  if (byKeyword) return byKeyword;
  if (parameter.splat) return undefined;
  const position = parameter.index - boundOffset(info);
  if (position < 0 || positional.some((arg, i) => i <= position && arg.type === 'list_splat')) return undefined;
  return positional[position];
}

const MAX_DEPTH = 5;

/**
 * The expressions `node` may hold: a name is followed to what is assigned to it, through further names, to values
 * that are not names; anything else is itself. With `oneStep`, a name is followed one assignment (or one parameter
 * binding) only, so the names it was assigned from are among the values (`student` for a parameter `net` that a
 * caller passes `student` to).
 */
export function possibleValues(model: SemanticModel, node: Node, oneStep = false): PossibleValues {
  return model.memoFor(oneStep ? 'possible-values-one-step' : 'possible-values', node.id, () => {
    const result: PossibleValues = { values: [], unknown: false };
    const seen = new Set<string>();
    visit(model, node, oneStep ? 1 : MAX_DEPTH, result, seen, oneStep);
    return result;
  });
}

function visit(model: SemanticModel, node: Node, depth: number, result: PossibleValues, seen: Set<string>, oneStep = false): void {
  if (node.type === 'parenthesized_expression' && children(node).length === 1) {
    visit(model, children(node)[0]!, depth, result, seen, oneStep);
    return;
  }
  if (node.type !== 'identifier' && node.type !== 'attribute') {
    result.values.push({ node });
    return;
  }
  // One step taken: the name itself is the value.
  if (oneStep && depth < 1) {
    result.values.push({ node });
    return;
  }
  const name = dottedName(node);
  if (!name) {
    result.values.push({ node });
    return;
  }
  const key = `${enclosingFunction(node).id}:${name}`;
  if (depth < 0 || seen.has(key)) {
    result.unknown ||= depth < 0;
    return;
  }
  seen.add(key);
  if (node.type === 'attribute') {
    visitAttribute(model, node, name, depth, result, seen, oneStep);
    return;
  }
  let definitions = model.reachingDefinitions(name, node);
  // A function reads a module-level name when it binds none of its own.
  if (definitions.length === 0 && enclosingFunction(node).type !== 'module') definitions = [...model.definitionsIn(model.root, name)];
  if (definitions.length === 0) {
    result.unknown = true;
    return;
  }
  for (const definition of definitions) {
    switch (definition.kind) {
      case 'assign': {
        const value = definition.value;
        if (!value) {
          result.unknown = true;
        } else if (definition.index !== undefined) {
          const elements = ['tuple', 'list', 'expression_list'].includes(value.type) ? children(value) : undefined;
          if (elements?.[definition.index]) visit(model, elements[definition.index]!, depth - 1, result, seen, oneStep);
          else if (value.type === 'call') result.values.push({ node: value, index: definition.index });
          else result.unknown = true;
        } else {
          visit(model, value, depth - 1, result, seen, oneStep);
        }
        break;
      }
      case 'param':
        visitParameter(model, definition.site, name, depth, result, seen, oneStep);
        break;
      case 'for': {
        const iterable = definition.site.childForFieldName('right');
        if (iterable && (iterable.type === 'list' || iterable.type === 'tuple') && definition.index === undefined) {
          for (const element of children(iterable)) visit(model, element, depth - 1, result, seen, oneStep);
        } else if (iterable) {
          result.values.push({ node: iterable, element: true, index: definition.index });
        } else {
          result.unknown = true;
        }
        break;
      }
      default:
        result.unknown = true;
        break;
    }
  }
}

/** A parameter holds what its callers pass, or its default when a caller passes nothing. */
function visitParameter(model: SemanticModel, site: Node, name: string, depth: number, result: PossibleValues, seen: Set<string>, oneStep: boolean): void {
  const fn = enclosingFunction(site);
  const info = fn.type === 'function_definition' ? model.functionInfo(fn) : undefined;
  const parameter = info ? parametersOf(fn).find((candidate) => candidate.name === name) : undefined;
  if (!info || !parameter) {
    result.unknown = true;
    return;
  }
  if (parameter.index === 0 && boundOffset(info) === 1) {
    // `self`: the instances the file makes of the class.
    result.unknown = true;
    return;
  }
  const calls = callSitesOf(model, info);
  if (calls.length === 0) {
    if (parameter.defaultValue) visit(model, parameter.defaultValue, depth - 1, result, seen, oneStep);
    else result.unknown = true;
    return;
  }
  for (const call of calls) {
    const argument = argumentFor(call, info, parameter);
    if (argument) visit(model, argument, depth - 1, result, seen, oneStep);
    else if (parameter.defaultValue) visit(model, parameter.defaultValue, depth - 1, result, seen, oneStep);
    else result.unknown = true;
  }
}

/** `self.x` holds what the methods of its class assign to it; `cfg.x` whatever the file assigns to `cfg.x`. */
function visitAttribute(model: SemanticModel, node: Node, name: string, depth: number, result: PossibleValues, seen: Set<string>, oneStep: boolean): void {
  const cls = name.startsWith('self.') ? model.functionOf(node)?.classInfo : undefined;
  let found = false;
  for (const assignment of model.assignmentsTo(name)) {
    if (cls && model.functionOf(assignment)?.classInfo?.node.id !== cls.node.id) continue;
    const right = assignment.childForFieldName('right');
    if (!right) continue;
    found = true;
    visit(model, right, depth - 1, result, seen, oneStep);
  }
  if (!found) result.unknown = true;
}
