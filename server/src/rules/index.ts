// The rule registry: every rule the engine runs, in code order.
import { evalWithoutNoGrad } from './eval-without-no-grad';
import { missingZeroGrad } from './missing-zero-grad';
import { pinnedCudaVisibleDevices } from './pinned-cuda-visible-devices';
import type { Rule } from './rule';
import { tensorAccumulatedByAdd } from './tensor-accumulated-by-add';
import { tensorAppendedToList } from './tensor-appended-to-list';

export const RULES: readonly Rule[] = [
  tensorAppendedToList,
  tensorAccumulatedByAdd,
  missingZeroGrad,
  evalWithoutNoGrad,
  pinnedCudaVisibleDevices,
];

export type { Rule } from './rule';
