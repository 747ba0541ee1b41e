// Vision models a library builds (`timm.create_model(name, ...)`, `torchvision.models.resnet50(...)`), read from the
// call the program model made: which catalog model, how many classes its head has, the width of its features.
import type { CallResultValue, Value } from '../engine/program/values';
import { findVisionModel, type VisionModel } from './catalog/vision';
import type { LayerNetSpec } from './types';

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

/** A string or number argument (python-values' toPy reads more, but imports this module's users). */
function plain(value: Value | undefined): string | number | undefined {
  return value?.kind === 'string' || value?.kind === 'number' ? value.value : undefined;
}
