// `oomguard explain [FILE|-] [--script SCRIPT] [--json]`: explains the CUDA out-of-memory errors in a log or a
// pasted traceback (standard input when FILE is "-" or absent).
// Exit status: 0 when at least one error was explained, 1 when the input holds none, 2 on a usage or I/O error.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { explainText, renderMarkdown, renderText } from '../explain/index';
import { t } from '../l10n';
import type { CliIO } from './io';

function usage(): string {
  return t('usage: oomguard explain [FILE|-] [--script SCRIPT] [--json | --markdown]\n\nReads a training log or a copied error (standard input when FILE is "-" or absent) and explains each CUDA out-of-memory error in it.');
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

export async function runExplain(argv: string[], io: CliIO, stdin: () => Promise<string> = readStdin): Promise<number> {
  let values: { script?: string; json?: boolean; markdown?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        script: { type: 'string' },
        json: { type: 'boolean', default: false },
        markdown: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    io.stderr(`oomguard explain: ${(error as Error).message}\n${usage()}\n`);
    return 2;
  }
  if (values.help) {
    io.stdout(usage() + '\n');
    return 0;
  }
  if (positionals.length > 1 || (values.json && values.markdown)) {
    io.stderr(`oomguard explain: ${t('explain takes at most one FILE and one output format')}\n${usage()}\n`);
    return 2;
  }
  const input = positionals[0] ?? '-';
  let text: string;
  try {
    text = input === '-' ? await stdin() : fs.readFileSync(input, 'utf8');
  } catch (error) {
    io.stderr(t('oomguard explain: cannot read {0}: {1}', input, error instanceof Error ? error.message : String(error)) + '\n');
    return 2;
  }
  if (values.script !== undefined && !fs.existsSync(values.script)) {
    io.stderr(t('oomguard explain: cannot read {0}: {1}', values.script, t('no such file')) + '\n');
    return 2;
  }
  // A log names the script as the cluster saw it; look beside the log first, then in the working directory.
  const roots = [...(input === '-' ? [] : [path.dirname(path.resolve(input))]), process.cwd()];
  const explanations = await explainText(text, { roots, script: values.script });
  if (values.json) {
    io.stdout(JSON.stringify(explanations, null, 2) + '\n');
  } else if (values.markdown) {
    io.stdout(renderMarkdown(explanations));
  } else {
    io.stdout(renderText(explanations));
  }
  return explanations.length > 0 ? 0 : 1;
}
