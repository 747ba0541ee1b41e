// `oomguard`: dispatches to the subcommands of the command-line contract (README.md, "Command line").
import { configureLocale, configuredLocale, localeFromEnvironment, t } from '../l10n';
import { VERSION } from '../version';
import { runCheck } from './check';
import type { CliIO } from './io';
import type { ToolName } from './tools';
import { processIO } from './io';
import { isMainThread } from 'node:worker_threads';
import { allowCheckWorkers, isCheckWorker, runCheckWorker } from './check-workers';

type Subcommand = (argv: string[], io: CliIO) => Promise<number>;

/**
 * A subcommand other than `check`, loaded when it runs (tools.ts): the bundled CLI keeps them in dist/cli-tools.js,
 * which a run of `check` never reads.
 */
function tool(name: ToolName): Subcommand {
  return async (argv, io) => (await import('./tools.js')).runTool(name, argv, io, configuredLocale());
}

const COMMANDS: Record<string, Subcommand> = {
  check: runCheck,
  estimate: tool('estimate'),
  explain: tool('explain'),
  refactor: tool('refactor'),
};

/** Takes `--lang LOCALE` (anywhere in the arguments) out of argv; the environment's locale otherwise. */
function takeLocale(argv: string[]): { locale: string | undefined; args: string[] } {
  const args = [...argv];
  const index = args.findIndex((arg) => arg === '--lang' || arg.startsWith('--lang='));
  if (index < 0) return { locale: localeFromEnvironment(), args };
  const [flag] = args.splice(index, 1);
  const locale = flag!.includes('=') ? flag!.split('=')[1] : args.splice(index, 1)[0];
  return { locale, args };
}

export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  const { locale, args } = takeLocale(argv);
  configureLocale(locale);
  const [command, ...rest] = args;
  const usage = t('Usage: oomguard <command> [options]\n\nCommands:\n  check [PATH ...]    report GPU-memory leaks and anti-patterns in PyTorch scripts\n  estimate SCRIPT     estimate the peak GPU memory of one training step\n  explain [FILE|-]    explain a CUDA out-of-memory error from a log or a pasted traceback\n  refactor SCRIPT     add mixed precision, checkpointing or gradient accumulation to a training loop\n\nRun "oomguard <command> --help" for the options of a command.');
  if (!command || command === '--help' || command === '-h') {
    io.stdout(usage + '\n');
    return command ? 0 : 2;
  }
  if (command === '--version') {
    io.stdout(`${VERSION}\n`);
    return 0;
  }
  const run = COMMANDS[command];
  if (!run) {
    io.stderr(t('Unknown command "{0}".', command) + '\n' + usage + '\n');
    return 2;
  }
  return run(rest, io);
}

if (!isMainThread && isCheckWorker()) {
  // A thread of `oomguard check` over many files (check-workers.ts).
  void runCheckWorker();
} else if (require.main === module) {
  allowCheckWorkers(__filename);
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
      process.exitCode = 2;
    },
  );
}
