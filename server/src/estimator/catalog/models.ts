// Public config.json facts of popular Hugging Face checkpoints, and how each family's modelling code is
// written (norm kind and placement, fused q/k/v, MLP activation, dropout), which decides what backward keeps.
import type { TransformerFamily, TransformerSpec, WeightDtype } from '../types';
import { WAV2VEC2_FEATURE_ENCODER, type AudioEncoderSpec } from '../speech';

type Shape = Pick<TransformerSpec, 'hidden' | 'layers' | 'heads' | 'intermediate' | 'vocab' | 'maxPositions'> &
  Partial<TransformerSpec>;

/** The code-level traits each family shares; a catalog entry adds the sizes. */
const FAMILY_TRAITS: Record<TransformerFamily, Omit<TransformerSpec, 'hidden' | 'layers' | 'heads' | 'kvHeads' | 'headDim' |
  'intermediate' | 'vocab' | 'maxPositions' | 'numLabels'>> = {
  gpt2: { kind: 'transformer', family: 'gpt2', tiedEmbeddings: true, storedDtype: 'fp32', norm: 'layernorm', normPlacement: 'pre',
    qkvFused: true, mlp: 'gelu_new', attnBias: 'all', mlpBias: true, hiddenDropout: true, attnDropout: true, positions: 'learned',
    typeVocab: 0, pooler: false, extraNormsPerLayer: 0, decoderLayers: 0, task: 'causal-lm' },
  bert: { kind: 'transformer', family: 'bert', tiedEmbeddings: true, storedDtype: 'fp32', norm: 'layernorm', normPlacement: 'post',
    qkvFused: false, mlp: 'gelu', attnBias: 'all', mlpBias: true, hiddenDropout: true, attnDropout: true, positions: 'learned',
    typeVocab: 2, pooler: true, extraNormsPerLayer: 0, decoderLayers: 0, task: 'seq-cls' },
  distilbert: { kind: 'transformer', family: 'distilbert', tiedEmbeddings: true, storedDtype: 'fp32', norm: 'layernorm',
    normPlacement: 'post', qkvFused: false, mlp: 'gelu', attnBias: 'all', mlpBias: true, hiddenDropout: true, attnDropout: true,
    positions: 'learned', typeVocab: 0, pooler: false, extraNormsPerLayer: 0, decoderLayers: 0, task: 'seq-cls' },
  deberta: { kind: 'transformer', family: 'deberta', tiedEmbeddings: true, storedDtype: 'fp32', norm: 'layernorm',
    normPlacement: 'post', qkvFused: false, mlp: 'gelu', attnBias: 'all', mlpBias: true, hiddenDropout: true, attnDropout: true,
    // DeBERTa-v2/v3's base model has no pooler: the classification head's ContextPooler counts it.
    positions: 'relative', typeVocab: 0, pooler: false, extraNormsPerLayer: 0, decoderLayers: 0, task: 'seq-cls' },
  llama: { kind: 'transformer', family: 'llama', tiedEmbeddings: false, storedDtype: 'bf16', norm: 'rmsnorm', normPlacement: 'pre',
    qkvFused: false, mlp: 'swiglu', attnBias: 'none', mlpBias: false, hiddenDropout: false, attnDropout: false, positions: 'rotary',
    typeVocab: 0, pooler: false, extraNormsPerLayer: 0, decoderLayers: 0, task: 'causal-lm' },
  opt: { kind: 'transformer', family: 'opt', tiedEmbeddings: true, storedDtype: 'fp16', norm: 'layernorm', normPlacement: 'pre',
    qkvFused: false, mlp: 'relu', attnBias: 'all', mlpBias: true, hiddenDropout: true, attnDropout: false, positions: 'learned',
    typeVocab: 0, pooler: false, extraNormsPerLayer: 0, decoderLayers: 0, task: 'causal-lm' },
  phi: { kind: 'transformer', family: 'phi', tiedEmbeddings: false, storedDtype: 'fp16', norm: 'layernorm',
    normPlacement: 'parallel', qkvFused: false, mlp: 'gelu_new', attnBias: 'all', mlpBias: true, hiddenDropout: false,
    attnDropout: false, positions: 'rotary', typeVocab: 0, pooler: false, extraNormsPerLayer: -1, decoderLayers: 0, task: 'causal-lm' },
  gemma: { kind: 'transformer', family: 'gemma', tiedEmbeddings: true, storedDtype: 'bf16', norm: 'rmsnorm', normPlacement: 'pre',
    qkvFused: false, mlp: 'geglu', attnBias: 'none', mlpBias: false, hiddenDropout: false, attnDropout: false, positions: 'rotary',
    typeVocab: 0, pooler: false, extraNormsPerLayer: 0, decoderLayers: 0, task: 'causal-lm' },
  t5: { kind: 'transformer', family: 't5', tiedEmbeddings: true, storedDtype: 'fp32', norm: 'rmsnorm', normPlacement: 'pre',
    qkvFused: false, mlp: 'relu', attnBias: 'none', mlpBias: false, hiddenDropout: true, attnDropout: true, positions: 'relative',
    typeVocab: 0, pooler: false, extraNormsPerLayer: 0, decoderLayers: 6, task: 'seq2seq' },
  vit: { kind: 'transformer', family: 'vit', tiedEmbeddings: false, storedDtype: 'fp32', norm: 'layernorm', normPlacement: 'pre',
    qkvFused: false, mlp: 'gelu', attnBias: 'all', mlpBias: true, hiddenDropout: false, attnDropout: false, positions: 'learned',
    typeVocab: 0, pooler: false, extraNormsPerLayer: 0, decoderLayers: 0, task: 'image-cls', imageSize: 224, patchSize: 16 },
  // CLIP's hidden_act is quick_gelu in both towers.
  clip: { kind: 'transformer', family: 'clip', tiedEmbeddings: false, storedDtype: 'fp32', norm: 'layernorm', normPlacement: 'pre',
    qkvFused: false, mlp: 'quick_gelu', attnBias: 'all', mlpBias: true, hiddenDropout: false, attnDropout: false, positions: 'learned',
    typeVocab: 0, pooler: false, extraNormsPerLayer: 0, decoderLayers: 0, task: 'contrastive' },
  // BART (post-LN) and mBART (pre-LN, normPlacement 'pre'): a LayerNorm on each stack's embeddings, learned positions
  // offset by 2 in each stack, GELU, biases everywhere, the head tied to the shared embedding. BartConfig's own
  // defaults: dropout 0.1, attention_dropout 0 (the checkpoints' config.json may set it).
  bart: { kind: 'transformer', family: 'bart', tiedEmbeddings: true, storedDtype: 'fp32', norm: 'layernorm', normPlacement: 'post',
    qkvFused: false, mlp: 'gelu', attnBias: 'all', mlpBias: true, hiddenDropout: true, attnDropout: false, positions: 'learned',
    typeVocab: 0, pooler: false, extraNormsPerLayer: 0, decoderLayers: 6, task: 'seq2seq' },
  whisper: { kind: 'transformer', family: 'whisper', tiedEmbeddings: true, storedDtype: 'fp32', norm: 'layernorm',
    normPlacement: 'pre', qkvFused: false, mlp: 'gelu', attnBias: 'all', mlpBias: true, hiddenDropout: false, attnDropout: false,
    positions: 'learned', typeVocab: 0, pooler: false, extraNormsPerLayer: 0, decoderLayers: 4, task: 'speech-seq2seq',
    melBins: 80, encoderFrames: 1500 },
  // GPT-NeoX (Pythia): fused query_key_value and dense with biases, GELU MLP (dense_h_to_4h / dense_4h_to_h), two
  // LayerNorms per layer, partial rotary positions (no parameters), an untied embed_out, dropouts 0 by default.
  // use_parallel_residual (Pythia's) feeds both norms the same residual; counted as two pre-norms, which keeps one
  // residual-sized input too many per layer (the shared LayerNorm input), a small share of a layer's activations.
  gpt_neox: { kind: 'transformer', family: 'gpt_neox', tiedEmbeddings: false, storedDtype: 'fp16', norm: 'layernorm',
    normPlacement: 'pre', qkvFused: true, mlp: 'gelu', attnBias: 'all', mlpBias: true, hiddenDropout: false, attnDropout: false,
    positions: 'rotary', typeVocab: 0, pooler: false, extraNormsPerLayer: 0, decoderLayers: 0, task: 'causal-lm' },
  // ALBERT: BERT's post-LN layers (gelu_new) with factorised embeddings and one layer shared by the whole stack;
  // AlbertConfig's dropouts are 0 (the v2 checkpoints').
  albert: { kind: 'transformer', family: 'albert', tiedEmbeddings: true, storedDtype: 'fp32', norm: 'layernorm', normPlacement: 'post',
    qkvFused: false, mlp: 'gelu_new', attnBias: 'all', mlpBias: true, hiddenDropout: false, attnDropout: false, positions: 'learned',
    typeVocab: 2, pooler: true, extraNormsPerLayer: 0, decoderLayers: 0, task: 'masked-lm', embeddingSize: 128, storedLayers: 1 },
  // Wav2Vec2 and HuBERT: a BERT-like encoder (post-LN unless do_stable_layer_norm) over the frames of a convolutional
  // feature encoder, positions from a grouped convolution, no token embeddings; ForCTC adds a linear head over a
  // small character vocabulary. Dropouts 0.1 (hidden, attention, activation) by default.
  wav2vec2: { kind: 'transformer', family: 'wav2vec2', tiedEmbeddings: false, storedDtype: 'fp32', norm: 'layernorm',
    normPlacement: 'post', qkvFused: false, mlp: 'gelu', attnBias: 'all', mlpBias: true, hiddenDropout: true, attnDropout: true,
    positions: 'none', typeVocab: 0, pooler: false, extraNormsPerLayer: 0, decoderLayers: 0, task: 'ctc', audio: WAV2VEC2_FEATURE_ENCODER },
};

/** Builds a spec from a family's traits and a config's sizes. */
export function makeSpec(family: TransformerFamily, shape: Shape): TransformerSpec {
  const heads = shape.heads;
  return {
    ...FAMILY_TRAITS[family],
    kvHeads: heads,
    headDim: Math.floor(shape.hidden / heads),
    numLabels: 2,
    ...shape,
  } as TransformerSpec;
}

export interface CatalogModel {
  /** Hugging Face id, as in from_pretrained("..."). */
  id: string;
  spec: TransformerSpec;
  /** Published parameter count of the checkpoint's base model (model card or safetensors index), for the catalog test. */
  publishedParameters: number;
  /**
   * The checkpoint has its own lm_head, which transformers 5 ties to the input embedding anyway (T5Config sets
   * tie_word_embeddings=True whatever config.json says: Flan-T5 measures 222,903,552 parameters, not 247,577,856).
   */
  headTiedOnLoad?: boolean;
}

function entry(id: string, family: TransformerFamily, published: number, shape: Shape, headTiedOnLoad = false): CatalogModel {
  return { id, spec: makeSpec(family, shape), publishedParameters: published, ...(headTiedOnLoad ? { headTiedOnLoad } : {}) };
}

const gpt2 = (id: string, p: number, hidden: number, layers: number, heads: number): CatalogModel =>
  entry(id, 'gpt2', p, { hidden, layers, heads, intermediate: 4 * hidden, vocab: 50257, maxPositions: 1024 });
const bert = (id: string, p: number, hidden: number, layers: number, heads: number, vocab = 30522): CatalogModel =>
  entry(id, 'bert', p, { hidden, layers, heads, intermediate: 4 * hidden, vocab, maxPositions: 512 });
const roberta = (id: string, p: number, hidden: number, layers: number, heads: number): CatalogModel =>
  entry(id, 'bert', p, { hidden, layers, heads, intermediate: 4 * hidden, vocab: 50265, maxPositions: 514, typeVocab: 1 });
const opt = (id: string, p: number, hidden: number, layers: number, heads: number, extra: Partial<TransformerSpec> = {}): CatalogModel =>
  entry(id, 'opt', p, { hidden, layers, heads, intermediate: 4 * hidden, vocab: 50272, maxPositions: 2048, ...extra });
// Pythia (GPT-NeoX): MLP 4 x hidden, vocabulary padded to 50304, checkpoints stored in fp16.
const pythia = (id: string, p: number, hidden: number, layers: number, heads: number): CatalogModel =>
  entry(id, 'gpt_neox', p, { hidden, layers, heads, intermediate: 4 * hidden, vocab: 50304, maxPositions: 2048 });
const llama = (id: string, p: number, s: Shape & { kvHeads: number; storedDtype: WeightDtype }): CatalogModel => entry(id, 'llama', p, s);
const qwen = (id: string, p: number, s: Shape & { kvHeads: number }): CatalogModel =>
  entry(id, 'llama', p, { attnBias: 'qkv', storedDtype: 'bf16', ...s });
// transformers 5 ties every T5 head to the shared embedding: an untied checkpoint (Flan-T5) loads tied.
const t5 = (id: string, p: number, s: Shape & { headDim: number; decoderLayers: number; mlp: 'relu' | 'geglu'; tiedEmbeddings: boolean }): CatalogModel =>
  entry(id, 't5', p, { ...s, tiedEmbeddings: true }, !s.tiedEmbeddings);

// The large checkpoints trained on Libri-Light (lv60), XLS-R and HuBERT large: pre-LN (do_stable_layer_norm), a
// LayerNorm after every feature convolution, convolutions with biases.
const STABLE_AUDIO: AudioEncoderSpec = { ...WAV2VEC2_FEATURE_ENCODER, featureNorm: 'layer', convBias: true };
const wav2vec2 = (id: string, p: number, size: 'base' | 'large' | 'large-stable', vocab = 32): CatalogModel =>
  entry(id, 'wav2vec2', p, size === 'base'
    ? { hidden: 768, layers: 12, heads: 12, intermediate: 3072, vocab, maxPositions: 0 }
    : { hidden: 1024, layers: 24, heads: 16, intermediate: 4096, vocab, maxPositions: 0,
      ...(size === 'large-stable' ? { normPlacement: 'pre', audio: STABLE_AUDIO } : {}) });

// The ALBERT v2 checkpoints: 12 or 24 applications of one shared layer over 128-wide embeddings, 30,000 tokens.
const albert = (id: string, p: number, hidden: number, layers: number, heads: number): CatalogModel =>
  entry(id, 'albert', p, { hidden, layers, heads, intermediate: 4 * hidden, vocab: 30000, maxPositions: 512 });

export const MODEL_CATALOG: CatalogModel[] = [
  bert('bert-base-uncased', 109_482_240, 768, 12, 12),
  bert('bert-base-cased', 108_310_272, 768, 12, 12, 28996),
  bert('bert-large-uncased', 335_141_888, 1024, 24, 16),
  bert('bert-large-cased', 333_579_264, 1024, 24, 16, 28996),
  bert('bert-base-multilingual-cased', 177_853_440, 768, 12, 12, 119547),
  roberta('roberta-base', 124_645_632, 768, 12, 12),
  roberta('FacebookAI/roberta-base', 124_645_632, 768, 12, 12),
  roberta('roberta-large', 355_359_744, 1024, 24, 16),
  roberta('FacebookAI/roberta-large', 355_359_744, 1024, 24, 16),
  albert('albert-base-v2', 11_683_584, 768, 12, 12),
  albert('albert/albert-base-v2', 11_683_584, 768, 12, 12),
  albert('albert-large-v2', 17_683_968, 1024, 24, 16),
  albert('albert-xlarge-v2', 58_724_864, 2048, 24, 16),
  albert('albert-xxlarge-v2', 222_595_584, 4096, 12, 64),
  entry('distilbert-base-uncased', 'distilbert', 66_362_880, { hidden: 768, layers: 6, heads: 12, intermediate: 3072, vocab: 30522, maxPositions: 512 }),
  entry('distilbert/distilbert-base-uncased', 'distilbert', 66_362_880, { hidden: 768, layers: 6, heads: 12, intermediate: 3072, vocab: 30522, maxPositions: 512 }),
  entry('distilbert-base-cased', 'distilbert', 65_190_912, { hidden: 768, layers: 6, heads: 12, intermediate: 3072, vocab: 28996, maxPositions: 512 }),
  entry('microsoft/deberta-v3-base', 'deberta', 183_831_552, { hidden: 768, layers: 12, heads: 12, intermediate: 3072, vocab: 128100, maxPositions: 512 }),
  entry('microsoft/deberta-v3-small', 'deberta', 141_304_320, { hidden: 768, layers: 6, heads: 12, intermediate: 3072, vocab: 128100, maxPositions: 512 }),
  entry('microsoft/deberta-v3-large', 'deberta', 434_012_160, { hidden: 1024, layers: 24, heads: 16, intermediate: 4096, vocab: 128100, maxPositions: 512 }),
  gpt2('gpt2', 124_439_808, 768, 12, 12),
  gpt2('openai-community/gpt2', 124_439_808, 768, 12, 12),
  gpt2('gpt2-medium', 354_823_168, 1024, 24, 16),
  gpt2('openai-community/gpt2-medium', 354_823_168, 1024, 24, 16),
  gpt2('gpt2-large', 774_030_080, 1280, 36, 20),
  gpt2('openai-community/gpt2-large', 774_030_080, 1280, 36, 20),
  gpt2('gpt2-xl', 1_557_611_200, 1600, 48, 25),
  gpt2('openai-community/gpt2-xl', 1_557_611_200, 1600, 48, 25),
  gpt2('distilgpt2', 81_912_576, 768, 6, 12),
  gpt2('distilbert/distilgpt2', 81_912_576, 768, 6, 12),
  opt('facebook/opt-125m', 125_239_296, 768, 12, 12),
  opt('facebook/opt-350m', 331_196_416, 1024, 24, 16, { normPlacement: 'post', embedProjection: 512 }),
  opt('facebook/opt-1.3b', 1_315_758_080, 2048, 24, 32),
  opt('facebook/opt-2.7b', 2_651_596_800, 2560, 32, 32),
  opt('facebook/opt-6.7b', 6_658_473_984, 4096, 32, 32),
  pythia('EleutherAI/pythia-70m', 70_426_624, 512, 6, 8),
  pythia('EleutherAI/pythia-160m', 162_322_944, 768, 12, 12),
  pythia('EleutherAI/pythia-410m', 405_334_016, 1024, 24, 16),
  pythia('EleutherAI/pythia-1b', 1_011_781_632, 2048, 16, 8),
  pythia('EleutherAI/pythia-1.4b', 1_414_647_808, 2048, 24, 16),
  llama('meta-llama/Llama-2-7b-hf', 6_738_415_616, { hidden: 4096, layers: 32, heads: 32, kvHeads: 32, intermediate: 11008, vocab: 32000, maxPositions: 4096, storedDtype: 'fp16' }),
  llama('meta-llama/Llama-2-13b-hf', 13_015_864_320, { hidden: 5120, layers: 40, heads: 40, kvHeads: 40, intermediate: 13824, vocab: 32000, maxPositions: 4096, storedDtype: 'fp16' }),
  llama('meta-llama/Llama-2-7b-chat-hf', 6_738_415_616, { hidden: 4096, layers: 32, heads: 32, kvHeads: 32, intermediate: 11008, vocab: 32000, maxPositions: 4096, storedDtype: 'fp16' }),
  llama('meta-llama/Meta-Llama-3-8B', 8_030_261_248, { hidden: 4096, layers: 32, heads: 32, kvHeads: 8, intermediate: 14336, vocab: 128256, maxPositions: 8192, storedDtype: 'bf16' }),
  llama('meta-llama/Meta-Llama-3-8B-Instruct', 8_030_261_248, { hidden: 4096, layers: 32, heads: 32, kvHeads: 8, intermediate: 14336, vocab: 128256, maxPositions: 8192, storedDtype: 'bf16' }),
  llama('meta-llama/Llama-3.1-8B', 8_030_261_248, { hidden: 4096, layers: 32, heads: 32, kvHeads: 8, intermediate: 14336, vocab: 128256, maxPositions: 131072, storedDtype: 'bf16' }),
  llama('meta-llama/Llama-3.1-8B-Instruct', 8_030_261_248, { hidden: 4096, layers: 32, heads: 32, kvHeads: 8, intermediate: 14336, vocab: 128256, maxPositions: 131072, storedDtype: 'bf16' }),
  llama('meta-llama/Llama-3.2-1B', 1_235_814_400, { hidden: 2048, layers: 16, heads: 32, kvHeads: 8, intermediate: 8192, vocab: 128256, maxPositions: 131072, storedDtype: 'bf16', tiedEmbeddings: true }),
  llama('meta-llama/Llama-3.2-1B-Instruct', 1_235_814_400, { hidden: 2048, layers: 16, heads: 32, kvHeads: 8, intermediate: 8192, vocab: 128256, maxPositions: 131072, storedDtype: 'bf16', tiedEmbeddings: true }),
  llama('meta-llama/Llama-3.2-3B', 3_212_749_824, { hidden: 3072, layers: 28, heads: 24, kvHeads: 8, intermediate: 8192, vocab: 128256, maxPositions: 131072, storedDtype: 'bf16', tiedEmbeddings: true }),
  llama('meta-llama/Llama-3.2-3B-Instruct', 3_212_749_824, { hidden: 3072, layers: 28, heads: 24, kvHeads: 8, intermediate: 8192, vocab: 128256, maxPositions: 131072, storedDtype: 'bf16', tiedEmbeddings: true }),
  llama('TinyLlama/TinyLlama-1.1B-Chat-v1.0', 1_100_048_384, { hidden: 2048, layers: 22, heads: 32, kvHeads: 4, intermediate: 5632, vocab: 32000, maxPositions: 2048, storedDtype: 'bf16' }),
  llama('TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T', 1_100_048_384, { hidden: 2048, layers: 22, heads: 32, kvHeads: 4, intermediate: 5632, vocab: 32000, maxPositions: 2048, storedDtype: 'fp32' }),
  llama('mistralai/Mistral-7B-v0.1', 7_241_732_096, { hidden: 4096, layers: 32, heads: 32, kvHeads: 8, intermediate: 14336, vocab: 32000, maxPositions: 32768, storedDtype: 'bf16' }),
  llama('mistralai/Mistral-7B-Instruct-v0.2', 7_241_732_096, { hidden: 4096, layers: 32, heads: 32, kvHeads: 8, intermediate: 14336, vocab: 32000, maxPositions: 32768, storedDtype: 'bf16' }),
  qwen('Qwen/Qwen2-0.5B', 494_032_768, { hidden: 896, layers: 24, heads: 14, kvHeads: 2, intermediate: 4864, vocab: 151936, maxPositions: 32768, tiedEmbeddings: true }),
  qwen('Qwen/Qwen2-1.5B', 1_543_714_304, { hidden: 1536, layers: 28, heads: 12, kvHeads: 2, intermediate: 8960, vocab: 151936, maxPositions: 32768, tiedEmbeddings: true }),
  qwen('Qwen/Qwen2-7B', 7_615_616_512, { hidden: 3584, layers: 28, heads: 28, kvHeads: 4, intermediate: 18944, vocab: 152064, maxPositions: 32768 }),
  qwen('Qwen/Qwen2.5-0.5B', 494_032_768, { hidden: 896, layers: 24, heads: 14, kvHeads: 2, intermediate: 4864, vocab: 151936, maxPositions: 32768, tiedEmbeddings: true }),
  qwen('Qwen/Qwen2.5-0.5B-Instruct', 494_032_768, { hidden: 896, layers: 24, heads: 14, kvHeads: 2, intermediate: 4864, vocab: 151936, maxPositions: 32768, tiedEmbeddings: true }),
  qwen('Qwen/Qwen2.5-1.5B', 1_543_714_304, { hidden: 1536, layers: 28, heads: 12, kvHeads: 2, intermediate: 8960, vocab: 151936, maxPositions: 131072, tiedEmbeddings: true }),
  qwen('Qwen/Qwen2.5-1.5B-Instruct', 1_543_714_304, { hidden: 1536, layers: 28, heads: 12, kvHeads: 2, intermediate: 8960, vocab: 151936, maxPositions: 32768, tiedEmbeddings: true }),
  qwen('Qwen/Qwen2.5-3B', 3_085_938_688, { hidden: 2048, layers: 36, heads: 16, kvHeads: 2, intermediate: 11008, vocab: 151936, maxPositions: 32768, tiedEmbeddings: true }),
  qwen('Qwen/Qwen2.5-7B', 7_615_616_512, { hidden: 3584, layers: 28, heads: 28, kvHeads: 4, intermediate: 18944, vocab: 152064, maxPositions: 131072 }),
  qwen('Qwen/Qwen2.5-7B-Instruct', 7_615_616_512, { hidden: 3584, layers: 28, heads: 28, kvHeads: 4, intermediate: 18944, vocab: 152064, maxPositions: 32768 }),
  entry('microsoft/phi-2', 'phi', 2_779_683_840, { hidden: 2560, layers: 32, heads: 32, intermediate: 10240, vocab: 51200, maxPositions: 2048 }),
  entry('microsoft/Phi-3-mini-4k-instruct', 'llama', 3_821_079_552, { hidden: 3072, layers: 32, heads: 32, kvHeads: 32, intermediate: 8192, vocab: 32064, maxPositions: 4096, qkvFused: true, storedDtype: 'bf16' }),
  entry('microsoft/Phi-3-mini-128k-instruct', 'llama', 3_821_079_552, { hidden: 3072, layers: 32, heads: 32, kvHeads: 32, intermediate: 8192, vocab: 32064, maxPositions: 131072, qkvFused: true, storedDtype: 'bf16' }),
  entry('google/gemma-2b', 'gemma', 2_506_172_416, { hidden: 2048, layers: 18, heads: 8, kvHeads: 1, headDim: 256, intermediate: 16384, vocab: 256000, maxPositions: 8192 }),
  entry('google/gemma-7b', 'gemma', 8_537_680_896, { hidden: 3072, layers: 28, heads: 16, kvHeads: 16, headDim: 256, intermediate: 24576, vocab: 256000, maxPositions: 8192 }),
  entry('google/gemma-2-2b', 'gemma', 2_614_341_888, { hidden: 2304, layers: 26, heads: 8, kvHeads: 4, headDim: 256, intermediate: 9216, vocab: 256000, maxPositions: 8192, extraNormsPerLayer: 2, storedDtype: 'fp32', finalLogitSoftcap: true }),
  t5('t5-small', 60_506_624, { hidden: 512, layers: 6, decoderLayers: 6, heads: 8, headDim: 64, intermediate: 2048, vocab: 32128, maxPositions: 512, mlp: 'relu', tiedEmbeddings: true }),
  t5('google-t5/t5-small', 60_506_624, { hidden: 512, layers: 6, decoderLayers: 6, heads: 8, headDim: 64, intermediate: 2048, vocab: 32128, maxPositions: 512, mlp: 'relu', tiedEmbeddings: true }),
  t5('t5-base', 222_903_552, { hidden: 768, layers: 12, decoderLayers: 12, heads: 12, headDim: 64, intermediate: 3072, vocab: 32128, maxPositions: 512, mlp: 'relu', tiedEmbeddings: true }),
  t5('google-t5/t5-base', 222_903_552, { hidden: 768, layers: 12, decoderLayers: 12, heads: 12, headDim: 64, intermediate: 3072, vocab: 32128, maxPositions: 512, mlp: 'relu', tiedEmbeddings: true }),
  t5('t5-large', 737_668_096, { hidden: 1024, layers: 24, decoderLayers: 24, heads: 16, headDim: 64, intermediate: 4096, vocab: 32128, maxPositions: 512, mlp: 'relu', tiedEmbeddings: true }),
  t5('google/flan-t5-small', 76_961_152, { hidden: 512, layers: 8, decoderLayers: 8, heads: 6, headDim: 64, intermediate: 1024, vocab: 32128, maxPositions: 512, mlp: 'geglu', tiedEmbeddings: false }),
  t5('google/flan-t5-base', 247_577_856, { hidden: 768, layers: 12, decoderLayers: 12, heads: 12, headDim: 64, intermediate: 2048, vocab: 32128, maxPositions: 512, mlp: 'geglu', tiedEmbeddings: false }),
  t5('google/flan-t5-large', 783_150_080, { hidden: 1024, layers: 24, decoderLayers: 24, heads: 16, headDim: 64, intermediate: 2816, vocab: 32128, maxPositions: 512, mlp: 'geglu', tiedEmbeddings: false }),
  // mT5: T5 v1.1's layers (gated GELU, untied head in the checkpoints) over a 250,112-token vocabulary; published counts
  // are the checkpoints' (untied), transformers 5 ties the head on load (MT5Config always ties).
  t5('google/mt5-small', 300_176_768, { hidden: 512, layers: 8, decoderLayers: 8, heads: 6, headDim: 64, intermediate: 1024, vocab: 250112, maxPositions: 512, mlp: 'geglu', tiedEmbeddings: false }),
  t5('google/mt5-base', 582_401_280, { hidden: 768, layers: 12, decoderLayers: 12, heads: 12, headDim: 64, intermediate: 2048, vocab: 250112, maxPositions: 512, mlp: 'geglu', tiedEmbeddings: false }),
  t5('google/mt5-large', 1_229_581_312, { hidden: 1024, layers: 24, decoderLayers: 24, heads: 16, headDim: 64, intermediate: 2816, vocab: 250112, maxPositions: 512, mlp: 'geglu', tiedEmbeddings: false }),
  entry('facebook/bart-base', 'bart', 139_420_416, { hidden: 768, layers: 6, decoderLayers: 6, heads: 12, intermediate: 3072, vocab: 50265, maxPositions: 1024, attnDropout: true }),
  entry('facebook/bart-large', 'bart', 406_291_456, { hidden: 1024, layers: 12, decoderLayers: 12, heads: 16, intermediate: 4096, vocab: 50265, maxPositions: 1024, attnDropout: true }),
  entry('facebook/mbart-large-cc25', 'bart', 610_851_840, { hidden: 1024, layers: 12, decoderLayers: 12, heads: 16, intermediate: 4096, vocab: 250027, maxPositions: 1024, normPlacement: 'pre' }),
  // Marian (the Helsinki-NLP opus-mt models): BART's post-LN layers with sinusoidal position tables, no embedding
  // LayerNorms, one embedding shared by both stacks and the head. opus-mt-en-de: 74,410,496 parameters as built by
  // MarianMTModel (test/gpu/holdout6/results/h200.json).
  entry('Helsinki-NLP/opus-mt-en-de', 'bart', 74_410_496, { hidden: 512, layers: 6, decoderLayers: 6, heads: 8, intermediate: 2048, vocab: 58101, maxPositions: 512, positions: 'learned', sinusoidalPositionTables: true }),
  entry('google/vit-base-patch16-224', 'vit', 86_567_656, { hidden: 768, layers: 12, heads: 12, intermediate: 3072, vocab: 0, maxPositions: 197, numLabels: 1000 }),
  entry('google/vit-base-patch16-224-in21k', 'vit', 86_389_248, { hidden: 768, layers: 12, heads: 12, intermediate: 3072, vocab: 0, maxPositions: 197, task: 'base', pooler: true }),
  entry('google/vit-large-patch16-224', 'vit', 304_326_632, { hidden: 1024, layers: 24, heads: 16, intermediate: 4096, vocab: 0, maxPositions: 197, numLabels: 1000 }),
  // ViT-MAE base: a ViT-B/16 encoder without pooler, an 8 x 512 decoder over every patch (its position tables are
  // frozen sinusoids, counted here as transformers' parameters() counts them).
  entry('facebook/vit-mae-base', 'vit', 111_907_840, {
    hidden: 768, layers: 12, heads: 12, intermediate: 3072, vocab: 0, maxPositions: 197, task: 'base', maskRatio: 0.75,
    decoder: makeSpec('vit', { hidden: 512, layers: 8, heads: 16, intermediate: 2048, vocab: 0, maxPositions: 197, task: 'base' }),
  }),
  entry('openai/clip-vit-base-patch32', 'clip', 151_277_313, {
    hidden: 512, layers: 12, heads: 8, intermediate: 2048, vocab: 49408, maxPositions: 77, projectionDim: 512,
    vision: makeSpec('vit', { hidden: 768, layers: 12, heads: 12, intermediate: 3072, vocab: 0, maxPositions: 50, patchSize: 32, imageSize: 224, task: 'base', mlp: 'quick_gelu' }),
  }),
  entry('openai/whisper-tiny', 'whisper', 37_760_640, { hidden: 384, layers: 4, decoderLayers: 4, heads: 6, intermediate: 1536, vocab: 51865, maxPositions: 448 }),
  entry('openai/whisper-base', 'whisper', 72_593_920, { hidden: 512, layers: 6, decoderLayers: 6, heads: 8, intermediate: 2048, vocab: 51865, maxPositions: 448 }),
  entry('openai/whisper-small', 'whisper', 241_734_912, { hidden: 768, layers: 12, decoderLayers: 12, heads: 12, intermediate: 3072, vocab: 51865, maxPositions: 448 }),
  // Wav2Vec2ForCTC / HubertForCTC with the checkpoints' 32-character vocabulary (counts as transformers builds them).
  wav2vec2('facebook/wav2vec2-base-960h', 94_396_320, 'base'),
  wav2vec2('facebook/wav2vec2-base', 94_396_320, 'base'),
  wav2vec2('facebook/wav2vec2-large-960h', 315_461_792, 'large'),
  wav2vec2('facebook/wav2vec2-large-960h-lv60-self', 315_471_520, 'large-stable'),
  wav2vec2('facebook/hubert-base-ls960', 94_396_320, 'base'),
  wav2vec2('facebook/hubert-large-ls960-ft', 315_471_520, 'large-stable'),
  // The multilingual pretrained checkpoints users fine-tune with a CTC head of their own vocabulary (32 as loaded).
  wav2vec2('facebook/wav2vec2-xls-r-300m', 315_471_520, 'large-stable'),
  wav2vec2('facebook/wav2vec2-large-xlsr-53', 315_471_520, 'large-stable'),
];

const BY_ID = new Map(MODEL_CATALOG.map((m) => [m.id.toLowerCase(), m]));

/** Looks a Hugging Face id up, with or without its organisation prefix. */
export function findCatalogModel(id: string): CatalogModel | undefined {
  const key = id.trim().toLowerCase();
  const exact = BY_ID.get(key);
  if (exact) return exact;
  const bare = key.includes('/') ? key.slice(key.lastIndexOf('/') + 1) : key;
  return MODEL_CATALOG.find((m) => {
    const mid = m.id.toLowerCase();
    return mid === bare || mid.endsWith('/' + bare);
  });
}
