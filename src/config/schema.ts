/**
 * The configuration schema: the one place that names every key, its type, its default and what it
 * means. Key names follow ROLL's agentic pipeline so its configs read the same here. The CLI's
 * error messages, `agentic config`, and docs/config.md all come from this file.
 *
 * Defaults may contain `${...}` interpolations; they are resolved with the rest of the config.
 */
import { z } from 'zod';
import { ESTIMATOR_NAMES } from '../algo/estimators';
import { KL_PENALTIES, LOSS_AGG_MODES, PG_VARIANTS } from '../algo/names';
import { NORMALIZATION_GROUPINGS, NORMALIZATION_METHODS, NORMALIZATION_STATISTICS, type NormalizationStatistic } from '../algo/reward_norm';
import { blasChoiceProblem } from '../engine/blas';
import { BACKENDS, WEBGPU_ADAPTERS } from '../engine/names';
import { PYTHON_SANDBOX_MODES } from '../sandbox/modes';

const positiveInt = () => z.int().min(1);
const nonNegativeInt = () => z.int().min(0);
const probability = () => z.number().min(0).max(1);
/**
 * The most worked examples a warm start may use: they show solutions of training episodes, and the
 * warm start must stay a start that RL finishes (the calculator's are 1000 of its 2000 training
 * questions).
 */
export const MAX_WORKED_EXAMPLES = 1000;
/** Words that look like a setting of resume_from_checkpoint rather than a folder's name. */
const RESUME_WORDS = /^(auto|latest|last|newest|true|false|yes|no|none|null)$/i;

export const Backend = z.enum(BACKENDS);

export const TRACKERS = ['console', 'jsonl', 'html', 'tensorboard', 'wandb'] as const;

/** A tag names an entry of custom_envs; it appears in metric names (`env/<tag>/success`). */
export const TAG_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*$/;

export const ModelArgs = z.strictObject({
  model_name_or_path: z
    .string()
    .min(1)
    .nullable()
    .default(null)
    .describe('Model folder or hub id for this role; null takes `pretrain`. A LoRA adapter folder (PEFT) brings the base it names.'),
  adapter_name_or_path: z
    .string()
    .min(1)
    .nullable()
    .default(null)
    .describe(
      "A LoRA adapter folder (PEFT's adapter_config.json and adapter_model.safetensors) put on this role's model: it trains on when actor_train has lora_target, and is folded into the weights otherwise.",
    ),
  dtype: z
    .enum(['fp32', 'bf16', 'fp16'])
    .default('fp32')
    .describe('Precision of saved weights. Weights are held and computed in float32 on every tfjs backend (docs/models.md says why).'),
  disable_gradient_checkpointing: z
    .boolean()
    .default(true)
    .describe(
      "Roles that train (actor_train, critic): false recomputes each block's activations in the backward pass instead of keeping them (gradient checkpointing: about one block's activations in memory instead of all, for one more forward pass; the same gradients bit for bit); true keeps them. The default keeps them, unlike ROLL's (false): the built-in presets fit in memory either way, and recomputing makes their steps about a quarter slower. Roles that never compute gradients are unaffected.",
    ),
  lora_target: z
    .string()
    .min(1)
    .nullable()
    .default(null)
    .describe(
      "actor_train: train LoRA adapters on these projections instead of every weight (ROLL's syntax): module names separated by commas (q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj), all-linear for all of them, or a regular expression (with *, $, | or ( ) matched against whole module names such as model.layers.0.self_attn.q_proj. The reference is then the frozen base itself. null trains every weight.",
    ),
  lora_rank: positiveInt().default(8).describe("LoRA's rank r (ROLL's default 8)."),
  lora_alpha: z.number().positive().nullable().default(null).describe("LoRA's alpha: the update is scaled by alpha / r. null: 2 x lora_rank, as ROLL."),
  lora_dropout: z
    .number()
    .refine((v) => v === 0, { message: "LoRA dropout is not built; 0 (ROLL's default) trains without it" })
    .default(0)
    .describe("Dropout on the adapters' input; only 0 (none) is built."),
  additional_target: z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
    .nullable()
    .default(null)
    .describe(
      "actor_train with LoRA: modules trained whole beside the adapters (ROLL's and LLaMA-Factory's key, PEFT's modules_to_save), separated by commas: embed_tokens, lm_head. With tied embeddings they are one matrix, trained once. The base keeps its own copy for the reference; the adapter folder carries them (PEFT and agentic serve load it; vLLM refuses it, so the weight sync sends servers merged weights instead).",
    ),
  lora_save_merged: z
    .boolean()
    .default(false)
    .describe(
      "actor_train with LoRA: besides the adapter (PEFT's folder) in <output_dir>/model, save the final policy with the adapters folded into its weights, as a plain Hugging Face folder in <output_dir>/model_merged.",
    ),
});

export const TrainingArgs = z.strictObject({
  learning_rate: z.number().positive().default(1e-6).describe('Peak learning rate of AdamW.'),
  weight_decay: z.number().min(0).default(0).describe('Decoupled (AdamW) weight decay.'),
  adam_beta1: z.number().min(0).lt(1).default(0.9).describe('AdamW first-moment decay.'),
  adam_beta2: z.number().min(0).lt(1).default(0.999).describe('AdamW second-moment decay.'),
  adam_epsilon: z.number().positive().default(1e-8).describe('AdamW denominator epsilon.'),
  lr_scheduler_type: z.enum(['constant', 'linear', 'cosine']).default('constant').describe('Learning-rate schedule after warmup, over max_steps.'),
  warmup_steps: nonNegativeInt().default(0).describe('Linear warmup length in training steps (the rate is constant within a step).'),
  warmup_ratio: probability().default(0).describe('Warmup as a fraction of max_steps; used when warmup_steps is 0.'),
  max_grad_norm: z
    .number()
    .min(0)
    .nullable()
    .default(null)
    .describe("This role's gradient-norm clip (0 turns it off); null takes the top-level max_grad_norm."),
  per_device_train_batch_size: positiveInt().default(8).describe('Rows per forward/backward micro-batch (fewer when long rows would not fit the wasm heap).'),
  gradient_accumulation_steps: positiveInt()
    .default(1)
    .describe('Micro-batches per optimizer step: a mini-batch is the two multiplied, in rows; a step makes ppo_epochs passes over its shuffled mini-batches.'),
});

export const GeneratingArgs = z.strictObject({
  max_new_tokens: positiveInt().default(128).describe('Most tokens generated per turn.'),
  temperature: z.number().min(0).default(1).describe('Sampling temperature; 0 is greedy.'),
  top_p: z.number().gt(0).max(1).default(1).describe('Nucleus sampling mass; 1 turns it off.'),
  top_k: z
    .preprocess(
      // vLLM's and SGLang's -1 (off) is read as 0, so both settings give the same run
      (v) => (v === -1 ? 0 : v),
      z.int().refine((k) => k >= 0, { message: 'expected k >= 1, or 0 or -1 to turn top-k off (as vLLM and SGLang)' }),
    )
    .default(0)
    .describe('Sample among the k most likely tokens; 0 or -1 (vLLM and SGLang) turns it off.'),
  do_sample: z.boolean().default(true).describe('Sample (true) or decode greedily (false).'),
  answer_temperature: z
    .number()
    .gt(0)
    .nullable()
    .default(null)
    .describe(
      "A temperature of its own for the token that begins each answer (sampled after `<answer`, up to and including the one that shows the answer's first character), when sampling; null: `temperature`. Training divides that token's logits by it too, so the policy trained is the one that sampled. It explores which answer, not the thinking or the rest of the format. A high value also spreads that token over the whole vocabulary: pair it with `top_k`.",
    ),
  stop_strings: z.array(z.string().min(1)).nullable().default(null).describe('Generation of a turn stops after any of these strings.'),
});

export const StrategyArgs = z.strictObject({
  backend: Backend.nullable()
    .default(null)
    .describe(
      'tfjs backend for this role; null takes the top-level `backend`. tfjs runs one backend per process, so every role must end up with the same one.',
    ),
});

export const Worker = z.strictObject({
  model_args: ModelArgs.prefault({}).describe('Which weights the role loads and how they are saved.'),
  training_args: TrainingArgs.prefault({}).describe('Optimizer settings (roles that train).'),
  generating_args: GeneratingArgs.prefault({}).describe('Sampling settings (roles that generate).'),
  strategy_args: StrategyArgs.prefault({}).describe('Where and how the role computes.'),
  model_update_frequency: positiveInt()
    .default(1)
    .describe(
      "actor_infer: take actor_train's weights every this many steps (1 shares them in this process; inference servers load them from model_update_dir); other roles ignore it.",
    ),
});

/** actor_train: a Worker with the policy loss's choice (ROLL reads these on actor_train only). */
export const ActorTrain = Worker.extend({
  pg_variant: z
    .enum(PG_VARIANTS)
    .default('ppo')
    .describe(
      "The policy loss (ROLL's agentic ActorWorker, docs/training.md): ppo, the clipped surrogate (pg_clip, dual_clip_loss); topr, Tapered Off-Policy REINFORCE: rows whose episode score is above 0 get the plain REINFORCE term -A log p, the others -clip(r, 0, 1) A log p with the ratio r a constant; vanilla, -A log p on every token; tis and cispo, -clip(r, 0, 1) A log p and -clip(r, 0.9, 1.1) A log p on every token; kimi15, -A log p + 0.05 (log p - log p_old)^2. ROLL's constants of tis, cispo and kimi15 are not keys (ROLL's config drops them).",
    ),
  topr_positive_weight: z.number().min(0).default(1).describe('topr: weight of the terms of rows whose episode score is above 0.'),
  topr_negative_weight: z.number().min(0).default(1).describe('topr: weight of the terms of rows whose episode score is 0 or less.'),
});

export const PROXY_TYPES = ['policy', 'random', 'sglang', 'openai'] as const;
/** The proxies whose responses come from inference servers over HTTP (docs/inference.md). */
export const HTTP_PROXY_TYPES = ['sglang', 'openai'] as const;
export type HttpProxyType = (typeof HTTP_PROXY_TYPES)[number];

export function isHttpProxy(type: (typeof PROXY_TYPES)[number]): type is HttpProxyType {
  return (HTTP_PROXY_TYPES as readonly string[]).includes(type);
}

export const ProxyConfig = z.strictObject({
  base_url: z
    .preprocess((v) => (typeof v === 'string' ? [v] : v), z.array(z.string().min(1)).min(1))
    .nullable()
    .default(null)
    .describe(
      "The inference server's URL (http://host:port, without /v1), or a list of them: each environment's turns go to one server, the environments spread over the list. Required by sglang and openai.",
    ),
  api_key: z
    .string()
    .min(1)
    .nullable()
    .default(null)
    .describe(
      'Sent as `Authorization: Bearer <api_key>` (a server started with --api-key); null sends none. Written as *** wherever the config is saved or printed; prefer api_key_env.',
    ),
  api_key_env: z
    .string()
    .min(1)
    .nullable()
    .default(null)
    .describe('The environment variable that holds the API key (instead of api_key), so the key is in no config or command line; null: none.'),
  timeout_s: z.number().positive().default(120).describe('Time limit of one request in seconds; a request over it is aborted and retried.'),
  max_retries: nonNegativeInt()
    .default(3)
    .describe("Retries of a request that failed (no connection, timed out, a 5xx, an overloaded server's 503) before its episode ends as infer_failure."),
  retry_backoff_s: z
    .number()
    .positive()
    .default(0.5)
    .describe('Wait before the first retry in seconds; it doubles with each further retry (a 503 says its own wait in Retry-After).'),
  unavailable_timeout_s: z
    .number()
    .positive()
    .default(300)
    .describe(
      'When no server has answered for this many seconds (every request failing meanwhile), the run stops with one line instead of failing episodes forever.',
    ),
});

export const LlmProxy = z.strictObject({
  proxy_type: z
    .enum(PROXY_TYPES)
    .default('policy')
    .describe(
      "policy: actor_infer's model generates every response, in this process; random: no model, each environment's sampleRandomAction() answers (for testing environments and pipelines); sglang: inference servers speaking SGLang's native POST /generate (agentic serve, SGLang); openai: servers speaking POST /v1/completions with token-id prompts (agentic serve, SGLang, vLLM). Prompts go to servers as token ids and their output ids and log-probs come back as they are (docs/inference.md).",
    ),
  proxy_config: ProxyConfig.prefault({}).describe('Where the inference servers of sglang and openai are, and how long to wait for them.'),
});

export const ENV_MANAGER_KINDS = ['traj', 'step', 'step_concat'] as const;
export type EnvManagerKind = (typeof ENV_MANAGER_KINDS)[number];

/** Whether a manager kind makes one training row per step (both step kinds) rather than one per trajectory. */
export function isStepWise(kind: EnvManagerKind): boolean {
  return kind !== 'traj';
}

/** What the gateway does with an outside agent's session whose call did not extend the conversation so far (docs/agents.md). */
export const SESSION_MISMATCH_ACTIONS = ['split', 'drop', 'error'] as const;
export type SessionMismatchAction = (typeof SESSION_MISMATCH_ACTIONS)[number];

/** ROLL names env managers by Python class path; its two text managers map onto ours. */
function parseEnvManagerClass(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (/(^|\.)TrajEnvManager$/.test(value)) return 'traj';
  if (/(^|\.)StepConcatEnvManager$/.test(value)) return 'step_concat';
  if (/(^|\.)(StepEnvManager|AgentNativeStepEnvManager)$/.test(value)) return 'step';
  return value;
}

export const EnvManager = z.strictObject({
  num_env_groups: positiveInt().default(128).describe('Groups of environments; every environment of a group plays the same seed.'),
  group_size: positiveInt().default(1).describe('Environments per group (the GRPO group size).'),
  tags: z
    .array(z.string().regex(TAG_PATTERN, 'a tag is a letter followed by letters, digits, _ or -'))
    .default([])
    .describe('Entries of custom_envs these environments are built from.'),
  num_groups_partition: z.array(positiveInt()).nullable().default(null).describe('Groups per tag, in the order of tags; null splits num_env_groups equally.'),
  generating_args: GeneratingArgs.nullable().default(null).describe("Sampling settings for these rollouts; null takes actor_infer's."),
  llm_proxy: LlmProxy.prefault({}).describe('Who answers the environments: the policy model in this process, random actions, or inference servers.'),
  max_env_num_per_worker: positiveInt()
    .default(16)
    .describe(
      "Distributed rollouts (distributed.redis_url): environments one `agentic worker` plays at once for this manager (ROLL's key). A job is one group's episode (group_size environments), so a worker takes max(1, floor(max_env_num_per_worker / group_size)) jobs at once (BullMQ's worker concurrency).",
    ),
});

/** The player of a seat that the policy being trained plays (custom_envs.<tag>.seats). */
export const POLICY_PLAYER = 'policy';
/** The player of a seat that a snapshot of an earlier policy plays (opponent_pool). */
export const PAST_PLAYER = 'past';
/** The player of a seat that an outside agent plays (seat_agent), its model calls answered by the policy through the gateway. */
export const AGENT_PLAYER = 'agent';

export const CustomEnv = z.strictObject({
  env_type: z.string().min(1).describe('A registered environment name (see `agentic plugins`) or the path of a plugin file.'),
  env_config: z.record(z.string(), z.unknown()).default({}).describe("Settings passed to the environment; checked against the plugin's own schema."),
  tool_wrapper: z
    .record(z.string(), z.unknown())
    .nullable()
    .default(null)
    .describe(
      "GEM's tool wrapper, {wrapper_args: {tool_reward, tool_success_reward, max_tool_uses}, tool_configs: [{tool_id: python_code | search | mcp, tool_args}]}, for the envs that take one (gem_math, gem_qa, gem_logic; docs/gem.md); checked by the env.",
    ),
  max_steps: positiveInt().default(10).describe('Most actions (turns) per episode; an env with seats: most turns per seat.'),
  max_tokens_per_step: positiveInt().default(128).describe('Most tokens the policy may generate per turn.'),
  env_manager_cls: z
    .preprocess(parseEnvManagerClass, z.enum(ENV_MANAGER_KINDS))
    .default('traj')
    .describe(
      "traj: one growing chat per episode and one training row per trajectory (StarPO); step: a fresh prompt each turn (instruction, recent history, observation) and one row per step (GiGPO); step_concat: ROLL's StepConcatEnvManager for GEM's games, a fresh prompt each turn holding the earlier observations and the current one with its suffix, one row per step. ROLL's class paths (...TrajEnvManager; ...StepEnvManager and ...AgentNativeStepEnvManager as step; ...StepConcatEnvManager as step_concat) are accepted.",
    ),
  history_length: nonNegativeInt()
    .default(5)
    .describe(
      "Previous steps shown in a step-wise prompt (env_manager_cls: step). step_concat reads it as ROLL does: the last history_length - 1 earlier observations, and 0 all of them (Python's history[-0:-1]).",
    ),
  agent_system_template: z.string().nullable().default(null).describe('The system prompt, literal text (no placeholders); null takes the built-in one.'),
  agent_template: z
    .string()
    .nullable()
    .default(null)
    .describe(
      "The user message of a turn, with {placeholders} (see docs/rollout.md); null takes the manager's default. traj: {turn_idx} {observation} {actions_left} {max_response_length} {suffix} {last_action_desc} (the env's account of its last step, info.actionDesc); step adds {env_instruction} {step_count} {history_length} {history} {current_step} {current_observation}.",
    ),
  episode_timeout_s: z
    .number()
    .positive()
    .default(600)
    .describe('Time budget of one episode in seconds (generation and env calls); an episode over it is cut, marked timed_out, and the others go on.'),
  seats: z
    .record(z.string(), z.string().min(1))
    .nullable()
    .default(null)
    .describe(
      "An env with seats (two or more players, docs/multi_agent.md): who plays each seat, by the env's seat names: policy (the policy being trained, this manager's llm_proxy; every seat policy is self-play, each seat's rows its own), past (a snapshot of an earlier policy from opponent_pool, training tags only), agent (the outside agent of seat_agent, whose model calls the policy answers and trains on), random (the env's random moves) or one of the env's own opponents (minimax, ...). Seats left out are policy. null: every seat policy.",
    ),
  seat_agent: z
    .union([z.string().min(1), z.strictObject({ command: z.array(z.string().min(1)).min(1) })])
    .nullable()
    .default(null)
    .describe(
      'An env with seats: the outside agent that plays its seats named agent (docs/multi_agent.md#an-outside-agent-in-a-seat): a TypeScript or JavaScript module exporting act(ctx), path relative to the run folder, or {command: [argv...]}, run at each turn with the seat in environment variables and its move as JSON on its last line. At each of its turns it asks the model through the gateway (an OpenAI base URL and key of its own) and gives its move.',
    ),
  rotate_seats: z
    .boolean()
    .default(true)
    .describe(
      'An env with seats: game e of group g gives seat s the player that `seats` names for seat (s + g + e) mod the seat count, so the policy plays every seat (neighbouring groups, and each group from game to game); all envs of a group play the same assignment.',
    ),
});

export const RewardNormalization = z.strictObject({
  grouping: z
    .enum(NORMALIZATION_GROUPINGS)
    .default('traj_group_id')
    .describe('Rows normalised together: traj_group_id (the episodes of one seed), tags, group_ids, traj_id, or batch (all).'),
  method: z
    .enum(NORMALIZATION_METHODS)
    .default('mean_std')
    .describe(
      'identity, mean (subtract the group mean), mean_std (then divide by the unbiased std + 1e-6; a group of one or with no spread gives 0), asym_clip (ROLL: as mean_std). Not applied for reinforce_plus_plus, rloo and remax, which take raw scores.',
    ),
  norm_mean_type: z
    .enum(NORMALIZATION_STATISTICS)
    .nullable()
    .default(null)
    .describe(
      "ROLL's explicit form: the mean subtracted is the group's or the batch's. When it or norm_std_type is set, the two replace `method` (the one left null means none).",
    ),
  norm_std_type: z
    .enum(NORMALIZATION_STATISTICS)
    .nullable()
    .default(null)
    .describe("ROLL's explicit form: the std divided by is the group's or the batch's (see norm_mean_type)."),
});

/** norm_mean_type / norm_std_type when either is set (they then replace `method`), else null. */
export function normalizationStatistics(n: { norm_mean_type: NormalizationStatistic; norm_std_type: NormalizationStatistic }) {
  return n.norm_mean_type === null && n.norm_std_type === null ? null : { mean: n.norm_mean_type, std: n.norm_std_type };
}

export const CheckpointConfig = z.strictObject({
  type: z.literal('file_system').default('file_system').describe('Where checkpoints go; only file_system.'),
  output_dir: z
    .string()
    .min(1)
    .default('${output_dir}/checkpoints')
    .describe('Folder that holds checkpoint-N/ (the state after N steps; docs/training.md, "Checkpoints and resuming").'),
  max_ckpt_to_keep: nonNegativeInt()
    .nullable()
    .default(null)
    .describe('Keep only the newest this many checkpoints, deleting older ones after each save; null or 0 keeps them all.'),
});

export const WarmStart = z.strictObject({
  enabled: z
    .boolean()
    .default(false)
    .describe(
      'Fine-tune `pretrain` (null: the tiny preset from seeded random weights) on data the run generates itself before RL starts, and start every role from the result (`agentic sft` runs this stage alone).',
    ),
  output_dir: z
    .string()
    .min(1)
    .default('./output/bases/${exp_name}')
    .describe('Folder of the warm-started base model; reused when it was built from the same settings, rebuilt otherwise.'),
  episodes: nonNegativeInt()
    .default(512)
    .describe(
      "Episodes of train_env_manager's environments played with each env's random valid actions (sampleRandomAction): the format is taught, never a solution. 0 plays none (a warm start of worked examples only).",
    ),
  demonstrations: z
    .enum(['none', 'solver'])
    .default('none')
    .describe(
      "What the base may be shown of how to solve the task. none: only what any env gives through the SDK (random-action episodes, their observations, the env's notes on the state, the state questions, the answer format); the env's solver (WarmStartHooks.solutionAction) is never called, so worked_examples and solution_labels are refused. solver: the env's worked solutions may be shown (worked_examples, solution_labels), the supervised baseline of the papers rather than an RL result. The results table reports it for every run.",
    ),
  worked_examples: nonNegativeInt()
    .max(MAX_WORKED_EXAMPLES)
    .default(0)
    .describe(
      `Episodes of train_env_manager's environments played with each env's worked solution (WarmStartHooks.solutionAction: tool_use calls the calculator with the row's expression, then answers with its output), kept when they score as solved. They teach a solution, so there are at most ${MAX_WORKED_EXAMPLES}; RL learns the rest. 0 plays none.`,
    ),
  worked_repeats: positiveInt()
    .default(1)
    .describe(
      'Times the rows of each worked example appear in every epoch: weighs the few solutions against the many random-action rows. The examples stay the same ones; there are no more of them.',
    ),
  random_actions: z
    .boolean()
    .default(true)
    .describe(
      'Learn the random actions of those episodes (the answer format). false keeps only what the episodes show of the states: their state questions, and with think the notes (the random action after them stays in the row, unlearned); for envs whose worked examples teach the format and the actions.',
    ),
  solution_labels: z
    .boolean()
    .default(false)
    .describe(
      "With think: each state of those random episodes is shown with the env's worked solution's move from it (WarmStartHooks.solutionAction) after the notes, while the episode goes on with the random move, as DAgger labels an expert's moves on the states a learner visits. The base then learns the way back from states no worked example passes through; a state the solution has no move for (a box in a corner) keeps its notes alone. Only training episodes are labelled.",
    ),
  state_questions: nonNegativeInt()
    .default(0)
    .describe(
      "Questions about the current state (WarmStartHooks.stateQuestions: where things are, what lies next to the player) asked per state of the random episodes, with the env's answers; 0 asks none. They teach reading the board, never which move to make.",
    ),
  think: z
    .boolean()
    .default(false)
    .describe(
      "Teach the policy to write the env's notes on the state (WarmStartHooks.stateNotes: where things are) in <think> tags before each random action; step-wise envs only. RL then learns which move the notes call for.",
    ),
  epochs: positiveInt().default(2).describe('Passes over the generated rows.'),
  batch_size: positiveInt().default(64).describe('Rows per optimizer step.'),
  learning_rate: z.number().positive().default(1e-3).describe('AdamW learning rate of the warm start (its peak, under a decaying lr_scheduler_type).'),
  lr_scheduler_type: z
    .enum(['constant', 'linear', 'cosine'])
    .default('constant')
    .describe(
      "The warm start's learning rate by epoch: constant, or decaying from learning_rate towards 0 over the epochs. A decayed base ends where its loss has settled, so the rounding of the matmul path that built it moves it less (docs/learning.md).",
    ),
  rehearsal_coef: z
    .number()
    .min(0)
    .default(0)
    .describe(
      "Rehearse the reading during RL: after each actor update, one supervised step on fresh random-action rows whose loss covers only what reads the state (the think notes, the state questions' answers), never the random move, at this multiple of the actor's learning rate. 0 turns it off. Needs think or state_questions.",
    ),
  rehearsal_episodes: positiveInt().default(8).describe('Random-action episodes whose states make the rehearsal rows of one RL step.'),
});

const Tracker = z.enum(TRACKERS);

export const Distributed = z.strictObject({
  redis_url: z
    .string()
    .regex(/^rediss?:\/\//, 'expected redis://HOST:PORT (or rediss:// for TLS), optionally with /DB')
    .nullable()
    .default(null)
    .describe(
      'Distributed rollouts (docs/distributed.md): the Redis that carries them as BullMQ jobs, e.g. redis://10.0.0.5:6379. The trainer enqueues every group episode of the train and val rollouts as a job and `agentic worker` processes, on any machines, play them. null: the environment variable AGENTIC_REDIS_URL if set (the place for a password), else the rollouts play in this process (or its worker thread). A password is written as *** wherever the config is saved or printed.',
    ),
  queue: z
    .string()
    .min(1)
    .regex(/^[^:]+$/, "no ':' (BullMQ's key separator)")
    .default('${exp_name}')
    .describe('Name of the BullMQ queues of this run (<queue>-train and <queue>-val): the trainer and its workers must name the same, other runs another.'),
  lock_duration_s: z
    .number()
    .positive()
    .default(30)
    .describe(
      "BullMQ's lockDuration: a worker holds a job's lock this long and renews it every half of it; a job whose lock lapses (its worker died or its event loop stopped) is stalled and played again by another worker.",
    ),
  stalled_interval_s: z
    .number()
    .positive()
    .default(30)
    .describe("BullMQ's stalledInterval: how often workers look for stalled jobs and move them back to the queue."),
  max_stalled_count: nonNegativeInt()
    .default(3)
    .describe("BullMQ's maxStalledCount: a job that stalls more often than this fails, and the run stops with one line naming it."),
  attempts: positiveInt()
    .default(3)
    .describe(
      "BullMQ's attempts: a job whose worker throws (weights it cannot load, servers it cannot reach) is tried this many times in all, after a doubling backoff.",
    ),
  backoff_s: z.number().positive().default(1).describe("BullMQ's exponential backoff: the wait before the first retry of a failed job, in seconds."),
  weights_timeout_s: z
    .number()
    .min(0)
    .default(60)
    .describe(
      'A worker whose policy is a local copy of the actor (proxy_type policy) waits this long for the weights a job asks for (model_update_dir/weights-V-H: version V of history H of the run, written by the trainer) to appear before playing with the newest older version of that history it has; the trainer drops rows staler than async_generation_ratio allows.',
    ),
  max_stale_replays: positiveInt()
    .default(5)
    .describe(
      "A train job whose result is dropped as too stale (played with weights older than async_generation_ratio allows: its worker could not load the step's weights within weights_timeout_s) is played again; after this many drops of one job the run stops with one line naming the workers that played it, instead of replaying it without end. Each worker's first stale result is told in one line.",
    ),
  redis_timeout_s: z
    .number()
    .positive()
    .default(60)
    .describe(
      'When Redis has not answered for this long in the middle of a run, the trainer or worker stops with one line; until then its client reconnects and retries.',
    ),
  idle_warning_s: z
    .number()
    .positive()
    .default(30)
    .describe(
      'A trainer whose waiting jobs no worker has taken for this long says so in one line: the queue, the workers this Redis has and the queues they watch, and the `agentic worker` command line that serves it. A worker with no job for this long, and no trainer listening on its queues, says which queues it watches. Again after twice as long, and so on.',
    ),
});

export const ConfigShape = z.strictObject({
  exp_name: z
    .string()
    .min(1)
    .regex(/^[^/\\]+$/, 'no path separators: it names folders')
    .default('agentic')
    .describe('Experiment name; output folders are named after it.'),
  seed: z
    .int()
    .min(0)
    .max(2 ** 32 - 1)
    .default(42)
    .describe('Seed of every random stream of the run.'),
  output_dir: z.string().min(1).default('./output/${exp_name}').describe('Folder for everything the run writes.'),
  logging_dir: z.string().min(1).default('${output_dir}/logs').describe('Folder for metric logs.'),
  model_update_dir: z
    .string()
    .min(1)
    .default('${output_dir}/weights')
    .describe(
      "Folder of the weights sent to inference servers (an llm_proxy of type sglang or openai): every actor_infer.model_update_frequency steps the trainer writes actor_infer as a Hugging Face folder weights-V-H (V: its policy version; H: the history of this start of the run, new at every start and resume) and each server loads it (POST /update_weights_from_disk). The servers, and distributed workers with their own copy of the actor (proxy_type policy), read it at the trainer's absolute path: on several machines, a shared folder mounted at the same path. The last two folders are kept.",
    ),
  render_save_dir: z
    .string()
    .min(1)
    .nullable()
    .default('${output_dir}/render')
    .describe('Folder `agentic render` writes; null: `agentic render` needs one given (render_save_dir=DIR).'),
  backend: Backend.default('wasm').describe(
    'tfjs backend of every role: wasm (embedded default, CPU, XNNPACK), cpu (plain JavaScript, slow), webgpu (Dawn: a GPU through Vulkan, or Mesa on the CPU; see webgpu_adapter) or tensorflow (libtensorflow through @tensorflow/tfjs-node-gpu or @tensorflow/tfjs-node, which you install yourself).',
  ),
  webgpu_adapter: z
    .enum(WEBGPU_ADAPTERS)
    .default('auto')
    .describe(
      "Adapter of the webgpu backend: vulkan (a GPU's Vulkan driver; needs libvulkan1), opengles (Mesa's OpenGL ES on the CPU, llvmpipe: slow, for checking correctness; Debian packages libegl1 libegl-dev libegl-mesa0 libgl1-mesa-dri), or auto (vulkan if a Vulkan device exists, else opengles). Dawn's Null adapter is always refused.",
    ),
  blas: z
    .string()
    .default('auto')
    .refine((choice) => blasChoiceProblem(choice) === null, { message: 'expected auto, none, openblas, blis, mkl, accelerate or a library path' })
    .describe(
      "Who computes the wasm backend's matmuls: auto (the system's CBLAS if one is found: OpenBLAS, BLIS, MKL, Accelerate; else XNNPACK), none (XNNPACK, tfjs's own), a library (openblas, blis, mkl, accelerate; missing it is an error) or a path to one. AGENTIC_BLAS overrides it. On Debian: apt-get install libopenblas0-pthread.",
    ),
  python_sandbox: z
    .enum(PYTHON_SANDBOX_MODES)
    .default('bwrap')
    .describe(
      'How tools and rewards that run model-written Python (python_executor, code_tests, runPython) contain it (docs/sandbox.md): bwrap, a bubblewrap sandbox (namespaces, no network, no files but its own), required: a run that uses such a plugin stops at start-up when bwrap is missing or cannot create namespaces (Debian: apt-get install bubblewrap); unconfined runs the code without bwrap (resource limits, an audit hook and timeouts only, no boundary), with a warning.',
    ),
  plugins: z
    .preprocess((v) => (typeof v === 'string' ? [v] : v), z.array(z.string().min(1)))
    .default([])
    .describe('Plugin files or folders to load besides the built-ins (paths relative to the working folder).'),

  pretrain: z.string().min(1).nullable().default(null).describe('Base model: a Hugging Face folder or hub id.'),

  max_steps: positiveInt().default(500).describe('Training steps (one rollout batch and its updates each).'),
  max_epochs: positiveInt()
    .nullable()
    .default(null)
    .describe(
      "Passes over the training data (every row once per pass, in a seeded order): the run ends after the step that completes them on every training env, or at max_steps if that comes first; null: max_steps alone. For envs that read datasets (tool_use); AgentFly's trainer.total_epochs.",
    ),
  save_steps: nonNegativeInt()
    .default(50)
    .describe('Save a checkpoint (checkpoint_config.output_dir/checkpoint-N) every this many steps and after the last; 0 saves after the last step only.'),
  logging_steps: positiveInt().default(1).describe('Log metrics every this many steps.'),
  eval_steps: nonNegativeInt().default(10).describe('Validate every this many steps; 0 never validates.'),
  val_before_train: z
    .boolean()
    .default(true)
    .describe("Validate before the first training step (step 0) when eval_steps > 0; false starts training at once (verl's trainer.val_before_train)."),
  resume_from_checkpoint: z
    .union([z.boolean(), z.string().min(1)])
    .refine((v) => typeof v !== 'string' || v === 'auto' || !RESUME_WORDS.test(v), {
      message: 'expected false, auto (the newest complete checkpoint) or the path of a checkpoint folder',
    })
    .default(false)
    .describe(
      'false starts afresh; auto (or true) continues from the newest complete checkpoint in checkpoint_config.output_dir, skipping corrupt ones with a warning, and starts afresh when there is none; a path continues from that checkpoint folder, which must be complete.',
    ),
  overwrite_output_dir: z
    .boolean()
    .default(false)
    .describe(
      "Allow a run that starts afresh to replace an earlier run's checkpoints in checkpoint_config.output_dir (as Hugging Face Trainer's key). Without it such a start is refused before anything is written; resume_from_checkpoint=auto or `agentic resume` continues the earlier run instead.",
    ),
  max_skipped_updates_in_a_row: nonNegativeInt()
    .default(20)
    .describe(
      'Stop the run (exit 1, with one line) when this many optimizer updates in a row were skipped because their loss or gradients were not finite: the policy has diverged and would train nothing. 0 never stops.',
    ),
  max_infer_failure_rate: probability()
    .default(0.5)
    .describe(
      "Stop the run (exit 1, with one line) when more than this share of a step's episodes got no response from the inference servers (infer_failure; an llm_proxy of type sglang or openai). Below it, every group holding such an episode is left out of the update. 1 never stops.",
    ),
  max_failed_step_fraction: probability()
    .default(0.5)
    .describe(
      'A training step fails when more than this share of its episodes failed (env_failure, infer_failure, timeout, reward_error: the kinds its console line names) or when none is left to learn from because episodes failed or went untrained (a step the group filters alone emptied is not a failure); max_failed_steps_in_a_row failed steps in a row stop the run. 1: only steps with nothing left to learn from fail.',
    ),
  max_failed_steps_in_a_row: nonNegativeInt()
    .default(3)
    .describe(
      'Stop the run (exit 1, with one line naming the most common failure and its reason) when this many training steps in a row failed (max_failed_step_fraction): it learns from nothing. The last of them does not train; the checkpoints of the earlier steps stay and no policy is saved. 0 never stops.',
    ),

  rollout_batch_size: positiveInt().default(128).describe('Trajectories per training step; a multiple of train_env_manager.group_size.'),
  val_batch_size: positiveInt().default(128).describe('Trajectories per validation; a multiple of val_env_manager.group_size.'),
  val_suite: z
    .string()
    .nullable()
    .default(null)
    .describe(
      'A pinned evaluation suite, <env>/<version> (frozen_lake/v1, frozen_lake/v2, sokoban/v1, sokoban/v2, tool_use/v1, webshop/v1; docs/learning.md): held-out episodes listed by what they are, replayed instead of episodes drawn by seed. Validation plays its first val_batch_size / val_env_manager.group_size episodes, `agentic eval` all of them, each by a whole group. null: episodes drawn by seed.',
    ),
  sequence_length: positiveInt().default(1024).describe('Most tokens in one trajectory (prompts and responses).'),
  max_running_requests: positiveInt()
    .default(128)
    .describe('Most sequences decoded together in one batch during rollouts in this process (and by `agentic serve`); more wait their turn.'),
  async_generation_ratio: nonNegativeInt()
    .default(0)
    .describe(
      'Asynchronous training (docs/training.md): 0 is synchronous; k >= 1 runs actor_infer (generation and envs) in a worker thread with its own tfjs engine, k steps ahead of actor_train, so the batch of step s is played with the weights of step s - k while step s - 1 trains. Samples staler than that bound are dropped, never trained on.',
    ),
  train_infer_correction: z
    .strictObject({
      is_weight: z
        .strictObject({
          enabled: z
            .boolean()
            .default(false)
            .describe(
              "Weight each token's policy loss by the truncated importance ratio of actor_train's old log-probs over the behaviour policy's (the sampler's).",
            ),
          weight_type: z
            .enum(['token', 'sequence'])
            .default('token')
            .describe("token: each token its own ratio; sequence: every token of a row the product of the row's ratios."),
          upper_bound: z.number().positive().default(1.2).describe('The ratio is truncated to at most this (truncated importance sampling).'),
        })
        .prefault({})
        .describe("Importance weights for the gap between the policy that sampled and the policy that trains (ROLL's train_infer_correction.is_weight)."),
    })
    .prefault({})
    .describe('Correcting for samples that another policy version generated (async_generation_ratio > 0, or a lagging actor_infer).'),

  adv_estimator: z
    .enum(ESTIMATOR_NAMES)
    .default('grpo')
    .describe(
      'Advantage estimator (docs/training.md): gae (needs the critic), grpo and reinforce (returns of normalised rewards), gigpo and step_reinforce (step-wise rows), agentic_reinforce, reinforce_plus_plus, rloo, remax (a greedy rollout per group as baseline), rae (SPIRAL: the outcome less a running baseline per env tag and seat, docs/multi_agent.md).',
    ),
  rae_alpha: probability()
    .default(0.95)
    .describe(
      "adv_estimator rae (SPIRAL's role-conditioned advantage): how much of each role's baseline (per env tag and seat) a step keeps, b <- rae_alpha x b + (1 - rae_alpha) x the batch's mean return of that role.",
    ),
  opponent_pool: z
    .strictObject({
      snapshot_every: positiveInt()
        .default(10)
        .describe(
          "Every this many policy versions (training steps that updated the actor, 0 included) actor_train's weights are written to <output_dir>/opponent_pool/version-N and join the pool.",
        ),
      size: positiveInt().default(4).describe('How many snapshots the pool holds: the latest ones; a seat played by past draws one of them for each group.'),
    })
    .prefault({})
    .describe(
      'Fictitious self-play (docs/multi_agent.md#a-pool-of-past-selves): the snapshots of earlier policies that play the seats a training tag gives to past (custom_envs.<tag>.seats). Unused without such a seat.',
    ),
  reward_normalization: RewardNormalization.prefault({}).describe('How episode scores are normalised before advantages.'),
  ppo_epochs: positiveInt().default(1).describe('Passes over each rollout batch.'),
  think_credit: z
    .boolean()
    .default(true)
    .describe(
      'Give the response tokens inside <think>…</think> their advantage like the rest (true), or none (false): the policy gradient then shapes only what follows the thinking, while the KL loss still holds the thinking near the reference.',
    ),
  enable_old_logprobs_recompute: z
    .boolean()
    .default(true)
    .describe(
      "Recompute the old log-probs with actor_train before the update; false takes the rollout's sampling log-probs instead (the same numbers up to rounding while actor_infer holds actor_train's weights) and saves a forward pass. Either way the PPO ratio is real (ROLL's false makes it 1).",
    ),
  critic_warmup: nonNegativeInt().default(0).describe('Steps that train only the critic before the actor starts updating.'),
  gamma: probability().default(1).describe('Discount factor.'),
  lambd: probability().default(0.95).describe('GAE lambda.'),
  pg_clip: z.number().positive().default(0.2).describe('PPO ratio clip range.'),
  use_pg_clip_range: z.boolean().default(false).describe('Use pg_clip_low/pg_clip_high instead of pg_clip.'),
  pg_clip_low: z.number().positive().default(0.2).describe('Lower ratio clip (1 - low) when use_pg_clip_range.'),
  pg_clip_high: z.number().positive().default(0.2).describe('Upper ratio clip (1 + high) when use_pg_clip_range.'),
  dual_clip_loss: z.boolean().default(false).describe('Bound the loss of negative advantages (dual clip).'),
  value_clip: z.number().positive().nullable().default(null).describe('Critic value clip range; null disables it.'),
  init_kl_coef: z.number().min(0).default(0).describe('Initial KL coefficient (ROLL defaults to 0.2; its examples use 0).'),
  target_kl: z.number().positive().nullable().default(null).describe('Target KL of the adaptive controller; null keeps the coefficient fixed.'),
  kl_horizon: positiveInt().default(10000).describe('Horizon of the adaptive KL controller.'),
  kl_penalty: z
    .enum(KL_PENALTIES)
    .default('kl')
    .describe("KL estimator of the token-level reward penalty: kl, abs, mse, k3 (= low_var_kl), full (the sampled token's p log(p/p_ref))."),
  add_token_level_kl: z.boolean().default(false).describe('Subtract the KL penalty from token rewards.'),
  use_kl_loss: z.boolean().default(false).describe('Add a KL term to the actor loss.'),
  kl_loss_coef: z.number().min(0).default(0).describe('Weight of the KL loss term.'),
  kl_loss_type: z.enum(KL_PENALTIES).default('k3').describe('KL estimator of the KL loss (use_kl_loss).'),
  kl_loss_tokens: z
    .enum(['all', 'think', 'outside_answer'])
    .default('all')
    .describe(
      'Which response tokens the KL loss covers (the rest contribute zero): all; think, only those inside <think>…</think>, so the reference holds the thinking while the decision after it is free to leave the reference; outside_answer, all but the content of <answer>…</answer>, so the reference holds the thinking and the format and only the decision is free.',
    ),
  whiten_advantages: z.boolean().default(false).describe('Whiten advantages over all response tokens of the batch.'),
  whiten_rewards: z.boolean().default(false).describe('Whiten token rewards before advantages.'),
  advantage_clip: z.number().positive().nullable().default(null).describe('Clip advantages to ±this; null disables it.'),
  reward_clip: z.number().positive().nullable().default(null).describe('Clip rewards to ±this; null disables it.'),
  entropy_loss_coef: z.number().min(0).default(0).describe('Weight of the entropy bonus.'),
  entropy_loss_tokens: z
    .enum(['all', 'answer', 'outside_think'])
    .default('all')
    .describe(
      "Which response tokens the entropy bonus covers (the rest contribute zero): all; answer, only the content of <answer>…</answer>: exploration of the decision without loosening the thinking or the format; outside_think, all but the content of <think>…</think>: the decision in any form (TextArena's [5] has no answer tags) without loosening the thinking.",
    ),
  loss_agg_mode: z.enum(LOSS_AGG_MODES).default('seq-mean-token-mean').describe('How token losses are reduced to one number.'),
  skip_zero_advantage_samples: z
    .boolean()
    .default(false)
    .describe(
      "Leave samples whose advantage is 0 on every response token (a GRPO group that all scored alike) out of actor_train's update: they carry no policy gradient, only their KL and entropy terms, and a late run is mostly such samples. The update (and the reference's scoring, unless add_token_level_kl puts the KL in the reward) then costs what the informative samples cost; actor/* metrics and critic/kl are over those samples (actor/update_samples counts them), and a step with none skips the actor update.",
    ),
  filter_groups: z
    .strictObject({
      enable: z
        .boolean()
        .default(false)
        .describe(
          "Drop the groups whose episodes all scored alike after the training rollout and play more rollouts (new groups) until the step holds rollout_batch_size / train_env_manager.group_size groups that did not, trimmed to that many in play order (DAPO's dynamic sampling; verl's algorithm.filter_groups). Only where the batch is played in this process (async_generation_ratio 0, no distributed.redis_url).",
        ),
      metric: z
        .enum(['score'])
        .default('score')
        .describe("What must be equal across a group's episodes for it to be dropped: score, the episode score (verl's score)."),
      max_num_gen_batches: nonNegativeInt()
        .default(10)
        .describe(
          'Most rollouts played for one step; at the cap the step trains on the groups kept so far, and a step that kept none trains nothing. 0: no cap (a policy whose groups all score alike then never ends the step).',
        ),
    })
    .prefault({})
    .describe("DAPO's dynamic sampling (docs/training.md#groups-that-all-score-alike)."),
  rollout_filter_ratio: z
    .number()
    .gt(0)
    .max(1)
    .default(1)
    .describe(
      "Share of each step's groups kept for the update, by the spread of their episode scores (rollout_filter_type): ceil(ratio x groups) of them; 1 keeps every group (RAGEN's rollout_filter_ratio).",
    ),
  rollout_filter_type: z
    .enum(['std', 'std_rev'])
    .default('std')
    .describe(
      "Which groups rollout_filter_ratio keeps: std, those with the highest standard deviation of episode scores; std_rev, the lowest; ties go to the group played first (RAGEN's rollout_filter_type).",
    ),
  max_grad_norm: z
    .number()
    .positive()
    .nullable()
    .default(1)
    .describe("Global gradient-norm clip of actor_train and the critic (a role's training_args.max_grad_norm wins); null disables it."),
  ineffective_action_penalty: z
    .number()
    .max(0)
    .default(0)
    .describe(
      "Reward (<= 0) added in training to every turn whose env reports action_is_effective: false (a move into a wall: the state did not change), and to its episode's score. Greedy play answers the unchanged state with the same move again until its turns run out, while sampling leaves it after a turn or two, so without a price of its own such a move costs training a turn and validation the episode. Validation and held-out scores are the env's own. Every training env must report action_is_effective.",
    ),
  revisit_penalty: z
    .number()
    .max(0)
    .default(0)
    .describe(
      "Reward (<= 0) added in training to every turn that led to an observation its episode had already shown (a move and its undoing, a move into a wall), and to its episode's score. In a deterministic env that shows its whole state, a shortest solution never comes back to a state, and greedy play that does repeats the cycle until its turns run out. Validation and held-out scores are the env's own.",
    ),
  step_reward_gamma: probability().default(0.95).describe('Discount of step rewards (gigpo, step_reinforce).'),
  episode_reward_weight: z.number().min(0).default(1).describe('Weight of the episode advantage (gigpo).'),
  step_reward_weight: z.number().min(0).default(1).describe('Weight of the step advantage (gigpo).'),

  actor_train: ActorTrain.prefault({}).describe('The policy being trained.'),
  actor_infer: Worker.prefault({}).describe('The policy copy that generates rollouts.'),
  reference: Worker.prefault({}).describe('The frozen policy KL terms compare against (built only when one is used).'),
  critic: Worker.prefault({}).describe('The value model (built only for gae).'),

  train_env_manager: EnvManager.prefault({}).describe('Environments that produce training rollouts.'),
  val_env_manager: EnvManager.prefault({}).describe('Environments that produce validation rollouts.'),
  custom_envs: z
    .record(z.string().regex(TAG_PATTERN, 'a tag is a letter followed by letters, digits, _ or -'), CustomEnv)
    .default({})
    .describe('Environment definitions by tag.'),

  gateway: z
    .strictObject({
      on_mismatch: z
        .enum(SESSION_MISMATCH_ACTIONS)
        .default('split')
        .describe(
          "An outside agent's model call whose prompt does not extend the previous call's prompt and reply token for token (it rewrote its history, or the template renders a turn differently): split, a new training row starts there (counted in env/<tag>/prefix_mismatch); drop, the episode's group leaves the update (rollout/dropped_groups); error, the call is refused and the episode ends as env_failure.",
        ),
    })
    .prefault({})
    .describe('The OpenAI-compatible endpoint outside agents (env_type: agent) call as their model (docs/agents.md).'),

  warm_start: WarmStart.prefault({}).describe('A supervised first stage that teaches the response format (docs/learning.md).'),

  checkpoint_config: CheckpointConfig.prefault({}).describe('Where checkpoints are written, and how many are kept.'),
  track_with: z
    .preprocess((v) => (typeof v === 'string' ? [v] : v), z.array(Tracker).min(1))
    .default(['console'])
    .describe(
      'Metric trackers, one or several: console, jsonl (<logging_dir>/metrics.jsonl), html (learning curves, <logging_dir>/curves.html), tensorboard (event files in <logging_dir>/tensorboard: scalars and validation transcripts), wandb (refused at start-up: no W&B client; upload the TensorBoard logs with wandb sync).',
    ),
  tracker_kwargs: z
    .strictObject({
      log_dir: z.string().min(1).nullable().default(null).describe('Folder of the tensorboard event files (as ROLL); null: <logging_dir>/tensorboard.'),
    })
    .prefault({})
    .describe("Tracker settings. Other trackers' keys (wandb's project, api_key, ...) are read and named at start-up as having no effect (docs/roll.md)."),

  distributed: Distributed.prefault({}).describe('Rollouts played by `agentic worker` processes through Redis and BullMQ (docs/distributed.md).'),

  vars: z.record(z.string(), z.unknown()).default({}).describe('Free-form values for ${vars....} interpolation; agentic itself never reads them.'),
});

export type AgenticConfig = z.output<typeof ConfigShape>;
export type EnvManagerConfig = z.output<typeof EnvManager>;
export type CustomEnvConfig = z.output<typeof CustomEnv>;
export type DistributedConfig = z.output<typeof Distributed>;
export type GeneratingConfig = z.output<typeof GeneratingArgs>;

/** Every key with its default, interpolations unresolved: the lowest config layer. */
export function configDefaults(): Record<string, unknown> {
  return ConfigShape.parse({}) as Record<string, unknown>;
}
