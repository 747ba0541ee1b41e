// Vision models a library builds (`timm.create_model(name, ...)`, `torchvision.models.resnet50(...)`), read from the
// call the program model made: which catalog model, how many classes its head has, the width of its features.
import type { CallResultValue, LayerValue, Value } from '../engine/program/values';
import { CLASSIFIER_ATTRIBUTE } from '../engine/program/interpreter';
import { findVideoModel, findVisionModel, type ResNetStem, type VisionModel } from './catalog/vision';
import { findCatalogModel } from './catalog/models';
import { HEAD_PART } from './layers';
import type { LayerNetSpec, LayerPart } from './types';

export const TORCHVISION_GET_MODEL = /^torchvision\.models\.get_model$/;
export const TORCHVISION_MODEL = /^torchvision\.models\.(?:[a-z_]+\.)?([a-z0-9_]+)$/;
export const TORCHVISION_NOT_A_MODEL = /^(get_model|get_weight|list_models)$/;

/** timm names may carry a pretrained tag (`vit_base_patch16_224.augreg_in21k`): the architecture is before the dot. */
export function stripTimmTag(name: string): string {
  return name.replace(/^timm\//, '').split('.')[0]!;
}

/**
 * The classes a timm pretrained tag's config gives the head where the script names none: Google's ImageNet-21k
 * checkpoints (`resnetv2_50x1_bit.goog_in21k`, `vit_base_patch16_224.augreg_in21k`) have 21,843; Meta's ImageNet-22k
 * ones (`convnext_base.fb_in22k`) 21,841. Undefined for any other tag (ImageNet-1k's 1000, the builder's default).
 */
export function timmTagClasses(name: string): number | undefined {
  const tag = name.replace(/^timm\//, '').split('.')[1];
  if (tag === 'goog_in21k' || tag === 'augreg_in21k') return 21_843;
  if (tag === 'fb_in22k') return 21_841;
  return undefined;
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
  /**
   * timm's `features_only=True`: forward returns a list of feature maps, the outputs of these parts (shallowest
   * first, as `out_indices` picks them), and the model holds only the parts up to the last of them.
   */
  featureParts?: string[];
  /** create_feature_extractor's names for those maps: its forward returns a dict under them (a list without). */
  featureNames?: string[];
  /** Where the script named the model by timm (its submodules then go by timm's names: `act1`, `global_pool`). */
  timm: boolean;
  build: (imageSize: number) => LayerNetSpec;
  /** A torchvision video model: built for a clip of `frames` (build() is at the catalog's clip length). */
  buildClip?: (frames: number, imageSize: number) => LayerNetSpec;
}

export function libraryBackbone(made: CallResultValue): LibraryBackbone | undefined {
  if (FEATURE_EXTRACTOR.test(made.path)) return featureExtractor(made);
  const found = libraryVisionCall(made);
  if (!found) return videoBackbone(made);
  const probe = found.vision.build(224, 1);
  if (probe.kind !== 'layers') return undefined;
  const features = probe.parameters - (found.vision.build(224, 0) as LayerNetSpec).parameters - 1;
  const given = plain(made.kwargs.get('num_classes'));
  let classes = typeof given === 'number' ? given : found.vision.segmentation ? 21 : 1000;
  // `backbone.fc = nn.Identity()`: the head is gone, forward returns the pooled features.
  if ([...(made.attrs ?? [])].some(([name, head]) => CLASSIFIER_ATTRIBUTE.test(name) && head.kind === 'layer' && head.type === 'Identity')) classes = 0;
  const dilation = booleans(made.kwargs.get('replace_stride_with_dilation'));
  // Dilation changes every later feature map's size: given but not determined, the model's activations are not known.
  if (made.kwargs.has('replace_stride_with_dilation') && !dilation && made.kwargs.get('replace_stride_with_dilation')?.kind !== 'none') return undefined;
  const options = dilation ? { dilation } : {};
  const build = (imageSize: number): LayerNetSpec => found.vision.build(imageSize, classes, options) as LayerNetSpec;
  const featureParts = made.kwargs.get('features_only')?.kind === 'bool' && (made.kwargs.get('features_only') as { value: boolean }).value
    ? selectedFeatures(found.vision.features, made.kwargs.get('out_indices')) : undefined;
  if (made.kwargs.has('features_only') && !featureParts && plain(made.kwargs.get('features_only')) !== undefined) return undefined;
  return { name: found.name, classes, features, unpooled: plain(made.kwargs.get('global_pool')) === '', build, timm: found.source === 'timm',
    ...(featureParts ? { featureParts } : {}) };
}

/**
 * A torchvision video classifier (`torchvision.models.video.s3d(num_classes=174)`) held by a module of the script: its
 * catalog build for the clip forward is given (frames x side), 400 classes (Kinetics) unless told.
 */
function videoBackbone(made: CallResultValue): LibraryBackbone | undefined {
  const name = /^torchvision\.models\.video\.([a-z0-9_]+)$/.exec(made.path)?.[1];
  const video = name ? findVideoModel(name) : undefined;
  if (!video || made.kwargs.has('features_only')) return undefined;
  const given = plain(made.kwargs.get('num_classes'));
  const classes = typeof given === 'number' ? given : 400;
  const buildClip = (frames: number, imageSize: number): LayerNetSpec => video.build(frames)(imageSize, classes);
  // The classifier's input width: one class more adds a weight row of it and a bias.
  const features = video.build(video.frames)(224, 1).parameters - video.build(video.frames)(224, 0).parameters - 1;
  return { name: name!, classes, features, unpooled: false, timm: false,
    build: (imageSize) => buildClip(video.frames, imageSize), buildClip };
}

/** torchvision.models.feature_extraction.create_feature_extractor(model, return_nodes=...). */
export const FEATURE_EXTRACTOR = /^torchvision\.models\.feature_extraction\.create_feature_extractor$/;

/**
 * A library CNN cut into a feature extractor by create_feature_extractor: the model's parts up to the last node it
 * returns (the graph module keeps no other), whose forward returns a dict of the nodes' maps under the names
 * `return_nodes` gives them. Undefined where a node is no part the catalog names (a layer inside a block).
 */
function featureExtractor(made: CallResultValue): LibraryBackbone | undefined {
  const model = made.args[0] ?? made.kwargs.get('model');
  const base = model?.kind === 'call' && !FEATURE_EXTRACTOR.test(model.path) ? libraryBackbone(model) : undefined;
  const nodes = made.kwargs.get('return_nodes') ?? made.args[1];
  const named: Array<[string, string]> | undefined = nodes?.kind === 'dict'
    ? [...nodes.entries].map(([node, name]): [string, string] => [node, name.kind === 'string' ? name.value : ''])
    : nodes?.kind === 'list' ? nodes.items.map((item): [string, string] => (item.kind === 'string' ? [item.value, item.value] : ['', ''])) : undefined;
  if (!base || base.featureParts || !named || named.length === 0 || named.some(([node, name]) => node === '' || name === '')) return undefined;
  const parts = base.build(224).parts ?? [];
  const at = named.map(([node]) => partsNamed(parts, node));
  if (at.some((covered, i) => !covered || (i > 0 && covered[0]! <= at[i - 1]![0]!))) return undefined;
  return { ...base, featureParts: named.map(([node]) => node), featureNames: named.map(([, name]) => name) };
}

/** A library vision transformer's token width (timm's `num_features` / `embed_dim` of a ViT): its hidden size. */
export function libraryTokenWidth(made: CallResultValue): number | undefined {
  const spec = libraryVisionCall(made)?.vision.build(224, 0);
  return spec?.kind === 'transformer' ? spec.hidden : undefined;
}

/** The sizes of a hub checkpoint's config the catalog knows, by the config's own field names. */
const CONFIG_SIZES: Record<string, (spec: { hidden: number; vocab: number; layers: number; heads: number; intermediate: number }) => number> = {
  hidden_size: (spec) => spec.hidden, vocab_size: (spec) => spec.vocab, num_hidden_layers: (spec) => spec.layers,
  num_attention_heads: (spec) => spec.heads, intermediate_size: (spec) => spec.intermediate,
};

/** A size in the config of a model `from_pretrained` loads (`llm.config.hidden_size`), where the catalog knows the checkpoint. */
export function hubConfigValue(made: CallResultValue, name: string): number | undefined {
  const size = CONFIG_SIZES[name];
  if (!size || !/\.from_pretrained$/.test(made.path)) return undefined;
  const id = made.args[0] ?? made.kwargs.get('pretrained_model_name_or_path');
  const spec = id?.kind === 'string' ? findCatalogModel(id.value)?.spec : undefined;
  return spec ? size(spec) : undefined;
}

/** The feature parts `out_indices` picks (all of them where absent); undefined where it names one the net lacks. */
function selectedFeatures(all: string[] | undefined, indices: Value | undefined): string[] | undefined {
  if (!all) return undefined;
  if (!indices || indices.kind === 'none') return all;
  const picked = indices.kind === 'list' ? indices.items.map((item) => (item.kind === 'number' ? all.at(item.value) : undefined)) : [];
  return picked.length > 0 && picked.every((name): name is string => name !== undefined) ? picked : undefined;
}

/** A list of booleans (`replace_stride_with_dilation=[False, True, True]`). */
function booleans(value: Value | undefined): boolean[] | undefined {
  if (value?.kind !== 'list') return undefined;
  const flags = value.items.map((item) => (item.kind === 'bool' ? item.value : undefined));
  return flags.every((flag): flag is boolean => flag !== undefined) ? flags : undefined;
}

/** timm's names for the ResNet submodules torchvision names otherwise (the catalog's parts go by torchvision's). */
const TIMM_NAMES: Record<string, string> = { relu: 'act1', avgpool: 'global_pool' };
const FROM_TIMM_NAMES: Record<string, string> = Object.fromEntries(Object.entries(TIMM_NAMES).map(([a, b]) => [b, a]));

/**
 * Part indices of the net that a submodule path of a library vision model covers, contiguous (`layer3`; `fc` with
 * the classifier head in it; `features.3`): undefined where the path names no part (a block inside a stage).
 */
function coveredParts(backbone: LibraryBackbone, spec: LayerNetSpec, path: string): number[] | undefined {
  const first = path.split('.')[0]!;
  const named = [FROM_TIMM_NAMES[first] ?? first, ...path.split('.').slice(1)].join('.');
  const parts = spec.parts ?? [];
  // A features_only model as a whole: its parts up to its last feature map.
  const lastFeature = backbone.featureParts?.[backbone.featureParts.length - 1];
  const upTo = lastFeature !== undefined ? partsNamed(parts, lastFeature) : undefined;
  const covered = path !== '' ? partsNamed(parts, named) : upTo ? parts.map((_part, i) => i).slice(0, upTo[upTo.length - 1]! + 1) : undefined;
  if (!covered || covered.some((index, i) => i > 0 && index !== covered[i - 1]! + 1)) return undefined;
  // A features_only model holds nothing after its last feature map.
  const last = backbone.featureParts ? partsNamed(spec.parts ?? [], backbone.featureParts[backbone.featureParts.length - 1]!) : undefined;
  if (last && covered[0]! > last[last.length - 1]!) return undefined;
  return covered;
}

/** The children `children()` yields of a library vision model's submodule (`''`: of the model), by their paths. */
export function libraryChildren(made: CallResultValue, path: string): string[] | undefined {
  const backbone = libraryBackbone(made);
  const spec = backbone?.build(224);
  // timm's features_only model renames its modules; create_feature_extractor's keeps the model's, up to its last node.
  if (!backbone || !spec?.parts || (backbone.featureParts && !backbone.featureNames)) return undefined;
  const prefix = path === '' ? '' : `${path}.`;
  const children: string[] = [];
  const kept = backbone.featureParts ? coveredParts(backbone, spec, '') ?? [] : spec.parts.map((_part, i) => i);
  for (const part of kept.map((i) => spec.parts![i]!)) {
    if (part.name.startsWith('(') || !part.name.startsWith(prefix)) continue;
    const child = `${prefix}${part.name.slice(prefix.length).split('.')[0]!}`;
    const named = backbone.timm && path === '' ? TIMM_NAMES[child] ?? child : child;
    if (children[children.length - 1] !== named) children.push(named);
  }
  // A submodule the catalog builds as one piece (`features` of a net that names no block in it): its children are not known.
  return children.length > 0 && !(path !== '' && children.length === 1 && children[0] === path) ? children : undefined;
}

/** timm's `feature_info` of a features_only model: each feature map's channels and reduction (stride). */
export function libraryFeatureInfo(made: CallResultValue): { channels: number[]; reductions: number[] } | undefined {
  const backbone = libraryBackbone(made);
  const spec = backbone?.build(224);
  if (!backbone?.featureParts || !spec) return undefined;
  const outputs = backbone.featureParts.map((name) => partOutputDims(spec, partsNamed(spec.parts ?? [], name)));
  if (outputs.some((dims) => dims?.length !== 3)) return undefined;
  return { channels: outputs.map((dims) => dims![0]!), reductions: outputs.map((dims) => Math.round(224 / dims![1]!)) };
}

/** The tensor the last of `covered` parts makes, per sample. */
function partOutputDims(spec: LayerNetSpec, covered: number[] | undefined): number[] | undefined {
  if (!covered || covered.length === 0) return undefined;
  return partAt(spec, covered[covered.length - 1]! + 1)?.inputDims;
}

/** The running totals where part `index` starts; past the last part, where the net ends. */
function partAt(spec: LayerNetSpec, index: number): LayerPart | undefined {
  return index < (spec.parts?.length ?? 0) ? spec.parts![index] : spec.partsEnd;
}

/** The parameters of part `index` of a net: from where it starts to where the next part (or the net) does. */
function ownParameters(spec: LayerNetSpec, index: number): number {
  return (partAt(spec, index + 1)?.parametersBefore ?? spec.parameters) - spec.parts![index]!.parametersBefore;
}

/**
 * Submodules of a library vision model a script's module holds and calls (`self.layer3 = resnet.layer3`,
 * `nn.Sequential(*list(resnet.children())[:-2])`): what the catalog's build of the model says of those parts.
 */
export interface LibraryPart {
  /** As the script reads it (`resnet50.layer3`). */
  label: string;
  model: CallResultValue;
  /** Its dotted path in the model; `''`: a features_only model's feature extractor, the model itself. */
  path: string;
  /** The net's part indices it covers (see coveredParts). */
  covered: number[];
  parameters: number;
}

export function libraryPart(made: CallResultValue, path: string): LibraryPart | undefined {
  const backbone = libraryBackbone(made);
  const spec = backbone?.build(224);
  const covered = backbone && spec ? coveredParts(backbone, spec, path) : undefined;
  if (!covered || !spec) return undefined;
  const start = partAt(spec, covered[0]!)!;
  const end = partAt(spec, covered[covered.length - 1]! + 1)!;
  return { label: `${made.path.slice(made.path.lastIndexOf('.') + 1)}.${path}`, model: made, path, covered, parameters: end.parametersBefore - start.parametersBefore };
}

/** Parameters of a library model's parts by index (each counted once), as the catalog builds the model. */
export function libraryPartsParameters(made: CallResultValue, covered: readonly number[]): number {
  const spec = libraryBackbone(made)?.build(224);
  if (!spec) return 0;
  return [...new Set(covered)].reduce((sum, i) => sum + ownParameters(spec, i), 0);
}

/** What running a library part on one sample keeps and makes (see ForwardTrace.libraryPart). */
export interface LibraryPartRun {
  savedElements: number;
  fixedBytes: number;
  largestElements: number;
  /** The most elements alive at once while its layers run without grad (a frozen part fed by the data). */
  liveElements: number;
  hasConvolution: boolean;
  /** The part's own first layers keep the tensor it reads: kept once, as that tensor (not among savedElements). */
  keepsInput: boolean;
  /** A layer of the part keeps the tensor it makes (a block's output the next block reads): kept as that tensor. */
  keepsOutput: boolean;
  outputDims: number[];
  /** The part makes no tensor of its own (an in-place ReLU): it returns the tensor it reads. */
  returnsInput: boolean;
  /** A features_only model's feature maps, per sample (the last is outputDims). */
  featureDims?: number[][];
}

/**
 * A library part run on a tensor of `inputDims` (one sample): the model rebuilt at the image size that gives the
 * part that input (a part after a stride-4 stem, given 56 x 56 maps, runs as in a 224-pixel model). Undefined where
 * the tensor is not what the part reads (other channels, another rank).
 */
export function runLibraryPart(part: LibraryPart, inputDims: number[]): LibraryPartRun | undefined {
  const backbone = libraryBackbone(part.model);
  const probe = backbone?.build(224);
  const expected = probe ? partAt(probe, part.covered[0]!)?.inputDims : undefined;
  if (!backbone || !expected || expected.length !== inputDims.length || expected[0] !== inputDims[0]) return undefined;
  // A map that is not square (a 512 x 1024 crop) runs as the square of the same area, whose activations are the
  // same; the maps it makes keep the input's sides.
  const [sizeHigh, sizeWide] = expected.length === 3 ? [(inputDims[1]! * 224) / expected[1]!, (inputDims[2]! * 224) / expected[2]!] : [224, 224];
  const size = Math.max(1, Math.round(Math.sqrt(sizeHigh * sizeWide)));
  const spec = size === 224 ? probe! : backbone.build(size);
  const sided = (dims: number[]): number[] => (dims.length === 3 && sizeHigh !== sizeWide
    ? [dims[0]!, Math.max(1, Math.round((dims[1]! * sizeHigh) / size)), Math.max(1, Math.round((dims[2]! * sizeWide) / size))] : dims);
  const start = partAt(spec, part.covered[0]!)!;
  const end = partAt(spec, part.covered[part.covered.length - 1]! + 1)!;
  // The tensors the part reads and makes are kept as themselves (once, whichever layer of the script also keeps them).
  const inputKeptInside = start.keepsInput && !start.inputCounted ? start.inputElements : 0;
  const returnsInput = part.covered.every((i) => spec.parts![i]!.returnsInput === true);
  const outputKeptInside = end.inputCounted && !returnsInput ? end.inputElements : 0;
  return {
    savedElements: Math.max(0, end.savedBefore - start.savedBefore - inputKeptInside - outputKeptInside),
    fixedBytes: end.fixedBytesBefore - start.fixedBytesBefore,
    largestElements: start.largestFrom,
    liveElements: Math.max(...part.covered.map((i) => spec.parts![i]!.liveWithin ?? 0)),
    hasConvolution: start.convolutionsFrom > end.convolutionsFrom,
    keepsInput: start.keepsInput,
    keepsOutput: end.inputCounted,
    returnsInput,
    outputDims: sided(end.inputDims),
    ...(backbone.featureParts && part.covered[0] === 0
      ? { featureDims: backbone.featureParts.map((name) => sided(partOutputDims(spec, partsNamed(spec.parts ?? [], name)) ?? end.inputDims)) } : {}),
  };
}

/** A requires_grad call on a library model or one of its submodules, or a submodule the script replaced (interpreter). */
export interface LibraryFreeze {
  path: string;
  frozen: boolean;
  replaced?: Value;
}

/** The parts of a layer net a submodule path names (see LayerNetSpec.parts); undefined where it names none. */
export function partsNamed(parts: readonly LayerPart[], path: string): number[] | undefined {
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
  return head >= 0 && isHeadPath(path) ? [head] : undefined;
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
  const parameters = parts.map((_part, i) => ownParameters(spec, i));
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
  return covered?.reduce((sum, i) => sum + ownParameters(spec, i), 0);
}

/** Whether a submodule path is in a library model's classifier head (`fc`, `classifier.1`, `heads.head`, `head.fc`). */
export function isHeadPath(path: string): boolean {
  return CLASSIFIER_ATTRIBUTE.test(path.split('.')[0]!);
}

/** The classes of a new head the script put on a library model: an nn.Linear(in_features, out_features), or a Sequential ending in one. */
export function headClasses(replaced: Value | undefined): number | undefined {
  const layer = replaced?.kind === 'layer' && replaced.type === 'Sequential' ? replaced.children[replaced.children.length - 1] : replaced;
  const out = layer?.kind === 'layer' && layer.type === 'Linear' ? layer.kwargs.get('out_features') ?? layer.args[1] : undefined;
  return out?.kind === 'number' && Number.isInteger(out.value) && out.value > 0 ? out.value : undefined;
}

/** The classes of the last new head the script put on a library vision model (`model.fc = nn.Linear(2048, 10)`). */
export function replacedHeadClasses(spec: LayerNetSpec, freezes: readonly LibraryFreeze[]): number | undefined {
  const parts = spec.parts ?? [];
  const head = parts.findIndex((part) => part.name === HEAD_PART);
  let classes: number | undefined;
  for (const { path, replaced } of freezes) {
    if (!replaced || head < 0 || !partsNamed(parts, path)?.includes(head)) continue;
    classes = headClasses(replaced);
  }
  return classes;
}

/**
 * The stem a script put on a library ResNet in place of its own, for small images (CIFAR, Tiny-ImageNet):
 * `model.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)` and `model.maxpool = nn.Identity()`.
 * The later stages then run at four or sixteen times the area. Undefined where neither is replaced, or where the new
 * conv1 is not one the builder can take (another width, sizes it does not determine).
 */
export function replacedResNetStem(spec: LayerNetSpec, freezes: readonly LibraryFreeze[]): ResNetStem | undefined {
  const names = new Set((spec.parts ?? []).map((part) => part.name));
  if (!names.has('conv1') || !names.has('maxpool')) return undefined;
  let stem: ResNetStem | undefined;
  for (const { path, replaced } of freezes) {
    if (replaced?.kind !== 'layer') continue;
    if (path === 'maxpool') stem = { ...stem, maxPool: replaced.type !== 'Identity' };
    if (path !== 'conv1') continue;
    const conv = stemConvolution(replaced);
    if (!conv) return undefined;
    stem = { ...stem, conv };
  }
  return stem;
}

/** kernel, stride and padding of an `nn.Conv2d(3, 64, ...)`; undefined for another width or sizes not determined. */
function stemConvolution(layer: LayerValue): ResNetStem['conv'] {
  if (layer.type !== 'Conv2d') return undefined;
  const argument = (key: string, index: number, fallback?: number): number | undefined => {
    const value = layer.kwargs.get(key) ?? layer.args[index];
    if (value === undefined) return fallback;
    return value.kind === 'number' && Number.isInteger(value.value) && value.value >= 0 ? value.value : undefined;
  };
  const kernel = argument('kernel_size', 2);
  const stride = argument('stride', 3, 1);
  const padding = argument('padding', 4, 0);
  if (argument('out_channels', 1) !== 64 || !kernel || !stride || padding === undefined) return undefined;
  return { kernel, stride, padding };
}

/** A string or number argument (python-values' toPy reads more, but imports this module's users). */
function plain(value: Value | undefined): string | number | undefined {
  return value?.kind === 'string' || value?.kind === 'number' ? value.value : undefined;
}
