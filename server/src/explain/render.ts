// Renders explanations as Markdown (VS Code's preview, the --json consumer) or as plain text (the terminal).
import { t } from '../l10n';
import type { Explanation } from './explain';
import { maxBatchSizeText } from '../estimator/types';
import { formatBytes } from './sizes';
import { host } from '../host';

function formatName(e: Explanation): string {
  switch (e.message.format) {
    case 'current': return t('current PyTorch wording');
    case 'pytorch-2.1': return t('PyTorch 2.1 wording');
    case 'legacy': return t('PyTorch 2.0 or older wording');
    case 'partial': return t('incomplete message');
  }
}

/** Markdown; `fileLink` turns a frame's file and line into a link target (VS Code passes a command URI). */
/**
 * Text from the log or the script for Markdown: outside `code spans`, characters that Markdown or the preview's
 * HTML would eat (`<module>`, `*`, `[`) are escaped. Underscores stay: inside words (`train_gpt2.py`) they are text.
 */
export function md(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/[\\<>*[\]|]/g, (ch) => `\\${ch}`).replace(/&/g, '&amp;')))
    .join('');
}

export function renderMarkdown(explanations: Explanation[], fileLink?: (file: string, line: number) => string): string {
  if (explanations.length === 0) return `# ${t('No CUDA out-of-memory error found')}\n\n${t('Select the error text (or copy it) and run the command again.')}\n`;
  const out: string[] = [];
  explanations.forEach((e, index) => {
    const heading = explanations.length > 1 ? t('CUDA out of memory ({0} of {1})', index + 1, explanations.length) : t('CUDA out of memory');
    out.push(`# ${heading}`, '', `_${formatName(e)}${e.message.exception ? ` · \`${e.message.exception}\`` : ''}_`, '');
    out.push(...e.summary.map((line) => `${md(line)}  `), '');
    if (e.frame) {
      const target = e.frameFile && fileLink ? fileLink(e.frameFile, e.frame.line) : undefined;
      const label = `${e.frame.file}:${e.frame.line}`;
      out.push(`**${t('Your code')}:** ${target ? `[${md(label)}](${target})` : `\`${label}\``}${e.frame.code ? ` — \`${e.frame.code.replace(/`/g, "'")}\`` : ''}`, '');
    }
    if (e.figures.length > 0) {
      out.push(`## ${t('The figures')}`, '', `| ${t('what')} | ${t('size')} |`, '|---|---:|');
      for (const f of e.figures) out.push(`| ${md(f.label)}${f.computed ? ` (${t('computed')})` : ''} | ${md(f.text)} |`);
      out.push('');
    }
    if (e.causes.length > 0) {
      out.push(`## ${t('Where the memory went, largest first')}`, '');
      e.causes.forEach((cause, i) => {
        out.push(`${i + 1}. **${md(cause.title)}**${cause.decisive ? ` — ${t('enough on its own to explain the failure')}` : ''}`);
        for (const line of cause.detail) out.push(`   ${md(line)}`);
        for (const step of cause.tryThis) out.push(`   - ${t('Try')}: ${md(step)}`);
      });
      out.push('');
    }
    const s = e.script;
    if (s) {
      out.push(`## ${md(t('The script: {0}', s.file))}`, '');
      out.push(`- ${t('model')}: ${md(s.model)}, ${t('batch size')} ${s.batchSize}, ${s.precision}`);
      if (s.estimatedPeak !== undefined) out.push(`- ${t('estimated peak of one step (reserved + CUDA context)')}: ${formatBytes(s.estimatedPeak)}${s.fitsOnThisGpu === undefined ? '' : s.fitsOnThisGpu ? ` — ${t('fits this GPU')}` : ` — ${t('does not fit this GPU')}`}`);
      if (s.maxBatchSizeOnThisGpu !== undefined) out.push(`- ${t('largest batch size that fits this GPU by the estimate')}: ${maxBatchSizeText(s.maxBatchSizeOnThisGpu)}`);
      for (const x of s.tensors.slice(0, 3)) out.push(`- ${md(x.name)}: ${md(x.formula)} = ${formatBytes(x.bytes)}${x === s.matchingTensor ? ` — ${t('matches the failed request')}` : ''}`);
      if (s.findings.length > 0) {
        out.push('', `**${t('Findings')}**`, '');
        for (const f of s.findings) {
          const target = fileLink ? fileLink(s.file, f.line) : undefined;
          out.push(`- ${target ? `[${f.code}](${target})` : f.code} ${t('line {0}', f.line)}: ${md(f.message)}`);
        }
      }
      if (s.assumptions.length > 0) {
        out.push('', `**${t('Assumptions of the estimate')}**`, '');
        for (const a of s.assumptions) out.push(`- ${md(a)}`);
      }
      out.push('');
    } else if (e.frame && !e.frameFile) {
      // A browser (VS Code for the Web) has no disk to look for it on: only the scripts open in the editor are read.
      const note = host().kind === 'browser'
        ? t('In VS Code for the Web, OOM Guard reads only the scripts open in the editor: open {0} and explain the error again to add its estimate.', e.frame.file)
        : t('{0} was not found on this machine, so there is no estimate for it.', e.frame.file);
      out.push(`_${md(note)}_`, '');
    }
  });
  return out.join('\n');
}

/** Plain text for a terminal. */
export function renderText(explanations: Explanation[]): string {
  if (explanations.length === 0) return t('No CUDA out-of-memory error found in the input.') + '\n';
  const out: string[] = [];
  explanations.forEach((e, index) => {
    if (index > 0) out.push('');
    const heading = explanations.length > 1 ? t('CUDA out of memory ({0} of {1})', index + 1, explanations.length) : t('CUDA out of memory');
    out.push(`${heading} [${formatName(e)}${e.message.exception ? `, ${e.message.exception}` : ''}]`, '');
    out.push(...e.summary, '');
    if (e.figures.length > 0) {
      const width = Math.max(...e.figures.map((f) => f.label.length + (f.computed ? t('computed').length + 3 : 0)));
      for (const f of e.figures) out.push(`  ${(f.label + (f.computed ? ` (${t('computed')})` : '')).padEnd(width)}  ${f.text}`);
      out.push('');
    }
    if (e.causes.length > 0) {
      out.push(t('Where the memory went, largest first:'));
      e.causes.forEach((cause, i) => {
        out.push(`  ${i + 1}. ${cause.title}${cause.decisive ? ` (${t('enough on its own to explain the failure')})` : ''}`);
        for (const line of cause.detail) out.push(`     ${line}`);
        for (const step of cause.tryThis) out.push(`     ${t('Try')}: ${step}`);
      });
    }
    const s = e.script;
    if (s) {
      out.push('', t('The script: {0}', s.file));
      out.push(`  ${t('model')}: ${s.model}, ${t('batch size')} ${s.batchSize}, ${s.precision}`);
      if (s.estimatedPeak !== undefined) out.push(`  ${t('estimated peak of one step (reserved + CUDA context)')}: ${formatBytes(s.estimatedPeak)}${s.fitsOnThisGpu === undefined ? '' : s.fitsOnThisGpu ? ` (${t('fits this GPU')})` : ` (${t('does not fit this GPU')})`}`);
      if (s.maxBatchSizeOnThisGpu !== undefined) out.push(`  ${t('largest batch size that fits this GPU by the estimate')}: ${maxBatchSizeText(s.maxBatchSizeOnThisGpu)}`);
      for (const x of s.tensors.slice(0, 3)) out.push(`  ${x.name}: ${x.formula} = ${formatBytes(x.bytes)}${x === s.matchingTensor ? ` (${t('matches the failed request')})` : ''}`);
      for (const f of s.findings) out.push(`  ${s.file}:${f.line}: ${f.code} ${f.message}`);
      for (const a of s.assumptions) out.push(`  ${t('assumed')}: ${a}`);
    } else if (e.frame && !e.frameFile) {
      out.push('', t('{0} was not found on this machine, so there is no estimate for it.', e.frame.file));
    }
  });
  return out.join('\n') + '\n';
}
