// Vision models a library builds (`timm.create_model(name, ...)`, `torchvision.models.resnet50(...)`), read from the
// call the program model made: which catalog model, how many classes its head has, the width of its features.
import type { CallResultValue, Value } from '../engine/program/values';
import { findVisionModel, type VisionModel } from './catalog/vision';
import { HEAD_PART } from './layers';
import type { LayerNetSpec, LayerPart } from './types';

export const TORCHVISION_GET_MODEL = /^torchvision\.models\.get_model$/;
export const TORCHVISION_MODEL = /^torchvision\.models\.(?:[a-z_]+\.)?([a-z0-9_]+)$/;
export const TORCHVISION_NOT_A_MODEL = /^(get_model|get_weight|list_models)$/;
/** The attributes a library model's classifier is under (torchvision's `fc` / `classifier`, timm's `head` / `fc`). */
const CLASSIFIER = ['fc', 'classifier', 'head', 'last_linear'];

/** timm names may carry a pretrained tag (`vit_base_patch16_224.augreg_in21k`): the architecture is before the dot. */
export function stripTimmTag(name: string): string {
  return name.replace(/^timm\//, '').split('.')[0]!;
}

/** The catalog model a library call builds, by the name it is given. */
export function libraryVisionCall(made: CallResultValue): { name: string; source: 'timm' | 'torchvision'; vision: VisionModel } | undefined {
  const timm = made.path === 'timm.create_model';
  const argument = (index: number, key: string): string | number | undefined => plain(made.kwargs.get(key) ?? made.args[index]);
  const named = timm ? argument(0, 'model_name') : TORCHVISION_GET_MODEL.test(made.path) ? argument(0, 'name') : TORCHVISION_MODEL.exec(made.path)?.[1];
  if (typeof named !== 'string' || TORCHVISION_NOT_A_MODEL.test(named)) return undefined;
  const vision = findVisionModel(timm ? stripTimmTag(named) : named);
  return vision ? { name: named, source: timm ? 'timm' : 'torchvision', vision } : undefined;
}

/** A library CNN used as a module's backbone: its layers at an input size, its head's classes, its features' width. */
export interface LibraryBackbone {
  name: string;
  /** Classes of its head: 0 where it has none (`num_classes=0`, or the script set its classifier to nn.Identity()). */
  classes: number;
  /** Channels of its last feature map (what its classifier reads). */
  features: number;
  /** `global_pool=""`: forward returns the feature map, not pooled features. */
  unpooled: boolean;
  build: (imageSize: number) => LayerNetSpec;
}

export function libraryBackbone(made: CallResultValue): LibraryBackbone | undefined {
  const found = libraryVisionCall(made);
  if (!found) return undefined;
  const probe = found.vision.build(224, 1);
  if (probe.kind !== 'layers') return undefined;
  const features = probe.parameters - (found.vision.build(224, 0) as LayerNetSpec).parameters - 1;
  const given = plain(made.kwargs.get('num_classes'));
  let classes = typeof given === 'number' ? given : found.vision.segmentation ? 21 : 1000;
  // `backbone.fc = nn.Identity()`: the head is gone, forward returns the pooled features.
  if (CLASSIFIER.some((name) => { const head = made.attrs?.get(name); return head?.kind === 'layer' && head.type === 'Identity'; })) classes = 0;
  const build = (imageSize: number): LayerNetSpec => found.vision.build(imageSize, classes) as LayerNetSpec;
  return { name: found.name, classes, features, unpooled: plain(made.kwargs.get('global_pool')) === '', build };
}

/** A requires_grad call on a library model or one of its submodules, or a submodule the script replaced (interpreter). */
export interface LibraryFreeze {
  path: string;
  frozen: boolean;
  replaced?: Value;
}

/** Attribute names a classifier head goes by, in torchvision (`fc`, `classifier`, `heads`) and timm (`head`). */
const HEAD_ATTRIBUTE = /^(fc|classifier|head|heads|last_linear)$/;

/** The parts of a layer net a submodule path names (see LayerNetSpec.parts); undefined where it names none. */
function partsNamed(parts: readonly LayerPart[], path: string): number[] | undefined {
  if (path === '') return parts.map((_part, i) => i);
  const covered: number[] = [];
  parts.forEach((part, i) => {
    if (part.name !== path && !part.name.startsWith(`${path}.`)) return;
    covered.push(i);
    // The classifier head lies inside the part before it (`fc`, `classifier`).
    for (let j = i + 1; parts[j]?.name === HEAD_PART; j++) covered.push(j);
  });
  if (covered.length > 0) return covered;
  // A path into the head's own submodule (`classifier.1`, `heads.head`, timm's `head.fc`): the head.
  const head = parts.findIndex((part) => part.name === HEAD_PART);
  return head >= 0 && HEAD_ATTRIBUTE.test(path.split('.')[0]!) ? [head] : undefined;
}

/**
 * Which parts of a library vision model the script's requires_grad calls and head replacements, run in order,
 * leave trainable: the first part with trainable parameters (a frozen prefix before it records nothing) and the
 * parameters frozen. Undefined where a path names a part the net does not have (a block inside a stage).
 */
export function visionFreezing(spec: LayerNetSpec, freezes: readonly LibraryFreeze[]): { trainableFrom: number; frozenParameters: number } | undefined {
  const parts = spec.parts ?? [];
  if (parts.length === 0) return undefined;
  const frozen = parts.map(() => false);
  for (const freeze of freezes) {
    const covered = partsNamed(parts, freeze.path);
    if (!covered) return undefined;
    for (const i of covered) frozen[i] = freeze.frozen;
  }
  const parameters = parts.map((part, i) => (parts[i + 1]?.parametersBefore ?? spec.parameters) - part.parametersBefore);
  // Parts without parameters (a pooling layer) neither start nor end the frozen prefix.
  let trainableFrom = parts.findIndex((_part, i) => !frozen[i] && parameters[i]! > 0);
  if (trainableFrom < 0) trainableFrom = parts.length;
  // No parameter before it is frozen: no prefix.
  if (parameters.slice(0, trainableFrom).every((count, i) => count === 0 || !frozen[i])) trainableFrom = 0;
  const frozenParameters = parameters.reduce((sum, count, i) => sum + (frozen[i] ? count : 0), 0);
  return { trainableFrom, frozenParameters };
}

/** Parameters of the parts a submodule path names (`fc`, `layer4`, `features`); undefined where it names none. */
export function partParameters(spec: LayerNetSpec, path: string): number | undefined {
  const parts = spec.parts ?? [];
  const covered = partsNamed(parts, path);
  return covered?.reduce((sum, i) => sum + (parts[i + 1]?.parametersBefore ?? spec.parameters) - parts[i]!.parametersBefore, 0);
}

/** The classes of the last new head the script put on a library vision model (`model.fc = nn.Linear(2048, 10)`). */
export function replacedHeadClasses(spec: LayerNetSpec, freezes: readonly LibraryFreeze[]): number | undefined {
  const parts = spec.parts ?? [];
  const head = parts.findIndex((part) => part.name === HEAD_PART);
  let classes: number | undefined;
  for (const { path, replaced } of freezes) {
    if (!replaced || head < 0 || !partsNamed(parts, path)?.includes(head)) continue;
    // nn.Linear(in_features, out_features), or a Sequential ending in one.
    const layer = replaced.kind === 'layer' && replaced.type === 'Sequential' ? replaced.children[replaced.children.length - 1] : replaced;
    const out = layer?.kind === 'layer' && layer.type === 'Linear' ? layer.kwargs.get('out_features') ?? layer.args[1] : undefined;
    classes = out?.kind === 'number' && Number.isInteger(out.value) && out.value > 0 ? out.value : undefined;
  }
  return classes;
}

/** A string or number argument (python-values' toPy reads more, but imports this module's users). */
function plain(value: Value | undefined): string | number | undefined {
  return value?.kind === 'string' || value?.kind === 'number' ? value.value : undefined;
}
