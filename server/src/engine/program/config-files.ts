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
