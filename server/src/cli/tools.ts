// The subcommands other than `check`: in the bundled CLI, a bundle of their own (dist/cli-tools.js, scripts/build.mjs)
// that dist/cli.js loads only when one of them runs. `oomguard check`, the command CI runs on every commit and in
// each of its worker threads, then neither reads nor compiles the estimator, its model catalogs, the explainer and
// the refactorings: two thirds of the CLI's code (1.7 MB bundled; `check` alone is 0.56 MB).
import { configureLocale } from '../l10n';
import { runEstimate } from './estimate';
import { runExplain } from './explain';
import { runRefactor } from './refactor';
import type { CliIO } from './io';

const TOOLS = { estimate: runEstimate, explain: runExplain, refactor: runRefactor };

export type ToolName = keyof typeof TOOLS;

/**
 * Runs a subcommand in `locale`, the one dist/cli.js configured: this bundle has its own copy of the l10n module,
 * whose locale is set here (where both are one module, as under tsx, it is set to what it already was).
 */
export function runTool(name: ToolName, argv: string[], io: CliIO, locale: string | undefined): Promise<number> {
  configureLocale(locale);
  return TOOLS[name](argv, io);
}
