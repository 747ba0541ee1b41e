// Parameter counts and saved-for-backward bytes of Hugging Face transformers, derived from how their modelling
// code runs under PyTorch's autograd: every op keeps what its backward needs (a linear keeps its input, a
// LayerNorm its input, an RMSNorm written in Python its fp32 upcast, SDPA q/k/v/out, eager attention the
// softmax scores), and autocast adds half-precision copies of fp32 tensors that feed a linear.
import type { AttentionImpl, TransformerSpec } from './types';
import { audioFrames, audioFrontParameters, audioFrontSavedPerFrame, featureEncoderFigures, featureEncoderParameters } from './speech';

/** fp32: no autocast, fp32 weights. amp: autocast over fp32 weights. half: weights and activations in bf16/fp16. */
export type ActivationMode = 'fp32' | 'amp' | 'half';

export interface ActivationContext {
  mode: ActivationMode;
  training: boolean;
  attention: AttentionImpl;
  batch: number;
  seqLen: number;
  /** Encoder-decoder text models: the labels' length, the decoder's sequence (seqLen when absent). */
  targetLen?: number;
  imageSize: number;
  /** Base weights frozen (LoRA or requires_grad_(False)): a frozen linear keeps no input for backward. */
  frozenBase: boolean;
  /** LoRA target module names; their input stays saved (the adapter's A matrix needs it). */
  loraTargets: ReadonlySet<string>;
  /** Set under LoRA (PEFT adapters): whether lora_dropout > 0; undefined without LoRA. */
  loraDropout?: boolean;
  /** Whether the forward runs under autocast, whatever the weights' dtype (half weights under autocast too). */
  autocast?: boolean;
  /** The embeddings and this many blocks from the first are frozen: those blocks record nothing for backward. */
  frozenLowerLayers?: number;
}

export interface ParameterCount {
  total: number;
  /** Token/position embeddings (kept out of autocast). */
  embedding: number;
  /** Weights of linears and convolutions that autocast casts to half (and caches for backward). */
  castable: number;
  /** Per decoder/encoder layer. */
  perLayer: number;
  /**
   * Parameters outside the repeated blocks (embeddings, final norms, heads): what FSDP's root unit holds when each
   * block is wrapped on its own and then the model.
   */
  root: number;
  /** Largest single parameter tensor (for-loop optimizers keep temporaries of its size). */
  largestTensor: number;
  /** LoRA parameters for the given targets and rank. */
  lora: number;
  /** Parameters the modelling code freezes itself (Whisper's sinusoidal encoder positions). */
  frozen: number;
}

/** Linear layers of one block, by the names PEFT's target_modules uses in each family. */
interface LinearSite {
  names: string[];
  inFeatures: number;
  outFeatures: number;
  bias: boolean;
}

function blockLinears(s: TransformerSpec, cross = false): LinearSite[] {
  const q = s.heads * s.headDim;
  const kv = s.kvHeads * s.headDim;
  const qkvBias = s.attnBias !== 'none';
  const oBias = s.attnBias === 'all';
  const sites: LinearSite[] = [];
  if (s.qkvFused) {
    // timm's blocks name theirs attn.qkv and attn.proj.
    sites.push({ names: ['c_attn', 'qkv_proj', 'query_key_value', 'Wqkv', 'qkv'], inFeatures: s.hidden, outFeatures: q + 2 * kv, bias: qkvBias });
  } else {
    sites.push({ names: ['q_proj', 'query', 'q', 'q_lin'], inFeatures: s.hidden, outFeatures: q, bias: qkvBias });
    // Whisper's k_proj has no bias; the difference is 1/3 of h per layer, well below the catalog tolerance.
    sites.push({ names: ['k_proj', 'key', 'k', 'k_lin'], inFeatures: s.hidden, outFeatures: kv, bias: qkvBias && s.family !== 'whisper' });
    sites.push({ names: ['v_proj', 'value', 'v', 'v_lin'], inFeatures: s.hidden, outFeatures: kv, bias: qkvBias });
  }
  sites.push({ names: ['o_proj', 'dense', 'out_proj', 'o', 'c_proj', 'out_lin', 'proj'], inFeatures: q, outFeatures: s.hidden, bias: oBias });
  if (cross) return sites;
  const gated = s.mlp === 'swiglu' || s.mlp === 'geglu';
  if (gated && s.qkvFused) {
    sites.push({ names: ['gate_up_proj'], inFeatures: s.hidden, outFeatures: 2 * s.intermediate, bias: s.mlpBias });
  } else if (gated) {
    sites.push({ names: ['gate_proj', 'wi_0'], inFeatures: s.hidden, outFeatures: s.intermediate, bias: s.mlpBias });
    sites.push({ names: ['up_proj', 'wi_1'], inFeatures: s.hidden, outFeatures: s.intermediate, bias: s.mlpBias });
  } else {
    sites.push({ names: ['fc1', 'c_fc', 'intermediate.dense', 'lin1', 'wi', 'mlp.fc1', 'dense_h_to_4h'], inFeatures: s.hidden, outFeatures: s.intermediate, bias: s.mlpBias });
  }
  sites.push({ names: ['down_proj', 'fc2', 'c_proj', 'output.dense', 'lin2', 'wo', 'dense_4h_to_h'], inFeatures: s.intermediate, outFeatures: s.hidden, bias: s.mlpBias });
  return sites;
}

function linearParams(site: LinearSite): number {
  return site.inFeatures * site.outFeatures + (site.bias ? site.outFeatures : 0);
}

function siteTargeted(site: LinearSite, targets: ReadonlySet<string>): boolean {
  if (targets.has('all-linear')) return true;
  return site.names.some((n) => targets.has(n) || targets.has(n.split('.').pop() ?? n));
}

/** The weight elements of the block linears `targets` names, over every layer (a LoRA's adapted weights). */
export function adaptedWeightElements(s: TransformerSpec, targets: ReadonlySet<string>): number {
  const perLayer = blockLinears(s).filter((site) => siteTargeted(site, targets)).reduce((sum, site) => sum + site.inFeatures * site.outFeatures, 0);
  return perLayer * (s.layers + s.decoderLayers);
}

function normParams(s: TransformerSpec): number {
  return s.norm === 'layernorm' ? 2 * s.hidden : s.hidden;
}

/** Parameters of one encoder/decoder stack layer. */
function layerParams(s: TransformerSpec, withCross: boolean): number {
  let total = blockLinears(s).reduce((sum, site) => sum + linearParams(site), 0);
  if (s.layerScale) total += 2 * s.hidden;
  if (s.relativePositionRows) total += s.heads * s.relativePositionRows - s.kvHeads * s.headDim;
  const normsPerLayer = (s.normPlacement === 'parallel' ? 1 : 2) + (withCross ? 1 : 0) + Math.max(0, s.extraNormsPerLayer);
  total += normsPerLayer * normParams(s);
  if (withCross) total += blockLinears(s, true).reduce((sum, site) => sum + linearParams(site), 0);
  return total;
}

/** Counts the parameters the config implies (base model + the task head), and the LoRA adapter size. */
export function countTransformerParameters(s: TransformerSpec, lora?: { rank: number; targetModules: string[] }): ParameterCount {
  const h = s.hidden;
  // Wav2Vec2's vocabulary is its CTC head's; it has no token embeddings.
  // ALBERT's tables are embedding_size wide (OPT-350m's token table is its projection's width).
  const tableWidth = s.embeddingSize ?? h;
  let embedding = s.audio ? 0 : s.vocab * (s.embedProjection ?? tableWidth);
  if (s.positions === 'learned') {
    const positionCount = (s.family === 'opt' || s.family === 'bart') && !s.sinusoidalPositionTables ? s.maxPositions + 2 : s.maxPositions;
    // BART: one position table per stack.
    embedding += positionCount * tableWidth * (s.family === 'bart' ? 2 : 1);
  }
  embedding += s.typeVocab * tableWidth;
  if (s.family === 't5') embedding += 32 * s.heads * 2; // relative attention bias, one table per stack
  let castable = 0;
  let other = 0;
  const perLayer = layerParams(s, false);
  const layerCastable = blockLinears(s).reduce((sum, site) => sum + site.inFeatures * site.outFeatures, 0);
  // Shared layers (ALBERT) are stored once, and autocast casts each weight once per forward however often it runs.
  const stored = s.storedLayers ?? s.layers;
  let layerTotal = stored * perLayer;
  castable += stored * layerCastable;
  if (s.decoderLayers > 0) {
    const crossCast = blockLinears(s, true).reduce((sum, site) => sum + site.inFeatures * site.outFeatures, 0);
    layerTotal += s.decoderLayers * layerParams(s, true);
    castable += s.decoderLayers * (layerCastable + crossCast);
  }
  // Embedding LayerNorm (BERT family), final norms (pre-LN stacks; two for encoder-decoders).
  // BART: layernorm_embedding in each stack (and mBART's final layer_norm in each).
  // Marian and Pegasus (sinusoidal tables): no embedding norms; Pegasus, pre-LN, has each stack's final norm.
  if (s.family === 'bart') other += normParams(s) * ((s.normPlacement === 'post' ? 2 : 4) - (s.sinusoidalPositionTables ? 2 : 0));
  else if (s.normPlacement === 'post') other += s.family === 'opt' ? 0 : s.embeddingSize ? 2 * s.embeddingSize : normParams(s);
  else other += normParams(s) * (s.decoderLayers > 0 ? 2 : 1);
  // DeBERTa-v3's relative position embeddings (2 x position_buckets = 512 rows) and their LayerNorm.
  if (s.family === 'deberta') other += 2 * 256 * h + normParams(s);
  if (s.embedProjection) {
    other += 2 * s.embedProjection * h;
    castable += 2 * s.embedProjection * h;
  }
  if (s.embeddingSize) {
    // ALBERT's embedding_hidden_mapping_in, from the tables' width to the hidden size.
    other += s.embeddingSize * h + h;
    castable += s.embeddingSize * h;
  }
  // The masked-LM classes build their encoder without the pooler (BertForMaskedLM: add_pooling_layer=False).
  if (s.pooler && s.task !== 'masked-lm') {
    other += h * h + h;
    castable += h * h;
  }
  let head = 0;
  let headCast = 0;
  const lmHead = s.task === 'causal-lm' || s.task === 'masked-lm' || s.task === 'seq2seq' || s.task === 'speech-seq2seq';
  if (lmHead) {
    if (!s.tiedEmbeddings) head += s.vocab * h + (s.family === 'phi' ? s.vocab : 0);
    // The masked-LM head's transform (a dense layer and a LayerNorm, to the tables' width) and the decoder's bias.
    headCast += s.vocab * tableWidth + (s.task === 'masked-lm' ? h * tableWidth : 0);
    if (s.task === 'masked-lm') head += h * tableWidth + tableWidth + 2 * tableWidth + s.vocab;
  } else if (s.task === 'ctc') {
    head += s.vocab * h + s.vocab;
    headCast += s.vocab * h;
  } else if (s.task === 'seq-cls' && s.audio) {
    // Wav2Vec2ForSequenceClassification: a projector to classifier_proj_size (256), mean-pooled, then the classifier.
    head += h * 256 + 256 + 256 * s.numLabels + s.numLabels;
    headCast += h * 256 + 256 * s.numLabels;
  } else if (s.task === 'seq-cls' || s.task === 'image-cls') {
    const extra = s.family === 'distilbert' || s.family === 'deberta' ? h * h + h : 0; // pre_classifier / pooler dense
    // A distilled DeiT has a second classifier (head_dist) on its distillation token; AST's LayerNorm before its one.
    const classifiers = s.family === 'vit' && (s.prefixTokens ?? 1) > 1 && !s.singleClassifier ? 2 : 1;
    head += extra + classifiers * (h * s.numLabels + s.numLabels) + (s.spectrogram ? normParams(s) : 0);
    headCast += extra + classifiers * h * s.numLabels;
  }
  castable += headCast;
  if (s.family === 'vit' || s.vision) {
    const v = s.vision ?? s;
    const patches = v.spectrogram?.patches ?? ((v.imageSize ?? 224) / (v.patchSize ?? 16)) ** 2;
    const channels = v.spectrogram ? 1 : 3;
    const patchParams = channels * (v.patchSize ?? 16) ** 2 * v.hidden + (s.family === 'vit' ? v.hidden : 0);
    if (s.family === 'vit') {
      // The patch convolution, the prefix tokens (class, and distillation) and the position table.
      const prefix = s.prefixTokens ?? 1;
      const positions = s.relativePositionRows ? 0 : patches + (s.positionsWithoutPrefix ? 0 : prefix);
      embedding = patchParams + v.hidden * (prefix + positions);
      castable += channels * (v.patchSize ?? 16) ** 2 * v.hidden;
    }
  }
  let total = embedding + layerTotal + other + head;
  let blockTotal = layerTotal;
  if (s.decoder) {
    // ViT-MAE's decoder: decoder_embed, mask_token, position table, its blocks, decoder_norm and decoder_pred (to
    // the pixels of a patch).
    const d = s.decoder;
    const dc = countTransformerParameters(d);
    const patches = ((s.imageSize ?? 224) / (s.patchSize ?? 16)) ** 2;
    const pixels = 3 * (s.patchSize ?? 16) ** 2;
    const projections = h * d.hidden + d.hidden + d.hidden * pixels + pixels;
    total += projections + d.hidden + (patches + 1) * d.hidden + d.layers * dc.perLayer + normParams(d);
    blockTotal += d.layers * dc.perLayer;
    castable += dc.castable - dc.embedding + h * d.hidden + d.hidden * pixels;
  }
  if (s.crossEncoder) {
    // The encoder (its own embeddings, blocks, final norm and pooler), each decoder layer's cross-attention and its
    // norm, and the projection between the widths where they differ.
    const e = countTransformerParameters(s.crossEncoder);
    const cross = layerParams(s, true) - layerParams(s, false);
    const crossCast = blockLinears(s, true).reduce((sum, site) => sum + site.inFeatures * site.outFeatures, 0);
    const projection = s.crossEncoder.hidden !== h ? s.crossEncoder.hidden * h : 0;
    total += e.total + s.layers * cross + projection + (projection > 0 ? h : 0);
    castable += e.castable + s.layers * crossCast + projection;
    blockTotal += s.crossEncoder.layers * e.perLayer + s.layers * cross;
  }
  if (s.vision) {
    const v = countTransformerParameters(s.vision);
    blockTotal += s.vision.layers * v.perLayer;
    const pre = 2 * s.vision.hidden; // CLIP's vision tower has a pre-LayerNorm
    const visionEmbed = 3 * (s.vision.patchSize ?? 32) ** 2 * s.vision.hidden + s.vision.hidden * (((s.vision.imageSize ?? 224) / (s.vision.patchSize ?? 32)) ** 2 + 2);
    total += v.total - v.embedding + visionEmbed + pre;
    const proj = (s.projectionDim ?? h) * (h + s.vision.hidden);
    total += proj + 1; // text and visual projections, logit_scale
    castable += v.castable + proj;
  }
  if (s.family === 'whisper') {
    const mel = s.melBins ?? 80;
    total += mel * h * 3 + h + h * h * 3 + h + (s.encoderFrames ?? 1500) * h; // two convs and encoder positions
    castable += mel * h * 3 + h * h * 3;
  }
  if (s.audio) {
    const front = audioFrontParameters(s.audio, h);
    total += front.total;
    castable += front.castable;
  }
  let loraCount = 0;
  if (lora) {
    const targets = new Set(lora.targetModules);
    const perLayerLora = blockLinears(s).filter((site) => siteTargeted(site, targets))
      .reduce((sum, site) => sum + lora.rank * (site.inFeatures + site.outFeatures), 0);
    loraCount = perLayerLora * (s.layers + s.decoderLayers);
  }
  const largestTensor = Math.max(s.vocab * tableWidth, s.intermediate * h * (s.qkvFused && (s.mlp === 'swiglu') ? 2 : 1));
  // Whisper's embed_positions.requires_grad_(False); Wav2Vec2's freeze_feature_encoder().
  const frozen = s.family === 'whisper' ? (s.encoderFrames ?? 1500) * h : s.audio?.frozen ? featureEncoderParameters(s.audio) : 0;
  return { total, embedding, castable, perLayer, root: total - blockTotal, largestTensor, lora: loraCount, frozen };
}

const FP32 = 4;

function bytesOf(mode: ActivationMode): { act: number; residual: number; normOut: number } {
  if (mode === 'fp32') return { act: 4, residual: 4, normOut: 4 };
  if (mode === 'amp') return { act: 2, residual: 4, normOut: 4 };
  return { act: 2, residual: 2, normOut: 2 };
}

/** Bytes a norm keeps per element of its input. */
function normSavedPerElement(s: TransformerSpec, mode: ActivationMode): number {
  if (s.norm === 'layernorm') return bytesOf(mode).residual;
  // HF RMSNorm upcasts to fp32 in Python: it keeps the fp32 input and the normalised fp32 tensor,
  // or, in half mode, the fp32 upcast and the half copy the weight multiplies. Gemma's RMSNorm multiplies the fp32
  // normalised tensor by (1 + weight.float()) before casting back, so it keeps both fp32 tensors in every mode.
  return mode === 'half' && s.family !== 'gemma' ? FP32 + 2 : 2 * FP32;
}

/** Saved bytes of the input of `consumers` linears reading one tensor of `elements` per token. */
function linearInputBytes(mode: ActivationMode, producerBytes: number, elements: number, consumers: number, saving: number): number {
  if (saving === 0) return 0;
  // Autocast casts an fp32 input once per linear call: q, k and v each keep their own half copy.
  if (mode === 'amp' && producerBytes === FP32) return saving * 2 * elements;
  return producerBytes * elements;
}

/** Bytes per attention score (per head, per query, per key) that backward keeps. */
function scoreBytes(mode: ActivationMode, dropout: boolean): number {
  const softmaxOut = mode === 'half' ? 2 : FP32;
  const act = bytesOf(mode).act;
  return softmaxOut + (dropout ? 1 + act : mode === 'amp' ? 2 : 0);
}

export interface LayerActivation {
  /** Bytes per token, independent of the sequence length. */
  perToken: number;
  /** Bytes per (query token x key token), the s^2 part of eager / math attention. */
  perTokenPair: number;
}

/** What one self-attention (+ MLP) layer keeps for backward, per token. */
export function layerActivation(s: TransformerSpec, ctx: ActivationContext, decoderCross = false): LayerActivation {
  const { act, residual, normOut } = bytesOf(ctx.mode);
  const h = s.hidden;
  const q = s.heads * s.headDim;
  const kv = s.kvHeads * s.headDim;
  const i = s.intermediate;
  const dropout = ctx.training;
  const sites = blockLinears(s);
  // PEFT's LoRA Linear casts its input to the fp32 adapter dtype once per adapted module (a new tensor unless the
  // input is fp32 already), applies lora_dropout (a new tensor and a bool mask), and lora_A keeps what it was
  // given; the frozen base linear keeps nothing. So q, k and v each keep their own copy. Only fp32 inputs without
  // dropout reach lora_A as the shared tensor, which the ordinary rule below counts once. Under autocast lora_A
  // keeps autocast's half copy of that fp32 tensor, half weights or not (peft's upcast is not kept: a cast's
  // backward needs nothing).
  const adapterCopies = ctx.loraDropout !== undefined && (ctx.mode !== 'fp32' || ctx.loraDropout);
  const savingCount = (from: number, to: number): number => adapterCopies ? 0 :
    sites.slice(from, to).filter((site) => !ctx.frozenBase || siteTargeted(site, ctx.loraTargets)).length;
  const qkvSites = s.qkvFused ? 1 : 3;
  let perToken = 0;
  let perTokenPair = 0;
  if (adapterCopies) {
    // fp32 copy (half weights without autocast) or autocast's half copy per adapted module, plus the dropout mask.
    const copyBytes = (ctx.mode === 'amp' || (ctx.mode === 'half' && ctx.autocast) ? 2 : FP32) + (ctx.loraDropout ? 1 : 0);
    perToken += sites.filter((site) => siteTargeted(site, ctx.loraTargets)).reduce((sum, site) => sum + copyBytes * site.inFeatures, 0);
  }
  // Attention half: norm, q/k/v inputs, q/k/v, attention output.
  const preNorm = s.normPlacement !== 'post';
  if (preNorm) perToken += normSavedPerElement(s, ctx.mode) * h;
  const attnInputProducer = preNorm ? normOut : residual;
  const mlpConsumers = s.mlp === 'swiglu' || s.mlp === 'geglu' ? (s.qkvFused ? 1 : 2) : 1;
  const parallel = s.normPlacement === 'parallel';
  perToken += linearInputBytes(ctx.mode, attnInputProducer, h, qkvSites + (parallel ? mlpConsumers : 0),
    savingCount(0, qkvSites) + (parallel ? savingCount(qkvSites + 1, qkvSites + 1 + mlpConsumers) : 0));
  const gqaMath = ctx.attention === 'sdpa' && ctx.mode === 'fp32' && s.kvHeads < s.heads;
  const eagerScores = ctx.attention === 'eager' || s.family === 't5' || s.family === 'deberta' || gqaMath;
  if (gqaMath) {
    // SDPA's math path expands k/v to all heads and scales q and k into new tensors; its output is copied contiguous.
    perToken += act * (3 * q + q) + act * q;
  } else {
    perToken += act * (q + 2 * kv) + act * q;
  }
  if (eagerScores) {
    const disentangled = s.family === 'deberta' ? 2 * FP32 : 0; // c2p and p2c position scores
    // T5 under SDPA: its float position-bias mask sends it to SDPA's math path, which computes in fp32 whatever the
    // inputs' dtype: an fp32 softmax, and under dropout a bool mask and the fp32 dropped probabilities (measured on
    // the H200 with peak_anatomy.py: 8.8 bytes per head and token pair for a bf16-autocast T5 with dropout 0.1).
    const t5Math = s.family === 't5' && ctx.attention === 'sdpa';
    const bytes = t5Math ? FP32 + (dropout && s.attnDropout ? 1 + FP32 : 0) : scoreBytes(ctx.mode, dropout && s.attnDropout);
    perTokenPair += s.heads * (bytes + disentangled);
  }
  if (eagerScores && !gqaMath && ctx.attention === 'eager' && s.family !== 't5') perToken += act * q; // contiguous copy before o_proj
  if (dropout && s.hiddenDropout) perToken += h; // bool mask after o_proj
  // LayerScale multiplies each branch's output (attention's and the MLP's) by its gain: the product keeps it.
  if (s.layerScale) perToken += 2 * act * h;
  if (decoderCross) {
    // Cross-attention: norm, q input, q, output; k/v of the encoder states are counted by the caller.
    perToken += normSavedPerElement(s, ctx.mode) * h + linearInputBytes(ctx.mode, normOut, h, 1, 1) + 2 * act * q;
    if (dropout && s.hiddenDropout) perToken += h;
  }
  // MLP half.
  if (!preNorm) perToken += residual * h * 2; // post-LN: the LayerNorm keeps each residual sum
  if (preNorm && !parallel) perToken += normSavedPerElement(s, ctx.mode) * h;
  // Norms on the branch outputs (Gemma 2's post-attention and post-feedforward norms) keep the same per element.
  if (!decoderCross && s.extraNormsPerLayer > 0) perToken += s.extraNormsPerLayer * normSavedPerElement(s, ctx.mode) * h;
  if (!parallel) {
    const mlpProducer = preNorm ? normOut : residual;
    perToken += linearInputBytes(ctx.mode, mlpProducer, h, mlpConsumers, savingCount(qkvSites + 1, qkvSites + 1 + mlpConsumers));
  }
  const downSaves = savingCount(sites.length - 1, sites.length) > 0;
  perToken += mlpInternals(s, ctx.mode, i, downSaves);
  if (dropout && s.hiddenDropout) perToken += h;
  // Wav2Vec2's feed-forward drops out GELU's output (activation_dropout): a bool mask of the intermediate width.
  if (dropout && (s.audio || s.activationDropout) && s.hiddenDropout) perToken += i;
  return { perToken, perTokenPair };
}

/**
 * What the MLP keeps between its two projections, per token. `downSaves`: the second projection keeps its input
 * (false when it is frozen, or adapted by LoRA, whose own copy is counted with the adapters).
 */
function mlpInternals(s: TransformerSpec, mode: ActivationMode, i: number, downSaves = true): number {
  const { act } = bytesOf(mode);
  const down = downSaves ? 1 : 0;
  switch (s.mlp) {
    case 'gelu': return (1 + down) * act * i; // GELU keeps its input; the second linear keeps GELU's output
    case 'relu': return act * i; // ReLU keeps its output, which the second linear keeps too
    case 'swiglu': return (3 + down) * act * i; // gate, SiLU(gate), up, and their product
    case 'geglu': return s.family === 't5' ? geluNewBytes(mode) * i + (1 + down) * act * i : (3 + down) * act * i;
    case 'gelu_new': return geluNewBytes(mode) * i + down * (mode === 'amp' ? 2 : act) * i;
    // x * sigmoid(1.702 x): the product keeps x and the sigmoid's output (1.702 x is not kept); fc2 keeps the product.
    case 'quick_gelu': return (2 + down) * act * i;
  }
}

/** GPT-2's tanh GELU is a Python expression: pow, tanh, 0.5*x and 1+tanh are all kept (fp32 under autocast: pow upcasts). */
function geluNewBytes(mode: ActivationMode): number {
  if (mode === 'fp32') return 4 * FP32;
  if (mode === 'amp') return 3 * FP32 + 2;
  return 4 * 2;
}

export interface TransformerActivation {
  /** Saved for backward at the end of forward (all layers, embeddings, head and loss). */
  saved: number;
  /** One layer's saved bytes (checkpointing recomputes one at a time). */
  oneLayer: number;
  /** Forward transient on top of `saved` (fp32 copy of half logits for the loss). */
  forwardTransient: number;
  /** Backward transient at the start of backward (gradients of the loss over the vocabulary). */
  backwardTransient: number;
  /** Output tensors a loop keeps until they are rebound (logits). */
  outputs: number;
  /** Largest tensor a no-grad forward holds at once, for inference peaks. */
  inferenceTransient: number;
  /** Tokens the logits cover (the decoder's, for encoder-decoders). */
  tokens: number;
  /**
   * Wav2Vec2: bytes alive at the feature encoder's worst point, early in forward, before anything after it has run
   * or autocast has cached a weight: the step's forward peak where the rest keeps less (a frozen encoder).
   */
  featurePeak?: number;
}

/** Tokens per sample the model sees: the sequence, or the image patches plus the class token. */
export function tokensPerSample(s: TransformerSpec, seqLen: number, imageSize: number): number {
  const patches = s.spectrogram?.patches ?? Math.round((imageSize / (s.patchSize ?? 16)) ** 2);
  // ViT-MAE's encoder sees the patches its random masking keeps (int(N * (1 - mask_ratio))) and the class token.
  if (s.family === 'vit' && s.maskRatio !== undefined) return Math.floor(patches * (1 - s.maskRatio)) + 1;
  if (s.family === 'vit') return patches + (s.prefixTokens ?? 1);
  // A waveform of seqLen samples: the frames its feature encoder makes.
  if (s.audio) return audioFrames(s.audio, seqLen);
  return seqLen;
}

export function transformerActivations(s: TransformerSpec, ctx: ActivationContext, checkpointing: boolean): TransformerActivation {
  const { act, residual, normOut } = bytesOf(ctx.mode);
  const seq = tokensPerSample(s, ctx.seqLen, ctx.imageSize);
  const tokens = ctx.batch * seq;
  const layer = layerActivation(s, ctx, s.crossEncoder !== undefined);
  const layerBytes = tokens * layer.perToken + ctx.batch * seq * seq * layer.perTokenPair;
  // Blocks fed by frozen embeddings and frozen themselves have no input with history and no parameter to train.
  const frozenLower = ctx.training ? Math.min(s.layers, ctx.frozenLowerLayers ?? 0) : 0;
  let stackBytes = (s.layers - frozenLower) * layerBytes;
  let oneLayer = layerBytes;
  let checkpointKeeps = s.layers * tokens * residual * s.hidden;
  // The decoder (and the logits) run over the labels: Whisper's seqLen is its text, T5's targets may be shorter.
  const decoderSeq = s.decoderLayers > 0 && s.family !== 'whisper' && ctx.targetLen ? ctx.targetLen : seq;
  const decoderTokens = ctx.batch * decoderSeq;
  if (s.decoderLayers > 0) {
    const encoderTokens = s.family === 'whisper' ? ctx.batch * (s.encoderFrames ?? 1500) : tokens;
    const encoderSeq = encoderTokens / ctx.batch;
    const encoderLayer = layerActivation(s, ctx);
    const decoderLayer = layerActivation(s, ctx, true);
    const kv = s.kvHeads * s.headDim;
    const crossKv = encoderTokens * 2 * act * kv;
    const encoderBytes = s.layers * (encoderTokens * encoderLayer.perToken + ctx.batch * encoderSeq * encoderSeq * encoderLayer.perTokenPair);
    const decoderBytes = s.decoderLayers * (decoderTokens * decoderLayer.perToken + ctx.batch * decoderSeq * decoderSeq * decoderLayer.perTokenPair +
      crossKv + ctx.batch * decoderSeq * encoderSeq * decoderLayer.perTokenPair);
    stackBytes = encoderBytes + decoderBytes;
    oneLayer = Math.max(encoderBytes / s.layers, decoderBytes / s.decoderLayers);
    checkpointKeeps = (s.layers * encoderTokens + s.decoderLayers * decoderTokens) * residual * s.hidden;
    if (s.family === 'whisper') {
      const mel = s.melBins ?? 80;
      stackBytes += ctx.batch * 3000 * (mel * act + 3 * act * s.hidden); // two convolutions and their GELUs
    }
  }
  if (s.crossEncoder) {
    // The image encoder's blocks, its pixel input (the patch convolution's; a half copy under autocast) and final
    // norm; per decoder layer, the cross-attention's keys and values over the encoder's tokens, its scores over
    // them, and under autocast the half copy of the (fp32) encoder output its key/value projection casts.
    const e = s.crossEncoder;
    // A ViT's position table fixes the image size its config gives.
    const imageSize = e.imageSize ?? ctx.imageSize;
    const encoderSeq = tokensPerSample(e, seq, imageSize);
    const encoderTokens = ctx.batch * encoderSeq;
    const encoderLayer = layerActivation(e, ctx);
    const encoderBlocks = e.layers * (encoderTokens * encoderLayer.perToken + ctx.batch * encoderSeq * encoderSeq * encoderLayer.perTokenPair);
    const pixels = ctx.batch * 3 * imageSize * imageSize * (ctx.mode === 'amp' ? 2 : act);
    const encoderEdges = encoderTokens * (normSavedPerElement(e, ctx.mode) + normOut) * e.hidden;
    const kv = s.kvHeads * s.headDim;
    const castCopy = ctx.mode === 'amp' ? 2 * s.hidden : 0;
    const perDecoderLayer = encoderTokens * (2 * act * kv + castCopy) + ctx.batch * seq * encoderSeq * layer.perTokenPair;
    stackBytes += encoderBlocks + pixels + encoderEdges + s.layers * perDecoderLayer;
    checkpointKeeps += e.layers * encoderTokens * residual * e.hidden;
    oneLayer = Math.max(oneLayer + perDecoderLayer, encoderBlocks / e.layers);
  }
  if (s.vision) {
    const visionSeq = tokensPerSample({ ...s.vision, family: 'vit' }, seq, ctx.imageSize);
    const visionCtx = { ...ctx };
    const visionLayer = layerActivation(s.vision, visionCtx);
    const visionBytes = s.vision.layers * ctx.batch * (visionSeq * visionLayer.perToken + visionSeq * visionSeq * visionLayer.perTokenPair);
    stackBytes += visionBytes;
    checkpointKeeps += s.vision.layers * ctx.batch * visionSeq * residual * s.vision.hidden;
  }
  if (s.decoder) {
    // ViT-MAE's decoder runs over every patch and the class token: its blocks, decoder_norm, and decoder_pred's
    // input; the pixel loss keeps the fp32 difference between prediction and (normalised) target. The masking and
    // the unshuffle each gather with an int64 index repeated over the width (`ids.unsqueeze(-1).repeat(1, 1, dim)`),
    // which gather's backward keeps.
    const d = s.decoder;
    const decoderSeq = tokensPerSample({ ...d, maskRatio: undefined }, seq, ctx.imageSize);
    const decoderTokens = ctx.batch * decoderSeq;
    const layer = layerActivation(d, ctx);
    const blocks = d.layers * (decoderTokens * layer.perToken + ctx.batch * decoderSeq * decoderSeq * layer.perTokenPair);
    const pixels = 3 * (d.patchSize ?? 16) ** 2;
    const gatherIndices = 8 * ctx.batch * ((seq - 1) * s.hidden + (decoderSeq - 1) * d.hidden);
    stackBytes += blocks + decoderTokens * (normSavedPerElement(d, ctx.mode) + normOut) * d.hidden + ctx.batch * (decoderSeq - 1) * pixels * FP32 + gatherIndices;
    checkpointKeeps += d.layers * decoderTokens * residual * d.hidden;
    oneLayer = Math.max(oneLayer, blocks / d.layers);
  }
  // Embeddings and the final norm: the embedding sum (post-LN: its LayerNorm input and dropout), final norm and its output.
  // BART normalises and drops out the decoder's embeddings too.
  const edgeTokens = s.family === 'bart' ? tokens + decoderTokens : tokens;
  let edges = edgeTokens * (normSavedPerElement(s, ctx.mode) * s.hidden + normOut * s.hidden);
  if (ctx.training && s.hiddenDropout) edges += edgeTokens * s.hidden;
  // Wav2Vec2: the feature projection and the positional convolution before the first layer (trained: they record).
  if (s.audio && ctx.training) edges += tokens * audioFrontSavedPerFrame(s.audio, s.hidden, ctx.mode);
  // Frozen embeddings keep nothing: a post-LN stack's edge is the embeddings' LayerNorm; a pre-LN one keeps its final norm.
  if (frozenLower > 0) edges = s.normPlacement === 'post' ? 0 : edgeTokens * (normSavedPerElement(s, ctx.mode) * s.hidden + normOut * s.hidden);
  // Head and loss over the vocabulary: logits kept by the output object, log_softmax's fp32 output kept for backward.
  const vocabHead = s.task === 'causal-lm' || s.task === 'masked-lm' || s.task === 'seq2seq' || s.task === 'speech-seq2seq' || s.task === 'ctc';
  const logitBytes = ctx.mode === 'fp32' ? FP32 : 2;
  const logits = vocabHead ? decoderTokens * s.vocab * logitBytes : 0;
  // T5's CrossEntropyLoss reads the logits as they are: on half weights without autocast, log_softmax keeps a half
  // output (transformers' causal-LM loss upcasts the logits first; autocast runs the loss in fp32).
  const halfLoss = s.family === 't5' && ctx.mode === 'half' && !ctx.autocast;
  const logSoftmax = vocabHead ? decoderTokens * s.vocab * (halfLoss ? 2 : FP32) : 0;
  // Gemma 2's final softcapping: tanh keeps its logits-sized output for backward.
  const softcap = s.finalLogitSoftcap ? logits : 0;
  // Wav2Vec2's feature encoder runs first: what it keeps (trained), and the most it holds at once (see featurePeak).
  const features = s.audio
    ? featureEncoderFigures(s.audio, ctx.seqLen, ctx.mode, ctx.training && !s.audio.frozen, checkpointing && ctx.training) : undefined;
  const featureSaved = features ? ctx.batch * features.saved : 0;
  const saved = (checkpointing && ctx.training ? checkpointKeeps : stackBytes) + edges + logits + logSoftmax + softcap + featureSaved;
  // The loss's fp32 copy of half logits (none where the loss reads them as they are).
  const forwardTransient = logitBytes === FP32 || halfLoss ? 0 : logSoftmax;
  const backwardTransient = vocabHead ? 2 * logSoftmax : 2 * tokens * act * Math.max(s.intermediate, s.hidden);
  const widest = Math.max(s.intermediate * (s.mlp === 'swiglu' || s.mlp === 'geglu' ? 2 : 1), 3 * s.hidden);
  // A ViT's forward keeps residual-sized tensors alive beyond the block's own input and output: the patch embedding's
  // output in the model's frame (alive through the whole encoder) and the sum after attention beside the norm's
  // output while the MLP runs (gpu-truth ViT-B/16 no-grad inference and the held-out ViT-L/16 under bf16 autocast).
  const residuals = s.family === 'vit' ? 4 : 2;
  const inferenceTransient = Math.max(
    tokens * act * widest * 2 + tokens * residual * s.hidden * residuals,
    ctx.attention === 'eager' || s.family === 't5' ? ctx.batch * s.heads * seq * seq * FP32 * 2 : 0,
    features ? ctx.batch * features.peak : 0,
  );
  const featurePeak = features ? ctx.batch * features.peak : undefined;
  return { saved, oneLayer, forwardTransient, backwardTransient, outputs: logits, inferenceTransient, tokens: decoderTokens, ...(featurePeak ? { featurePeak } : {}) };
}
