/**
 * The four roles of a run and the models behind them:
 *
 *   actor_train  the policy being trained (AdamW over all its weights)
 *   actor_infer  the policy that generates rollouts; it receives actor_train's weights every
 *                `actor_infer.model_update_frequency` steps. With a frequency of 1 it would hold
 *                the same weights at every rollout, so it shares actor_train's memory instead.
 *   reference    a frozen copy of the starting policy, built only when a KL term uses it
 *   critic       a value model (value head on the same backbone), built only for gae
 *
 * Each loads `<role>.model_args.model_name_or_path`, else `pretrain`.
 */
import { needsOf } from '../algo/estimators';
import type { AgenticConfig } from '../config/schema';
import { ConfigError, ModelError } from '../errors';
import { tf } from '../engine/tf';
import { loadModel } from '../model/load';
import { AdamW } from '../model/optim';
import type { Qwen2Model } from '../model/qwen2';
import type { Tokenizer } from '../model/tokenizer';

export interface RoleNeeds {
  reference: boolean;
  critic: boolean;
}

export interface Roles {
  tokenizer: Tokenizer;
  actor: Qwen2Model;
  actorOptimizer: AdamW;
  /** actor_infer: the actor itself when model_update_frequency is 1. */
  infer: Qwen2Model;
  reference: Qwen2Model | null;
  critic: Qwen2Model | null;
  criticOptimizer: AdamW | null;
  /** What each built role loaded, for the log. */
  sources: Record<string, string>;
  dispose(): void;
}

/** What the reference, the critic and actor_infer need to know about the KL settings. */
export function roleNeeds(config: AgenticConfig): RoleNeeds {
  return {
    reference: (config.use_kl_loss && config.kl_loss_coef > 0) || (config.add_token_level_kl && config.init_kl_coef > 0),
    critic: needsOf(config.adv_estimator).critic,
  };
}

const modelOf = (config: AgenticConfig, role: 'actor_train' | 'actor_infer' | 'reference' | 'critic') =>
  config[role].model_args.model_name_or_path ?? config.pretrain;

function adamW(config: AgenticConfig, role: 'actor_train' | 'critic', model: Qwen2Model): AdamW {
  const args = config[role].training_args;
  return new AdamW(model.variables, { beta1: args.adam_beta1, beta2: args.adam_beta2, epsilon: args.adam_epsilon, weightDecay: args.weight_decay });
}

function sameShape(actor: Qwen2Model, other: Qwen2Model, role: string, source: string): void {
  const a = actor.config;
  const b = other.config;
  if (a.hidden_size !== b.hidden_size || a.num_hidden_layers !== b.num_hidden_layers || a.vocab_size !== b.vocab_size) {
    throw new ModelError(
      `${role}: ${source} does not have actor_train's shape (hidden ${b.hidden_size} x ${b.num_hidden_layers} layers, vocab ${b.vocab_size} vs ${a.hidden_size} x ${a.num_hidden_layers}, ${a.vocab_size})`,
    );
  }
}

export async function buildRoles(config: AgenticConfig, needs: RoleNeeds): Promise<Roles> {
  const actorRef = modelOf(config, 'actor_train');
  const inferRef = config.actor_infer.model_args.model_name_or_path;
  if (inferRef !== null && inferRef !== actorRef) {
    throw new ConfigError(
      `actor_infer.model_args.model_name_or_path: actor_infer generates with actor_train's weights during training; leave it null or make it ${actorRef ?? 'null'}`,
    );
  }
  const built: Qwen2Model[] = [];
  try {
    const actorLoaded = await loadModel(actorRef, { seed: config.seed, trainable: true });
    built.push(actorLoaded.model);
    const actor = actorLoaded.model;
    const sources: Record<string, string> = { actor_train: actorLoaded.source };
    let infer = actor;
    if (config.actor_infer.model_update_frequency > 1) {
      infer = (await loadModel(actorRef, { seed: config.seed, trainable: false })).model;
      built.push(infer);
      copyWeights(actor, infer);
      sources.actor_infer = `a copy of actor_train, refreshed every ${config.actor_infer.model_update_frequency} steps`;
    } else {
      sources.actor_infer = "actor_train's weights (model_update_frequency 1: shared)";
    }
    let reference: Qwen2Model | null = null;
    if (needs.reference) {
      const loaded = await loadModel(modelOf(config, 'reference'), { seed: config.seed, trainable: false });
      built.push(loaded.model);
      sameShape(actor, loaded.model, 'reference', loaded.source);
      reference = loaded.model;
      sources.reference = loaded.source;
    }
    let critic: Qwen2Model | null = null;
    if (needs.critic) {
      const loaded = await loadModel(modelOf(config, 'critic'), { seed: config.seed, head: 'value', trainable: true });
      built.push(loaded.model);
      sameShape(actor, loaded.model, 'critic', loaded.source);
      critic = loaded.model;
      sources.critic = loaded.source;
    }
    const actorOptimizer = adamW(config, 'actor_train', actor);
    const criticOptimizer = critic ? adamW(config, 'critic', critic) : null;
    return {
      tokenizer: actorLoaded.tokenizer,
      actor,
      actorOptimizer,
      infer,
      reference,
      critic,
      criticOptimizer,
      sources,
      dispose() {
        actorOptimizer.dispose();
        criticOptimizer?.dispose();
        for (const model of built) model.dispose();
      },
    };
  } catch (error) {
    for (const model of built) model.dispose();
    throw error;
  }
}

/** actor_infer's model update: every weight of `from` assigned to `to` (same architecture). */
export function copyWeights(from: Qwen2Model, to: Qwen2Model): void {
  const source = from.variables;
  const target = to.variables;
  if (source.length !== target.length) throw new Error(`weight sync: ${source.length} variables vs ${target.length}`);
  tf.tidy(() => source.forEach((variable, i) => target[i]!.assign(variable)));
}
