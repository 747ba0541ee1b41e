/// <reference lib="dom" />
// The memory panel in the webview. It never estimates: every what-if change goes to the extension, which asks the
// language server, and the answer comes back as an `estimate` message. Everything from the script (model ids, file
// names) is set as textContent, never parsed as HTML. Strings come localized from the extension.
import { formatBytes } from '../../../server/src/engine/bytes';
import { maxBatchSizeText } from '../../../server/src/estimator/types';
import { MINOR_SAVING_FRACTION, OPTIMIZERS, PRECISIONS, STRATEGIES } from '../../../server/src/protocol';
import type {
  EstimateOverrides, EstimateResponse, GpuChoice, HostToWebview, MemorySuggestion, WebviewStrings, WebviewToHost,
} from '../../../server/src/protocol';

interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
  getState(): PanelState | undefined;
  setState(state: PanelState): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

/** What survives hiding the panel and reloading the window (the serializer hands it back). */
export interface PanelState {
  uri?: string;
  overrides: EstimateOverrides;
}

const vscode = acquireVsCodeApi();
const app = document.getElementById('app')!;
let strings: WebviewStrings | undefined;
let gpus: GpuChoice[] = [];
let last: { fileName: string; response: EstimateResponse } | undefined;
let overrides: EstimateOverrides = vscode.getState()?.overrides ?? {};

const SEGMENTS = ['weights', 'gradients', 'optimizerStates', 'activations', 'other', 'cudaContext'] as const;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: { className?: string; text?: string; attrs?: Record<string, string> } = {}, ...kids: Array<Node | null>): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.className) node.className = props.className;
  if (props.text !== undefined) node.textContent = props.text;
  for (const [key, value] of Object.entries(props.attrs ?? {})) node.setAttribute(key, value);
  for (const kid of kids) if (kid) node.append(kid);
  return node;
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

function format(template: string, ...args: Array<string | number>): string {
  return template.replace(/\{(\d+)\}/g, (match, index: string) => (args[Number(index)] !== undefined ? String(args[Number(index)]) : match));
}

function send(message: WebviewToHost): void {
  vscode.postMessage(message);
}

function saveState(): void {
  vscode.setState({ uri: last?.response.uri ?? vscode.getState()?.uri, overrides });
}

function recompute(change: EstimateOverrides | null): void {
  overrides = change === null ? {} : { ...overrides, ...change };
  saveState();
  send({ type: 'recompute', overrides });
}

function bar(response: EstimateResponse, s: WebviewStrings): SVGSVGElement {
  const capacity = response.gpu?.capacity ?? 0;
  const scale = Math.max(response.total, capacity) || 1;
  const width = 1000;
  const height = 40;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height + 14}`, class: 'bar', role: 'img', preserveAspectRatio: 'none', 'aria-label': s.breakdownLabel });
  let x = 0;
  for (const key of SEGMENTS) {
    const value = response.segments[key];
    if (value <= 0) continue;
    const w = (value / scale) * width;
    const rect = svg('rect', { x, y: 0, width: Math.max(w, 1), height, class: `segment seg-${key}` });
    const title = svg('title', {});
    title.textContent = `${s[key]}: ${formatBytes(value)}`;
    rect.append(title);
    chart.append(rect);
    x += w;
  }
  if (capacity > 0) {
    const cx = (capacity / scale) * width;
    chart.append(svg('rect', { x: Math.min(cx, width - 3), y: 0, width: 3, height: height + 14, class: 'capacity' }));
  }
  return chart;
}

function table(response: EstimateResponse, s: WebviewStrings): HTMLTableElement {
  const body = el('tbody');
  for (const key of SEGMENTS) {
    const value = response.segments[key];
    body.append(el('tr', {},
      el('th', { attrs: { scope: 'row' } }, el('span', { className: `swatch seg-${key}`, attrs: { 'aria-hidden': 'true' } }), document.createTextNode(s[key])),
      el('td', { text: formatBytes(value) }),
      el('td', { text: response.total > 0 ? `${Math.round((value / response.total) * 100)}%` : '' })));
  }
  body.append(el('tr', { className: 'total' }, el('th', { text: s.total, attrs: { scope: 'row' } }), el('td', { text: formatBytes(response.total) }), el('td')));
  if (response.gpu) {
    body.append(el('tr', {}, el('th', { text: format(s.capacity, response.gpu.name), attrs: { scope: 'row' } }), el('td', { text: formatBytes(response.gpu.capacity) }), el('td')));
  }
  return el('table', { className: 'numbers' },
    el('thead', {}, el('tr', {}, el('th', { text: s.part, attrs: { scope: 'col' } }), el('th', { text: s.size, attrs: { scope: 'col' } }), el('th', { text: s.share, attrs: { scope: 'col' } }))),
    body);
}

/**
 * The breakdown is the memory at the peak; before backward is done only some gradients exist (none in forward after
 * zero_grad(), the head's at the start of backward), so a LoRA run reads "Gradients 0 B" there. Says so, with the
 * size of all of them, so that the figure is not taken for "this model has no gradients".
 */
function gradientsNote(response: EstimateResponse, s: WebviewStrings): HTMLElement | null {
  const phase = response.peakPhase === 'forward' ? s.phaseForward : response.peakPhase === 'backward' ? s.phaseBackward : undefined;
  if (!phase || response.segments.gradients >= response.gradientsAfterBackward) return null;
  return el('p', { className: 'note', attrs: { id: 'gradients-note' }, text: format(s.gradientsLater, phase, formatBytes(response.segments.gradients), formatBytes(response.gradientsAfterBackward)) });
}

function numberControl(id: keyof EstimateOverrides, label: string, value: number, max: number): HTMLElement {
  const input = el('input', { attrs: { id: `ctl-${id}`, type: 'number', min: '1', max: String(max), step: '1', value: String(value) } });
  input.addEventListener('change', () => {
    const n = Number(input.value);
    if (Number.isInteger(n) && n >= 1 && n <= max) recompute({ [id]: n });
    else input.value = String(value);
  });
  return el('div', { className: 'control' }, el('label', { text: label, attrs: { for: `ctl-${id}` } }), input);
}

function selectControl(id: keyof EstimateOverrides, label: string, value: string, options: readonly string[], labels?: readonly string[], parse: (v: string) => EstimateOverrides[keyof EstimateOverrides] = (v) => v): HTMLElement {
  const select = el('select', { attrs: { id: `ctl-${id}` } });
  options.forEach((option, index) => {
    const item = el('option', { text: labels?.[index] ?? option, attrs: { value: option } });
    if (option === value) item.selected = true;
    select.append(item);
  });
  select.addEventListener('change', () => recompute({ [id]: parse(select.value) } as EstimateOverrides));
  return el('div', { className: 'control' }, el('label', { text: label, attrs: { for: `ctl-${id}` } }), select);
}

function controls(response: EstimateResponse, s: WebviewStrings): HTMLElement {
  const c = response.current;
  const gpuNames = gpus.map((g) => g.name);
  if (!gpuNames.includes(c.gpu)) gpuNames.unshift(c.gpu);
  const reset = el('button', { text: s.reset, className: 'secondary', attrs: { type: 'button', id: 'reset' } });
  reset.addEventListener('click', () => recompute(null));
  const grid = el('div', { className: 'controls' },
    numberControl('batchSize', s.batchSize, c.batchSize, 1 << 20),
    response.uses.seqLen ? numberControl('seqLen', s.seqLen, c.seqLen, 1 << 20) : null,
    response.uses.imageSize ? numberControl('imageSize', s.imageSize, c.imageSize, 16384) : null,
    selectControl('precision', s.precision, c.precision, PRECISIONS),
    selectControl('optimizer', s.optimizer, c.optimizer, OPTIMIZERS),
    selectControl('checkpointing', s.checkpointing, String(c.checkpointing), ['false', 'true'], [s.off, s.on], (v) => v === 'true'),
    numberControl('accumulation', s.accumulation, c.accumulation, 4096),
    numberControl('gpus', s.gpus, c.gpus, 4096),
    selectControl('strategy', s.strategy, c.strategy, STRATEGIES),
    selectControl('gpu', s.gpu, c.gpu, gpuNames),
  );
  // Where the batch does not scale the step (a full-graph step), the engine says why there is no largest batch.
  const maxBatch = response.noMaxBatchSize ? el('p', { className: 'max-batch', attrs: { id: 'max-batch' }, text: response.noMaxBatchSize })
    : response.maxBatchSize === null || !response.gpu ? null
    : el('p', { className: 'max-batch', attrs: { id: 'max-batch' }, text: format(s.maxBatch, response.gpu.name, maxBatchSizeText(response.maxBatchSize)) });
  return el('section', { attrs: { 'aria-labelledby': 'h-whatif' } }, el('h2', { text: s.whatIf, attrs: { id: 'h-whatif' } }), grid, maxBatch, reset);
}

function inputs(response: EstimateResponse, s: WebviewStrings): HTMLElement {
  const list = el('ul', { className: 'inputs' });
  for (const input of response.inputs) {
    const mark = el('span', { className: `mark ${input.origin}`, text: s[input.origin] });
    const item = el('li', {}, el('span', { className: 'input-label', text: input.label }), el('span', { className: 'input-value', text: input.value }), mark);
    if (input.line !== null) {
      const line = input.line;
      const link = el('button', { className: 'link', text: format(s.line, line + 1), attrs: { type: 'button' } });
      link.addEventListener('click', () => send({ type: 'reveal', line }));
      item.append(link);
    }
    list.append(item);
  }
  return el('section', { attrs: { 'aria-labelledby': 'h-inputs' } }, el('h2', { text: s.inputs, attrs: { id: 'h-inputs' } }), list);
}

function suggestion(item: MemorySuggestion, s: WebviewStrings): HTMLElement {
  const buttons = el('div', { className: 'buttons' });
  if (Object.keys(item.overrides).length > 0) {
    const tryIt = el('button', { className: 'secondary', text: s.tryIt, attrs: { type: 'button' } });
    tryIt.addEventListener('click', () => recompute(item.overrides));
    buttons.append(tryIt);
  }
  if (item.refactor) {
    const { kind, line, title } = item.refactor;
    // A minor saving keeps its button, but not the primary look that invites a click.
    const apply = el('button', { text: s.apply, className: item.minor ? 'secondary' : undefined, attrs: { type: 'button', title } });
    apply.addEventListener('click', () => send({ type: 'applySuggestion', id: item.id, kind, line, title }));
    buttons.append(apply);
  }
  return el('li', { className: item.minor ? 'suggestion minor' : 'suggestion' },
    el('div', {}, el('strong', { text: item.title }), el('span', { className: 'saving', text: item.minor ? format(s.savesLittle, formatBytes(item.saving), MINOR_SAVING_FRACTION * 100) : format(s.saves, formatBytes(item.saving)) })),
    el('p', { text: item.detail }),
    buttons);
}

function render(): void {
  const s = strings;
  if (!s) return;
  app.replaceChildren();
  if (!last) {
    app.append(el('p', { className: 'empty', text: s.noDocument }));
    return;
  }
  const { fileName, response } = last;
  const fits = response.fits === null ? '' : response.fits ? s.fits : s.doesNotFit;
  const headline = response.gpu
    ? format(s.peak, formatBytes(response.total), `${response.gpu.name} (${formatBytes(response.gpu.capacity)})`)
    : formatBytes(response.total);
  const sections: Array<HTMLElement | null> = [
    el('header', {},
      el('h1', { text: format(s.title, fileName), attrs: { id: 'title' } }),
      el('p', { className: 'model' }, document.createTextNode(`${s.model}: `), el('span', { text: response.modelName, attrs: { id: 'model-name' } })),
      el('p', { className: `headline ${response.fits === false ? 'bad' : 'good'}`, attrs: { id: 'headline' } }, document.createTextNode(`${headline} `), el('strong', { text: fits })),
      response.growth
        ? el('p', { className: 'headline bad', attrs: { id: 'growth' } }, el('strong', {
          text: response.growth.batchesUntilFull === null
            ? format(s.growth, response.growth.line, formatBytes(response.growth.bytesPerBatch))
            : format(s.growthUntilFull, response.growth.line, formatBytes(response.growth.bytesPerBatch), response.growth.batchesUntilFull),
        }), response.growth.batches !== undefined && response.growth.keptAfterBatches !== undefined
          ? document.createTextNode(' ' + format(s.growthBatches, response.growth.batches, formatBytes(response.total + response.growth.keptAfterBatches)))
          : null)
        : null),
    el('section', { attrs: { 'aria-labelledby': 'h-breakdown' } }, el('h2', { text: s.breakdownLabel, attrs: { id: 'h-breakdown' } }), bar(response, s), table(response, s), gradientsNote(response, s)),
    controls(response, s),
    el('section', { attrs: { 'aria-labelledby': 'h-suggestions' } },
      el('h2', { text: s.suggestions, attrs: { id: 'h-suggestions' } }),
      response.suggestions.length > 0 ? el('ul', { className: 'suggestions' }, ...response.suggestions.map((item) => suggestion(item, s))) : el('p', { text: s.noSuggestions })),
    inputs(response, s),
    response.assumptions.length > 0
      ? el('section', { attrs: { 'aria-labelledby': 'h-assumptions' } }, el('h2', { text: s.assumptions, attrs: { id: 'h-assumptions' } }), el('ul', {}, ...response.assumptions.map((a) => el('li', { text: a }))))
      : null,
    el('p', { className: 'footer', text: format(s.computedIn, response.elapsedMs) }),
  ];
  app.append(...sections.filter((section): section is HTMLElement => section !== null));
}

function notice(text: string): void {
  document.getElementById('notice')?.remove();
  const box = el('div', { className: 'notice', text, attrs: { id: 'notice', role: 'status' } });
  app.prepend(box);
}

/** No estimate without the model's size: say why, and take its parameter count (what `--params` does on the CLI). */
function askForParameters(text: string): void {
  // No figures of another version stay on screen; the field does not take the focus from the editor.
  last = undefined;
  app.replaceChildren();
  notice(text);
  const s = strings;
  if (!s) return;
  const input = el('input', { attrs: { id: 'params', type: 'text', inputmode: 'decimal', placeholder: '1.2e9' } });
  const button = el('button', { text: s.estimateWithParameters, attrs: { type: 'submit' } });
  const form = el('form', { className: 'params', attrs: { id: 'params-form' } }, el('label', { text: s.parameterCount, attrs: { for: 'params' } }), input, button);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = Number(input.value.trim());
    if (Number.isFinite(value) && value >= 1e3) recompute({ params: value });
  });
  document.getElementById('notice')?.after(form);
}

window.addEventListener('message', (event: MessageEvent<HostToWebview>) => {
  const message = event.data;
  switch (message?.type) {
    case 'init':
      strings = message.strings;
      gpus = message.gpus;
      render();
      break;
    case 'estimate': {
      const focused = document.activeElement?.id;
      last = { fileName: message.fileName, response: message.response };
      overrides = message.overrides;
      saveState();
      render();
      // Keep keyboard focus on the control that was changed.
      if (focused) document.getElementById(focused)?.focus();
      break;
    }
    case 'noDocument':
      last = undefined;
      render();
      break;
    case 'notice':
      notice(message.text);
      break;
    case 'unresolved':
      askForParameters(message.text);
      break;
  }
});

send({ type: 'ready' });
