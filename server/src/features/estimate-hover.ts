// Hover on a value the estimator read (a batch_size=, a model id, a max_length=): what it contributes to the peak.
import { invalidParams } from '../params';
import type { ResponseError } from 'vscode-languageserver';
import { MarkupKind } from '../lsp';
import type { Hover, HoverParams } from 'vscode-languageserver';
import { offsetAt } from '../engine/documents';
import { maxBatchSizeText } from '../estimator/types';
import { formatBytes } from '../engine/bytes';
import { rangeOf } from '../engine/syntax';
import type { ConfigField } from '../estimator/types';
import { t } from '../l10n';
import type { ServerFeature } from './context';
import { baseEstimate, estimateWith, isBase, nodeAt, totalOf, type BaseEstimate } from './memory-estimate';

/** Escapes text from the script so that Markdown shows it literally. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!<>|~]/g, (ch) => `\\${ch}`);
}

const FIELDS: ConfigField[] = ['model', 'batchSize', 'seqLen', 'imageSize', 'precision', 'optimizer', 'checkpointing', 'accumulation'];

/** One line per detected value on `line`, each saying what the value adds to the peak. */
export function contributions(base: BaseEstimate, line: number, gpuName: string): string[] {
  const result = estimateWith(base, {}, gpuName);
  const config = result.config;
  const total = totalOf(result);
  const peakWith = (overrides: Parameters<typeof estimateWith>[1]) => totalOf(estimateWith(base, overrides, gpuName));
  const b = result.breakdown;
  const out: string[] = [];
  for (const field of FIELDS) {
    if (config.lines[field] !== line) continue;
    switch (field) {
      case 'model':
        out.push(t('**{0}**: {1}M parameters; weights {2}, gradients {3}, optimizer states {4} of the {5} peak.',
          escapeMarkdown(config.modelName), (result.detected.parameters / 1e6).toFixed(1), formatBytes(b.weights), formatBytes(b.gradients), formatBytes(b.optimizerStates), formatBytes(total)));
        break;
      case 'batchSize': {
        const fit = result.fits[0];
        const perSample = config.batchSize > 1 ? (total - peakWith({ batchSize: 1 })) / (config.batchSize - 1) : 0;
        let text = t('**batch size {0}**: activations {1} of the {2} peak; each sample adds about {3}.', config.batchSize, formatBytes(b.activations), formatBytes(total), formatBytes(perSample));
        if (fit) {
          text += ' ' + (fit.noMaxBatchSize ? fit.noMaxBatchSize
            : fit.maxBatchSize === null
            ? t('Not even one sample fits {0}.', fit.gpu)
            : t('The largest batch that fits {0} is {1}.', fit.gpu, maxBatchSizeText(fit.maxBatchSize)));
        }
        out.push(text);
        break;
      }
      case 'seqLen':
      case 'imageSize': {
        const value = field === 'seqLen' ? config.seqLen : config.imageSize;
        const half = Math.max(1, Math.floor(value / 2));
        out.push(t('**{0} {1}**: activations {2} of the {3} peak; at {4} the peak would be {5}.',
          field === 'seqLen' ? t('sequence length') : t('image size'), value, formatBytes(b.activations), formatBytes(total), half, formatBytes(peakWith({ [field]: half }))));
        break;
      }
      case 'precision': {
        const other = config.precision === 'fp32' ? 'bf16-amp' : 'fp32';
        out.push(t('**{0}**: peak {1}; in {2} it would be {3}.', config.precision, formatBytes(total), other, formatBytes(peakWith({ precision: other }))));
        break;
      }
      case 'optimizer':
        out.push(t('**{0}**: optimizer states {1} of the {2} peak.', config.optimizer, formatBytes(b.optimizerStates), formatBytes(total)));
        break;
      case 'checkpointing':
        out.push(t('**checkpointing**: activations {0}; without it the peak would be {1}.', formatBytes(b.activations), formatBytes(peakWith({ checkpointing: !config.checkpointing }))));
        break;
      case 'accumulation':
        out.push(t('**{0} accumulation steps**: gradients stay alive through the next forward; peak {1} (without accumulation {2}).', config.accumulation, formatBytes(total), formatBytes(peakWith({ accumulation: 1 }))));
        break;
    }
  }
  return out;
}

export const estimateHover: ServerFeature = {
  capabilities: { hoverProvider: true },
  register(context) {
    context.connection.onHover(async (params: HoverParams): Promise<Hover | null | ResponseError<void>> => {
      const invalid = invalidParams('textDocument/hover', params, 'position');
      if (invalid) return invalid;
      const state = await context.ready(params.textDocument.uri);
      if (!state) return null;
      const settings = await context.settingsFor(state.uri);
      if (!settings.enable) return null;
      const model = context.modelOf(state);
      const base = baseEstimate(context, state);
      if (!model || !isBase(base)) return null;
      const text = state.analysisText;
      // The store's line starts hold for the analysis text too: recovery blanks lines but keeps every break.
      const offset = offsetAt(text, state.lineStarts, params.position);
      const node = nodeAt(model.root, offset);
      // Only a token of the line hovers (not the indentation or a block around it).
      if (node.children.length > 0 || node.startPosition.row !== params.position.line) return null;
      const lines = contributions(base, params.position.line, settings.gpu);
      if (lines.length === 0) return null;
      return {
        contents: { kind: MarkupKind.Markdown, value: `${t('OOM Guard memory estimate')}\n\n${lines.join('\n\n')}` },
        range: rangeOf(node),
      };
    });
  },
};
