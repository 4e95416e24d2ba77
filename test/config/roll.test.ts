/**
 * ROLL's example configs run as they are: fixtures of our own in the layout of ROLL's examples/
 * folders (qwen2.5-0.5B-agentic, qwen2.5-7B-agentic_megatron, agentic_demo,
 * qwen3-30BA3B-agentic_fsdp2, qwen3_agentic_gem, qwen2.5-vl-3B-agentic) and examples/config/, with
 * the same keys, includes and interpolations, pass `agentic config` and train with only `pretrain`
 * overridden (and a local data file where the config names a Hugging Face dataset), or stop at
 * start-up with one line naming what is not built. A fixture trains the one step that shows it
 * trains, or 2 where the second step is what its test checks (the asynchronous one plays it ahead
 * with the first step's weights; the topr one checks both steps' rows).
 */
import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, type ConfigRequest } from '../../src/config/load';
import { applyRollKeys, rollKeysWarning } from '../../src/config/roll';
import { ConfigError } from '../../src/errors';
import { PluginHost } from '../../src/host/plugin_host';
import { readMetricsJsonl } from '../../src/tracking/jsonl';
import { agentic, ROOT, scratch } from '../helpers';
import { missing } from '../system_tools';

const EXAMPLES = join(ROOT, 'test/fixtures/roll/examples/qwen2.5-0.5B-agentic');
const load = (configName: string, overrides: string[] = []) =>
  loadConfig({ configPath: EXAMPLES, configName, overrides: ['pretrain=agentic:nano', ...overrides] } as ConfigRequest, new PluginHost());
const PASSING = [
  'agent_val_frozen_lake',
  'agent_val_frozen_lake_gigpo',
  'agent_val_frozen_lake_async',
  'agentic_val_sokoban',
  'agentic_val_sokoban_gigpo',
  'agentic_rollout_sokoban',
  'agentic_val_sokoban_dynamic_batching',
  'agentic_val_sokoban_native',
  'agentic_val_sokoban_sandbox',
  'agentic_val_sokoban_lora',
  'agent_val_frozen_lake-pg_var',
];

describe('ROLL example configs through agentic config', () => {
  for (const name of PASSING) {
    test(name, async () => {
      const loaded = await load(name);
      expect(loaded.files.some((f) => f.endsWith('examples/config/traj_envs.yaml') || f.endsWith('examples/config/step_envs.yaml'))).toBe(true);
      expect(loaded.inert).toContain('hydra');
      expect(rollKeysWarning(loaded)).toMatch(/^ROLL keys with no effect here: hydra, /);
    });
  }

  test('helpers, custom_env and the values they feed', async () => {
    const { config, inert, unusedHelpers } = await load('agent_val_frozen_lake');
    expect(Object.keys(config.custom_envs)).toEqual([
      'SimpleSokoban',
      'LargerSokoban',
      'SokobanDifferentGridVocab',
      'FrozenLake',
      'FrozenLakeThink',
      'FrozenLakeLocallyDefineExamples',
    ]);
    const lake = config.custom_envs.FrozenLake!;
    // max_tokens_per_step: 16 in the example file wins over the env file's 32
    expect([lake.max_steps, lake.max_tokens_per_step, lake.env_manager_cls]).toEqual([4, 16, 'traj']);
    expect(lake.env_config).toMatchObject({ action_pattern: '<answer>(.*?)</answer>', is_slippery: false, max_steps: 4, format_penalty: -0.01 });
    expect(config.custom_envs.FrozenLakeThink!.env_config.action_pattern).toBe('<think>(.*?)</think>\\s*<answer>(.*?)</answer>');
    expect(config.custom_envs.FrozenLakeLocallyDefineExamples!.env_config.env_instruction).toStartWith('Cross the frozen lake');
    expect(config.custom_envs.SokobanDifferentGridVocab!.env_config).toMatchObject({ grid_lookup: { 0: 'W' }, search_depth: 20 });
    expect(config.tracker_kwargs.log_dir).toBe('./output/tensorboard/agent_val_frozen_lake');
    expect(inert).toEqual(
      expect.arrayContaining([
        'actor_train.model_args.attn_implementation=fa2',
        'actor_train.strategy_args.strategy_name=megatron_train',
        'actor_train.device_mapping',
        'reward_pretrain',
        'custom_envs.FrozenLake.use_thread_lock=true',
        'actor_infer.generating_args.num_return_sequences=1',
      ]),
    );
    expect(unusedHelpers).toEqual(['all_response_pattern', 'single_prompt_agent_system_template', 'single_prompt_agent_template']);
    expect('max_actions_per_traj' in config).toBe(false);
    // read, not inert: distributed workers play this many environments at once
    expect([config.train_env_manager.max_env_num_per_worker, config.val_env_manager.max_env_num_per_worker]).toEqual([4, 8]);
  });

  test('step envs, explicit normalisation statistics, agent-native templates, a null render folder', async () => {
    const gigpo = await load('agentic_val_sokoban_gigpo');
    expect(gigpo.config.custom_envs.SimpleSokoban!).toMatchObject({ env_manager_cls: 'step', history_length: 2 }); // the example file's default_history_length wins
    expect(gigpo.config.reward_normalization.method).toBe('mean');
    const native = await load('agentic_val_sokoban_native');
    expect(native.config.reward_normalization).toMatchObject({ norm_mean_type: 'group', norm_std_type: 'batch' });
    expect(native.config.custom_envs.SokobanNativeEnv!).toMatchObject({
      env_type: 'sokoban_native_env',
      env_manager_cls: 'step',
      agent_template: null,
      max_steps: 3,
    });
    expect(native.inert).toEqual(expect.arrayContaining(['custom_envs.SokobanNativeEnv.agent_template']));
    expect((await load('agentic_rollout_sokoban')).config.render_save_dir).toBeNull();
  });

  test('refused settings and typos are one line', async () => {
    const fails = async (name: string, overrides: string[], message: string | RegExp) => {
      const error = await load(name, overrides).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('\n');
    };
    await fails(
      'agent_val_frozen_lake-pg_var',
      ['actor_train.pg_variant=reinforce'],
      'actor_train.pg_variant: expected one of ppo, topr, vanilla, tis, cispo, kimi15, got "reinforce"',
    );
    await fails('agent_val_frozen_lake-pg_var', ['+actor_train.topr_negative_weight=-1'], /^actor_train\.topr_negative_weight: /);
    // ROLL publishes agentic_val_webshop.yaml as an empty file
    await fails('agentic_val_webshop', [], /agentic_val_webshop\.yaml: the config file is empty \(no keys\)$/);
    await fails(
      'agent_val_frozen_lake',
      ['+train_infer_correction.filters=[{enabled: true}]'],
      "train_infer_correction.filters: ROLL's train/infer log-prob filters are not built (train_infer_correction.is_weight is); remove filters",
    );
    await fails('agent_val_frozen_lake', ['actor_infer.generating_args.num_return_sequences=4'], /num_return_sequences: 4: one response per prompt here/);
    await fails('agent_val_frozen_lake', ['+rollout_batchsize=8'], 'rollout_batchsize: unknown key (did you mean rollout_batch_size?)');
    await fails('agent_val_frozen_lake', ['+actor_train.model_args.dtyp=bf16'], 'actor_train.model_args.dtyp: unknown key (did you mean dtype?)');
  });

  test("the LoRA example reads as it is; actor_infer may repeat actor_train's adapters spelled out, as ROLL's does", async () => {
    const { config } = await load('agentic_val_sokoban_lora', [
      "actor_infer.model_args.lora_target='q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj'",
      'actor_infer.model_args.lora_rank=8',
      'actor_infer.model_args.lora_alpha=8',
    ]);
    expect(config.actor_train.model_args).toMatchObject({ lora_target: 'all-linear', lora_rank: 8, lora_alpha: 8, disable_gradient_checkpointing: false });
    expect(config.actor_infer.model_args).toMatchObject({ lora_rank: 8, disable_gradient_checkpointing: true });
  });

  test("pg_variant and topr's weights are actor_train's; other roles' are inert", async () => {
    const { config, inert } = await load('agent_val_frozen_lake-pg_var', ['+actor_infer.pg_variant=topr', '+reference.topr_positive_weight=3']);
    expect(config.actor_train).toMatchObject({ pg_variant: 'topr', topr_positive_weight: 1, topr_negative_weight: 1 });
    expect(inert).toEqual(expect.arrayContaining(['actor_infer.pg_variant=topr', 'reference.topr_positive_weight=3']));
    expect((await load('agent_val_frozen_lake')).config.actor_train.pg_variant).toBe('ppo');
  });

  test('a top-level value nothing reads is named; a misspelling of ours stays an error', () => {
    const roll = applyRollKeys({ custom_env: { A: 1 }, sed: 1, my_var: 2, hydra: {} }, new Set(['custom_env']));
    expect(roll.tree).toEqual({ sed: 1 });
    expect(roll.unusedHelpers).toEqual(['my_var']);
    expect(() => applyRollKeys({ train_infer_correction: { filters: [] } }, new Set())).toThrow(ConfigError);
  });
});

describe('ROLL example configs train with only pretrain overridden', () => {
  for (const name of ['agentic_val_sokoban_gigpo', 'agentic_val_sokoban_native']) {
    test(name, async () => {
      const cwd = scratch();
      const run = await agentic(['train', '--config-path', EXAMPLES, '--config-name', name, 'pretrain=agentic:nano'], { cwd });
      expect(run.stderr + run.stdout).toContain('ROLL keys with no effect here: hydra');
      expect(run.code).toBe(0);
      expect(run.stdout + run.stderr).toContain('done: 1 step;');
      // tracker_kwargs.log_dir is where the tensorboard files go
      const folder = join(cwd, 'output/tensorboard', name);
      expect(existsSync(folder) && readdirSync(folder).some((f) => f.startsWith('events.out.tfevents.'))).toBe(true);
    }, 300_000);
  }

  // the rest of the examples: traj and step FrozenLake, gigpo, async, Sokoban, dynamic batching, the sandbox env, rollout-only, LoRA
  for (const [name, steps] of [
    ['agentic_val_sokoban_lora', '1 step'],
    ['agent_val_frozen_lake', '1 step'],
    ['agent_val_frozen_lake_gigpo', '1 step'],
    ['agent_val_frozen_lake_async', '2 steps'],
    ['agentic_val_sokoban', '1 step'],
    ['agentic_val_sokoban_dynamic_batching', '1 step'],
    ['agentic_val_sokoban_sandbox', '1 step'],
    ['agentic_rollout_sokoban', '2 steps'],
  ]) {
    test(`${name} (${steps})`, async () => {
      const run = await agentic(['train', '--config-path', EXAMPLES, '--config-name', name!, 'pretrain=agentic:nano'], { cwd: scratch() });
      expect(run.stderr + run.stdout).toContain('ROLL keys with no effect here: hydra');
      expect(run.code).toBe(0);
      expect(run.stdout + run.stderr).toContain(`done: ${steps};`);
    }, 300_000);
  }

  test('agent_val_frozen_lake-pg_var trains with topr', async () => {
    const cwd = scratch();
    const run = await agentic(
      ['train', '--config-path', EXAMPLES, '--config-name', 'agent_val_frozen_lake-pg_var', 'pretrain=agentic:nano', 'track_with=[jsonl]', 'eval_steps=0'],
      { cwd },
    );
    expect(run.stdout + run.stderr).toContain('done: 2 steps');
    expect(run.code).toBe(0);
    const steps = readMetricsJsonl(join(cwd, 'output/logs/metrics.jsonl')).filter((r) => 'actor/pg_loss' in r.metrics);
    expect(steps).toHaveLength(2);
    for (const { metrics } of steps) {
      // every row of the batch (rollout_batch_size 8) is either a positive or a negative one
      expect(metrics['actor/topr_positive_samples']! + metrics['actor/topr_negative_samples']!).toBe(8);
      expect(metrics['actor/topr_negative_total_clipfrac']!).toBeGreaterThanOrEqual(0);
      expect(Number.isFinite(metrics['actor/pg_loss']!)).toBe(true);
      expect('actor/clipfrac' in metrics).toBe(false);
    }
  }, 300_000);
});

const ROLL_EXAMPLES = join(ROOT, 'test/fixtures/roll/examples');
const GEM_DATA = join(ROOT, 'test/fixtures/gem');
/** A local file for a GEM entry that names a Hugging Face dataset: the override goes on the interpolation's source. */
const dataFile = (source: string, file: string) => `${source}.env_config.dataset_name=${join(GEM_DATA, file)}`;
const loadExample = (folder: string, configName: string, overrides: string[] = []) =>
  loadConfig({ configPath: join(ROLL_EXAMPLES, folder), configName, overrides: ['pretrain=agentic:nano', ...overrides] } as ConfigRequest, new PluginHost());

interface Example {
  folder: string;
  name: string;
  /** The env file it includes. */
  envFile: string;
  /** Beyond pretrain: a local data file where the config names a Hugging Face dataset. */
  data?: string[];
  /** The system tool its training needs (test/system_tools.ts). */
  needs?: 'sandbox';
}

const RUNS: Example[] = [
  { folder: 'qwen2.5-7B-agentic_megatron', name: 'agentic_val_webshop', envFile: 'traj_envs.yaml' },
  { folder: 'qwen2.5-7B-agentic_megatron', name: 'agentic_val_webshop_gigpo', envFile: 'step_envs.yaml' },
  { folder: 'agentic_demo', name: 'agent_val_frozen_lake_single_node_demo', envFile: 'traj_envs.yaml' },
  { folder: 'agentic_demo', name: 'agent_val_sokoban_sandbox', envFile: 'traj_envs.yaml' },
  { folder: 'qwen3-30BA3B-agentic_fsdp2', name: 'agentic_val_sokoban_30a3', envFile: 'traj_envs.yaml' },
  { folder: 'qwen3_agentic_gem', name: 'gem_game_guess_the_number', envFile: 'traj_envs_gem_games.yaml' },
  { folder: 'qwen3_agentic_gem', name: 'gem_rg_letter_counting', envFile: 'traj_envs_gem_rg.yaml' },
  { folder: 'qwen3_agentic_gem', name: 'gem_math_dapo', envFile: 'traj_envs_gem_math.yaml', data: [dataFile('gem_math.dapo_17k', 'dapo.jsonl')] },
  {
    folder: 'qwen3_agentic_gem',
    name: 'gem_math_dapo_python_code',
    envFile: 'traj_envs_gem_math.yaml',
    data: [dataFile('gem_math.dapo_17k_with_python_code', 'dapo.jsonl')],
    needs: 'sandbox',
  },
  { folder: 'qwen3_agentic_gem', name: 'gem_math_hotpotqa', envFile: 'traj_envs_gem_qa.yaml', data: [dataFile('gem_qa.HotpotQA', 'hotpotqa/train.jsonl')] },
];

/** The fixtures that stop at start-up, and the one line that names what is not built. */
const REFUSED: Array<{ folder: string; name: string; overrides?: string[]; message: string }> = [
  {
    folder: 'agentic_demo',
    name: 'agent_val_rock_swe',
    message:
      "custom_envs.RockTBNativeEnvTrain.env_type: rock_tb_native_env runs an agent CLI (iflow -p <<PROMPT>> --yolo) on Terminal-Bench/SWE-bench tasks in ROCK sandboxes (env_config.sandbox_base_url http://localhost:8080); ROCK's sandboxed agent environments are not built",
  },
  {
    folder: 'agentic_demo',
    name: 'openreward_endless_terminals_reinforce_qwen35_2b',
    message:
      "custom_envs.OpenRewardEndlessTerminalsTrain.env_type: openreward_env plays OpenReward's hosted environment kanishk/EndlessTerminals through the OpenReward SDK; OpenReward environments are not built",
  },
  {
    folder: 'agentic_demo',
    name: 'atropos_gsm8k_grpo_qwen25_0.5b',
    message:
      'custom_envs.AtroposGSM8KTrain.env_type: atropos_env takes its tasks and scores from an Atropos environment server (environments.gsm8k_server:GSM8kEnv); Atropos environments are not built',
  },
  {
    folder: 'qwen3_agentic_gem',
    name: 'gem_math_hotpotqa_search',
    overrides: [dataFile('gem_qa.HotpotQA_with_search', 'hotpotqa/train.jsonl')],
    message:
      "custom_envs.HotpotQA_with_search.tool_wrapper.tool_configs[0].tool_args.search_url: GEM's retrieval server (msgpack over HTTP) is not supported here; leave search_url out to search the built-in BM25 corpus (plugins/datasets/corpus)",
  },
  {
    folder: 'qwen3_agentic_gem',
    name: 'gem_math_dapo',
    message:
      'custom_envs.dapo_17k.env_config.dataset_name: open-r1/DAPO-Math-17k-Processed is a Hugging Face hub dataset, which is not downloaded here; give a local .jsonl/.json file of {prompt, solution} rows (question_key/answer_key) as dataset_name=path/to/file.jsonl (or a folder ./data holding <split>.jsonl)',
  },
  {
    folder: 'qwen2.5-vl-3B-agentic',
    name: 'agentic_val_sokoban',
    message:
      'custom_envs.SimpleSokoban.env_manager_cls: roll.pipeline.agentic.env_manager.vl_traj_env_manager.VLTrajEnvManager: vision-language policies are not supported (the policies here read text only)',
  },
];

describe("ROLL's other example folders through agentic config", () => {
  for (const { folder, name, envFile, data = [] } of RUNS) {
    test(`${folder}/${name}`, async () => {
      const loaded = await loadExample(folder, name, data);
      expect(loaded.files.some((f) => f.endsWith(`examples/config/${envFile}`))).toBe(true);
      expect(rollKeysWarning(loaded)).toMatch(/^ROLL keys with no effect here: hydra, /);
    });
  }

  test('WebShop as the env files set it: trajectory-wise for GRPO, step-wise for GiGPO, text pages', async () => {
    for (const [name, manager] of [
      ['agentic_val_webshop', 'traj'],
      ['agentic_val_webshop_gigpo', 'step'],
    ] as const) {
      const { config } = await loadExample('qwen2.5-7B-agentic_megatron', name);
      expect(config.custom_envs.WebShopEnv!).toMatchObject({ env_type: 'webshop', env_manager_cls: manager, env_config: { observation_mode: 'text' } });
    }
  });

  test("GEM's guess-the-number: ROLL's StepConcatEnvManager with the whole history, vLLM's top_k -1 as off", async () => {
    const { config, unplayedEnvs } = await loadExample('qwen3_agentic_gem', 'gem_game_guess_the_number');
    expect(config.custom_envs.GuessTheNumber!).toMatchObject({ env_type: 'game:GuessTheNumber-v0', env_manager_cls: 'step_concat', history_length: 4 });
    expect(config.actor_infer.generating_args.top_k).toBe(0);
    expect(unplayedEnvs).toBeUndefined();
  });

  test('a data file given on the interpolation source reaches the env that interpolates it', async () => {
    const { config } = await loadExample('qwen3_agentic_gem', 'gem_math_dapo', [dataFile('gem_math.dapo_17k', 'dapo.jsonl')]);
    expect(config.custom_envs.dapo_17k!.env_config).toMatchObject({
      dataset_name: join(GEM_DATA, 'dapo.jsonl'),
      question_key: 'prompt',
      answer_key: 'solution',
    });
  });

  test('custom_envs entries no env manager plays are named at start-up (not built or checked)', async () => {
    const hotpotqa = await loadExample('qwen3_agentic_gem', 'gem_math_hotpotqa', [dataFile('gem_qa.HotpotQA', 'hotpotqa/train.jsonl')]);
    expect(hotpotqa.unplayedEnvs).toEqual(['HotpotQA_with_mcp', 'HotpotQA_with_search']);
    expect(rollKeysWarning(hotpotqa)).toEndWith(
      '; custom_envs entries no env manager plays (not built or checked): HotpotQA_with_mcp, HotpotQA_with_search (docs/roll.md)',
    );
    expect(rollKeysWarning({ unplayedEnvs: ['Spare'] })).toBe('custom_envs entries no env manager plays (not built or checked): Spare (docs/roll.md)');
  });

  for (const { folder, name, overrides = [], message } of REFUSED) {
    test(`${folder}/${name} is refused in one line${overrides.length ? ' (with its data file)' : ''}`, async () => {
      const error = await loadExample(folder, name, overrides).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toBe(message);
    });
  }
});

describe("ROLL's other example folders train a step with only pretrain overridden", () => {
  for (const { folder, name, data = [], needs } of RUNS) {
    test.skipIf(needs !== undefined && missing(needs))(
      `${folder}/${name}${data.length ? ' (with a local data file)' : ''}`,
      async () => {
        const run = await agentic(['train', '--config-path', join(ROLL_EXAMPLES, folder), '--config-name', name, 'pretrain=agentic:nano', ...data], {
          cwd: scratch(),
        });
        expect(run.stderr).toContain('ROLL keys with no effect here: hydra');
        if (name === 'gem_math_hotpotqa') expect(run.stderr).toContain('custom_envs entries no env manager plays (not built or checked): HotpotQA_with_mcp');
        expect(run.code).toBe(0);
        expect(run.stdout + run.stderr).toContain('done: 1 step;');
      },
      300_000,
    );
  }
});
