// The one path every user-facing string of the server and the CLI takes.
// Bundles (l10n/bundle.l10n.<locale>.json) are loaded with configureLocale(); English is the default.
import * as l10n from '@vscode/l10n';

export function t(message: string, ...args: Array<string | number | boolean>): string {
  return l10n.t(message, ...args);
}

export { l10n };
