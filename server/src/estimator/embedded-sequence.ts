// The sequence a hub language model is given as `inputs_embeds` the step builds itself: its own token embeddings of
// the batch's ids with other tokens joined before or after them along the sequence axis (LLaVA-style image tokens:
// a vision tower's patch tokens through a projector of the script). Each piece is read back through the step's
// assignments to where its tokens come from: the ids the loader gives, or the patches of a library ViT.
import type { PyNode } from '../engine/program/node';
import type { ProgramModel } from '../engine/program/interpreter';
import { INPUT_EMBEDDINGS } from '../engine/program/interpreter';
import type { CallResultValue, LayerValue, Value } from '../engine/program/values';
import { callArguments } from './python-values';
import type { Located } from './types';
import { treeIndex } from '../engine/program/tree-index';

/** Methods that keep a tensor's sequence (`.to(torch.bfloat16)`, `.float()`). */
const KEEPS_TOKENS = /^(to|float|half|bfloat16|contiguous|detach|clone|type)$/;
/** Layers that work token by token: a projector made of them keeps the number of tokens. */
const PER_TOKEN_LAYER = /^(Linear|GELU|ReLU|SiLU|Tanh|Sigmoid|Dropout|LayerNorm|RMSNorm|Identity|Sequential)$/;
/** Names a hub model gives its token table. */
const TOKEN_TABLE = new RegExp(`(^|\\.)(${INPUT_EMBEDDINGS}|embed_tokens|wte|word_embeddings|shared)$`);
/** How many assignments back one piece is followed. */
const MAX_DEPTH = 12;

export interface EmbeddedSequenceSources {
  /** The sequence length of the token ids an expression holds (a batch element of the loader), batch first. */
  idsLength(node: PyNode): number | undefined;
  /** A library vision model's tokens and the prefix tokens (class token) among them, where it is a ViT. */
  visionTokens(made: CallResultValue): { tokens: number; prefix: number } | undefined;
}

/** The tokens of the `inputs_embeds` a call of the hub model `hub` is given, where every piece of it is known. */
export function embeddedSequence(program: ProgramModel, call: PyNode, hub: Value, sources: EmbeddedSequenceSources): Located<number> | undefined {
  const given = callArguments(call).keywords.get('inputs_embeds');
  if (!given) return undefined;
  const scopeStart = (node: PyNode): number => {
    let fn = node.parent;
    while (fn && fn.type !== 'function_definition' && fn.type !== 'module') fn = fn.parent;
    return fn?.startIndex ?? 0;
  };
  const from = scopeStart(call);
  /** The right side of the last assignment to `name` before `before`, in the call's function. */
  const assignedBefore = (name: string, before: number): PyNode | undefined => {
    let found: PyNode | undefined;
    for (const assignment of treeIndex(program.root).assignments) {
      if (!assignment || assignment.startIndex < from || assignment.startIndex >= before) continue;
      if (assignment.childForFieldName('left')?.text !== name) continue;
      found = assignment.childForFieldName('right') ?? undefined;
    }
    return found;
  };
  const visionOf = (node: PyNode | null | undefined): CallResultValue | undefined => {
    // A name the program model did not evaluate (the index of a value it does not know): what the script assigned to it.
    const values = [program.valueOf(node), ...(node?.type === 'identifier' ? program.assigned.get(node.text) ?? [] : [])];
    return values.find((value): value is CallResultValue => value?.kind === 'call' && sources.visionTokens(value) !== undefined);
  };
  const tokens = (node: PyNode | null | undefined, depth: number): number | undefined => {
    if (!node || depth > MAX_DEPTH) return undefined;
    if (node.type === 'parenthesized_expression') return tokens(node.namedChildren[0], depth);
    if (node.type === 'identifier') return tokens(assignedBefore(node.text, node.startIndex), depth + 1);
    if (node.type === 'subscript') return slicedTokens(node, depth);
    if (node.type !== 'call') return undefined;
    const fn = node.childForFieldName('function');
    const { positional, keywords } = callArguments(node);
    // torch.cat([image_tokens, text_tokens], dim=1): the pieces' tokens add up.
    if (/^torch\.(cat|concat|concatenate)$/.test(fn?.text ?? '')) {
      const dim = program.valueOf(keywords.get('dim') ?? positional[1]);
      const axis = dim?.kind === 'number' ? dim.value : undefined;
      const list = positional[0];
      if ((axis !== 1 && axis !== -2) || (list?.type !== 'list' && list?.type !== 'tuple')) return undefined;
      const parts = list.namedChildren.filter((c): c is PyNode => !!c && c.type !== 'comment').map((part) => tokens(part, depth + 1));
      return parts.length > 0 && parts.every((n) => n !== undefined) ? parts.reduce((a, b) => a! + b!, 0) : undefined;
    }
    const object = fn?.type === 'attribute' ? fn.childForFieldName('object') : undefined;
    const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text ?? '' : '';
    if (object && KEEPS_TOKENS.test(method)) return tokens(object, depth + 1);
    // A vision tower run on the images: its patch tokens and class token.
    const vision = visionOf(object && /^(forward|forward_features)$/.test(method) ? object : fn);
    if (vision) return sources.visionTokens(vision)?.tokens;
    const callee = program.valueOf(fn);
    // The hub model's own token table (`llm.get_input_embeddings()(ids)`): the ids' length.
    if (callee?.kind === 'object' && callee.role === 'library-module' && callee.attrs.get('model') === hub && TOKEN_TABLE.test(callee.typeName)) {
      return positional[0] ? sources.idsLength(positional[0]) : undefined;
    }
    // A projector of the script that works token by token (linears and activations).
    if (callee?.kind === 'layer' && perToken(callee, 0)) return tokens(positional[0], depth + 1);
    return undefined;
  };
  /** `patch_tokens[:, 1:]`, `[:, vision.num_prefix_tokens:]`: the tokens a slice of the sequence axis keeps. */
  const slicedTokens = (node: PyNode, depth: number): number | undefined => {
    const value = node.childForFieldName('value');
    const index = node.namedChildren.filter((c): c is PyNode => !!c && c.id !== value?.id);
    const axis = index.length === 2 && index[0]!.type === 'slice' && index[0]!.text === ':' ? index[1] : undefined;
    const whole = tokens(value, depth + 1);
    if (!axis || axis.type !== 'slice' || whole === undefined || axis.text.split(':').length !== 2 || !axis.text.trim().endsWith(':')) return undefined;
    const start = axis.namedChildren[0];
    if (!start) return whole;
    // The tower's own count of prefix tokens (timm's `num_prefix_tokens`).
    const startObject = start.type === 'attribute' && start.childForFieldName('attribute')?.text === 'num_prefix_tokens' ? visionOf(start.childForFieldName('object')) : undefined;
    const skipped = startObject ? sources.visionTokens(startObject)?.prefix : numberAt(program, start);
    return skipped !== undefined && skipped >= 0 && skipped < whole ? whole - skipped : undefined;
  };
  const value = tokens(given, 0);
  return value !== undefined && value > 0 ? { value, line: given.startPosition.row, how: 'literal' } : undefined;
}

/**
 * A number an expression holds: its value where the program model kept one; an integer literal read as written
 * (an index the model did not evaluate, because the value sliced is not known).
 */
function numberAt(program: ProgramModel, node: PyNode): number | undefined {
  const value = program.valueOf(node);
  if (value?.kind === 'number') return value.value;
  return node.type === 'integer' && /^\d+$/.test(node.text) ? Number(node.text) : undefined;
}

/** Whether a layer (or container) of the script works token by token. */
function perToken(layer: LayerValue, depth: number): boolean {
  if (depth > 8 || !PER_TOKEN_LAYER.test(layer.type)) return false;
  return layer.children.every((child) => child.kind === 'layer' && perToken(child, depth + 1));
}
