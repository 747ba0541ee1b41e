// Naming conventions of PyTorch code: how a reader recognises a model, a loss function, an optimizer or a data
// loader when the script does not say so through its imports. The semantic model combines these with what it
// learns from assignments (`model = AutoModel.from_pretrained(…)`).
import { nameWords } from '../syntax';

const MODEL_WORDS = new Set([
  'model', 'models', 'net', 'network', 'encoder', 'decoder', 'generator', 'discriminator', 'netg', 'netd',
  'policy', 'critic', 'actor', 'classifier', 'backbone', 'teacher', 'student', 'vae', 'unet', 'transformer',
  'bert', 'gpt', 'gpt2', 'llm', 'lm', 'resnet', 'vit', 'autoencoder', 'qnet', 'dqn', 'seq2seq', 'gan', 'cnn',
  'rnn', 'lstm', 'mlp', 'ema', 'reward', 'embedder', 'tagger', 'detector', 'segmenter',
]);

/** Single-letter conventions (`G`, `D`) and common prefixes of wrapped models. */
const MODEL_EXACT = new Set([
  'G', 'D', 'netG', 'netD', 'module', 'Q', 'target_net', 'policy_net',
  // Submodules called one by one (`for layer in self.layers: h = layer(h)`); only these exact names, since
  // `norm_layer` or `is_last_stage` are factories and predicates.
  'layer', 'layers', 'block', 'blocks', 'blk', 'stage', 'stages',
]);

const modelNameCache = new Map<string, boolean>();

export function looksLikeModelName(name: string): boolean {
  let result = modelNameCache.get(name);
  if (result === undefined) {
    result = computeLooksLikeModelName(name);
    if (modelNameCache.size > 50_000) modelNameCache.clear();
    modelNameCache.set(name, result);
  }
  return result;
}

function computeLooksLikeModelName(name: string): boolean {
  if (MODEL_EXACT.has(name)) return true;
  const words = nameWords(name);
  if (words.length === 0) return false;
  // The last word carries the meaning: `model_path` and `model_name` are not models.
  const last = words[words.length - 1]!;
  if (NOT_A_MODEL_LAST_WORDS.has(last)) return false;
  return words.some((word) => MODEL_WORDS.has(word) || /^(net|model)\d*$/.test(word) || /net$/.test(word) && word.length > 4 && !NON_MODEL_NET_WORDS.has(word));
}

/** Verbs of functions and methods that hand a model over or act on it, rather than run it. */
const ACCESSOR_VERBS = new Set([
  'get', 'build', 'create', 'make', 'load', 'save', 'unwrap', 'wrap', 'prepare', 'init', 'initialize', 'setup',
  'copy', 'clone', 'freeze', 'unfreeze', 'export', 'register', 'print', 'log', 'update', 'reset', 'set', 'push',
  'download', 'restore', 'sync', 'merge', 'quantize', 'extract', 'convert', 'compile', 'apply', 'summarize',
]);

/** `unwrap_model`, `get_model`, `save_model`: a verb phrase about a model, not a model (its call is no forward). */
/**
 * A method of a model class from another file that computes something (`discr.predict_reward(...)`,
 * `model.compute_loss(...)`): what it returns and whether it runs under no_grad are in that file, so it is not
 * taken for a forward.
 */
const COMPUTATION_VERBS = new Set(['predict', 'compute', 'calc', 'calculate', 'estimate', 'score', 'sample']);

export function looksLikeComputationMethod(name: string): boolean {
  const words = nameWords(name);
  return words.length >= 2 && COMPUTATION_VERBS.has(words[0]!);
}

export function looksLikeModelAccessor(name: string): boolean {
  const words = nameWords(name);
  return words.length >= 2 && ACCESSOR_VERBS.has(words[0]!);
}

const NOT_A_MODEL_LAST_WORDS = new Set([
  'path', 'name', 'dir', 'file', 'type', 'id', 'config', 'cfg', 'args', 'kwargs', 'params', 'parameters',
  'state', 'dict', 'outputs', 'output', 'out', 'loss', 'losses', 'optimizer', 'opt', 'scheduler', 'lr',
  'checkpoint', 'ckpt', 'size', 'dim', 'str', 'url', 'list', 'names', 'keys', 'weights', 'grads', 'tokenizer',
  'processor', 'step', 'steps', 'logits', 'preds', 'predictions', 'fn', 'kind', 'version', 'class', 'cls',
  'accuracy', 'acc', 'score', 'scores', 'results', 'result', 'metrics', 'summary', 'device', 'dtype', 'memory',
  'inputs', 'input', 'features', 'feature', 'hidden', 'embeddings', 'embedding', 'ids', 'mask', 'labels',
]);
const NON_MODEL_NET_WORDS = new Set(['imagenet', 'internet', 'subnet', 'magnet', 'planet']);

const LOSS_FUNCTION_WORDS = new Set(['criterion', 'crit', 'lossfn', 'objective']);

/** A callable that computes a loss (`criterion`, `loss_fn`, `self.loss_func`, `compute_loss`). */
export function looksLikeLossFunctionName(name: string): boolean {
  const words = nameWords(name);
  if (words.some((word) => LOSS_FUNCTION_WORDS.has(word))) return true;
  const joined = words.join('_');
  return /(^|_)loss_(fn|func|function|module)$/.test(joined) || /^(compute|calc|calculate|get)_\w*loss$/.test(joined);
}

/** Functions of torch / torch.nn.functional that compute a loss from their inputs. */
export const FUNCTIONAL_LOSSES = new Set([
  'cross_entropy', 'nll_loss', 'mse_loss', 'l1_loss', 'smooth_l1_loss', 'huber_loss', 'kl_div',
  'binary_cross_entropy', 'binary_cross_entropy_with_logits', 'cosine_embedding_loss', 'margin_ranking_loss',
  'triplet_margin_loss', 'ctc_loss', 'poisson_nll_loss', 'gaussian_nll_loss', 'hinge_embedding_loss',
  'multilabel_soft_margin_loss', 'soft_margin_loss', 'multi_margin_loss', 'cosine_similarity',
]);

export function looksLikeOptimizerName(name: string): boolean {
  const words = nameWords(name);
  if (words.some((word) => word === 'scheduler' || word === 'sched' || word === 'lr' || word === 'warmup')) return false;
  return words.some((word) => /^(opt|optim|optimizer|optimiser|optimizers)\d*$/.test(word) || /^opt[a-z]$/.test(word));
}

export function looksLikeSchedulerName(name: string): boolean {
  return nameWords(name).some((word) => word === 'scheduler' || word === 'sched' || word === 'lr' || word === 'warmup');
}

const LOADER_WORDS = new Set([
  'loader', 'dataloader', 'loaders', 'batches', 'batch', 'dataset', 'data', 'iterator', 'iter', 'dl', 'ds',
  'train', 'val', 'valid', 'test', 'eval', 'samples', 'minibatches', 'episodes', 'pbar', 'progress', 'bar',
]);

/** An iterable that yields batches: `train_loader`, `tqdm(dataloader)`, `enumerate(loader)`. */
export function looksLikeDataName(name: string): boolean {
  return nameWords(name).some((word) => LOADER_WORDS.has(word));
}

const EVAL_WORDS = new Set([
  'eval', 'evaluate', 'evaluation', 'validate', 'validation', 'valid', 'val', 'test', 'testing', 'predict',
  'prediction', 'predictions', 'infer', 'inference',
]);

/** A function named for evaluation (the spec's list: eval/evaluate/validate/valid/test/predict/infer/inference). */
/** Verbs of functions that prepare something for a split rather than evaluate on it (`build_valid_loader`). */
const BUILDER_VERBS = new Set(['build', 'get', 'make', 'create', 'load', 'prepare', 'download', 'setup', 'init', 'collate']);

export function looksLikeEvalFunctionName(name: string): boolean {
  const words = nameWords(name);
  if (words.length > 0 && BUILDER_VERBS.has(words[0]!)) return false;
  // `train_and_validate` trains: its backward is its purpose.
  if (words.includes('train') || words.includes('training')) return false;
  return words.some((word) => EVAL_WORDS.has(word));
}

/** Lightning hooks that the framework already runs under no-grad. */
export const LIGHTNING_NO_GRAD_HOOKS = new Set([
  'validation_step', 'test_step', 'predict_step', 'on_validation_epoch_end', 'on_test_epoch_end',
  'validation_epoch_end', 'test_epoch_end', 'on_validation_batch_end', 'on_test_batch_end', 'on_predict_batch_end',
]);

/** Methods whose result carries no autograd history. */
export const DETACHING_METHODS = new Set([
  'item', 'tolist', 'numpy', 'detach', 'detach_', 'argmax', 'argmin', 'long', 'int', 'bool', 'byte', 'short',
  'eq', 'ne', 'gt', 'lt', 'ge', 'le', 'isnan', 'isinf', 'isfinite', 'argsort', 'size', 'dim', 'numel',
  'nonzero', 'sign', 'backward', 'data_ptr', 'stride', 'element_size', 'nelement', 'any', 'all', 'equal',
  'count_nonzero', 'tobytes', 'get_device', 'is_contiguous', 'round', 'floor', 'ceil', 'trunc',
]);

/** torch functions whose result carries no autograd history. */
export const DETACHING_TORCH_FUNCTIONS = new Set([
  'argmax', 'argmin', 'argsort', 'eq', 'ne', 'gt', 'lt', 'ge', 'le', 'isnan', 'isinf', 'isfinite', 'equal',
  'tensor', 'as_tensor', 'from_numpy', 'zeros', 'ones', 'empty', 'full', 'arange', 'linspace', 'randn', 'rand',
  'randint', 'randperm', 'zeros_like', 'ones_like', 'empty_like', 'full_like', 'rand_like', 'randn_like',
  'count_nonzero', 'nonzero', 'bucketize', 'searchsorted', 'unique', 'manual_seed', 'no_grad', 'device',
  'round', 'floor', 'ceil', 'sign', 'multinomial', 'bernoulli', 'eye', 'tril', 'triu',
]);

/** Attributes that step out of the graph (`x.data`, `x.grad`) or are not tensors (`x.shape`). */
export const DETACHING_ATTRIBUTES = new Set(['data', 'grad', 'shape', 'dtype', 'device', 'ndim', 'requires_grad', 'is_cuda', 'T_max']);

/** Builtins and library functions that turn a tensor into a Python value or a new leaf. */
export const DETACHING_FUNCTIONS = new Set([
  'float', 'int', 'bool', 'str', 'len', 'round', 'repr', 'format', 'isinstance', 'type', 'print', 'range',
  'id', 'hash',
]);

/** Calls that return (values, indices): the indices carry no graph. */
export const VALUES_AND_INDICES = new Set(['max', 'min', 'topk', 'sort', 'mode', 'median', 'kthvalue']);
