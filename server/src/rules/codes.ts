// The code table: every rule's fixed code, name and default severity (docs/rules/README.md).
// Kept apart from the rule modules so that a test can prove codes and names are unique.
import type { Severity } from '../engine/types';

export interface RuleCode {
  code: string;
  name: string;
  defaultSeverity: Severity;
}

export const RULE_CODES = [
  { code: 'OOM101', name: 'tensor-appended-to-list', defaultSeverity: 'warning' },
  { code: 'OOM102', name: 'tensor-accumulated-by-add', defaultSeverity: 'warning' },
  { code: 'OOM103', name: 'missing-zero-grad', defaultSeverity: 'warning' },
  { code: 'OOM104', name: 'eval-without-no-grad', defaultSeverity: 'warning' },
  { code: 'OOM105', name: 'pinned-cuda-visible-devices', defaultSeverity: 'warning' },
  { code: 'OOM106', name: 'empty-cache-in-loop', defaultSeverity: 'information' },
  { code: 'OOM107', name: 'retain-graph-in-loop', defaultSeverity: 'warning' },
  { code: 'OOM108', name: 'data-parallel', defaultSeverity: 'information' },
  { code: 'OOM109', name: 'full-logits-metrics', defaultSeverity: 'warning' },
  { code: 'OOM110', name: 'torch-load-without-map-location', defaultSeverity: 'warning' },
  { code: 'OOM111', name: 'distributed-without-set-device', defaultSeverity: 'warning' },
  { code: 'OOM112', name: 'cuda-in-dataloader-worker', defaultSeverity: 'warning' },
  { code: 'OOM113', name: 'frozen-model-forward-with-grad', defaultSeverity: 'warning' },
  { code: 'OOM114', name: 'frozen-by-optimizer-only', defaultSeverity: 'information' },
  { code: 'OOM115', name: 'outputs-all-hidden-states', defaultSeverity: 'information' },
  { code: 'OOM116', name: 'create-graph-backward-in-loop', defaultSeverity: 'warning' },
  { code: 'OOM117', name: 'growing-cat-in-loop', defaultSeverity: 'warning' },
  { code: 'OOM118', name: 'notebook-output-keeps-tensor', defaultSeverity: 'information' },
] as const satisfies readonly RuleCode[];

export type Code = (typeof RULE_CODES)[number]['code'];

export function ruleCode(code: Code): RuleCode {
  const entry = RULE_CODES.find((rule) => rule.code === code);
  if (!entry) throw new Error(`unknown rule code ${code}`);
  return entry;
}
