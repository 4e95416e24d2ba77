/**
 * The keys of ROLL's other example folders (qwen2.5-7B-agentic_megatron, agentic_demo,
 * qwen3-30BA3B-agentic_fsdp2, qwen3_agentic_gem, qwen2.5-vl-3B-agentic), written into small
 * configs of our own: infrastructure is named once with no effect, what would change the run and
 * is not built is one line, and vLLM's sampling conventions read as ours.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { loadConfig, type LoadedConfig } from '../../src/config/load';
import { rollKeysWarning } from '../../src/config/roll';
import { stringifyYaml } from '../../src/config/yaml';
import { ConfigError } from '../../src/errors';
import { PluginHost } from '../../src/host/plugin_host';
import { scratch } from '../helpers';

/** A config of one Sokoban entry, trained and validated on, with `extra` merged over it at the top level. */
function config(extra: Record<string, unknown> = {}, entry: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    pretrain: 'agentic:nano',
    rollout_batch_size: 4,
    val_batch_size: 4,
    train_env_manager: { num_env_groups: 4, tags: ['Sokoban'] },
    val_env_manager: { num_env_groups: 4, tags: ['Sokoban'] },
    custom_envs: { Sokoban: { env_type: 'sokoban', env_config: { dim_room: [6, 6] }, ...entry } },
    ...extra,
  };
}

async function load(tree: Record<string, unknown>, name = 'roll_keys', overrides: string[] = []): Promise<LoadedConfig> {
  const dir = scratch({ [`${name}.yaml`]: stringifyYaml(tree) });
  return loadConfig({ configFile: join(dir, `${name}.yaml`), overrides }, new PluginHost());
}

async function refused(tree: Record<string, unknown>, message: RegExp): Promise<void> {
  const error = await load(tree).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).toMatch(message);
  expect((error as Error).message).not.toContain('\n');
}

const ROLE = {
  model_args: { flash_attn: 'fa2', ulysses_size: 2, freeze_module_prefix: 'vision_model' },
  use_remove_padding: true,
  generating_args: { stop_strings: ['</tool_call>'], include_stop_str_in_output: true },
};

describe("ROLL's infrastructure keys of the other example folders", () => {
  afterEach(() => {
    delete process.env.AGENTIC_TEST_WANDB_KEY;
  });

  test('are named in the start-up line, with no effect', async () => {
    const loaded = await load(
      config({
        rpc_timeout: 72000,
        profiler_memory: false,
        rollout_dump_dir: './output/rollout_dump',
        actor_train: ROLE,
        reference: { model_args: { flash_attn: 'fa2', ulysses_size: 2 } },
        train_env_manager: { num_env_groups: 4, tags: ['Sokoban'], system_envs: { NCCL_DEBUG: 'INFO' } },
      }),
    );
    const line = rollKeysWarning(loaded)!;
    for (const key of [
      'rpc_timeout=72000',
      'profiler_memory=false',
      'rollout_dump_dir',
      'flash_attn=fa2',
      'ulysses_size=2',
      'use_remove_padding=true',
      'freeze_module_prefix=vision_model',
      'include_stop_str_in_output=true',
      'system_envs',
    ]) {
      expect(line).toContain(key);
    }
    expect(loaded.config.actor_train.generating_args.stop_strings).toEqual(['</tool_call>']);
  });

  test("ROLL's env files' custom_env is a helper even where no interpolation reads it", async () => {
    const loaded = await load(config({ custom_env: { Unused: { env_type: 'sokoban' } } }));
    expect(loaded.unusedHelpers).toEqual(['custom_env']);
  });

  test('what would change the run and is not built is one line', async () => {
    await refused(
      config({ actor_train: { model_args: { freeze_module_prefix: 'model.layers.0' } } }),
      /^actor_train\.model_args\.freeze_module_prefix: "model\.layers\.0": freezing modules is not built/,
    );
    await refused(
      config({ actor_infer: { generating_args: { include_stop_str_in_output: false } } }),
      /^actor_infer\.generating_args\.include_stop_str_in_output: false: a response keeps the stop string/,
    );
  });

  test('vision-language env managers are refused', async () => {
    await refused(
      config({}, { env_manager_cls: 'roll.pipeline.agentic.env_manager.vl_traj_env_manager.VLTrajEnvManager' }),
      /^custom_envs\.Sokoban\.env_manager_cls: roll\.pipeline\.agentic\.env_manager\.vl_traj_env_manager\.VLTrajEnvManager: vision-language policies are not supported/,
    );
  });

  test("agentic_demo's envs of outside services name the service that is not built", async () => {
    const entry = (env_type: string, env_config: Record<string, unknown>) => config({}, { env_type, env_config });
    await refused(
      entry('rock_tb_native_env', { sandbox_base_url: 'http://localhost:8080', agent_config: { run_cmd: 'iflow -p <<PROMPT>> --yolo' } }),
      /^custom_envs\.Sokoban\.env_type: rock_tb_native_env runs an agent CLI \(iflow -p <<PROMPT>> --yolo\) on Terminal-Bench\/SWE-bench tasks in ROCK sandboxes \(env_config\.sandbox_base_url http:\/\/localhost:8080\); ROCK's sandboxed agent environments are not built$/,
    );
    await refused(
      entry('openreward_env', { environment_name: 'kanishk/EndlessTerminals' }),
      /^custom_envs\.Sokoban\.env_type: openreward_env plays OpenReward's hosted environment kanishk\/EndlessTerminals through the OpenReward SDK; OpenReward environments are not built$/,
    );
    await refused(
      entry('atropos_env', { atropos_env_path: 'environments.gsm8k_server:GSM8kEnv' }),
      /^custom_envs\.Sokoban\.env_type: atropos_env takes its tasks and scores from an Atropos environment server \(environments\.gsm8k_server:GSM8kEnv\); Atropos environments are not built$/,
    );
  });

  test("sokoban_sandbox: the sandbox service's keys have no effect, the game's are honoured", async () => {
    const loaded = await load(
      config({}, { env_type: 'sokoban_sandbox', env_config: { base_url: 'http://localhost:8080', server_start_timeout: 60, dim_room: [7, 7] } }),
    );
    expect(loaded.config.custom_envs.Sokoban!.env_config).toMatchObject({ dim_room: [7, 7] });
    expect(loaded.config.custom_envs.Sokoban!.env_config).not.toHaveProperty('base_url');
    expect(loaded.inert).toEqual(expect.arrayContaining(['custom_envs.Sokoban.env_config.base_url', 'custom_envs.Sokoban.env_config.server_start_timeout']));
  });

  test("a tracker's unread setting is resolved lazily, as OmegaConf: a missing variable there is no error, and its value is never shown", async () => {
    const tracker = { track_with: 'tensorboard', tracker_kwargs: { api_key: '${oc.env:AGENTIC_TEST_WANDB_KEY}', project: 'roll-agentic' } };
    const unset = await load(config(tracker));
    expect(rollKeysWarning(unset)).toContain('tracker_kwargs.api_key');
    process.env.AGENTIC_TEST_WANDB_KEY = 'abcdef0123456789abcdef0123456789abcdef01';
    const set = await load(config(tracker));
    expect(rollKeysWarning(set)).not.toContain('abcdef0123');
    delete process.env.AGENTIC_TEST_WANDB_KEY;
    // a value that is read still needs its variable
    await refused(config({ exp_name: '${oc.env:AGENTIC_TEST_WANDB_KEY}' }), /^exp_name: environment variable AGENTIC_TEST_WANDB_KEY is not set/);
  });

  test("Hydra's resolvers in a config: now, hydra:job.name, oc.deprecated", async () => {
    const loaded = await load(config({ exp_name: '${hydra:job.name}-${now:%Y}', seed: '${oc.deprecated:vars.seed}', vars: { seed: 7 } }), 'my_job');
    expect(loaded.config.exp_name).toBe(`my_job-${new Date().getFullYear()}`);
    expect(loaded.config.seed).toBe(7);
    expect(loaded.warnings).toEqual(["'seed' is deprecated. Change your code and config to use 'vars.seed'"]);
  });
});

describe("vLLM's and SGLang's sampling conventions", () => {
  test('top_k -1 is top_k 0 (off): the same config, so the same run bit for bit', async () => {
    const gen = (top_k: number) =>
      config({
        actor_infer: { generating_args: { top_k, top_p: 1.0 } },
        val_env_manager: { num_env_groups: 4, tags: ['Sokoban'], generating_args: { top_k } },
      });
    const minusOne = await load(gen(-1));
    const zero = await load(gen(0));
    expect(minusOne.config.actor_infer.generating_args.top_k).toBe(0);
    expect(JSON.stringify(minusOne.config)).toBe(JSON.stringify(zero.config));
  });

  test('another negative top_k, or a top_p outside (0, 1], is one line', async () => {
    await refused(
      config({ actor_infer: { generating_args: { top_k: -2 } } }),
      /^actor_infer\.generating_args\.top_k: expected k >= 1, or 0 or -1 to turn top-k off \(as vLLM and SGLang\)/,
    );
    await refused(config({ actor_infer: { generating_args: { top_p: 1.5 } } }), /^actor_infer\.generating_args\.top_p: must be <= 1, got 1\.5/);
    await refused(config({ actor_infer: { generating_args: { top_k: 2.5 } } }), /^actor_infer\.generating_args\.top_k: /);
  });
});
