// Generates small, realistic training / evaluation scripts for a configuration, so that calibration runs the
// whole pipeline (parse, detect, estimate) and not only the library.
export interface ScriptSpec {
  /** Python lines that build `model` (imports included). */
  model: string[];
  batch: number;
  seqLen?: number;
  imageSize?: number;
  autocast?: 'bf16' | 'fp16';
  castBf16?: boolean;
  optimizer: string;
  checkpointing?: boolean;
  accumulation?: number;
  mode?: 'train' | 'no_grad' | 'grad';
  extra?: string[];
}

export function trainingScript(spec: ScriptSpec): string {
  const lines = ['import torch', 'import torch.nn.functional as F', 'from torch.utils.data import DataLoader', ...spec.model];
  if (spec.castBf16) lines.push('model = model.to(torch.bfloat16)');
  if (spec.checkpointing) lines.push('model.gradient_checkpointing_enable()');
  lines.push(...(spec.extra ?? []));
  if (spec.seqLen) lines.push(`MAX_LENGTH = ${spec.seqLen}`);
  if (spec.imageSize) lines.push(`IMAGE_SIZE = ${spec.imageSize}`);
  lines.push(`loader = DataLoader(dataset, batch_size=${spec.batch}, shuffle=True)`);
  const amp = spec.autocast ? `torch.autocast("cuda", dtype=torch.${spec.autocast === 'bf16' ? 'bfloat16' : 'float16'})` : undefined;
  if (spec.mode === 'no_grad' || spec.mode === 'grad') {
    lines.push('model.eval()', 'total = 0.0');
    if (spec.mode === 'no_grad') lines.push('with torch.no_grad():', '    for x, y in loader:', '        total += F.cross_entropy(model(x.cuda()), y.cuda()).item()');
    else lines.push('for x, y in loader:', '    total += F.cross_entropy(model(x.cuda()), y.cuda()).item()');
    return lines.join('\n') + '\n';
  }
  lines.push(`optimizer = ${spec.optimizer}`);
  if (spec.accumulation) lines.push(`accumulation_steps = ${spec.accumulation}`);
  lines.push('for step, (x, y) in enumerate(loader):');
  const indent = amp ? '        ' : '    ';
  if (amp) lines.push(`    with ${amp}:`);
  lines.push(`${indent}loss = F.cross_entropy(model(x.cuda()), y.cuda())`);
  lines.push('    loss.backward()', '    optimizer.step()', '    optimizer.zero_grad(set_to_none=True)');
  return lines.join('\n') + '\n';
}
