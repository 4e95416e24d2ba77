/**
 * Turns a resolved config tree into a typed AgenticConfig, or a one-line ConfigError that names
 * the key: the core schema first, then the rules that tie keys together (validateConfig); then,
 * given the plugins the entries name (resolved by the caller), each environment's `env_config`
 * against its plugin's own schema, which also fills the plugin's defaults (validateEnvSettings).
 *
 * Both are pure: they load no plugin, start no process, reach no network and leave their input as
 * it is; what only a built env can tell (a dataset file, a tool, an MCP server) is checked at the
 * start of the command that builds envs (src/cli/start_up.ts).
 */
import type { z } from 'zod';
import { needsOf } from '../algo/estimators';
import { ConfigError, PluginError } from '../errors';
import { rewardName, rewardSettings, rewardSettingsSchema } from '../sdk/reward_reference';
import type { EnvContext, EnvPlugin, RewardPlugin } from '../sdk/types';
import { rewardReferencesIn } from './reward_references';
import { didYouMean } from '../util/suggest';
import { declaredKeys, describeExpected, schemaAt, unionOptions } from './introspect';
import { templateProblem } from './templates';
import type { BackendName } from '../engine/names';
import { parseAdditionalTarget, parseTarget } from '../model/lora';
import { AGENT_PLAYER, ConfigShape, isHttpProxy, isStepWise, PAST_PLAYER, POLICY_PLAYER, type AgenticConfig, type EnvManagerConfig } from './schema';
import { resolveSecrets } from './secrets';
import { loadSuite } from './suites';
import { formatPath, type PathSegment, type TreeObject } from './tree';

/** Where loading finds plugins (a PluginHost): the config pipeline resolves env plugins through it. */
export interface EnvResolver {
  /** Loads the `plugins:` paths, so their names resolve. */
  loadAll(paths: readonly string[]): Promise<void>;
  resolveEnv(ref: string): Promise<EnvPlugin>;
  /** The context an env's epochRows reads datasets with (AgentFly's validation rows). */
  envContext?(): EnvContext;
  /** When given, the rewards env configs name are looked up, and their settings checked against the reward's schema. */
  rewardPlugin?(name: string): RewardPlugin;
}

/** The plugins validateEnvSettings checks env configs against, resolved beforehand. */
export interface PluginSchemas {
  /** Each custom_envs tag's env plugin, or the error that resolving its env_type raised. */
  readonly envs: ReadonlyMap<string, EnvPlugin | Error>;
  /** When given, the rewards env configs name are looked up, and their settings checked against the reward's schema. */
  reward?(name: string): RewardPlugin;
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return String(value);
}

type Issue = z.core.$ZodIssue & { input?: unknown };

/**
 * A value of one union option's kind (a mapping where the other option is a string) that is wrong
 * inside it: that option's own first problem (an unknown key first, since a misspelt key also
 * leaves its right name missing), with the option it is relative to. Null when no single option fits.
 */
function unionOptionIssue(issue: z.core.$ZodIssueInvalidUnion, node: z.core.$ZodType | undefined): { issue: Issue; option: z.core.$ZodType } | null {
  const options = node ? unionOptions(node) : [];
  const fitting = (issue.errors ?? []).flatMap((problems, i) =>
    problems.some((p) => p.code === 'invalid_type' && p.path.length === 0) || !options[i] ? [] : [{ problems, option: options[i]! }],
  );
  if (fitting.length !== 1) return null;
  const { problems, option } = fitting[0]!;
  const first = problems.find((p) => p.code === 'unrecognized_keys') ?? problems[0];
  return first ? { issue: first as Issue, option } : null;
}

/** One zod issue as `path: problem`. `root` is the schema the path is relative to. */
export function formatIssue(issue: Issue, root: z.core.$ZodType, prefix: readonly PathSegment[] = []): string {
  const path = issue.path as PathSegment[];
  const where = formatPath([...prefix, ...path]);
  const node = schemaAt(root, path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const key = issue.keys[0]!;
      const known = declaredKeys(node ?? root);
      const more = issue.keys.length > 1 ? ` (also unknown: ${issue.keys.slice(1).join(', ')})` : '';
      return `${formatPath([...prefix, ...path, key])}: unknown key${didYouMean(key, known)}${more}`;
    }
    case 'invalid_type':
      if (issue.input === undefined) return `${where}: required (${node ? describeExpected(node) : issue.expected})`;
      return `${where}: expected ${node ? describeExpected(node) : issue.expected}, got ${show(issue.input)}`;
    case 'invalid_value': {
      const hint = typeof issue.input === 'string' ? didYouMean(issue.input, issue.values.map(String)) : '';
      return `${where}: expected ${node ? describeExpected(node) : issue.values.join(', ')}, got ${show(issue.input)}${hint}`;
    }
    case 'invalid_union': {
      const inner = unionOptionIssue(issue, node);
      if (inner) return formatIssue(inner.issue, inner.option, [...prefix, ...path]);
      return `${where}: expected ${node ? describeExpected(node) : 'another value'}, got ${show(issue.input)}`;
    }
    case 'too_small':
    case 'too_big': {
      const op = issue.code === 'too_small' ? (issue.inclusive ? '>=' : '>') : issue.inclusive ? '<=' : '<';
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      if (issue.origin === 'array') return `${where}: needs ${op === '>=' ? 'at least' : 'at most'} ${bound} item${bound === 1 ? '' : 's'}`;
      if (issue.origin === 'string') return `${where}: needs ${op === '>=' ? 'at least' : 'at most'} ${bound} character${bound === 1 ? '' : 's'}`;
      return `${where}: must be ${op} ${bound}, got ${show(issue.input)}`;
    }
    case 'invalid_format':
      return `${where}: ${issue.message}, got ${show(issue.input)}`;
    default:
      return `${where}: ${issue.message}`;
  }
}

function issuesError(issues: readonly Issue[], root: z.core.$ZodType, prefix: readonly PathSegment[] = []): ConfigError {
  const first = formatIssue(issues[0]!, root, prefix);
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return new ConfigError(first + more);
}

/** Validates `envConfig` (undefined: the defaults) against the plugin's schema, or throws a ConfigError naming the key. */
export function validateEnvConfig(plugin: EnvPlugin, envConfig: unknown): unknown {
  const parsed = plugin.config.safeParse(envConfig ?? {}, { reportInput: true });
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  throw new ConfigError(`env '${plugin.name}': ${formatIssue(issues[0]! as z.core.$ZodIssue, plugin.config, ['env_config'])}${more}`);
}

/** Why `text` is not an inference server's base URL, or null. */
function serverUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `'${text}' is not a URL (expected one like http://127.0.0.1:30000)`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `'${text}' is not an http:// or https:// URL`;
  if (url.search !== '' || url.hash !== '') return `'${text}' has a query or fragment; give the server's base URL`;
  // the client adds /v1/completions itself, as it adds /generate
  if (/\/v1\/?$/.test(url.pathname)) return `'${text}' ends in /v1; give the server's base URL without it`;
  return null;
}

/** An HTTP proxy's servers are named and can sample as the manager's generating_args say. */
function checkProxy(config: AgenticConfig, name: 'train_env_manager' | 'val_env_manager', manager: EnvManagerConfig): void {
  const { proxy_type: type, proxy_config: proxy } = manager.llm_proxy;
  if (!isHttpProxy(type)) return;
  const at = `${name}.llm_proxy.proxy_config.base_url`;
  if (proxy.base_url === null) throw new ConfigError(`${at}: required by proxy_type ${type} (the inference server's URL, e.g. http://127.0.0.1:30000)`);
  proxy.base_url.forEach((url, i) => {
    const problem = serverUrlProblem(url);
    if (problem) throw new ConfigError(`${proxy.base_url!.length > 1 ? `${at}[${i}]` : at}: ${problem}`);
  });
  const own = manager.generating_args !== null;
  const gen = manager.generating_args ?? config.actor_infer.generating_args;
  if (gen.answer_temperature !== null) {
    throw new ConfigError(
      `${own ? `${name}.generating_args` : 'actor_infer.generating_args'}.answer_temperature: an inference server samples every token of a response at one temperature; set it to null for ${name}'s proxy_type ${type}`,
    );
  }
}

/** val_suite: a known suite, for the env every val tag plays, with an episode for each group of a validation. */
function checkSuite(config: AgenticConfig, name: string): void {
  const suite = loadSuite(name);
  const manager = config.val_env_manager;
  for (const tag of manager.tags) {
    const type = config.custom_envs[tag]!.env_type;
    if (type !== suite.env) throw new ConfigError(`val_suite: ${name} is played by ${suite.env} envs, but val_env_manager's tag ${tag} is a ${type} env`);
  }
  const groups = config.val_batch_size / manager.group_size;
  if (groups > suite.episodes.length)
    throw new ConfigError(`val_batch_size: ${config.val_batch_size} trajectories are ${groups} groups, but ${name} has ${suite.episodes.length} episodes`);
}

/** A manager's tags name entries of custom_envs, its groups split over them, its batch over its groups. */
function checkManager(config: AgenticConfig, name: 'train_env_manager' | 'val_env_manager', batchKey: 'rollout_batch_size' | 'val_batch_size'): void {
  const manager = config[name];
  const defined = Object.keys(config.custom_envs);
  if (name === 'train_env_manager' && manager.tags.length === 0) {
    throw new ConfigError(
      defined.length === 0
        ? 'custom_envs: no environments are defined; define one and name it in train_env_manager.tags'
        : `train_env_manager.tags: name at least one entry of custom_envs (defined: ${defined.join(', ')})`,
    );
  }
  manager.tags.forEach((tag, i) => {
    if (!defined.includes(tag)) {
      const hint = didYouMean(tag, defined);
      throw new ConfigError(`${name}.tags[${i}]: '${tag}' is not defined in custom_envs${hint || (defined.length ? ` (defined: ${defined.join(', ')})` : '')}`);
    }
  });
  if (manager.tags.length === 0) return;
  const partition = manager.num_groups_partition;
  if (partition) {
    if (partition.length !== manager.tags.length) {
      throw new ConfigError(`${name}.num_groups_partition: has ${partition.length} entries for ${manager.tags.length} tags`);
    }
    const total = partition.reduce((a, b) => a + b, 0);
    if (total !== manager.num_env_groups) {
      throw new ConfigError(`${name}.num_groups_partition: sums to ${total}, but num_env_groups is ${manager.num_env_groups}`);
    }
  } else if (manager.num_env_groups % manager.tags.length !== 0) {
    throw new ConfigError(
      `${name}.num_env_groups: ${manager.num_env_groups} groups do not split equally over ${manager.tags.length} tags; set num_groups_partition`,
    );
  }
  const batch = config[batchKey];
  if (batch % manager.group_size !== 0) {
    throw new ConfigError(`${batchKey}: ${batch} is not a multiple of ${name}.group_size (${manager.group_size})`);
  }
  checkProxy(config, name, manager);
}

/** async_generation_ratio: playing ahead needs a worker thread's own model on wasm or cpu, or distributed workers. */
function checkAsync(config: AgenticConfig): void {
  if (config.async_generation_ratio === 0) return;
  const proxy = config.train_env_manager.llm_proxy.proxy_type;
  if (isHttpProxy(proxy)) {
    throw new ConfigError(
      `async_generation_ratio: ${config.async_generation_ratio} plays ahead in a worker thread with its own model, but train_env_manager.llm_proxy.proxy_type ${proxy} generates on inference servers, which do not play ahead here; set async_generation_ratio=0`,
    );
  }
  // distributed workers play ahead with policies and engines of their own; the rest is of the worker thread
  if (config.distributed.redis_url === null && proxy !== 'policy') {
    throw new ConfigError(
      `async_generation_ratio: ${config.async_generation_ratio} runs actor_infer's model in a worker, but train_env_manager.llm_proxy.proxy_type is ${config.train_env_manager.llm_proxy.proxy_type}; set it to policy or the ratio to 0`,
    );
  }
  const backend = config.actor_infer.strategy_args.backend ?? config.backend;
  if (config.distributed.redis_url === null && backend !== 'wasm' && backend !== 'cpu') {
    throw new ConfigError(
      `async_generation_ratio: the rollout worker runs the wasm or cpu backend, not ${backend}; set async_generation_ratio=0 for ${backend}`,
    );
  }
}

/**
 * filter_groups plays more rollouts of a step after it has seen the first, so the batch must be
 * played in this process; rollout_filter_ratio ranks groups by their spread, which groups of one lack.
 */
function checkGroupFilters(config: AgenticConfig): void {
  const size = config.train_env_manager.group_size;
  if (config.filter_groups.enable) {
    if (config.async_generation_ratio > 0) {
      throw new ConfigError(
        `filter_groups.enable: dynamic sampling plays more rollouts once a step's groups are scored, but async_generation_ratio ${config.async_generation_ratio} plays each step's batch ahead; set async_generation_ratio=0 or filter_groups.enable=false`,
      );
    }
    if (config.distributed.redis_url !== null) {
      throw new ConfigError(
        "filter_groups.enable: dynamic sampling plays more rollouts once a step's groups are scored, but distributed workers play each step's batch ahead; play in this process (distributed.redis_url=null) or set filter_groups.enable=false",
      );
    }
    if (size === 1) {
      throw new ConfigError(
        'filter_groups.enable: every group of one episode scores alike, so every group would be dropped; raise train_env_manager.group_size',
      );
    }
  }
  if (config.rollout_filter_ratio < 1 && size === 1) {
    throw new ConfigError(
      'rollout_filter_ratio: groups are ranked by the spread of their episode scores, and groups of one episode have none; raise train_env_manager.group_size or set rollout_filter_ratio=1',
    );
  }
}

/** Rules that involve several keys. */
function checkRelations(config: AgenticConfig): void {
  for (const [tag, entry] of Object.entries(config.custom_envs)) {
    // the system prompt is literal text; only the turn template has placeholders
    const problem = entry.agent_template === null ? null : templateProblem(entry.agent_template, entry.env_manager_cls);
    if (problem) throw new ConfigError(`custom_envs.${tag}.agent_template: ${problem}`);
  }
  checkManager(config, 'train_env_manager', 'rollout_batch_size');
  checkManager(config, 'val_env_manager', 'val_batch_size');
  if (config.val_suite !== null) checkSuite(config, config.val_suite);
  if (needsOf(config.adv_estimator).stepRows) {
    const trajTag = config.train_env_manager.tags.find((tag) => !isStepWise(config.custom_envs[tag]!.env_manager_cls));
    if (trajTag !== undefined) {
      throw new ConfigError(
        `adv_estimator: ${config.adv_estimator} needs one row per step, but custom_envs.${trajTag}.env_manager_cls is traj; set it to step`,
      );
    }
  }
  checkAsync(config);
  checkGroupFilters(config);
  if (config.distributed.redis_url !== null && needsOf(config.adv_estimator).greedyBaseline) {
    throw new ConfigError(
      `distributed.redis_url: adv_estimator ${config.adv_estimator} needs a greedy rollout of every group, which workers do not play; choose another estimator or play in this process (distributed.redis_url=null)`,
    );
  }
  const ws = config.warm_start;
  if (ws.rehearsal_coef > 0 && !ws.think && ws.state_questions === 0) {
    throw new ConfigError('warm_start.rehearsal_coef: rehearsal replays the reading (warm_start.think or warm_start.state_questions), and both are off');
  }
  if (ws.demonstrations === 'none') {
    const solver = ws.worked_examples > 0 ? `warm_start.worked_examples=${ws.worked_examples}` : ws.solution_labels ? 'warm_start.solution_labels=true' : null;
    if (solver !== null) {
      throw new ConfigError(
        `${solver} shows the env's solver's moves, but warm_start.demonstrations is none; set warm_start.demonstrations=solver to feed the base solutions, or drop it for a base that learns from reward alone`,
      );
    }
  }
  if (ws.solution_labels && !ws.think) {
    throw new ConfigError(
      "warm_start.solution_labels: the labels are the action rows of think (each state's notes, then the solution's move); set warm_start.think=true",
    );
  }
  checkLora(config);
}

export const ROLES = ['actor_train', 'actor_infer', 'reference', 'critic'] as const;

/** A lora_target as a comparable string: the modules named (all-linear spelled out), or the pattern. */
function loraTargets(target: string): string {
  const parsed = parseTarget(target);
  return Array.isArray(parsed) ? [...parsed].sort().join(',') : (parsed as { pattern: string }).pattern;
}

/** An additional_target as a comparable string. */
function savedModules(target: string | readonly string[] | null): string {
  return target === null ? '' : parseAdditionalTarget(target).join(',');
}

/**
 * ROLL's LoRA keys: LoRA trains actor_train's policy; actor_infer may repeat its settings (ROLL's
 * configs do, for vLLM), the reference and the critic have none; lora_rank, lora_alpha,
 * additional_target and lora_save_merged mean something only with a lora_target.
 */
function checkLora(config: AgenticConfig): void {
  const train = config.actor_train.model_args;
  for (const role of ROLES) {
    const args = config[role].model_args;
    const at = `${role}.model_args`;
    if (args.lora_save_merged && (role !== 'actor_train' || args.lora_target === null)) {
      throw new ConfigError(`${at}.lora_save_merged: only a LoRA run (actor_train.model_args.lora_target) has adapters to merge; remove it`);
    }
    if (args.additional_target !== null) {
      try {
        parseAdditionalTarget(args.additional_target);
      } catch (error) {
        throw new ConfigError(`${at}.additional_target: ${(error as Error).message}`);
      }
      if (args.lora_target === null) {
        throw new ConfigError(
          `${at}.additional_target: names modules trained whole beside LoRA adapters; set lora_target, or remove it (without LoRA every weight trains)`,
        );
      }
    }
    if (args.lora_target === null) {
      if (args.lora_rank !== 8 || args.lora_alpha !== null) {
        throw new ConfigError(
          `${at}.${args.lora_alpha !== null ? 'lora_alpha' : 'lora_rank'}: LoRA is on only with lora_target; set lora_target (e.g. all-linear) or remove it`,
        );
      }
      continue;
    }
    if (role === 'reference' || role === 'critic') {
      throw new ConfigError(`${at}.lora_target: LoRA trains actor_train's policy only (a LoRA run's reference is its frozen base); remove it`);
    }
    if (role === 'actor_infer') {
      const same =
        train.lora_target !== null &&
        loraTargets(args.lora_target) === loraTargets(train.lora_target) &&
        args.lora_rank === train.lora_rank &&
        (args.lora_alpha ?? 2 * args.lora_rank) === (train.lora_alpha ?? 2 * train.lora_rank);
      if (!same) {
        throw new ConfigError(
          `${at}.lora_target: actor_infer generates with actor_train's adapters; give it actor_train's lora_target, lora_rank and lora_alpha, or none`,
        );
      }
      if (args.additional_target !== null && savedModules(args.additional_target) !== savedModules(train.additional_target)) {
        throw new ConfigError(`${at}.additional_target: actor_infer generates with actor_train's adapters; give it actor_train's additional_target, or none`);
      }
    }
  }
  const inferAdapter = config.actor_infer.model_args.adapter_name_or_path;
  if (inferAdapter !== null && inferAdapter !== train.adapter_name_or_path) {
    throw new ConfigError(
      `actor_infer.model_args.adapter_name_or_path: actor_infer generates with actor_train's weights; leave it null or make it ${train.adapter_name_or_path ?? 'null'}`,
    );
  }
}

/** The LoRA adapter on the policy where nothing trains (eval, play, serve): actor_infer's, else actor_train's. */
export function policyAdapter(config: AgenticConfig): string | null {
  return config.actor_infer.model_args.adapter_name_or_path ?? config.actor_train.model_args.adapter_name_or_path;
}

/**
 * The one backend all roles run on: each role's strategy_args.backend, or the top-level backend
 * where that is null. tfjs keeps one global engine per process, with one active backend, so roles
 * that name different backends cannot be honoured together and are a config error.
 */
export function runBackend(config: AgenticConfig): BackendName {
  const chosen = ROLES.map((role) => ({
    role,
    backend: config[role].strategy_args.backend ?? config.backend,
    own: config[role].strategy_args.backend !== null,
  }));
  const first = chosen[0]!;
  const other = chosen.find((c) => c.backend !== first.backend);
  if (other) {
    const [named, against] = other.own ? [other, first] : [first, other];
    const source = (c: typeof first) => (c.own ? `${c.role}.strategy_args.backend` : `the top-level backend that ${c.role} takes`);
    throw new ConfigError(
      `${named.role}.strategy_args.backend: ${named.backend} differs from ${against.backend} (${source(against)}); tfjs runs one backend per process, so all roles share one: set the top-level backend to the one you want and leave strategy_args.backend null`,
    );
  }
  return first.backend;
}

/** Each reward the env's config names exists, and the settings it gives fit the reward's schema. */
function checkRewardSettings(plugin: EnvPlugin, envConfig: unknown, rewardPlugin: (name: string) => RewardPlugin, at: readonly PathSegment[]): void {
  for (const { path, reference } of rewardReferencesIn(plugin.config, envConfig)) {
    const where = [...at, ...path];
    let reward: RewardPlugin;
    try {
      reward = rewardPlugin(rewardName(reference));
    } catch (error) {
      if (!(error instanceof PluginError)) throw error;
      throw new ConfigError(`${formatPath(typeof reference === 'string' ? where : [...where, 'name'])}: ${error.message}`, { cause: error });
    }
    const schema = rewardSettingsSchema(reward);
    const parsed = schema.safeParse(rewardSettings(reference), { reportInput: true });
    if (!parsed.success) {
      if (typeof reference === 'string') {
        // a name alone gives no settings; this reward needs some
        const missing = formatIssue(parsed.error.issues[0] as Issue, schema);
        throw new ConfigError(`${formatPath(where)}: reward '${reward.name}' needs settings; write it as {name: ${reward.name}, ...} (${missing})`);
      }
      throw issuesError(parsed.error.issues as Issue[], schema, where);
    }
  }
}

/** Whether the env's schema declares a `tool_wrapper` key (GEM's dataset envs). */
function takesToolWrapper(plugin: EnvPlugin): boolean {
  return declaredKeys(plugin.config).includes('tool_wrapper');
}

/** The env_config a plugin parses: the entry's, with GEM's tool_wrapper beside it when one is set. */
function givenSettings(entry: AgenticConfig['custom_envs'][string]): unknown {
  return entry.tool_wrapper === null ? entry.env_config : { ...entry.env_config, tool_wrapper: entry.tool_wrapper };
}

/** A played entry's env_config, parsed by its plugin's schema (defaults filled), or a ConfigError naming the key. */
function playedSettings(tag: string, entry: AgenticConfig['custom_envs'][string], plugins: PluginSchemas): Record<string, unknown> {
  const at = ['custom_envs', tag] as const;
  const plugin = plugins.envs.get(tag);
  if (plugin === undefined) throw new Error(`custom_envs.${tag}: its env plugin was not resolved before validation`);
  if (plugin instanceof PluginError) throw new ConfigError(`${formatPath([...at, 'env_type'])}: ${plugin.message}`, { cause: plugin });
  if (plugin instanceof Error) throw plugin;
  // GEM's tool wrapper sits beside env_config in ROLL's configs; the envs that take one read it from their config
  if (entry.tool_wrapper !== null && !takesToolWrapper(plugin))
    throw new ConfigError(
      `${formatPath([...at, 'tool_wrapper'])}: env '${plugin.name}' takes no tool_wrapper (GEM's dataset envs do: gem_math, gem_qa, gem_logic)`,
    );
  const envConfig = plugin.config.safeParse(givenSettings(entry), { reportInput: true });
  if (!envConfig.success) {
    const wrapper = entry.tool_wrapper !== null && envConfig.error.issues[0]!.path[0] === 'tool_wrapper';
    throw issuesError(envConfig.error.issues as Issue[], plugin.config, wrapper ? at : [...at, 'env_config']);
  }
  const settings = envConfig.data as Record<string, unknown>;
  if (plugins.reward) checkRewardSettings(plugin, settings, plugins.reward, [...at, 'env_config']);
  return settings;
}

/** An unplayed entry's env_config with its plugin's defaults, when the plugin resolved and the settings parse; else as given. */
function unplayedSettings(tag: string, entry: AgenticConfig['custom_envs'][string], plugins: PluginSchemas): Record<string, unknown> {
  const plugin = plugins.envs.get(tag);
  if (plugin === undefined || plugin instanceof Error) return entry.env_config;
  const parsed = plugin.config.safeParse(givenSettings(entry));
  return parsed.success ? (parsed.data as Record<string, unknown>) : entry.env_config;
}

/**
 * A played entry's seats (docs/multi_agent.md): only an env with seats takes them, each named seat
 * is one of its seats and each player one it has, the policy plays at least one seat, and nothing
 * that walks an episode as one agent (ReMax's replays, a worker's jobs) is asked to play its games,
 * nor are worked examples with notes, which keep only the episodes that end solved.
 */
function checkSeats(config: AgenticConfig, tag: string, entry: AgenticConfig['custom_envs'][string], plugin: EnvPlugin): void {
  const at = `custom_envs.${tag}.seats`;
  const spec = plugin.seats;
  if (!spec) {
    if (entry.seats !== null) throw new ConfigError(`${at}: env '${plugin.name}' has no seats (one agent plays it); leave seats out`);
    if (entry.seat_agent !== null) throw new ConfigError(`custom_envs.${tag}.seat_agent: env '${plugin.name}' has no seats; leave seat_agent out`);
    return;
  }
  const players = [POLICY_PLAYER, PAST_PLAYER, AGENT_PLAYER, 'random', ...spec.opponents];
  for (const [name, player] of Object.entries(entry.seats ?? {})) {
    if (!spec.names.includes(name)) throw new ConfigError(`${at}.${name}: env '${plugin.name}' has seats ${spec.names.join(', ')}`);
    if (!players.includes(player))
      throw new ConfigError(`${at}.${name}: '${player}' plays no seat of env '${plugin.name}'; its players are ${players.join(', ')}`);
  }
  if (spec.names.every((name) => ![POLICY_PLAYER, AGENT_PLAYER].includes(entry.seats?.[name] ?? POLICY_PLAYER))) {
    throw new ConfigError(`${at}: no seat is the policy's, so its games would train and score nothing; give one seat policy`);
  }
  checkPastSeats(config, tag, entry);
  checkSeatAgent(tag, entry);
  if (!config.train_env_manager.tags.includes(tag)) return;
  const alone = (why: string) => new ConfigError(`custom_envs.${tag}: env '${plugin.name}' has seats, and ${why}`);
  const ws = config.warm_start;
  if (ws.enabled && ws.think && ws.worked_examples > 0) {
    throw alone(
      'worked examples with notes (warm_start.think) keep only episodes that end solved, and a game of seats is won or lost, never solved; leave out think or worked_examples',
    );
  }
  if (config.adv_estimator === 'remax') throw alone("ReMax's greedy baselines replay an episode as one agent; choose another adv_estimator");
  if (config.distributed.redis_url !== null)
    throw alone('distributed rollouts play one episode per env; play its games in this process (no distributed.redis_url)');
}

/**
 * Seats played by past (the opponent pool, src/rollout/opponent_pool.ts): the pool is the training
 * run's, so only a training tag played in the trainer's process has them; validation and eval
 * score against opponents that stay the same.
 */
function checkPastSeats(config: AgenticConfig, tag: string, entry: AgenticConfig['custom_envs'][string]): void {
  const past = Object.entries(entry.seats ?? {}).find(([, player]) => player === PAST_PLAYER);
  if (!past) return;
  const at = `custom_envs.${tag}.seats.${past[0]}`;
  if (config.val_env_manager.tags.includes(tag))
    throw new ConfigError(`${at}: past (the opponent pool) plays training games only; give val_env_manager a tag whose opponents stay the same`);
  if (config.async_generation_ratio > 0)
    throw new ConfigError(`${at}: past (the opponent pool) lives in the trainer's thread; play the rollouts there (async_generation_ratio=0)`);
}

/** A seat played by agent needs seat_agent, and seat_agent a seat to play. */
function checkSeatAgent(tag: string, entry: AgenticConfig['custom_envs'][string]): void {
  const agentSeat = Object.entries(entry.seats ?? {}).find(([, player]) => player === AGENT_PLAYER);
  if (agentSeat && entry.seat_agent === null)
    throw new ConfigError(`custom_envs.${tag}.seats.${agentSeat[0]}: agent needs custom_envs.${tag}.seat_agent, the module of the outside agent that plays it`);
  if (!agentSeat && entry.seat_agent !== null)
    throw new ConfigError(
      `custom_envs.${tag}.seat_agent: no seat of custom_envs.${tag}.seats is agent, so no game would call it; name a seat agent or leave seat_agent out`,
    );
}

/** The tags some env manager plays. */
export function playedTags(config: AgenticConfig): Set<string> {
  return new Set([...config.train_env_manager.tags, ...config.val_env_manager.tags]);
}

/** Validates `tree` (interpolations already resolved): the core schema and the rules between keys. Pure. */
export function validateConfig(tree: TreeObject): AgenticConfig {
  const parsed = ConfigShape.safeParse(tree, { reportInput: true });
  if (!parsed.success) throw issuesError(parsed.error.issues as Issue[], ConfigShape);
  const config = parsed.data;
  resolveSecrets(config);
  checkRelations(config);
  runBackend(config);
  return config;
}

/**
 * The config with each entry's env_config checked against its plugin's schema and its defaults
 * filled, a new object (`config` is left as it is). As in ROLL, an entry no env manager plays is
 * neither checked nor refused (ROLL's example files define more envs than they play, some with
 * settings only their own users fill in); its defaults are filled when its settings are valid, for
 * `agentic play TAG`. Pure: the plugins come resolved.
 */
export function validateEnvSettings(config: AgenticConfig, plugins: PluginSchemas): AgenticConfig {
  const played = playedTags(config);
  const entries = Object.entries(config.custom_envs).map(([tag, entry]) => {
    const envConfig = played.has(tag) ? playedSettings(tag, entry, plugins) : unplayedSettings(tag, entry, plugins);
    if (played.has(tag)) checkSeats(config, tag, entry, plugins.envs.get(tag) as EnvPlugin);
    return [tag, { ...entry, env_config: envConfig }] as const;
  });
  return { ...config, custom_envs: Object.fromEntries(entries) };
}
