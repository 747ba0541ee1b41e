// A configuration file that a script names (`yaml.safe_load(open("config.yaml"))`, `json.load(...)`,
// `OmegaConf.load(...)`), turned into program values. Each value's line is the line of the script's load call.
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type * as SmolToml from 'smol-toml' with { 'resolution-mode': 'import' };
import type { Value } from './values';

// smol-toml ships a CommonJS build but ESM-only typings (see config/pyproject.ts).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parse: parseToml } = require('smol-toml') as typeof SmolToml;

export function parseConfigFile(file: string, text: string, line: number): Value | undefined {
  let data: unknown;
  try {
    const extension = path.extname(file).toLowerCase();
    data = extension === '.json' ? JSON.parse(text) : extension === '.toml' ? parseToml(text) : parseYaml(text);
  } catch {
    return undefined;
  }
  return toValue(data, line, 0);
}

function toValue(data: unknown, line: number, depth: number): Value {
  const origin = { line, how: 'config' as const };
  if (depth > 32) return { kind: 'unknown' };
  if (typeof data === 'number') return { kind: 'number', value: data, origin };
  if (typeof data === 'string') return { kind: 'string', value: data, origin };
  if (typeof data === 'boolean') return { kind: 'bool', value: data, origin };
  if (data === null || data === undefined) return { kind: 'none', origin };
  if (Array.isArray(data)) return { kind: 'list', items: data.map((item) => toValue(item, line, depth + 1)), tuple: false, origin };
  if (typeof data === 'object') {
    const entries = new Map<string, Value>();
    for (const [key, value] of Object.entries(data as Record<string, unknown>)) entries.set(key, toValue(value, line, depth + 1));
    return { kind: 'dict', entries, origin };
  }
  return { kind: 'unknown' };
}

/**
 * An INI file as configparser reads it with its defaults: `[section]` headers, `key = value` or `key: value` options
 * (keys lower-cased, values stripped strings), indented continuation lines, full-line `#` / `;` comments, the
 * DEFAULT section's options in every section, and `%(key)s` interpolation from the same section. Each section is
 * a dict of strings whose line is the script's read call.
 */
export function parseIniFile(text: string, line: number): Map<string, Value> {
  const origin = { line, how: 'config' as const };
  const raw = new Map<string, Map<string, string>>();
  let section: Map<string, string> | undefined;
  let lastKey: string | undefined;
  for (const rawLine of text.split(/\r?\n/)) {
    const trimmed = rawLine.trim();
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) {
      lastKey = undefined;
      continue;
    }
    const header = /^\[([^\]]+)\]$/.exec(trimmed);
    if (header) {
      const name = header[1]!;
      section = raw.get(name) ?? new Map<string, string>();
      raw.set(name, section);
      lastKey = undefined;
      continue;
    }
    if (/^\s/.test(rawLine) && section && lastKey !== undefined) {
      section.set(lastKey, `${section.get(lastKey)}\n${trimmed}`);
      continue;
    }
    const option = /^([^=:]+?)\s*[=:]\s*(.*)$/.exec(trimmed);
    if (!option || !section) continue;
    lastKey = option[1]!.toLowerCase();
    section.set(lastKey, option[2]!);
  }
  const defaults = raw.get('DEFAULT') ?? new Map<string, string>();
  const sections = new Map<string, Value>();
  for (const [name, options] of raw) {
    const merged = name === 'DEFAULT' ? options : new Map([...defaults, ...options]);
    const entries = new Map<string, Value>();
    for (const [key, value] of merged) {
      const interpolated = value.replace(/%\((\w+)\)s/g, (whole, other: string) => merged.get(other.toLowerCase()) ?? whole).replace(/%%/g, '%');
      entries.set(key, { kind: 'string', value: interpolated, origin });
    }
    sections.set(name, { kind: 'dict', entries, origin, ini: 'section' });
  }
  return sections;
}

/**
 * A CSV file as Python's csv module reads it with the default dialect (or the given delimiter): quoted fields (a
 * doubled quote inside one is a quote, a newline inside one is kept), every other character as written. `reader`:
 * each row a list of strings (an empty line an empty row); `dict`: csv.DictReader's rows, keyed by the first row's
 * fields (blank lines skipped, a missing field None, extra fields a list under the None key: dropped here).
 */
export function parseCsvFile(text: string, line: number, shape: 'reader' | 'dict', delimiter = ','): Value {
  const origin = { line, how: 'config' as const };
  const rows = csvRows(text, delimiter);
  const asString = (value: string): Value => ({ kind: 'string', value, origin });
  if (shape === 'reader') return { kind: 'list', items: rows.map((row) => ({ kind: 'list', items: row.map(asString), tuple: false, origin })), tuple: false, origin };
  const [fields, ...body] = rows.filter((row) => row.length > 0);
  if (!fields) return { kind: 'list', items: [], tuple: false, origin };
  const items: Value[] = body.map((row) => {
    const entries = new Map<string, Value>();
    fields.forEach((field, i) => entries.set(field, i < row.length ? asString(row[i]!) : { kind: 'none', origin }));
    return { kind: 'dict', entries, origin };
  });
  return { kind: 'list', items, tuple: false, origin };
}

function csvRows(text: string, delimiter: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let started = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
      } else {
        field += c;
      }
      continue;
    }
    if (c === '"' && field === '') {
      quoted = true;
      started = true;
    } else if (c === delimiter) {
      row.push(field);
      field = '';
      started = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      if (started || field !== '') row.push(field);
      rows.push(row);
      [row, field, started] = [[], '', false];
    } else {
      field += c;
      started = true;
    }
  }
  if (started || field !== '') {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
