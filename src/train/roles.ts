/**
 * The four roles of a run and the models behind them:
 *
 *   actor_train  the policy being trained (AdamW over all its weights, or over its LoRA adapters
 *                alone when `lora_target` is set)
 *   actor_infer  the policy that generates rollouts; it receives actor_train's weights every
 *                `actor_infer.model_update_frequency` steps. With a frequency of 1 it would hold
 *                the same weights at every rollout, so it shares actor_train's memory instead.
 *                With LoRA a lagging actor_infer shares the frozen base and holds its own adapters.
 *   reference    a frozen copy of the starting policy, built only when a KL term uses it; with
 *                LoRA, the frozen base itself (actor_train without its adapters: no second copy,
 *                but for the base's own copy of modules trained whole, additional_target)
 *   critic       a value model (value head on the same backbone), built only for gae
 *
 * Each loads `<role>.model_args.model_name_or_path`, else `pretrain`.
 */
import { needsOf } from '../algo/estimators';
import type { AgenticConfig } from '../config/schema';
import { ConfigError, ModelError } from '../errors';
import { copyWeights } from '../model/copy_weights';
import { loadBaseModel, loadModel, type LoadedModel } from '../model/load';
import { parseAdditionalTarget, parseTarget, type LoraSpec } from '../model/lora';
import { adaptersMatch, applyLora, withAdapterCopies, withoutAdapters } from '../model/lora_adapters';
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
  /** actor_train's base model as its saved adapters name it (base_model_name_or_path). */
  base: string;
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

/** The optimizer of a role that trains: moments for the weights it trains only (its adapters, with LoRA). */
function adamW(config: AgenticConfig, role: 'actor_train' | 'critic', model: Qwen2Model): AdamW {
  const args = config[role].training_args;
  return new AdamW(model.trainedVariables, { beta1: args.adam_beta1, beta2: args.adam_beta2, epsilon: args.adam_epsilon, weightDecay: args.weight_decay });
}

/** actor_train's LoRA settings (ROLL's keys), or null when every weight trains. */
function loraSpecOf(config: AgenticConfig): LoraSpec | null {
  const args = config.actor_train.model_args;
  if (args.lora_target === null) return null;
  return {
    rank: args.lora_rank,
    alpha: args.lora_alpha ?? 2 * args.lora_rank,
    targets: parseTarget(args.lora_target),
    modulesToSave: args.additional_target === null ? [] : parseAdditionalTarget(args.additional_target),
  };
}

/**
 * actor_train's policy as the config describes it: `model_args.model_name_or_path`, else
 * `pretrain` (an adapter folder brings its base), with `adapter_name_or_path` on top; with
 * lora_target, the adapters that train: the ones loaded (which must be what the keys describe) or
 * new ones (seeded; B at zero, so the policy starts as its base).
 */
export async function loadPolicy(config: AgenticConfig, trainable: boolean): Promise<LoadedModel> {
  const spec = loraSpecOf(config);
  const args = config.actor_train.model_args;
  const { adapter, ...loaded } = await loadBaseModel(modelOf(config, 'actor_train'), { seed: config.seed, trainable, adapter: args.adapter_name_or_path });
  const { model } = loaded;
  try {
    applyLora(model, spec ? { use: 'train', spec, folder: adapter, seed: config.seed } : { use: 'fold', folder: adapter, trainable });
    if (spec && adapter !== null && !adaptersMatch(model, spec)) {
      throw new ConfigError(
        `actor_train.model_args: the loaded adapter (r ${model.lora!.rank}, alpha ${model.lora!.alpha} on ${describeAdapters(model)}) is not the one lora_target, lora_rank, lora_alpha and additional_target describe (r ${spec.rank}, alpha ${spec.alpha} on ${args.lora_target}${spec.modulesToSave!.length ? `, ${spec.modulesToSave!.join(', ')} whole` : ''})`,
      );
    }
  } catch (error) {
    model.dispose();
    throw error;
  }
  return loaded;
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
    const actorLoaded = await loadPolicy(config, true);
    built.push(actorLoaded.model);
    const actor = actorLoaded.model;
    const sources: Record<string, string> = { actor_train: actorLoaded.source };
    if (actor.lora) sources.actor_train += `; LoRA r ${actor.lora.rank}, alpha ${actor.lora.alpha} on ${describeAdapters(actor)}`;
    let infer = actor;
    if (config.actor_infer.model_update_frequency > 1) {
      infer = actor.lora ? withAdapterCopies(actor) : (await loadModel(actorRef, { seed: config.seed, trainable: false })).model;
      built.push(infer);
      copyWeights(actor, infer);
      sources.actor_infer = `a copy of actor_train${actor.lora ? "'s adapters over its base" : ''}, refreshed every ${config.actor_infer.model_update_frequency} steps`;
    } else {
      sources.actor_infer = "actor_train's weights (model_update_frequency 1: shared)";
    }
    let reference: Qwen2Model | null = null;
    const referenceArgs = config.reference.model_args;
    if (needs.reference && actor.lora && referenceArgs.model_name_or_path === null && referenceArgs.adapter_name_or_path === null) {
      reference = withoutAdapters(actor);
      built.push(reference);
      sources.reference = "actor_train's frozen base (LoRA: the policy without its adapters)";
    } else if (needs.reference) {
      const loaded = await loadModel(modelOf(config, 'reference'), {
        seed: config.seed,
        trainable: false,
        adapter: config.reference.model_args.adapter_name_or_path,
      });
      built.push(loaded.model);
      sameShape(actor, loaded.model, 'reference', loaded.source);
      reference = loaded.model;
      sources.reference = loaded.source;
    }
    let critic: Qwen2Model | null = null;
    if (needs.critic) {
      const loaded = await loadModel(modelOf(config, 'critic'), {
        seed: config.seed,
        head: 'value',
        trainable: true,
        adapter: config.critic.model_args.adapter_name_or_path,
      });
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
      base: actorLoaded.base,
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

/** Which projections have adapters, for the log: "q_proj, v_proj (24 layers)". */
function describeAdapters(model: Qwen2Model): string {
  const names = [...new Set(model.adapters.flatMap((layer) => Object.keys(layer)))].map((p) => `${p}_proj`);
  const layers = model.adapters.filter((layer) => Object.keys(layer).length > 0).length;
  const whole = model.lora?.modulesToSave ?? [];
  return `${names.join(', ')} (${layers} layers)${whole.length > 0 ? `; ${whole.join(', ')} trained whole` : ''}`;
}
