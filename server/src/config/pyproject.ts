// `[tool.oomguard]` in the nearest pyproject.toml: select, ignore, per-file-ignores and per-rule severity.
// Parsed with smol-toml. A file that cannot be read or parsed, or keys of the wrong type, give one clear message
// and the defaults, never an exception: the linter must still run on a half-edited pyproject.toml.
// path is node:path in Node and path-browserify in the web worker (posix paths: URI paths there).
import * as path from 'node:path';
import ignore from 'ignore';
import type * as SmolToml from 'smol-toml' with { 'resolution-mode': 'import' };
import type { AnalysisOptions } from '../engine/analyze';
import type { Severity } from '../engine/types';
import { t } from '../l10n';

// smol-toml ships a CommonJS build (its "require" export) but ESM-only typings: types through resolution-mode
// import, code through require (esbuild bundles it either way).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parse, TomlError } = require('smol-toml') as typeof SmolToml;

export type SeverityLevel = Severity | 'off';

/** What `[tool.oomguard]` (or the editor settings) can say. Absent keys mean "not configured here". */
export interface RuleConfig {
  select?: string[];
  ignore?: string[];
  /** Glob (gitignore syntax, relative to the project root) → codes ignored in the files it matches. */
  perFileIgnores?: Record<string, string[]>;
  severity?: Record<string, SeverityLevel>;
}

export interface ProjectConfig {
  /** The pyproject.toml that was read, if any. */
  file?: string;
  /** The file this configuration is for, as a path under `root` (per-file-ignores match it). */
  document: string;
  /** Where per-file-ignores globs are anchored: the pyproject.toml's folder (or the file's folder without one). */
  root: string;
  config: RuleConfig;
  /** One message for a pyproject.toml that could not be used; the defaults apply then. */
  error?: string;
}

const LEVELS = new Set<SeverityLevel>(['error', 'warning', 'information', 'hint', 'off']);

function stringList(value: unknown, key: string, problems: string[]): string[] | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.map((code) => code.trim().toUpperCase());
  problems.push(t('"{0}" must be a list of rule codes, like ["OOM101", "OOM104"]', key));
  return undefined;
}

/** Reads the `[tool.oomguard]` table of a parsed pyproject.toml (or the same keys from anywhere else). */
export function readRuleConfig(table: unknown, problems: string[]): RuleConfig {
  if (table === undefined) return {};
  if (!table || typeof table !== 'object' || Array.isArray(table)) {
    problems.push(t('[tool.oomguard] must be a table'));
    return {};
  }
  const raw = table as Record<string, unknown>;
  const config: RuleConfig = {};
  const known = new Set(['select', 'ignore', 'per-file-ignores', 'severity']);
  for (const key of Object.keys(raw)) if (!known.has(key)) problems.push(t('unknown key "{0}" (known: select, ignore, per-file-ignores, severity)', key));
  const select = stringList(raw.select, 'select', problems);
  if (select) config.select = select;
  const ignored = stringList(raw.ignore, 'ignore', problems);
  if (ignored) config.ignore = ignored;
  const perFile = raw['per-file-ignores'];
  if (perFile !== undefined) {
    if (perFile && typeof perFile === 'object' && !Array.isArray(perFile)) {
      config.perFileIgnores = {};
      for (const [glob, codes] of Object.entries(perFile as Record<string, unknown>)) {
        const list = stringList(codes, `per-file-ignores."${glob}"`, problems);
        if (list) config.perFileIgnores[glob] = list;
      }
    } else {
      problems.push(t('"per-file-ignores" must be a table of glob = ["CODE", ...]'));
    }
  }
  const severity = raw.severity;
  if (severity !== undefined) {
    if (severity && typeof severity === 'object' && !Array.isArray(severity)) {
      config.severity = {};
      for (const [code, level] of Object.entries(severity as Record<string, unknown>)) {
        if (typeof level === 'string' && LEVELS.has(level as SeverityLevel)) config.severity[code.toUpperCase()] = level as SeverityLevel;
        else problems.push(t('severity of {0} must be one of error, warning, information, hint, off', code));
      }
    } else {
      problems.push(t('"severity" must be a table of CODE = "error" | "warning" | "information" | "hint" | "off"'));
    }
  }
  return config;
}

/** Parses the text of a pyproject.toml. Any problem yields the defaults and one message naming the file. */
export function parsePyproject(text: string, file: string): { config: RuleConfig; error?: string } {
  let document: Record<string, unknown>;
  try {
    document = parse(text) as Record<string, unknown>;
  } catch (error) {
    const where = error instanceof TomlError ? `${file}:${error.line}:${error.column}` : file;
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
    return { config: {}, error: t('{0}: not valid TOML ({1}); OOM Guard uses its default settings.', where, reason) };
  }
  const tool = document.tool as Record<string, unknown> | undefined;
  const problems: string[] = [];
  const config = readRuleConfig(tool && typeof tool === 'object' ? tool.oomguard : undefined, problems);
  if (problems.length > 0) {
    return { config: {}, error: t('{0}: [tool.oomguard] is not valid ({1}); OOM Guard uses its default settings.', file, problems.join('; ')) };
  }
  return { config };
}

/** The codes that the per-file-ignores globs matching `file` ignore (globs in gitignore syntax, relative to `root`). */
export function perFileIgnored(perFileIgnores: Record<string, string[]> | undefined, root: string, file: string): string[] {
  if (!perFileIgnores) return [];
  const relative = path.relative(root, path.resolve(file)).split(path.sep).join('/');
  // A file outside the project root cannot match a glob anchored there.
  if (!relative || relative.startsWith('..') || path.isAbsolute(relative)) return [];
  const codes: string[] = [];
  for (const [glob, list] of Object.entries(perFileIgnores)) {
    try {
      if (ignore().add(glob).ignores(relative)) codes.push(...list);
    } catch {
      // A pattern the glob library rejects matches nothing.
    }
  }
  return codes;
}

/**
 * Layers rule configurations: for each key, the first layer that sets it wins (`select`, `ignore`, each glob of
 * `per-file-ignores`, each code of `severity`). The editor passes [settings, pyproject]; the CLI
 * [command-line flags, pyproject].
 */
export function layer(...configs: RuleConfig[]): RuleConfig {
  const merged: RuleConfig = {};
  for (const config of [...configs].reverse()) {
    if (config.select && config.select.length > 0) merged.select = config.select;
    if (config.ignore && config.ignore.length > 0) merged.ignore = config.ignore;
    if (config.perFileIgnores) merged.perFileIgnores = { ...merged.perFileIgnores, ...config.perFileIgnores };
    if (config.severity) merged.severity = { ...merged.severity, ...config.severity };
  }
  return merged;
}

/** The analysis options for one file: select, ignore plus its per-file ignores and the rules turned off, severities. */
export function optionsForFile(config: RuleConfig, root: string, file: string): Pick<AnalysisOptions, 'select' | 'ignore' | 'severity'> {
  const severity: Record<string, Severity> = {};
  const off: string[] = [];
  for (const [code, level] of Object.entries(config.severity ?? {})) {
    if (level === 'off') off.push(code);
    else severity[code] = level;
  }
  return {
    select: config.select ?? [],
    ignore: [...(config.ignore ?? []), ...off, ...perFileIgnored(config.perFileIgnores, root, file)],
    severity,
  };
}
