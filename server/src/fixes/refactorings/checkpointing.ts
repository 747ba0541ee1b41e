// Refactoring "Enable gradient checkpointing": activations are recomputed in backward instead of kept.
// A Hugging Face model gets `model.gradient_checkpointing_enable()` right after it is created, a timm model
// `model.set_grad_checkpointing(True)`. A module of this file
// whose forward loops over an nn.ModuleList or nn.Sequential gets each layer call wrapped in
// `torch.utils.checkpoint.checkpoint(layer, x, use_reentrant=False)`, only while `self.training` (evaluation and
// inference keep the plain call).
import type { Node } from '../../engine/parser';
import { calleeName, children, dottedName } from '../../engine/syntax';
import type { ClassInfo, FunctionInfo, SemanticModel } from '../../engine/semantic/model';
import type { TextEdit } from '../../engine/types';
import { t } from '../../l10n';
import { insertAt, lineEnding, lineIndent, replaceNode } from '../edits';
import { identifierTexts, insertLinesAfter, standsAlone, statementOf } from './training-loop';
import type { Refactoring, RefactoringContext } from './training-loop';
import type { Value } from '../../engine/program/values';
import { checkpointPlan, hasBatchNorm } from '../../estimator/module-tree';

/** Block paths as Python: runs of one container's indices become slices (`*model.features[0:4]`). */
function blockList(model: string, paths: string[]): string {
  const parts: string[] = [];
  let run: { base: string; from: number; to: number } | undefined;
  const flush = (): void => {
    if (!run) return;
    parts.push(run.to === run.from ? `${model}${run.base}[${run.from}]` : `*${model}${run.base}[${run.from}:${run.to + 1}]`);
    run = undefined;
  };
  for (const path of paths) {
    const indexed = /^(.*)\[(\d+)\]$/.exec(path);
    if (indexed && run && run.base === indexed[1] && run.to + 1 === Number(indexed[2])) { run.to += 1; continue; }
    flush();
    if (indexed) run = { base: indexed[1]!, from: Number(indexed[2]), to: Number(indexed[2]) };
    else parts.push(`${model}${path}`);
  }
  flush();
  return `[${parts.join(', ')}]`;
}

/** The call that builds a model, through a `.to(device)` / `.cuda()` / `.train()` chain after it. */
function modelCall(value: Node | null): Node | null {
  let call = value;
  while (call?.type === 'call' && /^(to|cuda|train|float)$/.test(calleeName(call) ?? '')) {
    const fn: Node | null = call.childForFieldName('function');
    call = fn?.type === 'attribute' ? fn.childForFieldName('object') : null;
  }
  return call;
}

/** `x.from_pretrained(...)`, `GPT2LMHeadModel(config)`: a call into transformers that builds a model. */
function buildsTransformersModel(model: SemanticModel, value: Node): boolean {
  const call = modelCall(value);
  if (call?.type !== 'call') return false;
  const qualified = model.qualify(call.childForFieldName('function')) ?? '';
  if (!/^transformers\./.test(qualified)) return false;
  // A model class, or its from_pretrained / from_config; not a function (`get_linear_schedule_with_warmup`).
  if (!/\.[A-Z]\w*(\.from_pretrained|\.from_config)?$/.test(qualified)) return false;
  return !/(Config|Tokenizer\w*|Processor|FeatureExtractor|Trainer|Arguments|Pipeline|Optimizer|AdamW|Adafactor|Scheduler|Collator\w*)(\.\w+)?$/.test(qualified);
}

/** Names the loop calls as models (`model(x)`, `model(**batch)`). */
function forwardNames(context: RefactoringContext): Set<string> {
  const names = new Set<string>();
  for (const call of context.loop.directCalls) {
    if (!context.model.isDirectForwardCall(call)) continue;
    const name = dottedName(call.childForFieldName('function'));
    if (name) names.add(name);
  }
  return names;
}

function huggingFace(context: RefactoringContext): Refactoring[] {
  const { model, text } = context;
  // Already enabled, here or through TrainingArguments(gradient_checkpointing=True); not under a setting that is off.
  const { program } = context;
  if (model.calls.some((call) => calleeName(call) === 'gradient_checkpointing_enable' && !program.neverRuns(call))) return [];
  // The keyword's name is one of the file's identifiers: the tree is walked for keywords only where it is.
  if (identifierTexts(model).has('gradient_checkpointing') &&
    model.root.descendantsOfType('keyword_argument').some((arg) => arg.childForFieldName('name')?.text === 'gradient_checkpointing')) return [];
  const candidates = model.assignments.filter((assignment) => {
    const left = assignment.childForFieldName('left');
    const right = assignment.childForFieldName('right');
    return !!left && !!dottedName(left) && !!right && buildsTransformersModel(model, right) && standsAlone(statementOf(assignment));
  });
  const called = forwardNames(context);
  const chosen = candidates.filter((assignment) => called.has(dottedName(assignment.childForFieldName('left')) ?? ''));
  // The loop's own model where it calls one; else the file's only transformers model.
  const targets = chosen.length > 0 ? chosen : candidates.length === 1 ? candidates : [];
  const target = targets[targets.length - 1];
  if (!target) return [];
  const name = dottedName(target.childForFieldName('left'))!;
  const statement = statementOf(target);
  return [{
    title: t('Enable gradient checkpointing ({0}.gradient_checkpointing_enable())', name),
    // Non-reentrant: gradients still reach trainable layers behind frozen ones (the reentrant variant needs an input
    // that requires grad), and it is the variant PyTorch recommends.
    edits: [insertLinesAfter(text, statement.endPosition.row, [`${lineIndent(statement)}${name}.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})`])],
  }];
}

/** `self.layers = nn.ModuleList([...])` or `nn.Sequential(...)` somewhere in the class. */
function containerAttributes(model: SemanticModel, cls: ClassInfo): Set<string> {
  const names = new Set<string>();
  for (const assignment of model.nodesWithin('assignments', cls.node)) {
    const left = dottedName(assignment.childForFieldName('left'));
    const right = assignment.childForFieldName('right');
    if (!left?.startsWith('self.') || right?.type !== 'call') continue;
    const qualified = model.qualify(right.childForFieldName('function')) ?? '';
    if (/(^|\.)(ModuleList|Sequential)$/.test(qualified)) names.add(left.slice('self.'.length));
  }
  return names;
}

interface LayerLoop {
  cls: ClassInfo;
  forward: FunctionInfo;
  self: string;
  /** The per-layer calls: `layer(x)` inside `for layer in self.layers:`. */
  calls: Node[];
}

function layerLoops(model: SemanticModel): LayerLoop[] {
  const found: LayerLoop[] = [];
  /** The callee texts of the file's calls, read once for all its classes (not once per class and call). */
  let calleeTexts: Set<string | undefined> | undefined;
  for (const cls of model.classes) {
    if (!cls.isModule) continue;
    // Only a class this file instantiates can be the model the loop trains.
    calleeTexts ??= new Set(model.calls.map((call) => call.childForFieldName('function')?.text));
    if (!calleeTexts.has(cls.name)) continue;
    const forward = model.functions.find((info) => info.classInfo?.node.id === cls.node.id && info.name === 'forward');
    const parameters = forward?.node.childForFieldName('parameters');
    const self = parameters ? children(parameters)[0] : undefined;
    if (!forward || self?.type !== 'identifier') continue;
    const containers = containerAttributes(model, cls);
    const calls: Node[] = [];
    for (const loop of model.nodesWithin('loops', forward.node)) {
      if (loop.type !== 'for_statement') continue;
      const target = loop.childForFieldName('left');
      const iterable = dottedName(loop.childForFieldName('right'));
      if (target?.type !== 'identifier' || !iterable?.startsWith(`${self.text}.`) || !containers.has(iterable.slice(self.text.length + 1))) continue;
      const body = loop.childForFieldName('body');
      if (!body) continue;
      const inBody = model.callsWithin(body);
      // Already checkpointed: the layer is handed to checkpoint() rather than called.
      if (inBody.some((call) => /checkpoint/.test(calleeName(call) ?? ''))) continue;
      calls.push(...inBody.filter((call) => call.childForFieldName('function')?.type === 'identifier' && call.childForFieldName('function')!.text === target.text && (call.childForFieldName('arguments')?.namedChildren.length ?? 0) > 0));
    }
    if (calls.length > 0) found.push({ cls, forward, self: self.text, calls });
  }
  return found;
}

/** Whether the file imports torch.utils.checkpoint as a module (so `torch.utils.checkpoint.checkpoint` resolves). */
function importsCheckpointModule(model: SemanticModel): boolean {
  return model.root.namedChildren.some((child) => child.type === 'import_statement' && children(child).some((name) => name.text === 'torch.utils.checkpoint'));
}

function customModule(context: RefactoringContext): Refactoring[] {
  const { model, text } = context;
  const refactorings: Refactoring[] = [];
  for (const layers of layerLoops(model)) {
    const edits: TextEdit[] = [];
    if (!importsCheckpointModule(model)) {
      // After the last module-level import, so `torch` is bound the same way the file binds it.
      const imports = model.root.namedChildren.filter((child) => child.type === 'import_statement' || child.type === 'import_from_statement');
      const last = imports[imports.length - 1];
      edits.push(last
        ? insertLinesAfter(text, last.endPosition.row, ['import torch.utils.checkpoint'])
        : insertAt({ line: 0, character: 0 }, `import torch.utils.checkpoint${lineEnding(text)}`));
    }
    for (const call of layers.calls) {
      const layer = call.childForFieldName('function')!.text;
      const args = call.childForFieldName('arguments')!.text.slice(1, -1).trim().replace(/,$/, '');
      const wrapped = `torch.utils.checkpoint.checkpoint(${layer}, ${args}, use_reentrant=False) if ${layers.self}.training else ${call.text}`;
      const parent = call.parent?.type;
      const bare = parent === 'assignment' || parent === 'expression_statement' || parent === 'return_statement';
      edits.push(replaceNode(call, bare ? wrapped : `(${wrapped})`));
    }
    refactorings.push({ title: t('Enable gradient checkpointing in {0}.forward', layers.cls.name), edits });
  }
  return refactorings;
}

/** A timm model (`timm.create_model(...)`, also through `.to(...)`/`.cuda()`): `model.set_grad_checkpointing(True)`. */
function timmModel(context: RefactoringContext): Refactoring[] {
  const { model, text } = context;
  if (model.calls.some((call) => calleeName(call) === 'set_grad_checkpointing')) return [];
  const called = forwardNames(context);
  const targets = model.assignments.filter((assignment) => {
    const left = dottedName(assignment.childForFieldName('left'));
    const call = modelCall(assignment.childForFieldName('right'));
    return !!left && called.has(left) && call?.type === 'call' && model.qualify(call.childForFieldName('function')) === 'timm.create_model' && standsAlone(statementOf(assignment));
  });
  const target = targets[targets.length - 1];
  if (!target) return [];
  const name = dottedName(target.childForFieldName('left'))!;
  const statement = statementOf(target);
  return [{
    title: t('Enable gradient checkpointing ({0}.set_grad_checkpointing(True))', name),
    edits: [insertLinesAfter(text, statement.endPosition.row, [`${lineIndent(statement)}${name}.set_grad_checkpointing(True)`])],
  }];
}

/** The blocks to recompute in a torchvision model, by family (a Python expression over the model's name). */
function torchvisionBlocks(name: string, architecture: string): string | undefined {
  if (/^(resnet|wide_resnet|resnext)/.test(architecture)) return `[*${name}.layer1, *${name}.layer2, *${name}.layer3, *${name}.layer4]`;
  if (/^vit_/.test(architecture)) return `list(${name}.encoder.layers)`;
  // Each block, not each stage: a stage recomputed whole keeps a whole stage's activations alive in backward.
  if (/^convnext/.test(architecture)) return `[*${name}.features[1], *${name}.features[3], *${name}.features[5], *${name}.features[7]]`;
  if (/^efficientnet/.test(architecture)) return `[block for stage in ${name}.features[1:-1] for block in stage]`;
  // RegNet's stages are in trunk_output (it has no `features`).
  if (/^regnet/.test(architecture)) return `[block for stage in ${name}.trunk_output for block in stage]`;
  if (/^(mobilenet|densenet)/.test(architecture)) return `list(${name}.features)`;
  return undefined;
}

/** Where a module the script builds holds an nn.TransformerEncoder (`encoder`, `backbone.encoder`), as attribute names. */
function transformerEncoderPath(value: Value, depth = 0): string[] | undefined {
  if (depth > 3 || value.kind !== 'object') return undefined;
  for (const [attribute, child] of value.attrs) {
    if (child.kind === 'layer' && child.type === 'TransformerEncoder') return [attribute];
    const deeper = transformerEncoderPath(child, depth + 1);
    if (deeper) return [attribute, ...deeper];
  }
  return undefined;
}

/**
 * A model whose code is a library's (torchvision) or that runs an nn.TransformerEncoder: each block's forward is
 * wrapped in torch.utils.checkpoint, right after the model is built. The wrapper is set on the instances, so the
 * state_dict keys and the module tree stay as they were.
 */
function blockWrapping(context: RefactoringContext): Refactoring[] {
  const { model, text } = context;
  const { program } = context;
  const called = forwardNames(context);
  for (const assignment of model.assignments) {
    const left = dottedName(assignment.childForFieldName('left'));
    if (!left || !called.has(left) || !standsAlone(statementOf(assignment))) continue;
    const call = modelCall(assignment.childForFieldName('right'));
    const value = program.valueOf(call);
    let blocks: string | undefined;
    if (value?.kind === 'call' && /^torchvision\.models\./.test(value.path)) {
      const architecture = value.path.endsWith('.get_model') ? (value.args[0]?.kind === 'string' ? value.args[0].value : '') : value.path.split('.').pop()!;
      blocks = torchvisionBlocks(left, architecture);
    } else if (value) {
      const path = transformerEncoderPath(value);
      if (path) blocks = `list(${left}.${path.join('.')}.layers)`;
    }
    const statement = statementOf(assignment);
    const indent = lineIndent(statement);
    const unit = /^\t/m.test(text) ? '\t' : '    ';
    // BatchNorm updates its running statistics again when a block is recomputed.
    const batchNorm = value && hasBatchNorm(value) ? [`${indent}# ${t('BatchNorm running statistics are updated again when a block is recomputed in backward')}`] : [];
    const plan = !blocks && value && (value.kind === 'object' || value.kind === 'layer') ? checkpointPlan(value) : undefined;
    if (plan?.kind === 'segments') {
      const target = `${left}${plan.paths[0]}`;
      const segments = Math.max(1, Math.round(Math.sqrt(plan.modules.length)));
      return [{
        title: t('Enable gradient checkpointing ({0} run in {1} recomputed segments)', target, segments),
        edits: [insertLinesAfter(text, statement.endPosition.row, [
          `${indent}from functools import partial`,
          `${indent}from torch.utils.checkpoint import checkpoint_sequential`,
          ...batchNorm,
          `${indent}${target}.forward = partial(checkpoint_sequential, ${target}, ${segments}, use_reentrant=False)  # ${t('gradient checkpointing: activations recomputed in backward')}`,
        ])],
      }];
    }
    if (plan) blocks = blockList(left, plan.paths);
    if (!blocks) continue;
    return [{
      title: t('Enable gradient checkpointing (each block of {0} recomputed in backward)', left),
      edits: [insertLinesAfter(text, statement.endPosition.row, [
        `${indent}from functools import partial`,
        `${indent}from torch.utils.checkpoint import checkpoint`,
        ...batchNorm,
        `${indent}for _block in ${blocks}:  # ${t('gradient checkpointing: activations recomputed in backward')}`,
        `${indent}${unit}_block.forward = partial(checkpoint, _block.forward, use_reentrant=False)`,
      ])],
    }];
  }
  return [];
}

export function gradientCheckpointing(context: RefactoringContext): Refactoring[] {
  const specific = [...huggingFace(context), ...timmModel(context), ...customModule(context)];
  // The library's or the file's own way first; blocks are wrapped only where the file recomputes nothing yet.
  const { program } = context;
  const recomputing = context.model.calls.some((call) => /^(checkpoint|checkpoint_sequential|set_grad_checkpointing|gradient_checkpointing_enable)$/.test(calleeName(call) ?? '') && !program.neverRuns(call))
    || [...context.model.imports.values()].some((qualified) => qualified.startsWith('torch.utils.checkpoint'));
  return specific.length > 0 || recomputing ? specific : blockWrapping(context);
}
