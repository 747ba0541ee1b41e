// The one path every user-facing string of the server and the CLI takes.
// English is the default; configureLocale() loads l10n/bundle.l10n.<locale>.json (shipped beside dist/, and inside
// the web worker's bundle).
import type * as L10n from '@vscode/l10n';
import { host } from './host';

export function t(message: string, ...args: Array<string | number | boolean>): string {
  return translated ? translated.t(message, ...args) : formatEnglish(message, args);
}

/**
 * @vscode/l10n once a translation bundle was loaded into it: until then every message is its English template,
 * formatted here. It is required then, not at the start: with Node's fs/promises, which it loads, it took about 3 ms
 * of every start of the server, before the first diagnostics.
 */
let translated: typeof L10n | undefined;
/** The locale whose translation configureLocale loaded last (a worker thread of the CLI is given the same). */
let activeLocale: string | undefined;

export function configuredLocale(): string | undefined {
  return activeLocale;
}

/**
 * A template cut at its `{...}` placeholders: literal text, then the placeholders' names and whole spellings; and the
 * arguments of its last use with the message they made.
 */
interface Template { literals: string[]; names: string[]; spellings: string[]; lastArgs?: ReadonlyArray<string | number | boolean>; lastResult?: string }

const templates = new Map<string, Template>();
/** Messages are the code's constants; a cap keeps a caller that builds its message from growing the cache. */
const MAX_TEMPLATES = 2000;

/**
 * What @vscode/l10n's format makes of an untranslated message (`{0}` replaced by args[0], an unknown placeholder
 * left as written), with the template cut once: a check of a long file formats a message per finding.
 */
function formatEnglish(message: string, args: ReadonlyArray<string | number | boolean>): string {
  if (args.length === 0) return message;
  let template = templates.get(message);
  if (!template) {
    template = { literals: [], names: [], spellings: [] };
    let last = 0;
    for (const match of message.matchAll(/{([^}]+)}/g)) {
      template.literals.push(message.slice(last, match.index));
      template.names.push(match[1]!);
      template.spellings.push(match[0]);
      last = match.index + match[0].length;
    }
    template.literals.push(message.slice(last));
    if (templates.size < MAX_TEMPLATES) templates.set(message, template);
  }
  // A long loop has a finding per line, most with the message of the one before: that message is given again, one
  // string for all of them, where each was a chain of concatenations that the JSON output flattened again.
  if (template.lastResult !== undefined && sameArgs(template.lastArgs!, args)) return template.lastResult;
  const values = args as unknown as Record<string, unknown>;
  let result = template.literals[0]!;
  for (let i = 0; i < template.names.length; i++) result += String(values[template.names[i]!] ?? template.spellings[i]!) + template.literals[i + 1]!;
  template.lastArgs = args;
  template.lastResult = result;
  return result;
}

function sameArgs(a: ReadonlyArray<string | number | boolean>, b: ReadonlyArray<string | number | boolean>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
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
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const l10n = require('@vscode/l10n') as typeof L10n;
    l10n.config({ contents });
    translated = l10n;
    activeLocale = locale;
    return true;
  }
  return false;
}

/** The locale a command-line run asks for: --lang wins, then LC_ALL, LC_MESSAGES, LANG. */
export function localeFromEnvironment(env: Record<string, string | undefined> = process.env): string | undefined {
  return env.LC_ALL || env.LC_MESSAGES || env.LANG || undefined;
}
