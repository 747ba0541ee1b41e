// torchvision.ops.FeaturePyramidNetwork(in_channels_list, out_channels), as the nn layers it is made of: per input
// map a 1x1 lateral convolution to out_channels and a 3x3 output convolution, both with a bias and without norm or
// activation (its Conv2dNormActivation blocks, given norm_layer=None and activation_layer=None).
import type { LayerValue, Value } from '../engine/program/values';
import { numberOf } from '../engine/program/values';

export interface FeaturePyramidLayers {
  /** The lateral 1x1 convolutions, one per input map, shallowest first. */
  lateral: LayerValue[];
  /** The 3x3 convolutions each merged map goes through. */
  output: LayerValue[];
  /** `extra_blocks=LastLevelMaxPool()`: one more map, the last output max-pooled to half its side. */
  maxPoolLevel: boolean;
}

const made = new WeakMap<LayerValue, FeaturePyramidLayers | null>();

/** The pyramid's convolutions; undefined where its channels are not numbers the script determines. */
export function featurePyramidLayers(pyramid: LayerValue): FeaturePyramidLayers | undefined {
  if (pyramid.type !== 'FeaturePyramidNetwork') return undefined;
  const known = made.get(pyramid);
  if (known !== undefined) return known ?? undefined;
  const layers = build(pyramid);
  made.set(pyramid, layers ?? null);
  return layers;
}

function build(pyramid: LayerValue): FeaturePyramidLayers | undefined {
  const list = pyramid.kwargs.get('in_channels_list') ?? pyramid.args[0];
  const out = numberOf(pyramid.kwargs.get('out_channels') ?? pyramid.args[1]);
  const inputs = list?.kind === 'list' ? list.items.map((item) => numberOf(item)) : [];
  if (out === undefined || inputs.length === 0 || inputs.some((c) => c === undefined || c === 0)) return undefined;
  // Only the parameterless LastLevelMaxPool is sized; LastLevelP6P7 (RetinaNet's) has convolutions of its own.
  const extra = pyramid.kwargs.get('extra_blocks') ?? pyramid.args[2];
  const maxPoolLevel = extra?.kind === 'call' && /(^|\.)LastLevelMaxPool$/.test(extra.path);
  if (extra && extra.kind !== 'none' && !maxPoolLevel) return undefined;
  // A norm_layer puts a norm after each convolution (and drops their biases): not sized here.
  const norm = pyramid.kwargs.get('norm_layer') ?? pyramid.args[3];
  if (norm && norm.kind !== 'none') return undefined;
  const conv = (inChannels: number, kernel: number): LayerValue => ({
    kind: 'layer', type: 'Conv2d', line: pyramid.line, children: [],
    args: [number(inChannels), number(out), number(kernel)], kwargs: new Map([['padding', number(Math.floor(kernel / 2))]]),
  });
  return { lateral: inputs.map((c) => conv(c!, 1)), output: inputs.map(() => conv(out, 3)), maxPoolLevel };
}

function number(value: number): Value {
  return { kind: 'number', value };
}
