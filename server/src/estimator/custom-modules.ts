// nn.Module classes defined in the script, counted statically: the layers assigned in __init__ (in order),
// nn.Sequential / nn.ModuleList contents and `[Block() for _ in range(n)]` repeats, pushed through NetBuilder.
// The forward order is taken to be the order of definition, which is how most scripts are written.
import type { PyNode as Node, PyTree as Tree } from './syntax';
import { NetBuilder } from './layers';
import { Bindings, keywordArguments, positionalArguments, type PyValue } from './python-values';
import type { LayerNetSpec } from './types';

/** A layer constructor call, how often it repeats, and the bindings its arguments evaluate in. */
type LayerCall = { call: Node; repeat: number; scope: Bindings };

export interface CustomModuleInfo {
  className: string;
  line: number;
  /** Builds the net for an input size (image side or sequence length). */
  build: (inputSize: number) => LayerNetSpec;
  inputKind: 'image' | 'tokens' | 'vector';
  /** Channels of the first convolution (images) or input features (vectors). */
  inputChannels: number;
}

const LAYER_NAMES = new Set(['Linear', 'Conv1d', 'Conv2d', 'Embedding', 'LayerNorm', 'BatchNorm1d', 'BatchNorm2d', 'LSTM', 'GRU',
  'MultiheadAttention', 'TransformerEncoderLayer', 'TransformerDecoderLayer', 'TransformerEncoder', 'TransformerDecoder',
  'Sequential', 'ModuleList', 'ReLU', 'GELU', 'SiLU', 'Tanh', 'Sigmoid', 'Dropout', 'MaxPool2d', 'AdaptiveAvgPool2d',
  'AvgPool2d', 'Flatten', 'LeakyReLU', 'ReLU6', 'Hardswish', 'Mish', 'ELU', 'GroupNorm']);

function calleeName(call: Node): string {
  const fn = call.childForFieldName('function');
  if (!fn) return '';
  return fn.type === 'attribute' ? fn.childForFieldName('attribute')?.text ?? '' : fn.text;
}

export function findCustomModules(tree: Tree, bindings: Bindings): Map<string, CustomModuleInfo> {
  const classes = new Map<string, Node>();
  for (const cls of tree.rootNode.descendantsOfType('class_definition')) {
    if (!cls) continue;
    const supers = cls.childForFieldName('superclasses')?.text ?? '';
    if (/Module\b/.test(supers)) classes.set(cls.childForFieldName('name')?.text ?? '', cls);
  }
  const result = new Map<string, CustomModuleInfo>();
  for (const [name, cls] of classes) {
    const layers = collectLayers(cls, classes, bindings, 0);
    if (layers.length === 0) continue;
    const first = firstShapeLayer(layers, classes, bindings);
    result.set(name, {
      className: name,
      line: cls.startPosition.row,
      inputKind: first.kind,
      inputChannels: first.channels,
      build: (size: number) => buildNet(layers, classes, bindings, first, size),
    });
  }
  return result;
}

/** The layer constructor calls of a class's __init__, expanded through nested custom classes. */
function collectLayers(cls: Node, classes: Map<string, Node>, bindings: Bindings, depth: number): LayerCall[] {
  if (depth > 6) return [];
  const init = cls.descendantsOfType('function_definition').find((f) => f?.childForFieldName('name')?.text === '__init__');
  if (!init) return [];
  const out: LayerCall[] = [];
  for (const assignment of init.descendantsOfType('assignment')) {
    if (!assignment) continue;
    const left = assignment.childForFieldName('left');
    const right = assignment.childForFieldName('right');
    if (!left?.text.startsWith('self.') || !right) continue;
    collectFromExpression(right, 1, out, classes, bindings);
  }
  return out;
}

function collectFromExpression(expr: Node, repeat: number, out: LayerCall[], classes: Map<string, Node>, bindings: Bindings): void {
  if (expr.type === 'call') {
    const name = calleeName(expr);
    if (name === 'Sequential' || name === 'ModuleList') {
      for (const arg of positionalArguments(expr)) collectFromExpression(arg, repeat, out, classes, bindings);
      return;
    }
    if (LAYER_NAMES.has(name) || classes.has(name)) out.push({ call: expr, repeat, scope: bindings });
    return;
  }
  if (expr.type === 'list' || expr.type === 'tuple') {
    for (const item of expr.namedChildren) if (item) collectFromExpression(item, repeat, out, classes, bindings);
    return;
  }
  if (expr.type === 'list_comprehension' || expr.type === 'generator_expression') {
    // [Block(d) for _ in range(n)]: the body repeated n times.
    const body = expr.childForFieldName('body');
    const forClause = expr.namedChildren.find((c) => c?.type === 'for_in_clause');
    const rangeCall = forClause?.childForFieldName('right');
    let times = 1;
    if (rangeCall?.type === 'call' && calleeName(rangeCall) === 'range') {
      const args = positionalArguments(rangeCall).map((a) => bindings.evaluate(a));
      const [start, stop] = args.length >= 2 ? args : [0, args[0]];
      if (typeof start === 'number' && typeof stop === 'number') times = Math.max(0, stop - start);
    }
    if (body) collectFromExpression(body, repeat * times, out, classes, bindings);
    return;
  }
  if (expr.type === 'list_splat' || expr.type === 'parenthesized_expression') {
    const inner = expr.namedChildren[0];
    if (inner) collectFromExpression(inner, repeat, out, classes, bindings);
  }
}

function num(node: Node | undefined, bindings: Bindings, fallback: number): number {
  const v = node ? bindings.evaluate(node) : undefined;
  if (typeof v === 'number') return v;
  if (Array.isArray(v) && typeof v[0] === 'number') return v[0];
  return fallback;
}

function arg(call: Node, index: number, keyword: string): Node | undefined {
  return keywordArguments(call).get(keyword) ?? positionalArguments(call)[index];
}

function firstShapeLayer(layers: LayerCall[], classes: Map<string, Node>, bindings: Bindings): { kind: 'image' | 'tokens' | 'vector'; channels: number } {
  for (const { call } of layers) {
    const name = calleeName(call);
    if (name === 'Conv2d') return { kind: 'image', channels: num(arg(call, 0, 'in_channels'), bindings, 3) };
    if (name === 'Embedding') return { kind: 'tokens', channels: 1 };
    if (name === 'Conv1d' || name === 'LSTM' || name === 'GRU') return { kind: 'tokens', channels: num(arg(call, 0, name === 'Conv1d' ? 'in_channels' : 'input_size'), bindings, 1) };
    if (name === 'Linear') return { kind: 'vector', channels: num(arg(call, 0, 'in_features'), bindings, 1) };
    const nested = classes.get(name);
    if (nested) return firstShapeLayer(collectLayers(nested, classes, bindings, 1), classes, bindings);
  }
  return { kind: 'vector', channels: 1 };
}

function buildNet(layers: LayerCall[], classes: Map<string, Node>, bindings: Bindings,
  first: { kind: 'image' | 'tokens' | 'vector'; channels: number }, size: number): LayerNetSpec {
  const input: LayerNetSpec['input'] = first.kind === 'image' ? { kind: 'image', channels: first.channels, size }
    : first.kind === 'tokens' ? { kind: 'tokens', seqLen: size } : { kind: 'vector', features: first.channels };
  const net = new NetBuilder(input);
  if (first.kind === 'tokens' && first.channels > 1) net.embedding(0, first.channels);
  applyLayers(net, layers, classes, bindings, 0);
  return net.build(first.kind !== 'vector');
}

function applyLayers(net: NetBuilder, layers: LayerCall[], classes: Map<string, Node>, bindings: Bindings, depth: number): void {
  for (const { call, repeat, scope } of layers) {
    for (let r = 0; r < repeat; r++) {
      if (depth === 0 && repeat > 1) net.beginBlock();
      applyLayer(net, call, classes, scope, depth);
      if (depth === 0 && repeat > 1) net.endBlock();
    }
  }
}

function applyLayer(net: NetBuilder, call: Node, classes: Map<string, Node>, bindings: Bindings, depth: number): void {
  const name = calleeName(call);
  const kw = keywordArguments(call);
  const flag = (key: string, fallback: boolean): boolean => {
    const v = kw.has(key) ? bindings.evaluate(kw.get(key)) : undefined;
    return typeof v === 'boolean' ? v : fallback;
  };
  switch (name) {
    case 'Linear':
      net.linear(num(arg(call, 1, 'out_features'), bindings, 1), flag('bias', true), num(arg(call, 0, 'in_features'), bindings, net.channels));
      return;
    case 'Conv2d':
    case 'Conv1d': {
      const out = num(arg(call, 1, 'out_channels'), bindings, 1);
      const kernel = num(arg(call, 2, 'kernel_size'), bindings, 3);
      const stride = num(arg(call, 3, 'stride'), bindings, 1);
      const paddingValue = bindings.evaluate(arg(call, 4, 'padding'));
      const padding = typeof paddingValue === 'number' ? paddingValue : paddingValue === 'same' ? Math.floor(kernel / 2) : 0;
      const groups = num(kw.get('groups'), bindings, 1);
      if (name === 'Conv1d') net.conv1d(out, kernel, stride, flag('bias', true), padding);
      else net.conv(out, kernel, stride, groups, flag('bias', true), padding);
      return;
    }
    case 'Embedding':
      net.embedding(num(arg(call, 0, 'num_embeddings'), bindings, 1), num(arg(call, 1, 'embedding_dim'), bindings, 1));
      return;
    case 'BatchNorm1d':
    case 'BatchNorm2d':
      net.batchNorm();
      return;
    case 'LayerNorm':
    case 'GroupNorm':
      net.layerNorm();
      return;
    case 'ReLU6':
      net.relu6();
      return;
    case 'ReLU':
    case 'LeakyReLU':
      net.relu(flag('inplace', false));
      return;
    case 'Sigmoid':
    case 'Tanh':
      net.sigmoid();
      return;
    case 'GELU':
    case 'SiLU':
    case 'Hardswish':
    case 'Mish':
    case 'ELU':
      net.activation();
      return;
    case 'Dropout':
      net.dropout(num(arg(call, 0, 'p'), bindings, 0.5));
      return;
    case 'MaxPool2d': {
      const kernel = num(arg(call, 0, 'kernel_size'), bindings, 2);
      net.maxPool(kernel, num(arg(call, 1, 'stride'), bindings, kernel), num(arg(call, 2, 'padding'), bindings, 0));
      return;
    }
    case 'AvgPool2d':
    case 'AdaptiveAvgPool2d':
      net.globalPool();
      return;
    case 'Flatten':
      return;
    case 'LSTM':
    case 'GRU':
      net.recurrent(num(arg(call, 1, 'hidden_size'), bindings, 1), num(arg(call, 2, 'num_layers'), bindings, 1),
        flag('bidirectional', false), name === 'LSTM' ? 4 : 3, num(arg(call, 0, 'input_size'), bindings, net.channels));
      return;
    case 'MultiheadAttention':
      net.multiheadAttention(num(arg(call, 0, 'embed_dim'), bindings, net.channels), num(arg(call, 1, 'num_heads'), bindings, 1));
      return;
    case 'TransformerEncoderLayer':
    case 'TransformerDecoderLayer':
      net.transformerLayer(num(arg(call, 0, 'd_model'), bindings, net.channels),
        num(arg(call, 2, 'dim_feedforward'), bindings, 2048), num(arg(call, 3, 'dropout'), bindings, 0.1), name === 'TransformerDecoderLayer');
      return;
    case 'TransformerEncoder':
    case 'TransformerDecoder': {
      // TransformerEncoder(layer, num_layers): the layer variable is bound to a TransformerEncoderLayer(...) call.
      const layerArg = arg(call, 0, name === 'TransformerEncoder' ? 'encoder_layer' : 'decoder_layer');
      const count = num(arg(call, 1, 'num_layers'), bindings, 1);
      const layerCall = layerArg?.type === 'call' ? layerArg : findBoundCall(layerArg, call);
      if (layerCall) for (let i = 0; i < count; i++) applyLayer(net, layerCall, classes, bindings, depth + 1);
      return;
    }
    default: {
      const cls = classes.get(name);
      if (cls && depth < 6) {
        const scope = scopeFor(cls, call, bindings);
        applyLayers(net, collectLayers(cls, classes, scope, depth + 1), classes, scope, depth + 1);
      }
    }
  }
}

/** Binds a class's __init__ parameters to one instantiation's arguments (defaults where none is passed). */
function scopeFor(cls: Node, call: Node, bindings: Bindings): Bindings {
  const init = cls.descendantsOfType('function_definition').find((f) => f?.childForFieldName('name')?.text === '__init__');
  const params = init?.childForFieldName('parameters')?.namedChildren.filter((p): p is Node => p !== null) ?? [];
  const values = new Map<string, PyValue>();
  const positional = positionalArguments(call);
  const keywords = keywordArguments(call);
  let index = 0;
  for (const param of params) {
    const nameNode = param.type === 'identifier' ? param : param.childForFieldName('name') ?? param.namedChildren[0];
    const name = nameNode?.text;
    if (!name || name === 'self' || param.type === 'list_splat_pattern' || param.type === 'dictionary_splat_pattern') continue;
    const given = keywords.get(name) ?? positional[index++];
    const value = given ? bindings.evaluate(given) : bindings.evaluate(param.childForFieldName('value'));
    if (value !== undefined) values.set(name, value);
  }
  return bindings.child(values, call.startPosition.row);
}

/** The call an identifier was assigned from, searching the enclosing function. */
function findBoundCall(identifier: Node | undefined, near: Node): Node | undefined {
  if (!identifier) return undefined;
  let scope: Node | null = near.parent;
  while (scope && scope.type !== 'function_definition' && scope.type !== 'module') scope = scope.parent;
  for (const assignment of scope?.descendantsOfType('assignment') ?? []) {
    const left = assignment?.childForFieldName('left');
    const right = assignment?.childForFieldName('right');
    if (left && right?.type === 'call' && (left.text === identifier.text || left.text === `self.${identifier.text}`)) return right;
  }
  return undefined;
}

/** A module-level `model = nn.Sequential(...)`, built like a class whose __init__ holds that one expression. */
export function sequentialModule(call: Node, tree: Tree, bindings: Bindings): CustomModuleInfo | undefined {
  const classes = new Map<string, Node>();
  for (const cls of tree.rootNode.descendantsOfType('class_definition')) {
    if (cls && /Module\b/.test(cls.childForFieldName('superclasses')?.text ?? '')) classes.set(cls.childForFieldName('name')?.text ?? '', cls);
  }
  const layers: LayerCall[] = [];
  collectFromExpression(call, 1, layers, classes, bindings);
  if (layers.length === 0) return undefined;
  const first = firstShapeLayer(layers, classes, bindings);
  return {
    className: 'nn.Sequential',
    line: call.startPosition.row,
    inputKind: first.kind,
    inputChannels: first.channels,
    build: (size: number) => buildNet(layers, classes, bindings, first, size),
  };
}
