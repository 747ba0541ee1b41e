// Reads pyproject.toml files from this machine's disk (the CLI and the Node language server); the web worker
// asks the editor instead (web/web-host.ts). Parsing and layering are config/pyproject.ts, shared by both.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { t } from '../l10n';
import { parsePyproject } from './pyproject';
import type { ProjectConfig, RuleConfig } from './pyproject';

/** The nearest pyproject.toml at or above `dir`, stopping at the filesystem root. */
export function findPyproject(dir: string): string | undefined {
  let current = path.resolve(dir);
  for (;;) {
    const candidate = path.join(current, 'pyproject.toml');
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

interface CachedFile {
  mtimeMs: number;
  size: number;
  parsed: { config: RuleConfig; error?: string };
}

/**
 * Loads project configuration for files, reading each pyproject.toml once per change (by mtime and size), so the
 * CLI over thousands of files and the server on every keystroke pay a stat, not a parse.
 */
export class ConfigLoader {
  private readonly files = new Map<string, CachedFile>();
  private readonly nearest = new Map<string, string | undefined>();

  /** `cacheLookups`: remember which pyproject.toml each folder uses (right for one CLI run, not for an editor). */
  constructor(private readonly cacheLookups = false) {}

  forFile(file: string): ProjectConfig {
    const dir = path.dirname(path.resolve(file));
    let pyproject: string | undefined;
    if (this.cacheLookups && this.nearest.has(dir)) pyproject = this.nearest.get(dir);
    else {
      pyproject = findPyproject(dir);
      if (this.cacheLookups) this.nearest.set(dir, pyproject);
    }
    if (!pyproject) return { document: file, root: dir, config: {} };
    const root = path.dirname(pyproject);
    let stat: fs.Stats;
    let text: string;
    try {
      stat = fs.statSync(pyproject);
      const cached = this.files.get(pyproject);
      if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return { file: pyproject, document: file, root, ...cached.parsed };
      text = fs.readFileSync(pyproject, 'utf8');
    } catch (error) {
      return { file: pyproject, document: file, root, config: {}, error: t('{0}: cannot be read ({1}); OOM Guard uses its default settings.', pyproject, (error as Error).message) };
    }
    const parsed = parsePyproject(text, pyproject);
    this.files.set(pyproject, { mtimeMs: stat.mtimeMs, size: stat.size, parsed });
    return { file: pyproject, document: file, root, ...parsed };
  }
}
