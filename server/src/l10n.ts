// The one path every user-facing string of the server and the CLI takes.
// English is the default; configureLocale() loads l10n/bundle.l10n.<locale>.json (shipped beside dist/).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';

export function t(message: string, ...args: Array<string | number | boolean>): string {
  return l10n.t(message, ...args);
}

/** Bundles that exist for a locale, most specific first: `zh-cn` → zh-cn, zh. */
function bundleCandidates(locale: string): string[] {
  const normalized = locale.toLowerCase().replace('_', '-').split('.')[0]!;
  const parts = normalized.split('-');
  const names = [normalized];
  if (parts.length > 1) names.push(parts[0]!);
  // Chinese without a region is read as Simplified Chinese, the translation we ship.
  if (parts[0] === 'zh' && !names.includes('zh-cn')) names.unshift('zh-cn');
  const dirs = [path.join(__dirname, '..', 'l10n'), path.join(__dirname, '..', '..', 'l10n')];
  return dirs.flatMap((dir) => names.map((name) => path.join(dir, `bundle.l10n.${name}.json`)));
}

/** Switches messages to `locale` (`zh-cn`, `zh_CN.UTF-8`, …) when a translation exists; returns whether it did. */
export function configureLocale(locale: string | undefined): boolean {
  if (!locale || /^en\b/i.test(locale)) return false;
  for (const file of bundleCandidates(locale)) {
    if (!fs.existsSync(file)) continue;
    try {
      l10n.config({ contents: JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string> });
      return true;
    } catch {
      return false;
    }
  }
  return false;
}

/** The locale a command-line run asks for: --lang wins, then LC_ALL, LC_MESSAGES, LANG. */
export function localeFromEnvironment(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.LC_ALL || env.LC_MESSAGES || env.LANG || undefined;
}
