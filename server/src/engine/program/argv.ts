// An argument list given to argparse's parse_args / parse_known_args (`parser.parse_args(["--lr", "0.1"])`,
// `parse_args(sys.argv[1:] or ["@configs/x.args"])`), read as argparse reads it: `@file` arguments expanded from
// the file (one argument per line) where the parser has fromfile_prefix_chars, options matched by their flags (or an
// unambiguous prefix of a long one), values converted by their `type`, actions and `nargs` applied.
import type { Origin, Value } from './values';

/** One `add_argument(...)` of a parser, as far as reading an argument list needs it. */
export interface ArgumentOption {
  /** The option strings (`-b`, `--batch-size`); empty for a positional argument. */
  flags: string[];
  dest: string;
  /** `store` (the default), `store_true`, `store_false`, `store_const`, `append`, `count`, or another (not read). */
  action: string;
  /** `type=`: int, float, str (or none: a string); any other callable is not read. */
  type?: string;
  /** `nargs=`: a count, `?`, `*` or `+`; undefined for one value. */
  nargs?: number | '?' | '*' | '+';
  constant?: Value;
}

/** A parser's arguments and its fromfile_prefix_chars (undefined: `@` is an ordinary character). */
export interface ArgumentSpec {
  options: ArgumentOption[];
  fromfilePrefix?: string;
}

/** An argument string and where it was written (the script's list literal, or the line of the parse_args call). */
export interface Token {
  text: string;
  origin: Origin;
}

/** Values by dest, the arguments left over (parse_known_args' extras), or why the list is not read. */
export type Parsed = { values: Map<string, Value>; extras: Token[] } | { unread: string };

/**
 * Expands `@file` tokens (where the parser has a prefix) with `readFile`, which gives a file's text or undefined,
 * and each read file's arguments the origin `fileOrigin` (a config read at the call's line); nested `@file`
 * arguments are expanded in turn, as argparse does.
 */
export function expandArgumentFiles(tokens: Token[], prefix: string | undefined, readFile: (name: string) => string | undefined, fileOrigin: Origin,
  depth = 0): Token[] | { unread: string } {
  if (!prefix) return tokens;
  const out: Token[] = [];
  for (const token of tokens) {
    if (token.text === '' || !prefix.includes(token.text[0]!)) {
      out.push(token);
      continue;
    }
    const name = token.text.slice(1);
    const text = depth < 8 ? readFile(name) : undefined;
    if (text === undefined) return { unread: name };
    // argparse's convert_arg_line_to_args: each line is one argument, as written.
    const lines = text.split(/\r\n|\r|\n/);
    if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    const expanded = expandArgumentFiles(lines.map((line) => ({ text: line, origin: fileOrigin })), prefix, readFile, fileOrigin, depth + 1);
    if (!Array.isArray(expanded)) return expanded;
    out.push(...expanded);
  }
  return out;
}

/** Reads `tokens` against the parser's options; `known`: parse_known_args (unknown options are kept as extras). */
export function parseArgumentList(spec: ArgumentSpec, tokens: Token[], known: boolean): Parsed {
  const values = new Map<string, Value>();
  const extras: Token[] = [];
  const positionals = spec.options.filter((o) => o.flags.length === 0);
  const pending: Token[] = [];
  const longFlags = spec.options.flatMap((o) => o.flags.filter((f) => f.startsWith('--')).map((flag) => ({ flag, option: o })));
  const find = (flag: string): ArgumentOption | undefined => {
    const exact = spec.options.find((o) => o.flags.includes(flag));
    if (exact || !flag.startsWith('--')) return exact;
    // allow_abbrev: an unambiguous prefix of a long option.
    const matches = longFlags.filter((l) => l.flag.startsWith(flag));
    return new Set(matches.map((m) => m.option)).size === 1 ? matches[0]!.option : undefined;
  };
  let onlyPositionals = false;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (!onlyPositionals && token.text === '--') {
      onlyPositionals = true;
      continue;
    }
    if (onlyPositionals || !isOptionLike(token.text)) {
      pending.push(token);
      continue;
    }
    let flag = token.text;
    let attached: string | undefined;
    const equals = flag.indexOf('=');
    if (equals > 0) [flag, attached] = [flag.slice(0, equals), flag.slice(equals + 1)];
    let option = find(flag);
    // A short option with its value attached (`-b256`).
    if (!option && attached === undefined && !flag.startsWith('--') && flag.length > 2) {
      option = find(flag.slice(0, 2));
      if (option) [flag, attached] = [flag.slice(0, 2), flag.slice(2)];
    }
    if (!option) {
      if (!known) return { unread: token.text };
      extras.push(token);
      continue;
    }
    const takesValues = option.action === 'store' || option.action === 'append';
    if (!takesValues) {
      if (attached !== undefined) return { unread: token.text };
      const value = flagValue(option, values.get(option.dest), token.origin);
      if (!value) return { unread: token.text };
      values.set(option.dest, value);
      continue;
    }
    // The values that follow, up to the next option-like argument.
    const following: Token[] = attached !== undefined ? [{ text: attached, origin: token.origin }] : [];
    if (attached === undefined) {
      const wanted = option.nargs === undefined ? 1 : typeof option.nargs === 'number' ? option.nargs : option.nargs === '?' ? 1 : Infinity;
      while (following.length < wanted && i + 1 < tokens.length && !isOptionLike(tokens[i + 1]!.text) && tokens[i + 1]!.text !== '--') following.push(tokens[++i]!);
    }
    const value = storedValue(option, following, token.origin);
    if (!value) return { unread: token.text };
    if (option.action === 'append') {
      const earlier = values.get(option.dest);
      values.set(option.dest, { kind: 'list', items: [...(earlier?.kind === 'list' ? earlier.items : []), value], tuple: false, origin: token.origin });
    } else {
      values.set(option.dest, value);
    }
  }
  // Positional arguments in order: one each, or as many as their nargs takes.
  let at = 0;
  for (const option of positionals) {
    const rest = pending.length - at;
    const count = option.nargs === undefined ? 1 : typeof option.nargs === 'number' ? option.nargs
      : option.nargs === '?' ? Math.min(1, rest) : rest;
    if (count > rest || (option.nargs === '+' && count === 0)) return { unread: pending[at]?.text ?? option.dest };
    if (count === 0) continue;
    const value = storedValue(option, pending.slice(at, at + count), pending[at]!.origin);
    if (!value) return { unread: pending[at]!.text };
    values.set(option.dest, value);
    at += count;
  }
  if (at < pending.length) {
    if (!known) return { unread: pending[at]!.text };
    extras.push(...pending.slice(at));
  }
  return { values, extras };
}

/** An argument that argparse reads as an option: a `-` then anything but a negative number. */
function isOptionLike(text: string): boolean {
  return text.length > 1 && text.startsWith('-') && !/^-\d+(\.\d*)?([eE][-+]?\d+)?$|^-\.\d+$/.test(text);
}

/** What a flag without values stores: store_true/false/const, count. */
function flagValue(option: ArgumentOption, earlier: Value | undefined, origin: Origin): Value | undefined {
  switch (option.action) {
    case 'store_true': return { kind: 'bool', value: true, origin };
    case 'store_false': return { kind: 'bool', value: false, origin };
    case 'store_const': return option.constant;
    case 'count': return { kind: 'number', value: (earlier?.kind === 'number' ? earlier.value : 0) + 1, origin };
    default: return undefined;
  }
}

/** The value a storing option keeps: one converted value, or a list for nargs other than `?`. */
function storedValue(option: ArgumentOption, given: Token[], origin: Origin): Value | undefined {
  if (option.nargs === '?' && given.length === 0) return option.constant ?? { kind: 'none', origin };
  const converted = given.map((token) => convert(token, option.type));
  if (converted.some((v) => v === undefined)) return undefined;
  const values = converted as Value[];
  if (option.nargs === undefined || option.nargs === '?') return values.length === 1 ? values[0] : undefined;
  if (option.nargs === '+' && values.length === 0) return undefined;
  if (typeof option.nargs === 'number' && values.length !== option.nargs) return undefined;
  return { kind: 'list', items: values, tuple: false, origin };
}

/** `type(text)` for int, float and str, as Python converts them; undefined for any other type or text it rejects. */
function convert(token: Token, type: string | undefined): Value | undefined {
  const { text, origin } = token;
  if (type === undefined || type === 'str') return { kind: 'string', value: text, origin };
  const trimmed = text.trim();
  if (type === 'int') {
    if (!/^[-+]?\d+(_\d+)*$/.test(trimmed)) return undefined;
    return { kind: 'number', value: Number.parseInt(trimmed.replace(/_/g, ''), 10), origin };
  }
  if (type === 'float') {
    const lower = trimmed.toLowerCase();
    if (/^[-+]?(inf|infinity|nan)$/.test(lower)) return undefined;
    if (!/^[-+]?((\d+(_\d+)*)?\.?\d*(_\d+)*)([eE][-+]?\d+)?$/.test(trimmed) || !/\d/.test(trimmed)) return undefined;
    const value = Number(trimmed.replace(/_/g, ''));
    return Number.isFinite(value) ? { kind: 'number', value, origin, real: true } : undefined;
  }
  return undefined;
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

