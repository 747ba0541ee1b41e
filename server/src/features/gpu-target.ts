// The GPU that the CodeLens, the status bar and the panel check the estimate against, from the `oomguard.gpu`
// setting: a catalog GPU, `auto` (the local GPU's free memory as nvidia-smi reports it), or `custom` (the capacity
// of `oomguard.customGpuMemory`). Anything else is not guessed: the fit check is off and the user is told why.
import { host } from '../host';
import { findGpu, GPU_CATALOG } from '../estimator/index';
import { formatBytes } from '../engine/bytes';
import { t } from '../l10n';

export const AUTO_GPU = 'auto';
export const CUSTOM_GPU = 'custom';
/** What `oomguard.gpu` offers, in the order package.json lists them (a test keeps the two the same). */
export const GPU_SETTING_CHOICES: string[] = [AUTO_GPU, CUSTOM_GPU, ...GPU_CATALOG.map((gpu) => gpu.name)];

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

export { parseNvidiaSmi, type LocalGpu, type LocalGpuQuery } from './nvidia-smi';
import type { LocalGpuQuery } from './nvidia-smi';

/** Asks nvidia-smi (on PATH) for the local GPUs, through the host (a browser has none); an error says why there are none. */
export function queryLocalGpus(command = 'nvidia-smi'): Promise<LocalGpuQuery> {
  return host().localGpus(command);
}

/**
 * nvidia-smi at most once per this many milliseconds: settings are read per document, and free memory changes as
 * jobs come and go, so a minute-old answer is still the one a user expects.
 */
const LOCAL_GPU_TTL_MS = 60_000;
let lastQuery: { at: number; answer: Promise<LocalGpuQuery> } | undefined;

export function cachedLocalGpus(): Promise<LocalGpuQuery> {
  if (!lastQuery || Date.now() - lastQuery.at > LOCAL_GPU_TTL_MS) lastQuery = { at: Date.now(), answer: queryLocalGpus() };
  return lastQuery.answer;
}

/** GPUs that are not in the catalog but were chosen through `auto` or `custom`: name → capacity in bytes. */
const chosenGpus = new Map<string, number>();

/** A catalog GPU by name or alias, or one that `auto`/`custom` made; undefined for anything else. */
export function lookupGpu(name: string): { name: string; capacity: number; catalog: boolean } | undefined {
  const chosen = chosenGpus.get(name);
  if (chosen !== undefined) return { name, capacity: chosen, catalog: false };
  const gpu = findGpu(name);
  return gpu ? { name: gpu.name, capacity: gpu.capacity, catalog: true } : undefined;
}

export interface GpuTarget {
  /** The name the estimate, CodeLens and panel use; lookupGpu() finds it. Empty: no GPU to check against. */
  name: string;
  /** Said once to the user (a warning): why there is no fit check, or what `auto` picked. */
  warning?: string;
  info?: string;
}

/** Resolves the `oomguard.gpu` setting (and `oomguard.customGpuMemory`) to the GPU to check against. */
export async function resolveGpuSetting(setting: string, customGib: number, query: () => Promise<LocalGpuQuery> = () => queryLocalGpus()): Promise<GpuTarget> {
  if (setting === CUSTOM_GPU) {
    if (!(customGib > 0)) {
      return { name: '', warning: t('oomguard.gpu is "custom" but oomguard.customGpuMemory is not set: give the GPU\'s memory in GiB. The fit check is off until then.') };
    }
    const capacity = Math.round(customGib * GIB);
    const name = t('custom GPU ({0})', formatBytes(capacity));
    chosenGpus.set(name, capacity);
    return { name };
  }
  if (setting === AUTO_GPU) {
    const local = await query();
    if ('error' in local) {
      return { name: '', warning: t('oomguard.gpu is "auto", but {0}: there is no local GPU to check the estimate against. Choose a GPU from the list, or "custom" with oomguard.customGpuMemory.', local.error) };
    }
    // The GPU with the most free memory: a training run started now would be placed there (CUDA_VISIBLE_DEVICES aside).
    const best = local.gpus.reduce((a, b) => (b.free > a.free ? b : a));
    const name = t('GPU {0}: {1}, {2} free', best.index, best.name, formatBytes(best.free));
    chosenGpus.set(name, best.free);
    const listing = local.gpus.map((gpu) => t('GPU {0}: {1}, {2} free of {3}', gpu.index, gpu.name, formatBytes(gpu.free), formatBytes(gpu.total))).join('; ');
    return { name, info: t('oomguard.gpu is "auto": nvidia-smi lists {0}. The estimate is checked against the free memory of GPU {1}.', listing, best.index) };
  }
  if (findGpu(setting)) return { name: setting };
  return {
    name: '',
    warning: t('oomguard.gpu is "{0}", which is not a GPU OOM Guard knows, so the estimate is not checked against any GPU. Choose one from the list, "auto" (the local GPU, from nvidia-smi) or "custom" (with oomguard.customGpuMemory).', setting),
  };
}
