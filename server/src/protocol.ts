// Everything the extension client, the language server and the webview agree on: settings, custom requests and
// commands. Both sides import this one module, so a change of shape is a compile error on both.
import type { Severity } from './engine/types';

export const SERVER_NAME = 'OOM Guard';
export const DIAGNOSTIC_SOURCE = 'oomguard';
export const DOCS_BASE_URL = 'https://github.com/oomguard/oomguard/blob/main/docs/rules/';

export function ruleDocUrl(code: string): string {
  return `${DOCS_BASE_URL}${code}.md`;
}

/** The `oomguard.*` settings, as the server reads them for one document. */
export interface Settings {
  enable: boolean;
  rules: {
    select: string[];
    ignore: string[];
    severity: Record<string, Severity | 'off'>;
  };
}

export const DEFAULT_SETTINGS: Settings = {
  enable: true,
  rules: { select: [], ignore: [], severity: {} },
};

/** Merges what a client sent (possibly partial or malformed) over the defaults. */
export function normalizeSettings(raw: unknown): Settings {
  const value = (raw ?? {}) as Partial<{ enable: unknown; rules: Partial<Record<keyof Settings['rules'], unknown>> }>;
  const strings = (list: unknown) => (Array.isArray(list) ? list.filter((item): item is string => typeof item === 'string') : []);
  const severities: Record<string, Severity | 'off'> = {};
  const rawSeverity = value.rules?.severity;
  if (rawSeverity && typeof rawSeverity === 'object') {
    for (const [code, level] of Object.entries(rawSeverity as Record<string, unknown>)) {
      if (level === 'error' || level === 'warning' || level === 'information' || level === 'hint' || level === 'off') {
        severities[code.toUpperCase()] = level;
      }
    }
  }
  return {
    enable: typeof value.enable === 'boolean' ? value.enable : DEFAULT_SETTINGS.enable,
    rules: { select: strings(value.rules?.select), ignore: strings(value.rules?.ignore), severity: severities },
  };
}

/** Commands the server executes (workspace/executeCommand). */
export const Commands = {
  showDocumentation: 'oomguard.showDocumentation',
} as const;

/** What a diagnostic carries in `data`, so that code actions need no server-side state. */
export interface DiagnosticData {
  code: string;
  fixes: Array<{ title: string; safe: boolean; preferred?: boolean; edits: Array<{ range: { start: { line: number; character: number }; end: { line: number; character: number } }; newText: string }> }>;
}
