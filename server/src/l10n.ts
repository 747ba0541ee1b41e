// The one path every user-facing string of the server and the CLI takes.
// English is the default; configureLocale() loads l10n/bundle.l10n.<locale>.json (shipped beside dist/, and inside
// the web worker's bundle).
import * as l10n from '@vscode/l10n';
import { host } from './host';

export function t(message: string, ...args: Array<string | number | boolean>): string {
  return l10n.t(message, ...args);
}

/** Bundle names to try for a locale, most specific first: `zh-cn` → zh-cn, zh. */
function bundleCandidates(locale: string): string[] {
  const normalized = locale.toLowerCase().replace('_', '-').split('.')[0]!;
  const parts = normalized.split('-');
  const names = [normalized];
  if (parts.length > 1) names.push(parts[0]!);
  // Chinese without a region is read as Simplified Chinese, the translation we ship.
  if (parts[0] === 'zh' && !names.includes('zh-cn')) names.unshift('zh-cn');
  return names;
}

/** Switches messages to `locale` (`zh-cn`, `zh_CN.UTF-8`, …) when a translation exists; returns whether it did. */
export function configureLocale(locale: string | undefined): boolean {
  if (!locale || /^en\b/i.test(locale)) return false;
  for (const name of bundleCandidates(locale)) {
    const contents = host().l10nBundle(name);
    if (!contents) continue;
    l10n.config({ contents });
    return true;
  }
  return false;
}

/** The locale a command-line run asks for: --lang wins, then LC_ALL, LC_MESSAGES, LANG. */
export function localeFromEnvironment(env: Record<string, string | undefined> = process.env): string | undefined {
  return env.LC_ALL || env.LC_MESSAGES || env.LANG || undefined;
}
