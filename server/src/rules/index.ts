// The rule registry: every rule the engine runs, in code order.
import { createGraphBackwardInLoop } from './create-graph-backward-in-loop';
import { cudaInDataloaderWorker } from './cuda-in-dataloader-worker';
import { dataParallel } from './data-parallel';
import { distributedWithoutSetDevice } from './distributed-without-set-device';
import { emptyCacheInLoop } from './empty-cache-in-loop';
import { evalWithoutNoGrad } from './eval-without-no-grad';
import { frozenByOptimizerOnly } from './frozen-by-optimizer-only';
import { frozenModelForwardWithGrad } from './frozen-model-forward-with-grad';
import { fullLogitsMetrics } from './full-logits-metrics';
import { growingCatInLoop } from './growing-cat-in-loop';
import { missingZeroGrad } from './missing-zero-grad';
import { notebookOutputKeepsTensor } from './notebook-output-keeps-tensor';
import { outputsAllHiddenStates } from './outputs-all-hidden-states';
import { pinnedCudaVisibleDevices } from './pinned-cuda-visible-devices';
import { retainGraphInLoop } from './retain-graph-in-loop';
import type { Rule } from './rule';
import { tensorAccumulatedByAdd } from './tensor-accumulated-by-add';
import { tensorAppendedToList } from './tensor-appended-to-list';
import { torchLoadWithoutMapLocation } from './torch-load-without-map-location';

export const RULES: readonly Rule[] = [
  tensorAppendedToList,
  tensorAccumulatedByAdd,
  missingZeroGrad,
  evalWithoutNoGrad,
  pinnedCudaVisibleDevices,
  emptyCacheInLoop,
  retainGraphInLoop,
  dataParallel,
  fullLogitsMetrics,
  torchLoadWithoutMapLocation,
  distributedWithoutSetDevice,
  cudaInDataloaderWorker,
  frozenModelForwardWithGrad,
  frozenByOptimizerOnly,
  outputsAllHiddenStates,
  createGraphBackwardInLoop,
  growingCatInLoop,
  notebookOutputKeepsTensor,
];

export type { Rule } from './rule';
