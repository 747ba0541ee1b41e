// Wav2Vec2 and HuBERT (transformers' Wav2Vec2Model / HubertModel): a stack of 1-D convolutions turns the raw
// waveform into frames (the feature encoder), a LayerNorm and a linear project them to the hidden size, a grouped
// convolution adds positions, and a BERT-like encoder follows. The encoder is the catalog's transformer; this module
// sizes what comes before it: the frames a waveform of N samples gives, the parameters, and what the feature encoder
// keeps for backward or holds at once in forward (its first convolution's output is the largest tensor of the step:
// 512 channels at a fifth of the samples).
import type { TransformerSpec } from './types';

/** The parts of Wav2Vec2Config / HubertConfig that decide the feature encoder and the positional convolution. */
export interface AudioEncoderSpec {
  /** conv_dim, conv_kernel, conv_stride: one entry per convolution. */
  convDims: number[];
  convKernels: number[];
  convStrides: number[];
  convBias: boolean;
  /** feat_extract_norm: "group" (a GroupNorm after the first convolution only) or "layer" (a LayerNorm after each). */
  featureNorm: 'group' | 'layer';
  /** num_conv_pos_embeddings and num_conv_pos_embedding_groups. */
  positionKernel: number;
  positionGroups: number;
  /** mask_time_prob or mask_feature_prob > 0: the model has a learned mask embedding (hidden-sized). */
  maskEmbedding: boolean;
  /** `model.freeze_feature_encoder()`: its parameters are frozen and it records nothing for backward. */
  frozen: boolean;
}

/** Wav2Vec2Config's defaults (wav2vec2-base): seven 512-channel convolutions, a 320-sample hop. */
export const WAV2VEC2_FEATURE_ENCODER: AudioEncoderSpec = {
  convDims: [512, 512, 512, 512, 512, 512, 512],
  convKernels: [10, 3, 3, 3, 3, 2, 2],
  convStrides: [5, 2, 2, 2, 2, 2, 2],
  convBias: false,
  featureNorm: 'group',
  positionKernel: 128,
  positionGroups: 16,
  maskEmbedding: true,
  frozen: false,
};

/** Frames the feature encoder makes of `samples` (no padding: each convolution's output length). */
export function audioFrames(audio: AudioEncoderSpec, samples: number): number {
  let length = samples;
  audio.convKernels.forEach((kernel, i) => {
    length = Math.max(1, Math.floor((length - kernel) / (audio.convStrides[i] ?? 1)) + 1);
  });
  return length;
}

/** Parameters of the feature encoder alone (what freeze_feature_encoder() freezes). */
export function featureEncoderParameters(audio: AudioEncoderSpec): number {
  let total = 0;
  let inChannels = 1;
  audio.convDims.forEach((out, i) => {
    total += inChannels * out * (audio.convKernels[i] ?? 1) + (audio.convBias ? out : 0);
    // GroupNorm(out, out) after the first convolution, or a LayerNorm after every one.
    if (audio.featureNorm === 'layer' || i === 0) total += 2 * out;
    inChannels = out;
  });
  return total;
}

/**
 * Parameters before the encoder's layers, beside the feature encoder: the projection's LayerNorm and linear, the
 * mask embedding, and the positional convolution (weight_norm over the kernel axis: weight_g has one value per tap).
 * Returns the total and the weights autocast casts (the linear's and the convolutions').
 */
export function audioFrontParameters(audio: AudioEncoderSpec, hidden: number): { total: number; castable: number } {
  const last = audio.convDims[audio.convDims.length - 1] ?? hidden;
  const projection = 2 * last + last * hidden + hidden;
  const positionWeights = (hidden * hidden * audio.positionKernel) / audio.positionGroups;
  const position = positionWeights + audio.positionKernel + hidden;
  const featureEncoder = featureEncoderParameters(audio);
  const convWeights = featureEncoder - audio.convDims.reduce((sum, out, i) => sum + (audio.convBias ? out : 0) + (audio.featureNorm === 'layer' || i === 0 ? 2 * out : 0), 0);
  return {
    total: featureEncoder + projection + position + (audio.maskEmbedding ? hidden : 0),
    castable: convWeights + last * hidden + positionWeights,
  };
}

/** Bytes per element of activations, of the norms' outputs and of a half copy autocast makes of an fp32 tensor. */
interface Widths {
  act: number;
  norm: number;
  amp: boolean;
}

function widths(mode: 'fp32' | 'amp' | 'half'): Widths {
  if (mode === 'fp32') return { act: 4, norm: 4, amp: false };
  if (mode === 'amp') return { act: 2, norm: 4, amp: true };
  return { act: 2, norm: 2, amp: false };
}

export interface FeatureEncoderFigures {
  /** Bytes per sample the feature encoder keeps for backward (0 when frozen or without grad). */
  saved: number;
  /** Bytes per sample alive at its worst point, what it keeps included (its first layer's norm, in practice). */
  peak: number;
}

/**
 * The feature encoder for one waveform of `samples`, read from transformers' Wav2Vec2GroupNormConvLayer /
 * Wav2Vec2LayerNormConvLayer: convolution, norm (the first layer only, or every layer), GELU. Under autocast the
 * convolution's output is half, the norm (on autocast's fp32 list) casts it to an fp32 copy and returns fp32, and the
 * next convolution casts GELU's fp32 output to half again. `records`: the encoder is trained and runs with grad, so
 * each op keeps its input; otherwise each layer's tensors are freed as the next is made. `checkpointed`: transformers
 * checkpoints each convolution layer of a trained encoder under gradient checkpointing, which then keeps only its input.
 */
export function featureEncoderFigures(audio: AudioEncoderSpec, samples: number, mode: 'fp32' | 'amp' | 'half', records: boolean, checkpointed = false): FeatureEncoderFigures {
  const { act, norm, amp } = widths(mode);
  let length = samples;
  // The waveform is fp32 (the batch); under autocast the first convolution reads a half copy.
  let inputBytes = 4;
  let saved = 0;
  let peak = 0;
  audio.convDims.forEach((channels, i) => {
    const kernel = audio.convKernels[i] ?? 1;
    const stride = audio.convStrides[i] ?? 1;
    const inElements = (i === 0 ? 1 : audio.convDims[i - 1]!) * length;
    length = Math.max(1, Math.floor((length - kernel) / stride) + 1);
    const out = channels * length;
    // The convolution's input, with autocast's half copy of an fp32 one.
    const castCopy = amp && inputBytes === 4 ? 2 * inElements : 0;
    if (records) saved += checkpointed ? inputBytes * inElements : castCopy > 0 ? castCopy : inputBytes * inElements;
    const keeps = records && !checkpointed;
    const liveIn = inputBytes * inElements + castCopy;
    peak = Math.max(peak, saved + liveIn + act * out);
    const normed = audio.featureNorm === 'layer' || i === 0;
    let geluInBytes = act;
    if (normed) {
      // GroupNorm reads the (B, C, L) output; LayerNorm a transposed view, made contiguous. Autocast keeps an fp32 copy.
      const normInput = amp ? 4 : act;
      const contiguous = audio.featureNorm === 'layer' ? normInput : 0;
      // In fp32 the first GroupNorm takes one more tensor of its input's size (measured on the H200: 12 bytes an element
      // of the first convolution's output at its peak in fp32, 10 under fp16 autocast; probe_wav2vec2.py).
      const fp32Extra = mode === 'fp32' && audio.featureNorm === 'group' ? 4 : 0;
      const during = act * out + (amp ? 4 * out : 0) + contiguous * out + norm * out + fp32Extra * out;
      peak = Math.max(peak, saved + during);
      if (keeps) saved += normInput * out;
      geluInBytes = norm;
    }
    // GELU keeps its input; its output is the next convolution's input.
    if (keeps) saved += geluInBytes * out;
    peak = Math.max(peak, saved + (keeps ? 0 : geluInBytes * out) + geluInBytes * out);
    inputBytes = geluInBytes;
  });
  return { saved, peak };
}

/**
 * What the layers between the feature encoder and the first encoder layer keep per frame, in bytes: the
 * projection's LayerNorm its input (the encoder's last output, transposed; fp32 under autocast) and the linear the
 * normalised features; the positional convolution its input and GELU the convolution's output; the encoder's
 * LayerNorm (after the positions are added, post-norm models) or the first layer's (pre-norm) is counted with the
 * transformer's edges.
 */
export function audioFrontSavedPerFrame(audio: AudioEncoderSpec, hidden: number, mode: 'fp32' | 'amp' | 'half'): number {
  const { act, norm, amp } = widths(mode);
  const last = audio.convDims[audio.convDims.length - 1] ?? hidden;
  const projection = (amp ? 4 : act) * last + (amp ? 2 : norm) * last;
  const position = 2 * act * hidden;
  return projection + position;
}

export function isAudioEncoder(s: TransformerSpec): s is TransformerSpec & { audio: AudioEncoderSpec } {
  return s.audio !== undefined;
}

/**
 * A Wav2Vec2Config / HubertConfig (or config.json) over a spec: its feature encoder's keys, and the stable layer
 * norm (pre-LN layers, a LayerNorm after every feature convolution in the checkpoints that set it). `read` gives
 * a key's value as plain data.
 */
export function withAudioConfig(spec: TransformerSpec, read: (key: string) => unknown): TransformerSpec {
  const base = spec.audio ?? WAV2VEC2_FEATURE_ENCODER;
  const numbers = (key: string): number[] | undefined => {
    const value = read(key);
    return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'number' && v > 0) ? value as number[] : undefined;
  };
  const number = (key: string): number | undefined => {
    const value = read(key);
    return typeof value === 'number' ? value : undefined;
  };
  const flag = (key: string): boolean | undefined => {
    const value = read(key);
    return typeof value === 'boolean' ? value : undefined;
  };
  const norm = read('feat_extract_norm');
  const stable = flag('do_stable_layer_norm');
  const maskTime = number('mask_time_prob');
  const maskFeature = number('mask_feature_prob');
  const audio: AudioEncoderSpec = {
    ...base,
    convDims: numbers('conv_dim') ?? base.convDims,
    convKernels: numbers('conv_kernel') ?? base.convKernels,
    convStrides: numbers('conv_stride') ?? base.convStrides,
    convBias: flag('conv_bias') ?? base.convBias,
    featureNorm: norm === 'layer' || norm === 'group' ? norm : base.featureNorm,
    positionKernel: number('num_conv_pos_embeddings') ?? base.positionKernel,
    positionGroups: number('num_conv_pos_embedding_groups') ?? base.positionGroups,
    maskEmbedding: maskTime !== undefined || maskFeature !== undefined ? (maskTime ?? 0.05) > 0 || (maskFeature ?? 0) > 0 : base.maskEmbedding,
  };
  const hiddenDropout = number('hidden_dropout');
  const attentionDropout = number('attention_dropout');
  return {
    ...spec,
    audio,
    ...(stable !== undefined ? { normPlacement: stable ? 'pre' : 'post' } : {}),
    ...(hiddenDropout !== undefined ? { hiddenDropout: hiddenDropout > 0 } : {}),
    ...(attentionDropout !== undefined ? { attnDropout: attentionDropout > 0 } : {}),
  };
}
