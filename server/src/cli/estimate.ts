// `oomguard estimate SCRIPT [options]` (spec/cli.md): detect, estimate, print a table or the JSON object.
// Exit status: 0 on success, 2 on a usage or I/O error (message on stderr, nothing on stdout).
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { parsePython } from '../engine/parser';
import { chooseWasmTier } from './wasm-tier';
import { t } from '../l10n';
import { analyze } from '../engine/analyze';
import { recoverTree } from '../engine/recovery';
import { SemanticModel, STATEMENT_NODES_COLLECTOR } from '../engine/semantic/model';
import { copyTree, type SyntaxNode } from '../engine/syntax-tree';
import { growthOf, leakOutsideStep, persistentBytes } from '../estimator/growth';
import { keptBytesFromTable, leakSizeTable } from '../estimator/leak-size-table';
import { programOf } from '../estimator/python-values';
import { estimateScript, toEstimateJson, type EstimateJson, type EstimateOverrides, type EstimateResult } from '../estimator/index';
import { toCellPosition, type CellSpan } from '../engine/notebook';
import { readNotebook } from './ipynb';
import { isNotebookPath } from './files';
import { maxBatchSizeText, type OptimizerKind, type Precision, type Strategy } from '../estimator/types';

export interface CliIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

const PRECISIONS: readonly Precision[] = ['fp32', 'fp16-amp', 'bf16-amp', 'bf16', 'fp16'];
const OPTIMIZERS: readonly OptimizerKind[] = ['sgd', 'sgd-momentum', 'adam', 'adamw', 'adafactor', 'adam-8bit', 'rmsprop', 'adagrad', 'adadelta', 'sparse-adam', 'lbfgs'];
const STRATEGIES: readonly Strategy[] = ['ddp', 'fsdp', 'zero1', 'zero2', 'zero3'];

class UsageError extends Error {}

function positiveInteger(option: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(t('--{0} needs a positive integer, got "{1}"', option, value));
  return n;
}

function oneOf<T extends string>(option: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(t('--{0} must be one of {1}, got "{2}"', option, allowed.join(', '), value));
  return value as T;
}

function usage(): string {
  return t('usage: oomguard estimate SCRIPT [--batch-size N] [--seq-len N] [--image-size N] [--precision fp32|fp16-amp|bf16-amp|bf16|fp16] [--optimizer sgd|sgd-momentum|adam|adamw|adafactor|adam-8bit|rmsprop|adagrad] [--checkpointing on|off] [--accumulation N] [--gpus N] [--strategy ddp|fsdp|zero1|zero2|zero3] [--params N] [--gpu NAME] [--json]');
}

/** `--params 1.2e9`, `350M`, `7B`, `125k`: a model's parameter count. */
function parameterCount(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([kKmMbB]?)\s*$/.exec(value);
  const scale = { '': 1, k: 1e3, m: 1e6, b: 1e9 }[match?.[2]?.toLowerCase() ?? ''];
  const count = match && scale ? Math.round(Number(match[1]) * scale) : NaN;
  if (!Number.isFinite(count) || count <= 0) throw new UsageError(t('--params takes a parameter count such as 1.2e9, 350M or 7B (got "{0}")', value));
  return count;
}

export async function runEstimate(argv: string[], io: CliIo): Promise<number> {
  let overrides: EstimateOverrides;
  let script: string;
  let asJson: boolean;
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        'batch-size': { type: 'string' }, 'seq-len': { type: 'string' }, 'image-size': { type: 'string' },
        precision: { type: 'string' }, optimizer: { type: 'string' }, checkpointing: { type: 'string' },
        accumulation: { type: 'string' }, gpus: { type: 'string' }, strategy: { type: 'string' }, gpu: { type: 'string' }, params: { type: 'string' },
        json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false },
      },
    });
    if (values.help) {
      io.stdout(usage() + '\n');
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError(t('estimate takes exactly one SCRIPT'));
    script = positionals[0];
    asJson = values.json === true;
    const checkpointing = oneOf('checkpointing', values.checkpointing, ['on', 'off'] as const);
    overrides = {
      batchSize: positiveInteger('batch-size', values['batch-size']),
      seqLen: positiveInteger('seq-len', values['seq-len']),
      imageSize: positiveInteger('image-size', values['image-size']),
      precision: oneOf('precision', values.precision, PRECISIONS),
      optimizer: oneOf('optimizer', values.optimizer, OPTIMIZERS),
      checkpointing: checkpointing === undefined ? undefined : checkpointing === 'on',
      accumulation: positiveInteger('accumulation', values.accumulation),
      gpus: positiveInteger('gpus', values.gpus),
      strategy: oneOf('strategy', values.strategy, STRATEGIES),
      gpu: values.gpu,
      params: parameterCount(values.params),
    };
  } catch (error) {
    const message = error instanceof UsageError || (error instanceof Error && 'code' in error) ? error.message : String(error);
    io.stderr(`oomguard estimate: ${message}\n${usage()}\n`);
    return 2;
  }
  let text: string;
  try {
    text = fs.readFileSync(script, 'utf8');
  } catch (error) {
    io.stderr(t('oomguard estimate: cannot read {0}: {1}', script, error instanceof Error ? error.message : String(error)) + '\n');
    return 2;
  }
  // A notebook is estimated as the program of its code cells; lines are then given within cells.
  let cells: readonly CellSpan[] | undefined;
  if (isNotebookPath(script)) {
    const notebook = readNotebook(text);
    if ('error' in notebook) {
      io.stderr(t('oomguard estimate: cannot read the notebook {0}: {1}', script, notebook.error) + '\n');
      return 2;
    }
    text = notebook.program.text;
    cells = notebook.program.cells;
  }
  chooseWasmTier([script]);
  const tree = await parsePython(text);
  if (!tree) {
    io.stderr(t('oomguard estimate: cannot parse {0}', script) + '\n');
    return 2;
  }
  try {
    // One copy of the tree (and so one program model, kept per copy) for the estimate and the leaks' sizes: each
    // made its own, which doubled the time after the parse.
    const root = copyTree(tree, text, STATEMENT_NODES_COLLECTOR);
    const result = estimateScript({ rootNode: root }, text, script, overrides);
    if (!result.unresolved) result.growth = await leakGrowth(tree, text, result, script, root);
    const json = toEstimateJson(result);
    io.stdout(asJson ? JSON.stringify(cells ? inCells(json, cells) : json, null, 2) + '\n' : formatTable(result, cells));
    return 0;
  } finally {
    tree.delete();
  }
}

/**
 * What the script's leaks (OOM101/OOM104 with a size) add per batch, against the first GPU of the fit check. `root`:
 * the copy of `tree` the estimate read (copyTree with the semantic model's collector), used again where the tree
 * needs no recovery.
 */
export async function leakGrowth(tree: NonNullable<Awaited<ReturnType<typeof parsePython>>>, text: string, result: EstimateResult, file: string, root?: SyntaxNode): Promise<EstimateResult['growth']> {
  const recovered = await recoverTree(text, tree);
  try {
    const model = root && recovered.tree === tree ? new SemanticModel(root, text, tree) : new SemanticModel(recovered.tree, recovered.text);
    const program = programOf({ rootNode: model.root }, file);
    const sizes = keptBytesFromTable(leakSizeTable(result.config, program, model.root), true);
    const findings = analyze(model, text, { select: ['OOM101', 'OOM104'], keptBytes: sizes });
    const leaks = findings.filter((f) => f.sizeHint).map((f) => ({ line: f.range.start.line, bytes: f.sizeHint!.bytes, outsideStep: leakOutsideStep(model, f.range.start) }));
    return growthOf(leaks, result.config, result.peakReserved + result.cudaContext, result.fits[0]?.capacity, persistentBytes(result));
  } finally {
    if (recovered.tree !== tree) recovered.tree.delete();
  }
}

const GIB = 1024 ** 3;

function gib(bytes: number): string {
  return `${(bytes / GIB).toFixed(2)} GiB`;
}

/** Where a value came from: `line 12`, or in a notebook `cell 3, line 2` (1-based `line` of the program). */
function where(line: number | null, cells?: readonly CellSpan[]): string {
  if (line === null) return t('assumed');
  const inCell = cells && toCellPosition(cells, { line: line - 1, character: 0 });
  return inCell ? t('cell {0}, line {1}', inCell.cell.index + 1, inCell.position.line + 1) : t('line {0}', line);
}

/**
 * The estimate JSON of a notebook: every `line` of a detected value (1-based in the program) becomes the line
 * within its cell, with `cell` (1-based, every cell counted) beside it, as `check --output-format json` gives them.
 */
export function inCells(json: EstimateJson, cells: readonly CellSpan[]): EstimateJson {
  const relocate = <T extends { line: number | null }>(value: T, base: 0 | 1): T & { cell?: number } => {
    if (value.line === null) return value;
    const inCell = toCellPosition(cells, { line: value.line - base, character: 0 });
    return inCell ? { ...value, cell: inCell.cell.index + 1, line: inCell.position.line + base } : value;
  };
  const d = json.detected;
  return {
    ...json,
    detected: {
      ...d,
      // An unresolved model's line is 0-based (what the estimator gives), the others 1-based.
      model: relocate(d.model, d.model.source === 'unresolved' ? 0 : 1),
      batchSize: relocate(d.batchSize, 1),
      seqLen: d.seqLen && relocate(d.seqLen, 1),
      ...(d.targetLen ? { targetLen: relocate(d.targetLen, 1) } : {}),
      imageSize: d.imageSize && relocate(d.imageSize, 1),
      precision: relocate(d.precision, 1),
      weightDtype: relocate(d.weightDtype, 1),
      optimizer: relocate(d.optimizer, 1),
      mode: relocate(d.mode, 1),
      lora: d.lora && relocate(d.lora, 1),
    },
    ...(json.growth ? { growth: relocate(json.growth, 1) } : {}),
  };
}

/** Columns a terminal gives `text`: CJK and full-width characters take two, so translated labels still line up. */
function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) width += /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/.test(char) ? 2 : 1;
  return width;
}

function pad(rows: string[][]): string {
  const widths = rows[0].map((_, col) => Math.max(...rows.map((r) => displayWidth(r[col]))));
  return rows.map((r) => r.map((cell, col) => cell + ' '.repeat(widths[col] - displayWidth(cell))).join('  ').trimEnd()).join('\n') + '\n';
}

/** The readable report: detected values with their lines, assumptions, breakdown, fit. */
export function formatTable(result: EstimateResult, cells?: readonly CellSpan[]): string {
  const d = result.detected;
  const unresolved = result.unresolved;
  const detectedRows: string[][] = [
    unresolved
      ? [t('model'), t('not resolved: {0}', unresolved.reason), unresolved.line === null ? '' : where(unresolved.line + 1, cells)]
      : [t('model'), `${d.model.name} (${d.model.source})`, where(d.model.line, cells)],
    ...(unresolved ? [] : [[t('parameters'), `${(d.parameters / 1e6).toFixed(1)}M (${t('{0}M trainable', (d.trainableParameters / 1e6).toFixed(1))})`, '']]),
    [t('batch size'), String(d.batchSize.value), where(d.batchSize.line, cells)],
  ];
  if (d.seqLen) detectedRows.push([t('sequence length'), String(d.seqLen.value), where(d.seqLen.line, cells)]);
  if (d.targetLen) detectedRows.push([t('target length'), String(d.targetLen.value), where(d.targetLen.line, cells)]);
  if (d.imageSize) detectedRows.push([t('image size'), String(d.imageSize.value), where(d.imageSize.line, cells)]);
  detectedRows.push(
    [t('precision'), `${d.precision.value} (${t('weights {0}', d.weightDtype.value)})`, where(d.precision.line, cells)],
    [t('optimizer'), d.optimizer.value, where(d.optimizer.line, cells)],
    [t('checkpointing'), d.checkpointing ? t('on') : t('off'), ''],
    [t('accumulation'), String(d.accumulation), ''],
    [t('mode'), d.mode.value, where(d.mode.line, cells)],
  );
  if (d.lora) detectedRows.push([t('LoRA'), t('r={0} on {1}', d.lora.rank, d.lora.targetModules.join(', ')), where(d.lora.line, cells)]);
  if (d.gpus > 1) detectedRows.push([t('data parallel'), `${d.strategy} x ${d.gpus}`, '']);
  let out = `${result.file}\n\n${t('Detected')}\n` + pad(detectedRows);
  if (result.assumptions.length > 0) out += `\n${t('Assumptions')}\n` + result.assumptions.map((a) => `  - ${a}\n`).join('');
  if (unresolved) {
    return out + `\n${t('No peak, fit or largest batch: the model is missing. Give its parameter count with --params (for example --params 350M) for an estimate of everything but its activations.')}\n`;
  }
  const b = result.breakdown;
  out += `\n${t('Peak GPU memory per GPU ({0})', result.peakPhase)}\n` + pad([
    [t('weights'), gib(b.weights)],
    [t('gradients'), gib(b.gradients)],
    [t('optimizer states'), gib(b.optimizerStates)],
    [t('activations'), gib(b.activations)],
    [t('other (workspaces, transients)'), gib(b.other)],
    [t('peak allocated'), gib(result.peakAllocated)],
    [t('peak reserved'), gib(result.peakReserved)],
    [t('CUDA context'), gib(result.cudaContext)],
  ]);
  if (result.growth) {
    const g = result.growth;
    const inCell = cells && toCellPosition(cells, { line: g.line - 1, character: 0 });
    if (inCell) {
      const [cell, line] = [inCell.cell.index + 1, inCell.position.line + 1];
      out += `\n${g.batchesUntilFull === null
        ? t('Leak: cell {0}, line {1} keeps {2} more every batch.', cell, line, gib(g.bytesPerBatch))
        : t('Leak: cell {0}, line {1} keeps {2} more every batch; on {3} the run fails after about {4} batches.', cell, line, gib(g.bytesPerBatch), result.fits[0]!.gpu, g.batchesUntilFull)}\n`;
    } else {
      out += `\n${g.batchesUntilFull === null
        ? t('Leak: line {0} keeps {1} more every batch.', g.line, gib(g.bytesPerBatch))
        : t('Leak: line {0} keeps {1} more every batch; on {2} the run fails after about {3} batches.', g.line, gib(g.bytesPerBatch), result.fits[0]!.gpu, g.batchesUntilFull)}\n`;
    }
    if (g.batches !== undefined && g.keptAfterBatches !== undefined) {
      out += t('The loop runs {0} batches: at its end it holds {1}, a peak of about {2} allocated.', g.batches, gib(g.keptAfterBatches), gib((g.heldBeside ?? result.peakAllocated) + g.keptAfterBatches)) + '\n';
    }
  }
  if (result.fits.length > 0) {
    out += `\n${t('Fit')}\n` + pad([[t('GPU'), t('memory'), t('fits'), t('max batch size')],
      ...result.fits.map((f) => [f.gpu, gib(f.capacity), f.fits ? t('yes') : t('no'),
        f.noMaxBatchSize ? '-' : f.maxBatchSize === null ? t('none') : maxBatchSizeText(f.maxBatchSize)])]);
    const unscaled = result.fits.find((f) => f.noMaxBatchSize)?.noMaxBatchSize;
    if (unscaled) out += `${unscaled}\n`;
  }
  return out;
}
