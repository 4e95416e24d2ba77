/**
 * ROLL's configs, read as they are (docs/roll.md). Every key of ROLL's agentic examples that
 * agentic's schema lacks meets one of three fates here, after interpolation and before validation:
 *
 *   inert     infrastructure with no meaning in one tfjs process (GPUs, Megatron, vLLM, Ray
 *             workers): removed, and named once at start-up ("ROLL keys with no effect here: ...")
 *   refused   a setting that would change the run, which agentic cannot honour: a ConfigError
 *             with a one-line hint
 *   helper    an unknown top-level key (Hydra allows them; ROLL's env files define
 *             max_actions_per_traj, action_pattern, templates, custom_env ...): removed; one that
 *             no interpolation reads is named at start-up too, unless it looks like a misspelling
 *             of one of ours: that one is left for validation, which answers "did you mean".
 *
 * Keys ROLL shares with agentic (and ROLL's spellings of our values, such as its env manager
 * class paths) are read by the schema itself.
 */
import { ConfigError } from '../errors';
import { closestMatches } from '../util/suggest';
import { agentFlyInertPhrase } from './agentfly';
import { declaredKeys } from './introspect';
import { applyEnvFates } from './roll_envs';
import { ConfigShape } from './schema';
import { formatPath, isObject, type Path, type Tree, type TreeObject } from './tree';

const ROLES = ['actor_train', 'actor_infer', 'reference', 'critic'];
/** The roles that never train with a policy loss: ROLL reads pg_variant and topr_* on actor_train only. */
const OTHER_ROLES = ROLES.filter((r) => r !== 'actor_train');
const MANAGERS = ['train_env_manager', 'val_env_manager'];

type Fate = { fate: 'inert'; when?: (value: Tree) => boolean; otherwise?: string } | { fate: 'refused'; hint: string };

/**
 * `*` matches any one key; `ROLE` a role, `OTHER` a role other than actor_train, `MANAGER` an env
 * manager, `GEN` every place generating_args sits.
 */
const RULES: Array<[string, Fate]> = [
  ['hydra', { fate: 'inert' }],
  ['system_envs', { fate: 'inert' }],
  ['num_gpus_per_node', { fate: 'inert' }],
  ['num_nodes', { fate: 'inert' }],
  ['batch_adjust_mode', { fate: 'inert' }],
  ['reward_pretrain', { fate: 'inert' }],
  ['ROLE.model_args.attn_implementation', { fate: 'inert' }],
  ['ROLE.model_args.model_type', { fate: 'inert' }],
  ['ROLE.data_args', { fate: 'inert' }],
  ['ROLE.strategy_args.strategy_name', { fate: 'inert' }],
  ['ROLE.strategy_args.strategy_config', { fate: 'inert' }],
  ['ROLE.device_mapping', { fate: 'inert' }],
  ['ROLE.infer_batch_size', { fate: 'inert' }],
  ['ROLE.system_envs', { fate: 'inert' }],
  ['ROLE.worker_cls', { fate: 'inert' }],
  ['OTHER.pg_variant', { fate: 'inert' }],
  ['OTHER.topr_positive_weight', { fate: 'inert' }],
  ['OTHER.topr_negative_weight', { fate: 'inert' }],
  ['ROLE.use_dynamic_batching_in_train', { fate: 'inert' }],
  ['ROLE.max_tokens_per_microbatch_in_train', { fate: 'inert' }],
  ['ROLE.sequence_length_round_in_train', { fate: 'inert' }],
  ['ROLE.use_dynamic_batching_in_infer', { fate: 'inert' }],
  ['ROLE.max_tokens_per_microbatch_in_infer', { fate: 'inert' }],
  ['ROLE.sequence_length_round_in_infer', { fate: 'inert' }],
  [
    'GEN.num_return_sequences',
    { fate: 'inert', when: (v) => v === 1, otherwise: "one response per prompt here; set the env manager's group_size for several samples of one seed" },
  ],
  ['GEN.num_beams', { fate: 'inert', when: (v) => v === 1, otherwise: 'beam search is not built; generation samples (num_beams: 1)' }],
  ['MANAGER.format_penalty', { fate: 'inert' }],
  ['custom_envs.*.use_thread_lock', { fate: 'inert' }],
  ['custom_envs.*.max_env_step_concurrent', { fate: 'inert' }],
  [
    'custom_envs.*.agent_runner_cls',
    {
      fate: 'inert',
      when: (v) => v === null,
      otherwise: 'agent runners are not built; remove agent_runner_cls (or set it to null) and pick env_manager_cls traj or step',
    },
  ],
  ['tracker_kwargs.*', { fate: 'inert', when: () => true }],
  [
    'train_infer_correction.filters',
    { fate: 'refused', hint: "ROLL's train/infer log-prob filters are not built (train_infer_correction.is_weight is); remove filters" },
  ],
  // WebShop's server settings: the shop runs in process; ROLL's reset replaces session with a seeded goal index
  ['custom_envs.*.env_config.server', { fate: 'inert', when: (v) => v === null, otherwise: 'the webshop env simulates its shop in process; remove server' }],
  ['custom_envs.*.env_config.session', { fate: 'inert' }],
  [
    'custom_envs.*.env_config.filter_goals',
    { fate: 'inert', when: (v) => v === null, otherwise: 'a Python function in ROLL; pick goals with split and limit_goals' },
  ],
  ['custom_envs.*.env_config.get_image', { fate: 'inert', when: (v) => !v, otherwise: 'the simulated shop has no product images; remove get_image' }],
  ['custom_envs.*.env_config.file_path', { fate: 'refused', hint: "webshop reads WebShop's data through products_file and goals_file; set those instead" }],
  ['rpc_timeout', { fate: 'inert' }],
  ['profiler_memory', { fate: 'inert' }],
  ['rollout_dump_dir', { fate: 'inert' }],
  ['ROLE.model_args.flash_attn', { fate: 'inert' }],
  ['ROLE.model_args.ulysses_size', { fate: 'inert' }],
  ['ROLE.use_remove_padding', { fate: 'inert' }],
  [
    'ROLE.model_args.freeze_module_prefix',
    {
      fate: 'inert',
      when: (v) =>
        v === null ||
        String(v)
          .split(',')
          .every((prefix) => !freezesOurs(prefix.trim())),
      otherwise: 'freezing modules is not built; only prefixes of modules text models lack (vision_model) have no effect here',
    },
  ],
  [
    'GEN.include_stop_str_in_output',
    { fate: 'inert', when: (v) => v === true || v === null, otherwise: 'a response keeps the stop string that ended it (include_stop_str_in_output: true)' },
  ],
  ['MANAGER.system_envs', { fate: 'inert' }],
];

/** Whether ROLL's freeze_module_prefix `prefix` would freeze a parameter of the Qwen2 family here (model.*, lm_head). */
function freezesOurs(prefix: string): boolean {
  return ['model.', 'lm_head'].some((name) => name.startsWith(prefix) || prefix.startsWith(name));
}

/** ROLL's helper variables that look like our keys but are not misspellings of them (the env files' custom_env). */
const KNOWN_HELPERS = ['custom_env'];
/** tracker_kwargs keys that agentic reads (the rest are other trackers' settings: inert). */
const TRACKER_KWARGS = ['log_dir'];
/** ROLL's class path of the agent-native env manager, which builds its prompts without templates. */
const AGENT_NATIVE = /(^|\.)AgentNativeStepEnvManager$/;

function expand(pattern: string): string[][] {
  let paths: string[][] = [[]];
  for (const part of pattern.split('.')) {
    const options =
      part === 'ROLE' ? ROLES : part === 'OTHER' ? OTHER_ROLES : part === 'MANAGER' ? MANAGERS : part === 'GEN' ? [...ROLES, ...MANAGERS] : [part];
    paths = paths.flatMap((p) => options.map((o) => (part === 'GEN' ? [...p, o, 'generating_args'] : [...p, o])));
  }
  return paths;
}

const EXPANDED: Array<[string[], Fate]> = RULES.flatMap(([pattern, fate]) => expand(pattern).map((path) => [path, fate] as [string[], Fate]));

export interface RollKeys {
  /** The tree without the keys below: what the schema validates. */
  tree: TreeObject;
  /** Inert keys found, as `path` or `path=value` for a short scalar, in the order found. */
  inert: string[];
  /** Top-level helper values that no interpolation reads. */
  unusedHelpers: string[];
}

/** `path` or `path=value` when the value is a short name, number or boolean. */
function describe(path: Path, value: Tree): string {
  const shown =
    typeof value === 'string' && /^[\w.-]{1,40}$/.test(value) ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : null;
  return shown === null ? formatPath(path) : `${formatPath(path)}=${shown}`;
}

/** `a.b.c=v` as `c=v` (`tracker_kwargs.x` keeps its parent): the warning names each kind once. */
function short(entry: string): string {
  const [path, value] = entry.split('=', 2) as [string, string | undefined];
  const parts = path.split('.');
  const leaf = parts[0] === 'tracker_kwargs' ? path : parts.at(-1)!;
  return value === undefined ? leaf : `${leaf}=${value}`;
}

/** Removes the node at `path` (when present) and returns it. */
function take(tree: TreeObject, path: readonly string[]): { found: boolean; value: Tree } {
  let node: Tree = tree;
  for (const key of path.slice(0, -1)) {
    if (!isObject(node) || !(key in node)) return { found: false, value: null };
    node = node[key]!;
  }
  const last = path.at(-1)!;
  if (!isObject(node) || !(last in node)) return { found: false, value: null };
  const value = node[last]!;
  delete node[last];
  return { found: true, value };
}

/** Paths matching `pattern` (with `*`) that exist in `tree`. */
function matches(tree: TreeObject, pattern: readonly string[]): string[][] {
  let found: Array<{ path: string[]; node: Tree }> = [{ path: [], node: tree }];
  for (const part of pattern) {
    found = found.flatMap(({ path, node }) => {
      if (!isObject(node)) return [];
      const keys = part === '*' ? Object.keys(node) : part in node ? [part] : [];
      return keys.map((key) => ({ path: [...path, key], node: node[key]! }));
    });
  }
  return found.map((f) => f.path);
}

/** The first segment of every absolute `${...}` reference in the tree (before interpolation). */
export function referencedRoots(tree: Tree, into = new Set<string>()): Set<string> {
  if (typeof tree === 'string') {
    for (const m of tree.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)) into.add(m[1]!);
  } else if (Array.isArray(tree)) {
    for (const item of tree) referencedRoots(item, into);
  } else if (isObject(tree)) {
    for (const item of Object.values(tree)) referencedRoots(item, into);
  }
  return into;
}

/**
 * Applies the fates above to a resolved tree (`referenced`: the top-level names interpolations
 * read, gathered before they were resolved). The input is not changed.
 */
export function applyRollKeys(resolved: TreeObject, referenced: ReadonlySet<string>): RollKeys {
  const tree = structuredClone(resolved);
  const inert: string[] = [];
  for (const [pattern, rule] of EXPANDED) {
    for (const path of matches(tree, pattern)) {
      if (pattern[0] === 'tracker_kwargs' && TRACKER_KWARGS.includes(path[1]!)) continue;
      const { value } = take(tree, path);
      if (rule.fate === 'refused') throw new ConfigError(`${formatPath(path)}: ${rule.hint}`);
      if (rule.when && !rule.when(value)) throw new ConfigError(`${formatPath(path)}: ${JSON.stringify(value)}: ${rule.otherwise}`);
      // a tracker's settings hold its credentials (wandb's api_key): named, never shown
      inert.push(pattern[0] === 'tracker_kwargs' ? formatPath(path) : describe(path, value));
    }
  }
  agentNativeTemplates(tree, inert);
  applyEnvFates(tree, inert);

  const ours = declaredKeys(ConfigShape);
  const unusedHelpers: string[] = [];
  for (const key of Object.keys(tree)) {
    if (ours.includes(key) || key === 'defaults') continue;
    if (!referenced.has(key)) {
      // a near miss of one of our keys that nothing reads is a typo, not a helper: validation
      // says "did you mean" (ROLL's custom_env, read by ${custom_env.X}, is a helper)
      if (!KNOWN_HELPERS.includes(key) && closestMatches(key, ours, 1).length > 0) continue;
      unusedHelpers.push(key);
    }
    delete tree[key];
  }
  return { tree, inert, unusedHelpers };
}

/** ROLL's agent-native manager ignores the templates its examples fill with placeholders. */
function agentNativeTemplates(tree: TreeObject, inert: string[]): void {
  const envs = tree.custom_envs;
  if (!isObject(envs)) return;
  for (const [tag, entry] of Object.entries(envs)) {
    if (!isObject(entry) || typeof entry.env_manager_cls !== 'string' || !AGENT_NATIVE.test(entry.env_manager_cls)) continue;
    for (const key of ['agent_system_template', 'agent_template']) {
      if (key in entry) {
        delete entry[key];
        inert.push(`custom_envs.${tag}.${key}`);
      }
    }
  }
}

/** The one start-up line naming what was read but has no effect (ROLL's and AgentFly's keys, envs no manager plays), or null when nothing was. */
export function rollKeysWarning(keys: {
  inert?: readonly string[];
  unusedHelpers?: readonly string[];
  unplayedEnvs?: readonly string[];
  agentFlyInert?: readonly string[];
}): string | null {
  const parts: string[] = [];
  const docs: string[] = [];
  if (keys.inert?.length) parts.push(`ROLL keys with no effect here: ${[...new Set(keys.inert.map(short))].join(', ')}`);
  if (keys.unusedHelpers?.length) parts.push(`top-level values no interpolation reads: ${keys.unusedHelpers.join(', ')}`);
  if (keys.unplayedEnvs?.length) parts.push(`custom_envs entries no env manager plays (not built or checked): ${keys.unplayedEnvs.join(', ')}`);
  if (parts.length) docs.push('docs/roll.md');
  const agentFly = agentFlyInertPhrase(keys.agentFlyInert);
  if (agentFly) {
    parts.push(agentFly);
    docs.push('docs/agentfly.md');
  }
  return parts.length ? `${parts.join('; ')} (${docs.join(', ')})` : null;
}
