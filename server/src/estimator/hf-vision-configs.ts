// Hugging Face vision and audio encoders built from their configuration classes (`SwinConfig(...)`,
// `ConvNextConfig(...)`, `ASTConfig(...)`): the config's fields over the class's own defaults, mapped onto the
// networks the catalog already models (the same layers transformers' modelling code builds).
import { makeSpec } from './catalog/models';
import { convnext, convnextV2, resnet, swin } from './catalog/vision';
import type { LayerNetSpec, TransformerSpec } from './types';
import type { Value } from '../engine/program/values';

/** The configuration classes whose models are layer nets here, and the model classes built from them. */
export const HIERARCHICAL_MODEL_CLASS = /^((Swin|ConvNext|ConvNextV2)(ForImageClassification|Model)|ResNetForImageClassification)$/;

/** The AST classes (ASTConfig). */
export const AST_MODEL_CLASS = /^AST(ForAudioClassification|Model)$/;

/** A config the script builds: its network at any input size (its classes read from the config), its configured image size. */
export interface HierarchicalConfigModel {
  build: (imageSize: number) => LayerNetSpec;
  imageSize: number;
}

/** Why a config's model is not built: a size the script gives whose value is not known, or an option not modelled. */
export type ConfigGap = { undetermined: string } | { unmodelled: string };

type Read = { numbers: (key: string, fallback: number[]) => number[] | undefined; number: (key: string, fallback: number) => number | undefined };

function reader(attrs: ReadonlyMap<string, Value>, gaps: string[]): Read {
  const number = (key: string, fallback: number): number | undefined => {
    const value = attrs.get(key);
    if (value === undefined || value.kind === 'none') return fallback;
    if (value.kind === 'number') return value.value;
    gaps.push(key);
    return undefined;
  };
  const numbers = (key: string, fallback: number[]): number[] | undefined => {
    const value = attrs.get(key);
    if (value === undefined || value.kind === 'none') return fallback;
    const items = value.kind === 'list' ? value.items.map((item) => (item.kind === 'number' ? item.value : undefined)) : [];
    if (items.length === 0 || items.some((item) => item === undefined)) {
      gaps.push(key);
      return undefined;
    }
    return items as number[];
  };
  return { number, numbers };
}

/**
 * The labels a config classifies: num_labels, else id2label's entries, else PretrainedConfig's default of 2.
 * Undefined where the script gives a count the estimator cannot read.
 */
function configLabels(attrs: ReadonlyMap<string, Value>, read: Read): number | undefined {
  const names = attrs.get('id2label') ?? attrs.get('label2id');
  if (!attrs.has('num_labels') && names?.kind === 'dict') return names.entries.size;
  return read.number('num_labels', 2);
}

/**
 * SwinConfig, ConvNextConfig, ConvNextV2Config (and ResNetConfig, see resnetFromConfig) over their defaults (Swin-T: embed_dim 96, depths [2, 2, 6, 2],
 * heads [3, 6, 12, 24], 7x7 windows; ConvNeXt-T: hidden_sizes [96, 192, 384, 768], depths [3, 3, 9, 3]; patch 4,
 * 3 channels, 224 px). `…ForImageClassification` adds a classifier (Identity for num_labels 0); `…Model` ends at
 * the pooled, normalised features. Parameters: SwinForImageClassification with swin_s's sizes and 365 labels is
 * 49,117,943, ConvNextForImageClassification with convnext_tiny's and 257 labels 28,017,761 (measured, holdout12's
 * h200.json): timm's and torchvision's counts less the head's missing classes.
 */
export function hierarchicalFromConfig(configClass: string, modelClass: string, attrs: ReadonlyMap<string, Value>): HierarchicalConfigModel | ConfigGap | undefined {
  const family = /^(Swin|ConvNextV2|ConvNext|ResNet)/.exec(modelClass)?.[1];
  if (!family || configClass !== `${family}Config`) return undefined;
  const gaps: string[] = [];
  const read = reader(attrs, gaps);
  const labels = configLabels(attrs, read);
  const classifier = /ForImageClassification$/.test(modelClass) && (labels ?? 1) > 0;
  // Read before any is used: a gap returns below, and an undefined option falls back to the builder's default.
  const options = { patch: read.number('patch_size', 4), channels: read.number('num_channels', 3), classifier };
  const imageSize = read.number('image_size', 224);
  let build: ((imageSize: number, numClasses: number) => LayerNetSpec) | undefined;
  if (family === 'Swin') {
    const embed = read.number('embed_dim', 96);
    const depths = read.numbers('depths', [2, 2, 6, 2]);
    const heads = read.numbers('num_heads', [3, 6, 12, 24]);
    const window = read.number('window_size', 7);
    if (gaps.length === 0 && read.number('mlp_ratio', 4) !== 4) return { unmodelled: 'mlp_ratio' };
    const absolute = attrs.get('use_absolute_embeddings');
    if (absolute?.kind === 'bool' && absolute.value) return { unmodelled: 'use_absolute_embeddings' };
    if (depths && heads && depths.length !== heads.length) return { unmodelled: 'num_heads' };
    if (embed !== undefined && depths && heads && window !== undefined) build = swin(depths, embed, heads, window, { ...options, swinLayer: 'transformers' });
  } else if (family === 'ResNet') {
    const resnetBuild = resnetFromConfig(attrs, read);
    if (resnetBuild && 'unmodelled' in resnetBuild) return resnetBuild;
    build = resnetBuild;
  } else {
    const dims = read.numbers('hidden_sizes', [96, 192, 384, 768]);
    const depths = read.numbers('depths', [3, 3, 9, 3]);
    if (dims && depths && dims.length !== depths.length) return { unmodelled: 'hidden_sizes' };
    // ConvNextConfig's layer_scale_init_value (1e-6): none where it is not positive. ConvNeXt V2 has none.
    const scale = read.number('layer_scale_init_value', 1e-6);
    if (dims && depths && scale !== undefined) {
      build = family === 'ConvNext' ? convnext(depths, dims, { ...options, layerScale: scale > 0 }) : convnextV2(depths, dims, options);
    }
  }
  if (gaps.length > 0 || !build || labels === undefined || imageSize === undefined) return { undetermined: gaps[0] ?? 'num_labels' };
  const make = build;
  return { build: (size) => make(size, labels), imageSize };
}

/**
 * ResNetConfig (microsoft/resnet-*): torchvision's ResNet (a 7x7 stem of embedding_size 64 and a max pool, the
 * stride on each stage's first 3x3, a 1x1 projection where the shape changes), at the torchvision widths only:
 * hidden_sizes [256, 512, 1024, 2048] for layer_type "bottleneck" (the defaults, ResNet-50), [64, 128, 256, 512]
 * for "basic". ResNetForImageClassification has torchvision's parameters (microsoft/resnet-50: 25,557,032).
 */
function resnetFromConfig(attrs: ReadonlyMap<string, Value>, read: Read): ((imageSize: number, numClasses: number) => LayerNetSpec) | { unmodelled: string } | undefined {
  const type = attrs.get('layer_type');
  const bottleneck = type?.kind === 'string' ? type.value === 'bottleneck' : true;
  if (type !== undefined && (type.kind !== 'string' || !['basic', 'bottleneck'].includes(type.value))) return { unmodelled: 'layer_type' };
  const depths = read.numbers('depths', [3, 4, 6, 3]);
  const widths = read.numbers('hidden_sizes', [256, 512, 1024, 2048]);
  const stem = read.number('embedding_size', 64);
  const channels = read.number('num_channels', 3);
  if (!depths || !widths || stem === undefined || channels === undefined) return undefined;
  const torchvision = [64, 128, 256, 512].map((width) => (bottleneck ? 4 * width : width));
  if (depths.length !== 4 || widths.join() !== torchvision.join()) return { unmodelled: 'hidden_sizes' };
  if (stem !== 64) return { unmodelled: 'embedding_size' };
  if (channels !== 3) return { unmodelled: 'num_channels' };
  for (const key of ['downsample_in_first_stage', 'downsample_in_bottleneck']) {
    const value = attrs.get(key);
    if (value?.kind === 'bool' && value.value) return { unmodelled: key };
  }
  return (imageSize, numClasses) => resnet(depths, bottleneck, imageSize, numClasses);
}

/**
 * ASTConfig (the Audio Spectrogram Transformer) over its defaults: a ViT-B encoder (768 wide, 12 layers and heads,
 * MLP 3,072, qkv bias) over a max_length x num_mel_bins spectrogram (1,024 x 128), cut into patch_size-square
 * patches (16) at frequency_stride and time_stride (10, overlapping) by a one-channel convolution, behind a class
 * and a distillation token with their own positions. ASTForAudioClassification averages the two tokens' outputs
 * and classifies them through a LayerNorm and a linear. 86,594,063 parameters with the defaults and 527 labels
 * (measured, holdout12's h200.json): 12 x 101 patches + 2 tokens.
 */
export function astFromConfig(modelClass: string, attrs: ReadonlyMap<string, Value>): TransformerSpec | ConfigGap | undefined {
  if (!AST_MODEL_CLASS.test(modelClass)) return undefined;
  const gaps: string[] = [];
  const read = reader(attrs, gaps);
  const hidden = read.number('hidden_size', 768);
  const layers = read.number('num_hidden_layers', 12);
  const heads = read.number('num_attention_heads', 12);
  const intermediate = read.number('intermediate_size', 3072);
  const patch = read.number('patch_size', 16);
  const frequencyStride = read.number('frequency_stride', 10);
  const timeStride = read.number('time_stride', 10);
  const frames = read.number('max_length', 1024);
  const melBins = read.number('num_mel_bins', 128);
  const labels = configLabels(attrs, read);
  if (gaps.length > 0 || hidden === undefined || layers === undefined || heads === undefined || intermediate === undefined || patch === undefined ||
    frequencyStride === undefined || timeStride === undefined || frames === undefined || melBins === undefined || labels === undefined) {
    return { undetermined: gaps[0] ?? 'num_labels' };
  }
  const qkvBias = attrs.get('qkv_bias');
  if (qkvBias?.kind === 'bool' && !qkvBias.value) return { unmodelled: 'qkv_bias' };
  const frequencyPatches = Math.floor((melBins - patch) / frequencyStride) + 1;
  const timePatches = Math.floor((frames - patch) / timeStride) + 1;
  if (frequencyPatches < 1 || timePatches < 1) return { unmodelled: 'patch_size' };
  const dropout = (key: string): boolean => (read.number(key, 0) ?? 0) > 0;
  const classifier = /ForAudioClassification$/.test(modelClass);
  return makeSpec('vit', {
    hidden, layers, heads, intermediate, vocab: 0, maxPositions: frequencyPatches * timePatches + 2, patchSize: patch, prefixTokens: 2, singleClassifier: true,
    spectrogram: { frames, melBins, patches: frequencyPatches * timePatches }, numLabels: labels, task: classifier ? 'image-cls' : 'base',
    hiddenDropout: dropout('hidden_dropout_prob'), attnDropout: dropout('attention_probs_dropout_prob'), storedDtype: 'fp32',
  });
}
