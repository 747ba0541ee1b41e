// CodeLens above the training loop and the inference loop: the estimated peak, whether it fits the chosen GPU, and
// the command that opens the memory panel. Recomputed per document version (the estimate is cached per version).
import type { CodeLens, CodeLensParams, ResponseError } from 'vscode-languageserver';
import { invalidParams } from '../params';
import { formatBytes } from '../engine/bytes';
import type { EstimateResult } from '../estimator/index';
import { growthOf, persistentBytes, type Growth } from '../estimator/growth';
import { sizedLeaks } from './leak-sizes';
import { t } from '../l10n';
import { SHOW_MEMORY_ESTIMATE_COMMAND } from '../protocol';
import type { ServerFeature } from './context';
import { baseEstimate, capacityLabel, estimateWith, inferenceConfig, isBase, resolveGpu, totalOf } from './memory-estimate';

/** ` · leak +2.3 GiB/batch, full after 8 batches`: what a sized leak adds to the lens. */
function growthText(growth: Growth | undefined): string {
  if (!growth) return '';
  return growth.batchesUntilFull === null
    ? t(' · leak +{0} per batch (line {1})', formatBytes(growth.bytesPerBatch), growth.line)
    : t(' · leak +{0} per batch (line {1}): out of memory after about {2} batches', formatBytes(growth.bytesPerBatch), growth.line, growth.batchesUntilFull);
}

export function lensTitle(result: EstimateResult, gpuName: string, inference: boolean, growth?: Growth): string {
  // The middle dot is escaped in the pattern: a bundle with a non-ASCII character in its code is read as a two-byte
  // string (scripts/build.mjs).
  return lensBase(result, gpuName, inference).replace(/ \u00b7 ([^\u00b7]+)$/, `${growthText(growth)} · $1`);
}

function lensBase(result: EstimateResult, gpuName: string, inference: boolean): string {
  const peak = formatBytes(totalOf(result));
  const gpu = resolveGpu(gpuName);
  const fit = result.fits[0];
  const open = t('Open memory panel');
  if (!gpu || !fit) {
    return inference ? t('≈ {0} peak (inference) · {1}', peak, open) : t('≈ {0} peak · {1}', peak, open);
  }
  const where = `${gpu.name} (${capacityLabel(gpu.capacity)})`;
  if (inference) {
    return fit.fits ? t('≈ {0} peak (inference) · fits {1} · {2}', peak, where, open) : t('≈ {0} peak (inference) · does not fit {1} · {2}', peak, where, open);
  }
  return fit.fits ? t('≈ {0} peak · fits {1} · {2}', peak, where, open) : t('≈ {0} peak · does not fit {1} · {2}', peak, where, open);
}

export const estimateCodeLens: ServerFeature = {
  capabilities: { codeLensProvider: { resolveProvider: false } },
  register(context) {
    context.connection.onCodeLens(async (params: CodeLensParams): Promise<CodeLens[] | ResponseError<void>> => {
      const invalid = invalidParams('textDocument/codeLens', params);
      if (invalid) return invalid;
      const uri = params.textDocument.uri;
      const state = await context.ready(uri);
      if (!state) return [];
      const settings = await context.settingsFor(uri);
      if (!settings.enable) return [];
      const base = baseEstimate(context, state);
      const lens = (line: number, title: string): CodeLens => ({
        range: { start: { line, character: 0 }, end: { line, character: 0 } },
        command: { title, command: SHOW_MEMORY_ESTIMATE_COMMAND, arguments: [uri] },
      });
      // A model the estimator cannot read: say so where it is built, with no figure.
      if (base && 'unresolved' in base && base.unresolved) {
        return [lens(base.unresolved.line ?? 0, t('No memory estimate: {0} · {1}', base.unresolved.reason, t('Open memory panel')))];
      }
      if (!isBase(base)) return [];
      const lenses: CodeLens[] = [];
      if (base.loops.training !== undefined && base.config.mode === 'train') {
        const result = estimateWith(base, {}, settings.gpu);
        const leaks = sizedLeaks(context, state);
        lenses.push(lens(base.loops.training, lensTitle(result, settings.gpu, false, growthOf(leaks, result.config, totalOf(result), resolveGpu(settings.gpu)?.capacity, persistentBytes(result)))));
      }
      const inference = inferenceConfig(base);
      if (inference && base.loops.inference) {
        lenses.push(lens(base.loops.inference.line, lensTitle(estimateWith(base, {}, settings.gpu, inference), settings.gpu, true)));
      }
      return lenses;
    });
  },
};
