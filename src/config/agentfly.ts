/**
 * AgentFly's command line (docs/agentfly.md): the Hydra overrides of AgentFly's verl fork
 * (`algorithm.*`, `data.*`, `agent.*`, `actor_rollout_ref.*`, `critic.*`, `trainer.*`) read as
 * agentic's keys. They are gathered from the command line (a key's last value wins), translated
 * together (a batch of questions needs the number of chains) and applied as one layer under
 * agentic's own overrides, which therefore win. Each key meets one of roll.ts's fates:
 *
 *   honoured  translated to agentic's keys by the table below
 *   inert     GPU, vLLM, FSDP and Ray settings with no meaning in one tfjs process: named once at
 *             start-up ("AgentFly keys with no effect here: ...")
 *   refused   a setting that would change the run, which agentic cannot honour: a one-line hint
 *
 * The agent's keys (`agent.*`, `data.*_files`) go to the custom_envs entries the env managers
 * name: training data to the train manager's tags, validation data to the val manager's, the
 * agent's tools, reward, format and turns to both. `agent.init_config.X`, `agent.init_args.X` and
 * AgentFly's later `agent.run_config.X` are all `agent.X`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../errors';
import { didYouMean } from '../util/suggest';
import { declaredKeys } from './introspect';
import type { Override } from './overrides';
import { Worker } from './schema';
import { formatPath, isObject, lookup, type Path, type Tree, type TreeObject } from './tree';

/** Top-level keys that are AgentFly's (critic is shared: see isAgentFlyPath). */
const ROOTS = ['algorithm', 'data', 'agent', 'actor_rollout_ref', 'trainer', 'reward_model'];
const WORKER_KEYS = declaredKeys(Worker);

/** Whether an override's key is AgentFly's: one of its roots, or critic.X where X is not ours. */
export function isAgentFlyPath(path: Path): boolean {
  const [root, child] = path;
  if (typeof root !== 'string') return false;
  if (ROOTS.includes(root)) return true;
  return root === 'critic' && typeof child === 'string' && !WORKER_KEYS.includes(child);
}

type Value = Tree;
/** What the table knows of the run: the composed tree (before overrides) and the AgentFly values given. */
interface Context {
  tree: TreeObject;
  given: ReadonlyMap<string, Value>;
  /** The rows of a dataset (tool_use's reading of it), for validation over a whole file. */
  rowsOf?: (dataset: string) => number;
}
type Sets = Array<[Path, Value]>;

type Fate =
  | { fate: 'honoured'; to: (value: Value, ctx: Context, key: string) => Sets }
  /** Read by batchSizes or another key's rule; when that rule does not read it, it is inert (as in verl). */
  | { fate: 'joint'; used: (ctx: Context) => boolean }
  | { fate: 'inert'; when?: (value: Value) => boolean; otherwise?: string }
  | { fate: 'refused'; hint: string };

const inert = (when?: (value: Value) => boolean, otherwise?: string): Fate => ({ fate: 'inert', when, otherwise });
const refused = (hint: string): Fate => ({ fate: 'refused', hint });
const to = (fn: (value: Value, ctx: Context, key: string) => Sets): Fate => ({ fate: 'honoured', to: fn });
/** A key with one agentic counterpart, its value converted by `convert`. */
const same = (path: string, convert: (value: Value, key: string) => Value = (v) => v): Fate => to((v, _ctx, key) => [[path.split('.'), convert(v, key)]]);
const joint = (used: (ctx: Context) => boolean = () => true): Fate => ({ fate: 'joint', used });
const adaptiveKl = joint((ctx) => ctx.given.get('algorithm.kl_ctrl.type') === 'adaptive');
/** verl's LoRA keys are read when lora_rank turns it on. */
function loraOn(ctx: Context): boolean {
  const rank = ctx.given.get('actor_rollout_ref.model.lora_rank');
  return rank !== undefined && rank !== null && rank !== 0;
}

function fail(key: string, value: Value, why: string): never {
  throw new ConfigError(`${key}=${shown(value)}: ${why}`);
}

function shown(value: Value): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function number(value: Value, key: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(key, value, 'expected a number');
  return value;
}

function count(value: Value, key: string): number {
  const n = number(value, key);
  if (!Number.isInteger(n) || n < 1) fail(key, value, 'expected a whole number of at least 1');
  return n;
}

function boolean(value: Value, key: string): boolean {
  if (typeof value !== 'boolean') fail(key, value, 'expected true or false');
  return value;
}

function text(value: Value, key: string): string {
  if (typeof value !== 'string' || value === '') fail(key, value, 'expected a name');
  return value;
}

function tags(ctx: Context, manager: 'train_env_manager' | 'val_env_manager'): string[] {
  const found = lookup(ctx.tree, [manager, 'tags']);
  return found.found && Array.isArray(found.value) ? found.value.filter((t): t is string => typeof t === 'string') : [];
}

function allTags(ctx: Context): string[] {
  return [...new Set([...tags(ctx, 'train_env_manager'), ...tags(ctx, 'val_env_manager')])];
}

/** `custom_envs.<tag>.<sub>` for each tag, which must be a tool_use env (AgentFly's agents). */
function envSets(ctx: Context, key: string, value: Value, tagList: readonly string[], sub: readonly string[]): Sets {
  return tagList.map((tag) => {
    const type = lookup(ctx.tree, ['custom_envs', tag, 'env_type']);
    if (type.found && type.value !== 'tool_use') {
      fail(
        key,
        value,
        `custom_envs.${tag} is a ${shown(type.value)} env, not an AgentFly agent (tool_use); run without a config (AgentFly's defaults) or with --config-name agentfly_math_grpo`,
      );
    }
    return [['custom_envs', tag, ...sub], value] as [Path, Value];
  });
}

/** Where a manager's sampling settings live: its own generating_args, else actor_infer's. */
function genPath(ctx: Context, manager: 'train_env_manager' | 'val_env_manager'): Path {
  const own = lookup(ctx.tree, [manager, 'generating_args']);
  return own.found && isObject(own.value) ? [manager, 'generating_args'] : ['actor_infer', 'generating_args'];
}

function dataset(value: Value, key: string): string {
  const files = Array.isArray(value) ? value : [value];
  if (files.length !== 1) fail(key, value, "one dataset per custom_envs entry; to mix datasets, name several entries in the manager's tags");
  return text(files[0]!, key);
}

const AGENT_TYPES: Record<string, string> = { hf: 'json', react: 'react', code: 'code' };
const agentFormat = (value: Value, key: string): Value => {
  const format = AGENT_TYPES[text(value, key)];
  if (!format)
    fail(
      key,
      value,
      `agent types here: ${Object.keys(AGENT_TYPES).join(', ')} (json, react and code tool calls)${didYouMean(String(value), Object.keys(AGENT_TYPES))}`,
    );
  return format;
};
/** verl's -1 (off, or "never") is agentic's 0. */
const offIsZero = (value: Value, key: string): Value => (number(value, key) < 0 ? 0 : value);
const sampling = (leaf: string, manager: 'train_env_manager' | 'val_env_manager', convert: (value: Value, key: string) => Value = (v) => v): Fate =>
  to((v, ctx, key) => [[[...genPath(ctx, manager), leaf], convert(v, key)]]);
const turns: Fate = to((v, ctx, key) => [
  ...envSets(ctx, key, count(v, key), allTags(ctx), ['max_steps']),
  ...envSets(ctx, key, count(v, key), allTags(ctx), ['env_config', 'max_turns']),
]);
const tokensPerTurn: Fate = to((v, ctx, key) => [
  ...envSets(ctx, key, count(v, key), allTags(ctx), ['max_tokens_per_step']),
  [[...genPath(ctx, 'train_env_manager'), 'max_new_tokens'], count(v, key)],
  [[...genPath(ctx, 'val_env_manager'), 'max_new_tokens'], count(v, key)],
]);

const isTrue = (v: Value) => v === true;
const isFalse = (v: Value) => v === false || v === null;
const isOne = (v: Value) => v === 1 || v === null;

/**
 * Every AgentFly key agentic reads: an exact key, or a prefix ending in `.*` for a family of
 * infrastructure settings. Anything else under AgentFly's roots is refused with "did you mean".
 */
const TABLE: Array<[string, Fate]> = [
  // algorithm
  ['algorithm.adv_estimator', same('adv_estimator')],
  ['algorithm.gamma', same('gamma')],
  ['algorithm.lam', same('lambd')],
  [
    'algorithm.norm_adv_by_std_in_grpo',
    to((v, _ctx, key) => [[['reward_normalization', 'method'], typeof v === 'boolean' ? (v ? 'mean_std' : 'mean') : fail(key, v, 'expected true or false')]]),
  ],
  ['algorithm.use_kl_in_reward', same('add_token_level_kl')],
  ['algorithm.kl_penalty', same('kl_penalty')],
  ['algorithm.kl_ctrl.kl_coef', same('init_kl_coef')],
  [
    'algorithm.kl_ctrl.type',
    to((v, ctx, key) => {
      if (v === 'fixed') return [[['target_kl'], null]];
      if (v !== 'adaptive') fail(key, v, 'expected fixed or adaptive');
      return [
        [['target_kl'], ctx.given.get('algorithm.kl_ctrl.target_kl') ?? 0.1],
        [['kl_horizon'], ctx.given.get('algorithm.kl_ctrl.horizon') ?? 10000],
      ];
    }),
  ],
  ['algorithm.kl_ctrl.target_kl', adaptiveKl],
  ['algorithm.kl_ctrl.horizon', adaptiveKl],
  ['algorithm.use_pf_ppo', inert(isFalse, 'priority-filtered PPO is not built; remove use_pf_ppo')],
  ['algorithm.pf_ppo.*', inert()],
  // DAPO's dynamic sampling; verl's metric null (its default) leaves ours, the episode score
  ['algorithm.filter_groups.enable', same('filter_groups.enable')],
  [
    'algorithm.filter_groups.metric',
    to((v, _ctx, key) => {
      if (v === null) return [];
      if (v !== 'score') fail(key, v, "groups are compared by the episode score here (score); verl's acc, seq_reward and seq_final_reward are not read");
      return [[['filter_groups', 'metric'], v]];
    }),
  ],
  ['algorithm.filter_groups.max_num_gen_batches', same('filter_groups.max_num_gen_batches')],
  // data
  ['data.train_files', to((v, ctx, key) => envSets(ctx, key, dataset(v, key), tags(ctx, 'train_env_manager'), ['env_config', 'dataset']))],
  [
    'data.val_files',
    to((v, ctx, key) => {
      const train = tags(ctx, 'train_env_manager');
      const shared = tags(ctx, 'val_env_manager').find((tag) => train.includes(tag));
      if (shared) fail(key, v, `custom_envs.${shared} is both trained and validated on; give val_env_manager its own entry`);
      return envSets(ctx, key, dataset(v, key), tags(ctx, 'val_env_manager'), ['env_config', 'dataset']);
    }),
  ],
  ['data.train_batch_size', joint()],
  ['data.val_batch_size', joint((ctx) => ctx.given.get('data.val_batch_size') !== null)],
  ['data.shuffle', inert(isTrue, 'rows are read in a new seeded order every epoch (docs/agentfly.md); remove data.shuffle')],
  ['data.seed', refused('the run seed orders the rows: set seed instead')],
  ['data.max_prompt_length', inert()],
  ['data.max_response_length', inert()],
  ['data.prompt_key', inert()],
  ['data.reward_fn_key', inert()],
  ['data.return_raw_chat', inert()],
  ['data.return_full_prompt', inert()],
  ['data.truncation', inert()],
  ['data.filter_overlong_prompts', inert()],
  ['data.dataloader_num_workers', inert()],
  ['data.tokenizer', inert()],
  ['data.use_shm', inert()],
  ['data.trust_remote_code', inert()],
  // agent (init_config / init_args / run_config are folded into agent.*)
  ['agent.use_agent', inert(isTrue, 'agentic always trains the agent; remove agent.use_agent')],
  ['agent.agent_type', to((v, ctx, key) => envSets(ctx, key, agentFormat(v, key), allTags(ctx), ['env_config', 'agent_format']))],
  [
    'agent.tools',
    to((v, ctx, key) => envSets(ctx, key, Array.isArray(v) ? v : fail(key, v, 'expected a list such as [calculator]'), allTags(ctx), ['env_config', 'tools'])),
  ],
  ['agent.reward_name', to((v, ctx, key) => envSets(ctx, key, text(v, key), allTags(ctx), ['env_config', 'reward']))],
  ['agent.system_prompt', to((v, ctx, key) => envSets(ctx, key, v, allTags(ctx), ['env_config', 'system_prompt']))],
  ['agent.model_name_or_path', same('pretrain')],
  ['agent.max_model_len', same('sequence_length')],
  ['agent.max_turns', turns],
  ['agent.num_chains', same('train_env_manager.group_size')],
  ['agent.generation_config.max_tokens', tokensPerTurn],
  ['agent.generation_config.temperature', sampling('temperature', 'train_env_manager')],
  ['agent.generation_config.top_p', sampling('top_p', 'train_env_manager')],
  ['agent.template', inert()],
  ['agent.backend', inert()],
  ['agent.backend_config.*', inert()],
  ['agent.max_concurrent_chains', inert()],
  ['agent.context_config.*', inert()],
  ['agent.tool_parser_name', inert((v) => v === 'hermes' || v === null, 'tool calls are parsed by agent_type (hf: Hermes <tool_call> JSON)')],
  ['agent.train_on_last_turn', inert(isFalse, 'every turn is trained; remove train_on_last_turn')],
  // actor_rollout_ref
  ['actor_rollout_ref.model.path', same('pretrain')],
  // verl's LoRA: a rank above 0 turns it on, over target_modules (default all-linear) with lora_alpha (default 16)
  [
    'actor_rollout_ref.model.lora_rank',
    to((v, ctx, key) => {
      if (v === 0 || v === null) return [];
      const targets = ctx.given.get('actor_rollout_ref.model.target_modules') ?? 'all-linear';
      const model = ['actor_train', 'model_args'];
      return [
        [[...model, 'lora_rank'], count(v, key)],
        [[...model, 'lora_target'], Array.isArray(targets) ? targets.map((t) => text(t, 'actor_rollout_ref.model.target_modules')).join(',') : targets],
        [[...model, 'lora_alpha'], ctx.given.get('actor_rollout_ref.model.lora_alpha') ?? 16],
      ];
    }),
  ],
  // verl recomputes activations in the backward pass when this is on, as our gradient checkpointing
  ['actor_rollout_ref.model.enable_gradient_checkpointing', same('actor_train.model_args.disable_gradient_checkpointing', (v, key) => !boolean(v, key))],
  ['actor_rollout_ref.model.lora_alpha', joint(loraOn)],
  ['actor_rollout_ref.model.target_modules', joint(loraOn)],
  ['actor_rollout_ref.model.*', inert()],
  ['actor_rollout_ref.hybrid_engine', inert()],
  ['actor_rollout_ref.nccl_timeout', inert()],
  ['actor_rollout_ref.actor.optim.lr', same('actor_train.training_args.learning_rate')],
  ['actor_rollout_ref.actor.optim.weight_decay', same('actor_train.training_args.weight_decay')],
  ['actor_rollout_ref.actor.optim.lr_warmup_steps', to((v, _ctx, key) => (number(v, key) < 0 ? [] : [[['actor_train', 'training_args', 'warmup_steps'], v]]))],
  ['actor_rollout_ref.actor.optim.lr_warmup_steps_ratio', same('actor_train.training_args.warmup_ratio')],
  ['actor_rollout_ref.actor.optim.warmup_style', same('actor_train.training_args.lr_scheduler_type')],
  ['actor_rollout_ref.actor.optim.lr_scheduler_type', same('actor_train.training_args.lr_scheduler_type')],
  ['actor_rollout_ref.actor.optim.clip_grad', same('max_grad_norm')],
  ['actor_rollout_ref.actor.optim.min_lr_ratio', inert((v) => v === 0 || v === null, 'schedules decay to 0 here; remove min_lr_ratio')],
  ['actor_rollout_ref.actor.optim.num_cycles', inert((v) => v === 0.5, 'cosine decays over one half cycle here; remove num_cycles')],
  ['actor_rollout_ref.actor.optim.betas', inert((v) => JSON.stringify(v) === '[0.9,0.999]', 'AdamW runs with betas [0.9, 0.999] here')],
  ['actor_rollout_ref.actor.optim.optimizer', inert((v) => v === 'AdamW', 'the optimizer is AdamW')],
  ['actor_rollout_ref.actor.optim.total_training_steps', inert()],
  ['actor_rollout_ref.actor.ppo_mini_batch_size', joint()],
  ['actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu', joint((ctx) => ctx.given.get('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu') !== null)],
  [
    'actor_rollout_ref.actor.ppo_micro_batch_size',
    joint(
      (ctx) => !ctx.given.has('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu') && ctx.given.get('actor_rollout_ref.actor.ppo_micro_batch_size') !== null,
    ),
  ],
  ['actor_rollout_ref.actor.ppo_epochs', same('ppo_epochs')],
  ['actor_rollout_ref.actor.clip_ratio', same('pg_clip')],
  [
    'actor_rollout_ref.actor.clip_ratio_low',
    to((v) => [
      [['use_pg_clip_range'], true],
      [['pg_clip_low'], v],
    ]),
  ],
  [
    'actor_rollout_ref.actor.clip_ratio_high',
    to((v) => [
      [['use_pg_clip_range'], true],
      [['pg_clip_high'], v],
    ]),
  ],
  [
    'actor_rollout_ref.actor.clip_ratio_c',
    refused("agentic's dual clip bound is 1 + 2 x pg_clip, not a setting of its own; remove clip_ratio_c (and set dual_clip_loss=true for a dual clip)"),
  ],
  ['actor_rollout_ref.actor.loss_agg_mode', same('loss_agg_mode')],
  ['actor_rollout_ref.actor.entropy_coeff', same('entropy_loss_coef')],
  ['actor_rollout_ref.actor.use_kl_loss', same('use_kl_loss')],
  ['actor_rollout_ref.actor.kl_loss_coef', same('kl_loss_coef')],
  ['actor_rollout_ref.actor.kl_loss_type', same('kl_loss_type')],
  ['actor_rollout_ref.actor.grad_clip', same('max_grad_norm')],
  ['actor_rollout_ref.actor.policy_loss.loss_mode', inert((v) => v === 'vanilla', 'agentic trains with the PPO clipped loss (vanilla)')],
  ['actor_rollout_ref.actor.strategy', inert()],
  ['actor_rollout_ref.actor.use_dynamic_bsz', inert()],
  ['actor_rollout_ref.actor.ppo_max_token_len_per_gpu', inert()],
  ['actor_rollout_ref.actor.ulysses_sequence_parallel_size', inert()],
  ['actor_rollout_ref.actor.shuffle', inert()],
  ['actor_rollout_ref.actor.data_loader_seed', inert()],
  ['actor_rollout_ref.actor.use_torch_compile', inert()],
  ['actor_rollout_ref.actor.entropy_from_logits_with_chunking', inert()],
  ['actor_rollout_ref.actor.entropy_checkpointing', inert()],
  ['actor_rollout_ref.actor.fsdp_config.*', inert()],
  ['actor_rollout_ref.actor.checkpoint.*', inert()],
  ['actor_rollout_ref.rollout.temperature', sampling('temperature', 'train_env_manager')],
  ['actor_rollout_ref.rollout.top_p', sampling('top_p', 'train_env_manager')],
  ['actor_rollout_ref.rollout.top_k', sampling('top_k', 'train_env_manager', offIsZero)],
  ['actor_rollout_ref.rollout.do_sample', sampling('do_sample', 'train_env_manager')],
  ['actor_rollout_ref.rollout.n', inert(isOne, 'chains of one question are agent.num_chains here (train_env_manager.group_size)')],
  ['actor_rollout_ref.rollout.val_kwargs.temperature', sampling('temperature', 'val_env_manager')],
  ['actor_rollout_ref.rollout.val_kwargs.top_p', sampling('top_p', 'val_env_manager')],
  ['actor_rollout_ref.rollout.val_kwargs.top_k', sampling('top_k', 'val_env_manager', offIsZero)],
  ['actor_rollout_ref.rollout.val_kwargs.do_sample', sampling('do_sample', 'val_env_manager')],
  ['actor_rollout_ref.rollout.val_kwargs.n', inert(isOne, 'validation plays one chain per question')],
  ['actor_rollout_ref.rollout.multi_turn.enable', inert()],
  ['actor_rollout_ref.rollout.*', inert()],
  ['actor_rollout_ref.ref.*', inert()],
  // critic (only keys that are not agentic's own critic role)
  ['critic.optim.lr', same('critic.training_args.learning_rate')],
  ['critic.optim.weight_decay', same('critic.training_args.weight_decay')],
  ['critic.optim.*', inert()],
  ['critic.cliprange_value', same('value_clip')],
  ['critic.grad_clip', same('critic.training_args.max_grad_norm')],
  ['critic.model.path', same('critic.model_args.model_name_or_path')],
  ['critic.model.enable_gradient_checkpointing', same('critic.model_args.disable_gradient_checkpointing', (v, key) => !boolean(v, key))],
  ['critic.model.*', inert()],
  ['critic.ppo_micro_batch_size_per_gpu', same('critic.training_args.per_device_train_batch_size')],
  ['critic.ppo_mini_batch_size', inert()],
  ['critic.ppo_epochs', refused('one ppo_epochs trains both roles: set actor_rollout_ref.actor.ppo_epochs')],
  ['critic.loss_agg_mode', refused('one loss_agg_mode serves both roles: set actor_rollout_ref.actor.loss_agg_mode')],
  ['critic.strategy', inert()],
  ['critic.use_dynamic_bsz', inert()],
  ['critic.ppo_max_token_len_per_gpu', inert()],
  ['critic.forward_max_token_len_per_gpu', inert()],
  ['critic.ulysses_sequence_parallel_size', inert()],
  ['critic.checkpoint.*', inert()],
  // trainer
  ['trainer.total_training_steps', to((v, _ctx, key) => (v === null ? [] : [[['max_steps'], count(v, key)]]))],
  [
    'trainer.total_epochs',
    to((v, ctx, key) => [
      [['max_epochs'], count(v, key)],
      // as in verl, without total_training_steps the epochs alone set the run's length (max_epochs
      // turns into max_steps at start-up; this only lifts the config's own cap)
      ...((ctx.given.get('trainer.total_training_steps') ?? null) === null ? ([[['max_steps'], Number.MAX_SAFE_INTEGER]] as Sets) : []),
    ]),
  ],
  ['trainer.save_freq', same('save_steps', offIsZero)],
  ['trainer.test_freq', same('eval_steps', offIsZero)],
  ['trainer.val_before_train', same('val_before_train', boolean)],
  ['trainer.val_only', inert(isFalse, 'use agentic eval to validate a checkpoint without training')],
  ['trainer.critic_warmup', same('critic_warmup')],
  ['trainer.logger', same('track_with')],
  ['trainer.experiment_name', same('exp_name')],
  ['trainer.project_name', inert()],
  ['trainer.default_local_dir', same('checkpoint_config.output_dir')],
  [
    'trainer.resume_mode',
    to((v, ctx, key) => {
      // verl: auto continues from the newest checkpoint of default_local_dir, if any
      if (v === 'auto') return [[['resume_from_checkpoint'], 'auto']];
      // verl: disable trains from scratch; an earlier run's checkpoints there still stop the run
      // (overwrite_output_dir=true writes over them) rather than being lost without a word
      if (v === 'disable') return [[['resume_from_checkpoint'], false]];
      if (v !== 'resume_path') fail(key, v, 'expected auto, disable or resume_path');
      const path = ctx.given.get('trainer.resume_from_path');
      if (typeof path !== 'string' || path === '') fail(key, v, 'resume_path needs trainer.resume_from_path=<checkpoint folder>');
      // verl reads a relative path from the working folder
      if (!existsSync(resolve(path))) fail('trainer.resume_from_path', path, 'no such checkpoint folder');
      return [[['resume_from_checkpoint'], path]];
    }),
  ],
  ['trainer.resume_from_path', joint((ctx) => ctx.given.get('trainer.resume_mode') === 'resume_path')],
  ['trainer.max_actor_ckpt_to_keep', to((v) => (v === null ? [] : [[['checkpoint_config', 'max_ckpt_to_keep'], v]]))],
  ['trainer.max_critic_ckpt_to_keep', inert()],
  ['trainer.nnodes', inert()],
  ['trainer.n_gpus_per_node', inert()],
  ['trainer.device', inert()],
  ['trainer.balance_batch', inert()],
  ['trainer.log_val_generations', inert()],
  ['trainer.esi_redundant_time', inert()],
  ['trainer.default_hdfs_dir', inert()],
  ['trainer.del_local_ckpt_after_load', inert()],
  ['trainer.ray_wait_register_center_timeout', inert()],
  ['trainer.rollout_data_dir', inert()],
  ['trainer.validation_data_dir', inert()],
  ['trainer.profile_steps', inert()],
  // reward_model
  ['reward_model.enable', inert(isFalse, 'reward models are not built: rewards come from agent.reward_name')],
  ['reward_model.reward_manager', inert()],
  ['reward_model.launch_reward_fn_async', inert()],
];

function fateOf(key: string): Fate | undefined {
  for (const [pattern, fate] of TABLE) {
    if (pattern === key || (pattern.endsWith('.*') && key.startsWith(pattern.slice(0, -1)))) return fate;
  }
  return undefined;
}

/** AgentFly's spellings of one key: agent.init_config.X (AgentFly), agent.init_args.X, agent.run_config.X (its later layout). */
function canonical(key: string): string {
  return key.replace(/^agent\.(init_config|init_args|run_config)\./, 'agent.');
}

/** `a.b={c: 1, d: {e: 2}}` as `a.b.c=1`, `a.b.d.e=2`; lists and scalars stay whole. */
function leaves(key: string, value: Value, into: Map<string, Value>): void {
  if (isObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) leaves(`${key}.${k}`, v!, into);
  } else {
    into.delete(key); // the last value wins, in the order given
    into.set(key, value);
  }
}

export interface AgentFlyKeys {
  /** agentic overrides, applied before agentic's own. */
  overrides: Override[];
  /** Inert AgentFly keys as `key=value` (or `key`), in the order given. */
  inert: string[];
}

/** Translates AgentFly's overrides (already picked out by isAgentFlyPath) against the composed `tree`. */
export function translateAgentFly(given: readonly Override[], tree: TreeObject, rowsOf?: (dataset: string) => number): AgentFlyKeys {
  const values = new Map<string, Value>();
  for (const override of given) {
    const key = formatPath(override.path);
    if (override.op === 'delete') throw new ConfigError(`${override.text}: AgentFly's keys cannot be deleted; leave the key out`);
    leaves(canonical(key), override.value ?? null, values);
  }
  const ctx: Context = { tree, given: values, ...(rowsOf ? { rowsOf } : {}) };
  const sets: Sets = [];
  const inertKeys: string[] = [];
  for (const [key, value] of values) {
    const fate = fateOf(key);
    if (!fate) {
      const known = TABLE.map(([p]) => p).filter((p) => !p.endsWith('.*'));
      throw new ConfigError(`${key}: an AgentFly key agentic does not read${didYouMean(key, known)} (docs/agentfly.md lists the ones it does)`);
    }
    if (fate.fate === 'refused') fail(key, value, fate.hint);
    if (fate.fate === 'joint' && fate.used(ctx)) continue;
    if (fate.fate === 'inert' || fate.fate === 'joint') {
      if (fate.fate === 'inert' && fate.when && !fate.when(value)) fail(key, value, fate.otherwise!);
      inertKeys.push(typeof value === 'object' && value !== null ? key : `${key}=${shown(value)}`);
      continue;
    }
    sets.push(...fate.to(value, ctx, key));
  }
  sets.push(...batchSizes(ctx));
  const overrides = sets.map(
    ([path, value]): Override => ({ op: 'set', path: [...path], value, text: `${formatPath(path)}=${shown(value)} (from AgentFly's keys)` }),
  );
  return { overrides, inert: inertKeys };
}

function treeNumber(ctx: Context, path: Path, fallback: number): number {
  const found = lookup(ctx.tree, path);
  return found.found && typeof found.value === 'number' ? found.value : fallback;
}

/**
 * Batch sizes read several keys: a batch of questions times the chains of each is
 * rollout_batch_size (one env group per question; new chains alone keep the config's questions),
 * and a mini-batch of rows is the micro-batch times gradient accumulation.
 */
/** Whether val_env_manager splits its groups between tags by hand (num_groups_partition). */
function partitioned(ctx: Context): boolean {
  const found = lookup(ctx.tree, ['val_env_manager', 'num_groups_partition']);
  return found.found && found.value !== null;
}

function batchSizes(ctx: Context): Sets {
  const sets: Sets = [];
  const get = (key: string) => ctx.given.get(key);
  const questions = get('data.train_batch_size');
  const chains = get('agent.num_chains');
  if (questions !== undefined) {
    const q = count(questions, 'data.train_batch_size');
    const n = chains === undefined ? treeNumber(ctx, ['train_env_manager', 'group_size'], 1) : count(chains, 'agent.num_chains');
    sets.push([['rollout_batch_size'], q * n], [['train_env_manager', 'num_env_groups'], q]);
  } else if (chains !== undefined) {
    // as in verl, the batch keeps its questions and each gets the new number of chains
    const q = treeNumber(ctx, ['rollout_batch_size'], 1) / treeNumber(ctx, ['train_env_manager', 'group_size'], 1);
    if (Number.isInteger(q)) sets.push([['rollout_batch_size'], q * count(chains, 'agent.num_chains')]);
  }
  const valQuestions = get('data.val_batch_size');
  const valFiles = get('data.val_files');
  if (valQuestions !== undefined && valQuestions !== null) {
    const v = count(valQuestions, 'data.val_batch_size');
    sets.push([['val_batch_size'], v * treeNumber(ctx, ['val_env_manager', 'group_size'], 1)], [['val_env_manager', 'num_env_groups'], v]);
  } else if (valFiles !== undefined && ctx.rowsOf && !partitioned(ctx)) {
    // as verl: without data.val_batch_size, validation plays every row of the file once (per val tag)
    const v = ctx.rowsOf(dataset(valFiles, 'data.val_files')) * tags(ctx, 'val_env_manager').length;
    sets.push([['val_batch_size'], v * treeNumber(ctx, ['val_env_manager', 'group_size'], 1)], [['val_env_manager', 'num_env_groups'], v]);
  }
  const miniKey = 'actor_rollout_ref.actor.ppo_mini_batch_size';
  const microKey =
    get('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu') !== undefined
      ? 'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu'
      : 'actor_rollout_ref.actor.ppo_micro_batch_size';
  const mini = get(miniKey);
  const micro = get(microKey);
  if (mini !== undefined || (micro !== undefined && micro !== null)) {
    const args = ['actor_train', 'training_args'];
    const perDevice = treeNumber(ctx, [...args, 'per_device_train_batch_size'], 1);
    const rows = mini === undefined ? perDevice * treeNumber(ctx, [...args, 'gradient_accumulation_steps'], 1) : count(mini, miniKey);
    const size = Math.min(micro === undefined || micro === null ? perDevice : count(micro, microKey), rows);
    if (rows % size !== 0) fail(miniKey, rows, `not a whole number of micro-batches of ${size} (${microKey})`);
    sets.push([[...args, 'per_device_train_batch_size'], size], [[...args, 'gradient_accumulation_steps'], rows / size]);
  }
  return sets;
}

/** The one start-up phrase naming AgentFly keys with no effect, or null when none. */
export function agentFlyInertPhrase(inert: readonly string[] | undefined): string | null {
  if (!inert?.length) return null;
  const shortNames = inert.map((entry) => {
    const [path, value] = entry.split('=', 2) as [string, string | undefined];
    const leaf = path.split('.').at(-1)!;
    return value === undefined ? leaf : `${leaf}=${value}`;
  });
  return `AgentFly keys with no effect here: ${[...new Set(shortNames)].join(', ')}`;
}
