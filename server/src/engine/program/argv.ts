// An argument list the script hands argparse itself (`parser.parse_args(shlex.split(os.environ.get("ARGS", "--img
// 512 -b 32")))`, `parse_args(["--lr", "3e-4"])`): the run the script keeps, read over the parser's defaults.
import { NONE, stringOf, withOrigin, type ListValue, type ObjectValue, type Origin, type Value } from './values';

/** What one `add_argument` call declares, by each of its option strings. */
export interface ArgumentSpec {
  dest: string;
  /** `int` / `float` (`type=`), else the token is kept as a string. */
  type?: 'int' | 'float';
  action?: string;
  /** `store_const`'s value. */
  constant?: Value;
  /** `nargs='+'`, `'*'` or a count: the tokens up to the next option make a list. */
  many: boolean;
}

/** Each parser's option strings (`-b`, `--batch`) and what they set. */
const declared = new WeakMap<ObjectValue, Map<string, ArgumentSpec>>();

export function declareArgument(parser: ObjectValue, flags: string[], spec: ArgumentSpec): void {
  const options = declared.get(parser) ?? new Map<string, ArgumentSpec>();
  for (const flag of flags) if (flag.startsWith('-')) options.set(flag, spec);
  declared.set(parser, options);
}

/** A parser made with `parents=[...]` takes their options too. */
export function inheritArguments(parser: ObjectValue, parent: ObjectValue): void {
  for (const [flag, spec] of declared.get(parent) ?? []) declareArgument(parser, [flag], spec);
}

/** POSIX shell words, as `shlex.split` makes them: whitespace separates, quotes group, a backslash escapes. */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < text.length) word += text[++i]!;
      else word += c;
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (c === '\\' && i + 1 < text.length) word = (word ?? '') + text[++i]!;
    else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/**
 * The options of a given argument list set on the namespace, over the defaults it holds: `--img 512`, `--img=512`,
 * `-b 32`, store_true/false/const and count actions, nargs lists. Each value keeps the place of the list's text.
 * Nothing is set where a token is not a known string (the list is left to the defaults, as before).
 */
export function applyGivenArguments(parser: ObjectValue, namespace: ObjectValue, given: ListValue): void {
  const options = declared.get(parser);
  if (!options) return;
  const tokens = given.items.map(stringOf);
  if (tokens.some((token) => token === undefined)) return;
  const words = (tokens as string[]).filter((token) => token !== '');
  const origin = originOf(given);
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (!word.startsWith('-')) continue;
    const equals = word.indexOf('=');
    const flag = equals > 0 ? word.slice(0, equals) : word;
    const spec = options.get(flag);
    if (!spec) continue;
    const inline = equals > 0 ? word.slice(equals + 1) : undefined;
    const current = namespace.attrs.get(spec.dest);
    switch (spec.action) {
      case 'store_true':
      case 'store_false':
        namespace.attrs.set(spec.dest, placed({ kind: 'bool', value: spec.action === 'store_true' }, origin));
        continue;
      case 'store_const':
        if (spec.constant) namespace.attrs.set(spec.dest, spec.constant);
        continue;
      case 'count': {
        const before = current?.kind === 'number' ? current.value : 0;
        namespace.attrs.set(spec.dest, placed({ kind: 'number', value: before + 1 }, origin));
        continue;
      }
    }
    if (spec.many) {
      const items: Value[] = [];
      if (inline !== undefined) items.push(converted(inline, spec, origin));
      while (inline === undefined && i + 1 < words.length && !isOption(words[i + 1]!)) items.push(converted(words[++i]!, spec, origin));
      namespace.attrs.set(spec.dest, { kind: 'list', items, tuple: false });
      continue;
    }
    const text = inline ?? (i + 1 < words.length ? words[++i] : undefined);
    if (text !== undefined) namespace.attrs.set(spec.dest, converted(text, spec, origin));
  }
}

function isOption(word: string): boolean {
  return word.startsWith('-') && !/^-\d/.test(word);
}

function converted(text: string, spec: ArgumentSpec, origin: Origin | undefined): Value {
  if (spec.type) {
    const n = Number(text);
    if (Number.isFinite(n)) return placed({ kind: 'number', value: spec.type === 'int' ? Math.trunc(n) : n, ...(spec.type === 'float' ? { real: true } : {}) }, origin);
    return NONE;
  }
  return placed({ kind: 'string', value: text }, origin);
}

function placed(value: Value, origin: Origin | undefined): Value {
  return withOrigin(value, origin);
}

/** Where the list's words were written: its own place, else its first word's. */
function originOf(given: ListValue): Origin | undefined {
  if (given.origin) return given.origin;
  const first = given.items[0];
  return first && 'origin' in first ? first.origin : undefined;
}
