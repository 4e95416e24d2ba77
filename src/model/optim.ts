/**
 * Training utilities: AdamW with decoupled weight decay (tfjs has none), global-norm gradient
 * clipping, gradient accumulation over micro-batches, and learning-rate schedules with warmup.
 */
import { tf } from '../engine/tf';
import { AgenticError } from '../errors';

export type Gradients = Map<tf.Variable, tf.Tensor>;

export interface AdamWOptions {
  beta1?: number;
  beta2?: number;
  epsilon?: number;
  weightDecay?: number;
}

/** The optimizer's state on the host, for checkpoints. */
export interface AdamWState {
  step: number;
  /** First and second moments per variable, in the order of the variables list. */
  moments: Array<{ m: Float32Array; v: Float32Array; shape: number[] }>;
}

/** A non-trainable variable of zeros shaped like `x` (tf.variable keeps its initial tensor alive otherwise). */
function zeroVariable(x: tf.Tensor): tf.Variable {
  const zeros = tf.zerosLike(x);
  const variable = tf.variable(zeros, false);
  zeros.dispose();
  return variable;
}

export class AdamW {
  readonly beta1: number;
  readonly beta2: number;
  readonly epsilon: number;
  readonly weightDecay: number;
  private stepCount = 0;
  private readonly m: tf.Variable[];
  private readonly v: tf.Variable[];

  constructor(
    readonly variables: readonly tf.Variable[],
    options: AdamWOptions = {},
  ) {
    this.beta1 = options.beta1 ?? 0.9;
    this.beta2 = options.beta2 ?? 0.999;
    this.epsilon = options.epsilon ?? 1e-8;
    this.weightDecay = options.weightDecay ?? 0;
    this.m = variables.map((x) => zeroVariable(x));
    this.v = variables.map((x) => zeroVariable(x));
  }

  get step(): number {
    return this.stepCount;
  }

  /**
   * One update: p -= lr * (m_hat / (sqrt(v_hat) + eps) + weight_decay * p), with the decay
   * applied to the weights directly rather than through the gradient (AdamW). Variables
   * without a gradient keep their value and moments.
   */
  apply(gradients: Gradients, learningRate: number): void {
    this.stepCount += 1;
    const t = this.stepCount;
    const correction1 = 1 - Math.pow(this.beta1, t);
    const correction2 = 1 - Math.pow(this.beta2, t);
    // one variable at a time: its dozen temporaries are freed before the next variable's are made
    // (over all variables at once they would be a dozen copies of the model)
    this.variables.forEach((param, i) => {
      const grad = gradients.get(param);
      if (!grad) return;
      const m = this.m[i]!;
      const v = this.v[i]!;
      tf.tidy(() => {
        m.assign(m.mul(this.beta1).add(grad.mul(1 - this.beta1)));
        v.assign(v.mul(this.beta2).add(tf.square(grad).mul(1 - this.beta2)));
        const update = m.div(correction1).div(tf.sqrt(v.div(correction2)).add(this.epsilon));
        const decayed = this.weightDecay > 0 ? param.mul(1 - learningRate * this.weightDecay) : param;
        param.assign(decayed.sub(update.mul(learningRate)));
      });
    });
  }

  async state(): Promise<AdamWState> {
    const moments = [];
    for (let i = 0; i < this.variables.length; i++) {
      moments.push({
        m: (await this.m[i]!.data()) as Float32Array,
        v: (await this.v[i]!.data()) as Float32Array,
        shape: this.m[i]!.shape.slice(),
      });
    }
    return { step: this.stepCount, moments };
  }

  loadState(state: AdamWState): void {
    if (state.moments.length !== this.variables.length) {
      throw new AgenticError(`optimizer state has ${state.moments.length} variables, the model ${this.variables.length}`);
    }
    state.moments.forEach((moment, i) => {
      const shape = this.m[i]!.shape;
      if (moment.shape.join(',') !== shape.join(',')) {
        throw new AgenticError(`optimizer state: variable ${i} has shape [${moment.shape}], the model [${shape}]`);
      }
    });
    state.moments.forEach((moment, i) => {
      tf.tidy(() => {
        this.m[i]!.assign(tf.tensor(moment.m, moment.shape));
        this.v[i]!.assign(tf.tensor(moment.v, moment.shape));
      });
    });
    this.stepCount = state.step;
  }

  dispose(): void {
    tf.dispose([...this.m, ...this.v]);
  }
}

/** The global L2 norm of all gradients. */
export async function globalNorm(gradients: Gradients): Promise<number> {
  const total = tf.tidy(() => tf.addN([...gradients.values()].map((g) => tf.sum(tf.square(g)))));
  const value = (await total.data())[0]!;
  total.dispose();
  return Math.sqrt(value);
}

/**
 * Scales gradients so their global norm is at most `maxNorm` (0 turns clipping off). Returns
 * the norm before clipping and new gradients; the caller disposes both maps.
 */
export async function clipByGlobalNorm(gradients: Gradients, maxNorm: number): Promise<{ norm: number; gradients: Gradients }> {
  const norm = await globalNorm(gradients);
  const scale = maxNorm > 0 && norm > maxNorm ? maxNorm / (norm + 1e-6) : 1;
  const clipped: Gradients = new Map();
  for (const [v, g] of gradients)
    clipped.set(
      v,
      tf.tidy(() => (scale === 1 ? g.clone() : g.mul(scale))),
    );
  return { norm, gradients: clipped };
}

/** Sums gradients of micro-batches; `take` returns their mean (or sum) over the micro-batches added. */
export class GradientAccumulator {
  private sums: Gradients = new Map();
  private count = 0;

  get microBatches(): number {
    return this.count;
  }

  /** Adds one micro-batch's gradients (which the caller still owns). */
  add(gradients: Gradients): void {
    for (const [variable, grad] of gradients) {
      const previous = this.sums.get(variable);
      this.sums.set(variable, previous ? tf.tidy(() => previous.add(grad)) : grad.clone());
      previous?.dispose();
    }
    this.count += 1;
  }

  /**
   * The mean gradients (or their sum, for losses that are already normalised over the whole
   * batch); the caller owns them. Resets the accumulator.
   */
  take(reduce: 'mean' | 'sum' = 'mean'): Gradients {
    if (this.count === 0) throw new AgenticError('no gradients accumulated');
    const mean: Gradients = new Map();
    for (const [variable, sum] of this.sums) {
      if (reduce === 'sum') {
        mean.set(variable, sum);
        continue;
      }
      mean.set(
        variable,
        tf.tidy(() => sum.div(this.count)),
      );
      sum.dispose();
    }
    this.sums = new Map();
    this.count = 0;
    return mean;
  }

  dispose(): void {
    tf.dispose([...this.sums.values()]);
    this.sums = new Map();
    this.count = 0;
  }
}

export function disposeGradients(gradients: Gradients): void {
  tf.dispose([...gradients.values()]);
}

/** Gradients of a scalar loss with respect to `variables`, and the loss value. */
export function lossAndGradients(loss: () => tf.Scalar, variables: readonly tf.Variable[]): { loss: tf.Scalar; gradients: Gradients } {
  const { value, grads } = tf.variableGrads(loss, variables as tf.Variable[]);
  const gradients: Gradients = new Map();
  for (const variable of variables) {
    const grad = grads[variable.name];
    if (grad) gradients.set(variable, grad);
  }
  return { loss: value, gradients };
}

export type ScheduleType = 'constant' | 'linear' | 'cosine';

export interface ScheduleOptions {
  type: ScheduleType;
  peak: number;
  totalSteps: number;
  warmupSteps?: number;
  /** Floor of the decayed rate as a fraction of the peak (linear and cosine). */
  minRatio?: number;
}

/**
 * The learning rate at optimizer step `step` (0-based): linear warmup from peak/warmup to the
 * peak, then constant, linear decay or half-cosine decay to peak*minRatio at totalSteps.
 */
export function learningRateAt(step: number, o: ScheduleOptions): number {
  const warmup = o.warmupSteps ?? 0;
  if (step < warmup) return (o.peak * (step + 1)) / warmup;
  if (o.type === 'constant') return o.peak;
  const floor = o.peak * (o.minRatio ?? 0);
  const span = Math.max(1, o.totalSteps - warmup);
  const progress = Math.min(1, (step - warmup) / span);
  const shape = o.type === 'linear' ? 1 - progress : 0.5 * (1 + Math.cos(Math.PI * progress));
  return floor + (o.peak - floor) * shape;
}
