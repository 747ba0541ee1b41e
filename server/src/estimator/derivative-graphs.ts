// What a derivative taken with create_graph=True keeps, by the activation it goes through.
//
// `torch.autograd.grad(H, x, create_graph=True)` records the backward it runs as a graph of its own, kept (with the
// forward's) until a later backward runs through both. Per hidden layer of an MLP (a weighted layer and its
// activation), counted in tensors of the activation's size, what each op saves follows from PyTorch's derivative
// formulas (tools/autograd/derivatives.yaml, FunctionsManual.cpp):
//  - the forward: the weighted layer after the activation saves its output (its input) in every case; the activation
//    saves its output (tanh, sigmoid, ReLU: the same tensor, 1 in all) or its input (softplus, SiLU, GELU, ELU, Mish,
//    LeakyReLU, sin: 2 in all);
//  - the gradient: the weighted layer's backward (grad @ W) saves the pre-activation gradient it multiplies, to
//    differentiate W later (1); the activation's backward op saves the incoming gradient beside its input or output
//    where its own derivative needs it (tanh_backward, sigmoid_backward, softplus_backward, gelu_backward, elu_backward,
//    hardswish_backward: 1 more), not where it is piecewise linear (threshold_backward, leaky_relu_backward,
//    hardtanh_backward: 0); SiLU and Mish differentiate under grad mode through ops of their own
//    (infinitely_differentiable_silu_backward: sigmoid, 1 - sigmoid, the incoming gradient, grad * sigmoid and
//    1 + x (1 - sigmoid) saved, 5; Mish's: sigmoid, tanh(softplus), 1 - tanh^2, x * sigmoid, the incoming gradient,
//    their sum and, measured, one more: 7); sin saves the incoming gradient and cos(x) (2).
// A second derivative of the first (u_xx of u_x) adds a graph of the first's graph: not derived op by op, but taken
// from MLPs measured on the H200 (test/gpu/estimator/measure_step_keeps.py, results/step_keeps.json: tanh 8.9 and
// SiLU 8.75 x the plain forward at order 2, ReLU 3.0): per layer 5.9 more for the single-op smooth activations,
// 9.5 for the composite ones, 1 for the piecewise ones.
// Checked on the H200 (test/gpu/estimator/probe_hnn13.py, results/probe_hnn13.jsonl; MLPs of 4 x 512 and 3 x 1,024,
// 4,096 and 8,192 rows): per layer, forward and gradient keep 1 + 2 (tanh, sigmoid), 2 + 2 (Softplus, GELU either
// way, ELU), 2 + 6 (SiLU), 2 + 8 (Mish), 1 + 1 (ReLU), 2 + 1 (LeakyReLU) tensors, to 0.3%. Four evaluations chained
// (each one's input the last one's result, a rollout) keep 4.0 x one for tanh, sigmoid and ReLU, 3.7-3.9 x for the
// input-saving ones: counted as 4 here, a few per cent over.

/** The activation a create_graph derivative goes through, by what its derivative saves. */
export type DerivativeActivation = 'tanh' | 'sigmoid' | 'softplus' | 'gelu' | 'elu' | 'elu_inplace' | 'hardswish' | 'sin' | 'silu'
  | 'mish' | 'relu' | 'leaky_relu' | 'leaky_relu_inplace' | 'hardtanh' | 'hardtanh_inplace';

/** Tensors of the activation's size kept per hidden layer: by its forward, and more by each order of derivative. */
interface DerivativeSaves {
  forward: number;
  firstOrder: number;
  secondOrder: number;
}

const SINGLE_OP_SECOND_ORDER = 5.9;
const COMPOSITE_SECOND_ORDER = 9.5;
const PIECEWISE_SECOND_ORDER = 1;

const SAVES: Record<DerivativeActivation, DerivativeSaves> = {
  tanh: { forward: 1, firstOrder: 2, secondOrder: SINGLE_OP_SECOND_ORDER },
  sigmoid: { forward: 1, firstOrder: 2, secondOrder: SINGLE_OP_SECOND_ORDER },
  softplus: { forward: 2, firstOrder: 2, secondOrder: SINGLE_OP_SECOND_ORDER },
  gelu: { forward: 2, firstOrder: 2, secondOrder: SINGLE_OP_SECOND_ORDER },
  elu: { forward: 2, firstOrder: 2, secondOrder: SINGLE_OP_SECOND_ORDER },
  // In place, ELU, LeakyReLU and Hardtanh save their output (`elu_`: is_result), the next layer's input: 1 forward.
  elu_inplace: { forward: 1, firstOrder: 2, secondOrder: SINGLE_OP_SECOND_ORDER },
  hardswish: { forward: 2, firstOrder: 2, secondOrder: SINGLE_OP_SECOND_ORDER },
  sin: { forward: 2, firstOrder: 3, secondOrder: SINGLE_OP_SECOND_ORDER },
  silu: { forward: 2, firstOrder: 6, secondOrder: COMPOSITE_SECOND_ORDER },
  mish: { forward: 2, firstOrder: 8, secondOrder: COMPOSITE_SECOND_ORDER },
  relu: { forward: 1, firstOrder: 1, secondOrder: PIECEWISE_SECOND_ORDER },
  leaky_relu: { forward: 2, firstOrder: 1, secondOrder: PIECEWISE_SECOND_ORDER },
  leaky_relu_inplace: { forward: 1, firstOrder: 1, secondOrder: PIECEWISE_SECOND_ORDER },
  hardtanh: { forward: 2, firstOrder: 1, secondOrder: PIECEWISE_SECOND_ORDER },
  hardtanh_inplace: { forward: 1, firstOrder: 1, secondOrder: PIECEWISE_SECOND_ORDER },
};

/**
 * The activation each call name (a layer class or a function, lower-cased) stands for; a trailing `_` marks one made
 * in place (see INPLACE), which other activations ignore (ReLU and the output-saving ones save the same either way).
 */
const BY_NAME: ReadonlyMap<string, DerivativeActivation> = new Map([
  ['tanh', 'tanh'], ['sigmoid', 'sigmoid'], ['softplus', 'softplus'], ['gelu', 'gelu'], ['elu', 'elu'], ['selu', 'elu'],
  ['celu', 'elu'], ['logsigmoid', 'softplus'], ['hardswish', 'hardswish'], ['sin', 'sin'], ['cos', 'sin'],
  ['silu', 'silu'], ['swish', 'silu'], ['mish', 'mish'], ['relu', 'relu'], ['leakyrelu', 'leaky_relu'],
  ['leaky_relu', 'leaky_relu'], ['prelu', 'leaky_relu'], ['relu6', 'hardtanh'], ['hardtanh', 'hardtanh'],
] as const);

const INPLACE: ReadonlyMap<DerivativeActivation, DerivativeActivation> = new Map([
  ['elu', 'elu_inplace'], ['leaky_relu', 'leaky_relu_inplace'], ['hardtanh', 'hardtanh_inplace'],
] as const);

/** The activation a call name stands for (see BY_NAME), in place where it ends with `_`. */
function activationNamed(name: string): DerivativeActivation | undefined {
  const lower = name.toLowerCase();
  const inPlace = lower.endsWith('_');
  const found = BY_NAME.get(inPlace ? lower.slice(0, -1) : lower);
  return found && inPlace ? INPLACE.get(found) ?? found : found;
}

/** How each activation is written in PyTorch, for the estimate's assumptions. */
export const ACTIVATION_SHOWN: Record<DerivativeActivation, string> = {
  tanh: 'Tanh', sigmoid: 'Sigmoid', softplus: 'Softplus', gelu: 'GELU', elu: 'ELU', elu_inplace: 'ELU(inplace=True)',
  hardswish: 'Hardswish', sin: 'sin', silu: 'SiLU', mish: 'Mish', relu: 'ReLU', leaky_relu: 'LeakyReLU',
  leaky_relu_inplace: 'LeakyReLU(inplace=True)', hardtanh: 'Hardtanh', hardtanh_inplace: 'Hardtanh(inplace=True)',
};

/** The activation assumed where the script names none (one passed in as a class, or one not listed). */
export const DEFAULT_DERIVATIVE_ACTIVATION: DerivativeActivation = 'tanh';

/** The highest order whose graph is sized here. */
export const HIGHEST_DERIVATIVE_ORDER = 2;

/** What a forward and its derivatives' graphs up to `order` keep, in units of what the plain forward keeps. */
export function derivativeKeptRatio(activation: DerivativeActivation, order: number): number {
  const saves = SAVES[activation];
  if (order <= 0) return 1;
  return (saves.forward + saves.firstOrder + (order >= 2 ? saves.secondOrder : 0)) / saves.forward;
}

/** The activation among the calls' names whose derivatives keep most at `order`; undefined where none is named. */
export function derivativeActivationOf(calledNames: readonly string[], order: number): DerivativeActivation | undefined {
  let chosen: DerivativeActivation | undefined;
  for (const name of calledNames) {
    const activation = activationNamed(name);
    if (activation && (!chosen || derivativeKeptRatio(activation, order) > derivativeKeptRatio(chosen, order))) chosen = activation;
  }
  return chosen;
}

/**
 * Tensors of a layer's output size that a backward run with create_graph=True saves for a later backward, beside its
 * forward's (a second-order inner step over the weights, which traced nets count layer by layer): the output's
 * gradient for a weighted layer, a norm or a single-op smooth activation; SiLU's and Mish's composite backward saves
 * more (see above; the weighted layer's share is counted at that layer).
 */
export function gradientTensorsSaved(layerType: string): number {
  const activation = BY_NAME.get(layerType.toLowerCase());
  return activation ? SAVES[activation].firstOrder - 1 : 1;
}
