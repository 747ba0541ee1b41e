// torch.nn's lazy layers (LazyLinear, LazyConv2d, LazyBatchNorm2d, ...) take their input size from the first tensor
// they are given: as the layer they become then, with that size as their first argument (each lazy class takes its
// eager class's arguments without the first).
import type { LayerValue } from '../engine/program/values';

const LAZY = /^Lazy(Linear|Conv[123]d|ConvTranspose[123]d|BatchNorm[123]d|InstanceNorm[123]d)$/;

/** The eager layer each lazy layer became, by the input size a forward (or the layer walk) gave it. */
const materialized = new WeakMap<LayerValue, LayerValue>();

export function isLazyLayer(layer: LayerValue): boolean {
  return LAZY.test(layer.type);
}

/**
 * The eager layer a lazy one becomes on an input of `inputSize` features or channels. `authoritative`: the size
 * comes from a traced forward (it replaces one the layer walk inferred); else it is kept only where none is known.
 */
export function materializeLazy(layer: LayerValue, inputSize: number, authoritative: boolean): LayerValue | undefined {
  const eager = LAZY.exec(layer.type)?.[1];
  if (!eager || !(inputSize > 0)) return undefined;
  const known = materialized.get(layer);
  if (known && (!authoritative || eager === known.type && known.args[0]?.kind === 'number' && known.args[0].value === inputSize)) return known;
  const made: LayerValue = { ...layer, type: eager, args: [{ kind: 'number', value: inputSize }, ...layer.args] };
  materialized.set(layer, made);
  return made;
}

/** The eager layer a lazy layer became, where a forward or the walk gave it an input. */
export function materializedLazy(layer: LayerValue): LayerValue | undefined {
  return materialized.get(layer);
}
