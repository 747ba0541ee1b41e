// OOM111: a distributed script that places work on the CUDA device without an index and never calls
// torch.cuda.set_device(...), so every process puts its CUDA context and its tensors on GPU 0.
import type { Node } from '../engine/parser';
import { indexlessPlacementsWithin } from '../engine/semantic/devices';
import { isDistributedScript, setsCudaDevice, usesDevicePlacingFramework } from '../engine/semantic/distributed';
import type { SemanticModel } from '../engine/semantic/model';
import { t } from '../l10n';
import { ruleCode } from './codes';
import type { Rule, RuleReport } from './rule';

/** The first place in the text that puts work on CUDA without a device index, if any (memoised per document). */
function firstIndexlessPlacement(model: SemanticModel): Node | undefined {
  return model.memo('first-indexless-placement', () => indexlessPlacementsWithin(model, model.root)[0]);
}

export const distributedWithoutSetDevice: Rule = {
  ...ruleCode('OOM111'),
  code: 'OOM111',
  check({ model, spells, inRegion }) {
    const reports: RuleReport[] = [];
    // Placements all spell out "cuda".
    if (!spells('cuda')) return reports;
    if (!isDistributedScript(model)) return reports;
    // set_device makes the bare "cuda" device the process's own GPU.
    if (setsCudaDevice(model)) return reports;
    // Accelerate, Lightning, the Hugging Face Trainer and DeepSpeed set the device of each process themselves.
    if (usesDevicePlacingFramework(model)) return reports;
    const placement = firstIndexlessPlacement(model);
    // One finding per file, at the first index-less placement in the text.
    if (!placement || !inRegion(placement)) return reports;
    const shown = placement.text.length <= 40 ? placement.text : `${placement.text.slice(0, 37)}...`;
    reports.push({
      node: placement,
      message: t('This distributed script places work on the GPU without a device index ({0}) and never calls torch.cuda.set_device(), so every process creates its CUDA context (about 0.5 GiB) and its tensors on GPU 0, which runs out while the other GPUs stay idle. Call torch.cuda.set_device(local_rank) right after init_process_group (or use f"cuda:{local_rank}").', shown),
    });
    return reports;
  },
};
