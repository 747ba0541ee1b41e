// Which files `oomguard check` reads: every .py script and .ipynb notebook under the given paths, skipping VCS
// folders, node_modules, virtual environments, Jupyter's checkpoint copies and whatever the .gitignore files on the
// way ignore.
import * as fs from 'node:fs';
import * as path from 'node:path';
import ignore from 'ignore';
import type { Ignore } from 'ignore';

const SKIPPED_DIRECTORIES = new Set(['.git', '.hg', '.svn', 'node_modules', '__pycache__', '.mypy_cache', '.ruff_cache', '.pytest_cache', '.tox', '.nox', 'site-packages', '.ipynb_checkpoints']);

/** A Jupyter notebook, by its name. */
export function isNotebookPath(file: string): boolean {
  return file.toLowerCase().endsWith('.ipynb');
}

function isVirtualEnvironment(dir: string): boolean {
  return fs.existsSync(path.join(dir, 'pyvenv.cfg')) || fs.existsSync(path.join(dir, 'conda-meta'));
}

interface IgnoreLayer {
  base: string;
  rules: Ignore;
}

function loadGitignore(dir: string): IgnoreLayer | undefined {
  const file = path.join(dir, '.gitignore');
  if (!fs.existsSync(file)) return undefined;
  try {
    return { base: dir, rules: ignore().add(fs.readFileSync(file, 'utf8')) };
  } catch {
    return undefined;
  }
}

function ignoredBy(layers: readonly IgnoreLayer[], target: string, isDirectory: boolean): boolean {
  for (const layer of layers) {
    const relative = path.relative(layer.base, target).split(path.sep).join('/');
    if (!relative || relative.startsWith('..')) continue;
    if (layer.rules.ignores(isDirectory ? `${relative}/` : relative)) return true;
  }
  return false;
}

/** .gitignore files from the repository root (the nearest folder with .git) down to `dir`. */
function ancestorLayers(dir: string): IgnoreLayer[] {
  const chain: string[] = [];
  let current = path.resolve(dir);
  for (;;) {
    chain.unshift(current);
    if (fs.existsSync(path.join(current, '.git'))) break;
    const parent = path.dirname(current);
    if (parent === current) return [];
    current = parent;
  }
  return chain.map(loadGitignore).filter((layer): layer is IgnoreLayer => !!layer);
}

export interface CollectResult {
  files: string[];
  missing: string[];
}

/** Lists the Python scripts and notebooks to check. A file named explicitly is always checked, as ruff does. */
export function collectPythonFiles(paths: readonly string[]): CollectResult {
  const files: string[] = [];
  const missing: string[] = [];
  const walk = (dir: string, layers: IgnoreLayer[]) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    const own = loadGitignore(dir);
    const active = own && !layers.some((layer) => layer.base === dir) ? [...layers, own] : layers;
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (SKIPPED_DIRECTORIES.has(entry.name) || isVirtualEnvironment(full) || ignoredBy(active, full, true)) continue;
        walk(full, active);
      } else if (entry.isFile() && (entry.name.endsWith('.py') || isNotebookPath(entry.name)) && !ignoredBy(active, full, false)) {
        files.push(full);
      }
    }
  };
  for (const target of paths) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(target);
    } catch {
      missing.push(target);
      continue;
    }
    if (stat.isDirectory()) walk(target, ancestorLayers(target));
    else files.push(target);
  }
  return { files, missing };
}
