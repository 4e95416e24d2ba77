import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, type ConfigRequest } from '../../src/config/load';
import { checkPlugins } from '../../src/cli/start_up';
import { renderConfigReference } from '../../src/config/reference';
import { writeRunConfig } from '../../src/config/save';
import { configDefaults } from '../../src/config/schema';
import { parseYaml, stringifyYaml } from '../../src/config/yaml';
import { ConfigError } from '../../src/errors';
import { PluginHost } from '../../src/host/plugin_host';
import { ROOT, scratch } from '../helpers';

const load = (request: ConfigRequest = {}) => loadConfig({ cwd: ROOT, ...request }, new PluginHost(request.cwd ?? ROOT));

/** The smallest valid config with one bandit environment. */
const MINIMAL = 'custom_envs:\n  B: {env_type: bandit}\ntrain_env_manager: {num_env_groups: 2, group_size: 2, tags: [B]}\nrollout_batch_size: 4\n';

describe('layers', () => {
  test('no config named: schema defaults under the built-in configs/agentic.yaml', async () => {
    const { config, files } = await load();
    expect(files).toEqual(['configs/agentic.yaml (built in)']);
    expect(config.exp_name).toBe('agentic');
    expect(config.output_dir).toBe('./output/agentic');
    expect(config.logging_dir).toBe('./output/agentic/logs');
    expect(config.checkpoint_config.output_dir).toBe('./output/agentic/checkpoints');
    expect(config.train_env_manager.tags).toEqual(['FrozenLakeTrain']);
    // a default the built-in file does not set comes from the schema
    expect(config.actor_train.training_args.adam_beta2).toBe(0.999);
  });

  test('the built-in default is configs/agentic.yaml, as committed', async () => {
    const fromFile = await load({ configFile: 'configs/agentic.yaml' });
    expect(fromFile.config).toEqual((await load()).config);
  });

  test('overrides win over the file, which wins over the schema', async () => {
    const dir = scratch({ 'c.yaml': `${MINIMAL}seed: 5\nexp_name: from_file\nmax_steps: 77\n` });
    const { config } = await load({ cwd: dir, configFile: 'c.yaml', overrides: ['seed=123', 'exp_name=foo'] });
    expect(config.seed).toBe(123);
    expect(config.exp_name).toBe('foo');
    expect(config.max_steps).toBe(77);
    expect(config.save_steps).toBe(50);
    expect(config.output_dir).toBe('./output/foo');
  });

  test('--config-path and --config-name; the name may omit its extension', async () => {
    const dir = scratch({ 'my_configs/exp.yaml': `${MINIMAL}exp_name: named\n` });
    expect((await load({ cwd: dir, configPath: 'my_configs', configName: 'exp' })).config.exp_name).toBe('named');
    expect((await load({ cwd: dir, configPath: 'my_configs', configName: 'exp.yaml' })).config.exp_name).toBe('named');
  });

  test('--config-name alone looks in ./configs', async () => {
    expect((await load({ configName: 'bandit_grpo' })).config.exp_name).toBe('bandit_grpo');
  });

  test('lists replace, they do not concatenate', async () => {
    const dir = scratch({ 'c.yaml': `${MINIMAL}`.replace('custom_envs:\n', 'custom_envs:\n  C: {env_type: bandit}\n') });
    const { config } = await load({ cwd: dir, configFile: 'c.yaml', overrides: ['train_env_manager.tags=[C]', 'val_env_manager.tags=[B, C]'] });
    expect(config.train_env_manager.tags).toEqual(['C']);
    expect(config.val_env_manager.tags).toEqual(['B', 'C']);
    expect(Object.keys(config.custom_envs)).toEqual(['C', 'B']);
  });

  test('interpolation runs after every layer, overrides included', async () => {
    const dir = scratch({ 'c.yaml': `${MINIMAL}vars: {lr: 0.5}\nactor_train: {training_args: {learning_rate: '\${vars.lr}'}}\nexp_name: 'exp-\${seed}'\n` });
    const { config } = await load({
      cwd: dir,
      configFile: 'c.yaml',
      overrides: ['seed=9', 'vars.lr=0.25', 'actor_infer.model_args.dtype=${actor_train.model_args.dtype}', 'actor_train.model_args.dtype=bf16'],
    });
    expect(config.actor_train.training_args.learning_rate).toBe(0.25);
    expect(config.exp_name).toBe('exp-9');
    expect(config.actor_infer.model_args.dtype).toBe('bf16');
  });

  test('a ROLL-style config: helper variables under vars, env definitions by interpolation', async () => {
    const dir = scratch({
      'traj_envs.yaml': [
        'vars:',
        '  max_actions_per_traj: 10',
        '  custom_env:',
        '    Bandit:',
        '      env_type: bandit',
        '      max_steps: ${vars.max_actions_per_traj}',
        '      env_config: {risky_prob: 0.5}',
      ].join('\n'),
      'exp/agent.yaml': [
        'defaults:',
        '  - ../traj_envs@_here_',
        'exp_name: agentic_pipeline',
        'custom_envs:',
        '  Bandit: ${vars.custom_env.Bandit}',
        'train_env_manager: {num_env_groups: 4, group_size: 2, tags: [Bandit]}',
        'rollout_batch_size: 8',
        'actor_train:',
        '  device_mapping: list(range(0,2))',
      ].join('\n'),
    });
    const { config } = await load({ cwd: dir, configPath: 'exp', configName: 'agent', overrides: ['vars.max_actions_per_traj=3'] });
    expect(config.custom_envs.Bandit!.max_steps).toBe(3);
    expect(config.custom_envs.Bandit!.env_config).toMatchObject({ risky_prob: 0.5, safe_arm: 'phoenix' });
  });

  test('env_config keys declared by the plugin can be overridden without +', async () => {
    const { config } = await load({ overrides: ['custom_envs.FrozenLake.env_config.p=0.75'] });
    expect(config.custom_envs.FrozenLake!.env_config.p).toBe(0.75);
  });

  test('deleting a key restores its default; deleting an entry removes it', async () => {
    const { config } = await load({
      overrides: [
        '~max_steps',
        '~adv_estimator',
        '~val_env_manager.tags',
        '~custom_envs.FrozenLake',
        '~custom_envs.FrozenLakeTrain',
        '+custom_envs.Other={env_type: bandit}',
        'train_env_manager.tags=[Other]',
      ],
    });
    expect(config.max_steps).toBe(configDefaults().max_steps as number);
    expect(config.val_env_manager.tags).toEqual([]);
    expect(Object.keys(config.custom_envs)).toEqual(['Other']);
  });
});

describe('custom_envs entries no env manager plays', () => {
  test('are not refused for bad settings, and get their defaults when their settings are valid (agentic play TAG)', async () => {
    const { config, unplayedEnvs } = await load({
      configFile: 'config.yaml',
      cwd: scratch({
        'config.yaml': MINIMAL.replace(
          '  B: {env_type: bandit}\n',
          '  B: {env_type: bandit}\n  Other: {env_type: bandit, env_config: {risky_prob: 0.5}}\n  Broken: {env_type: bandit, env_config: {risky_prob: 7}}\n',
        ),
      }),
    });
    expect(unplayedEnvs).toEqual(['Other', 'Broken']);
    expect(config.custom_envs.Other!.env_config).toMatchObject({ risky_prob: 0.5, safe_arm: 'phoenix', format_penalty: 0 });
    expect(config.custom_envs.Broken!.env_config).toEqual({ risky_prob: 7 });
  });
});

describe('errors name the key', () => {
  const fails = async (request: ConfigRequest, message: string | RegExp) => {
    const error = await load(request).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  };

  test('types', async () => {
    await fails({ overrides: ['seed=abc'] }, 'seed: expected integer, got "abc"');
    await fails({ overrides: ['seed=1.5'] }, 'seed: expected integer, got 1.5');
    await fails({ overrides: ['seed=-1'] }, 'seed: must be >= 0, got -1');
    await fails({ overrides: ['actor_train.training_args.learning_rate=fast'] }, 'actor_train.training_args.learning_rate: expected number, got "fast"');
    await fails({ overrides: ['adv_estimator=grpp'] }, /^adv_estimator: expected one of gae, grpo, .*, got "grpp" \(did you mean grpo\?\)$/);
    await fails({ overrides: ['track_with=[console, nope]'] }, /^track_with\[1\]: expected one of console, jsonl, html, tensorboard, wandb, got "nope"/);
    await fails({ overrides: ['pretrain=3'] }, 'pretrain: expected string or null, got 3');
    await fails({ overrides: ['resume_from_checkpoint=[1]'] }, 'resume_from_checkpoint: expected boolean or string, got a list');
    await fails({ overrides: ['exp_name=a/b'] }, 'exp_name: no path separators: it names folders, got "a/b"');
    // a value of one option's kind (a tool name, or a mapping for an MCP server) says what is wrong inside it
    const tools = (entry: string) => ({ configName: 'calculator', overrides: [`custom_envs.Arithmetic.env_config.tools=[${entry}]`] });
    await fails(tools('{mcp: {command: 7}}'), 'custom_envs.Arithmetic.env_config.tools[0].mcp.command: expected string, got 7');
    await fails(tools('{mpc: {command: x}}'), 'custom_envs.Arithmetic.env_config.tools[0].mpc: unknown key (did you mean mcp?)');
    await fails(tools('7'), 'custom_envs.Arithmetic.env_config.tools[0]: expected string or a mapping, got 7');
    await fails(
      { configName: 'bandit_grpo', overrides: ['train_env_manager.tags=[]', 'val_env_manager.tags=[]'] },
      'train_env_manager.tags: name at least one entry of custom_envs (defined: Bandit)',
    );
  });

  test('unknown keys, from overrides and from files, with suggestions', async () => {
    await fails({ overrides: ['nosuchkey=1'] }, 'nosuchkey: unknown key; to add it, write +nosuchkey=1');
    await fails({ overrides: ['sed=1'] }, 'sed: unknown key (did you mean seed?)');
    await fails({ overrides: ['+sed=1'] }, 'sed: unknown key (did you mean seed?)');
    await fails({ overrides: ['actor_train.model_args.dtyp=x'] }, 'actor_train.model_args.dtyp: unknown key (did you mean dtype?)');
    await fails(
      { configName: 'bandit_grpo', overrides: ['custom_envs.Bandit.env_config.riskyprob=1'] },
      'custom_envs.Bandit.env_config.riskyprob: unknown key (did you mean risky_prob?)',
    );
    const dir = scratch({ 'c.yaml': `${MINIMAL}actor_train: {training_args: {learning_rat: 1}}\n` });
    await fails({ cwd: dir, configFile: 'c.yaml' }, 'actor_train.training_args.learning_rat: unknown key (did you mean learning_rate?)');
  });

  test('relations between keys', async () => {
    await fails({ overrides: ['rollout_batch_size=100'] }, 'rollout_batch_size: 100 is not a multiple of train_env_manager.group_size (8)');
    await fails(
      { configName: 'bandit_grpo', overrides: ['train_env_manager.tags=[Bandt]'] },
      "train_env_manager.tags[0]: 'Bandt' is not defined in custom_envs (did you mean Bandit?)",
    );
    await fails({ overrides: ['train_env_manager.num_groups_partition=[3, 4]'] }, 'train_env_manager.num_groups_partition: has 2 entries for 1 tags');
    await fails({ overrides: ['train_env_manager.num_groups_partition=[3]'] }, 'sums to 3, but num_env_groups is 8');
    await fails(
      {
        configName: 'bandit_grpo',
        overrides: ['+custom_envs.B2={env_type: bandit}', 'train_env_manager.tags=[Bandit, B2]', 'train_env_manager.num_env_groups=7'],
      },
      'train_env_manager.num_env_groups: 7 groups do not split equally over 2 tags',
    );
    await fails(
      { overrides: ['val_batch_size=33', 'val_env_manager.group_size=2', 'val_env_manager.num_env_groups=16'] },
      'val_batch_size: 33 is not a multiple of val_env_manager.group_size (2)',
    );
  });

  test('the group filters: values they read, and rollouts they can play again', async () => {
    await fails({ overrides: ['filter_groups.metric=acc'] }, 'filter_groups.metric: expected one of score, got "acc"');
    await fails({ overrides: ['filter_groups.max_num_gen_batches=-1'] }, 'filter_groups.max_num_gen_batches: must be >= 0, got -1');
    await fails({ overrides: ['rollout_filter_ratio=0'] }, 'rollout_filter_ratio: must be > 0, got 0');
    await fails({ overrides: ['rollout_filter_ratio=1.5'] }, 'rollout_filter_ratio: must be <= 1, got 1.5');
    await fails({ overrides: ['rollout_filter_type=var'] }, /^rollout_filter_type: expected one of std, std_rev, got "var"/);
    await fails(
      { overrides: ['filter_groups.enable=true', 'async_generation_ratio=1', 'backend=wasm'] },
      "filter_groups.enable: dynamic sampling plays more rollouts once a step's groups are scored, but async_generation_ratio 1 plays each step's batch ahead; set async_generation_ratio=0 or filter_groups.enable=false",
    );
    await fails(
      { overrides: ['filter_groups.enable=true', 'distributed.redis_url=redis://127.0.0.1:6379'] },
      "filter_groups.enable: dynamic sampling plays more rollouts once a step's groups are scored, but distributed workers play each step's batch ahead; play in this process (distributed.redis_url=null) or set filter_groups.enable=false",
    );
    const ones = ['train_env_manager.group_size=1', 'rollout_batch_size=8'];
    await fails({ overrides: ['filter_groups.enable=true', ...ones] }, 'filter_groups.enable: every group of one episode scores alike');
    await fails({ overrides: ['rollout_filter_ratio=0.5', ...ones] }, 'rollout_filter_ratio: groups are ranked by the spread of their episode scores');
    const { config } = await load({ overrides: ['filter_groups.enable=true', 'rollout_filter_ratio=0.25', 'rollout_filter_type=std_rev'] });
    expect(config.filter_groups).toEqual({ enable: true, metric: 'score', max_num_gen_batches: 10 });
    expect([config.rollout_filter_ratio, config.rollout_filter_type]).toEqual([0.25, 'std_rev']);
  });

  test('an inference-server proxy: its servers named by URL, and a sampling they can do', async () => {
    const sglang = 'train_env_manager.llm_proxy.proxy_type=sglang';
    await fails(
      { overrides: [sglang] },
      "train_env_manager.llm_proxy.proxy_config.base_url: required by proxy_type sglang (the inference server's URL, e.g. http://127.0.0.1:30000)",
    );
    const url = (value: string) => `train_env_manager.llm_proxy.proxy_config.base_url=${value}`;
    await fails(
      { overrides: [sglang, url('localhost:30000')] },
      "train_env_manager.llm_proxy.proxy_config.base_url: 'localhost:30000' is not an http:// or https:// URL",
    );
    await fails({ overrides: [sglang, url('nohost')] }, "base_url: 'nohost' is not a URL (expected one like http://127.0.0.1:30000)");
    await fails(
      { overrides: ['val_env_manager.llm_proxy.proxy_type=openai', 'val_env_manager.llm_proxy.proxy_config.base_url=[http://a:1, http://b:2/v1]'] },
      "val_env_manager.llm_proxy.proxy_config.base_url[1]: 'http://b:2/v1' ends in /v1; give the server's base URL without it",
    );
    await fails(
      { overrides: [sglang, url('http://a:1'), 'train_env_manager.llm_proxy.proxy_config.timeout_s=0'] },
      'train_env_manager.llm_proxy.proxy_config.timeout_s: must be > 0, got 0',
    );
    await fails(
      { overrides: [sglang, url('http://a:1'), 'train_env_manager.generating_args.answer_temperature=2'] },
      "train_env_manager.generating_args.answer_temperature: an inference server samples every token of a response at one temperature; set it to null for train_env_manager's proxy_type sglang",
    );
    await fails(
      { overrides: [sglang, url('http://a:1'), 'async_generation_ratio=1'] },
      'async_generation_ratio: 1 plays ahead in a worker thread with its own model, but train_env_manager.llm_proxy.proxy_type sglang generates on inference servers, which do not play ahead here; set async_generation_ratio=0',
    );
    const { config } = await load({ overrides: [sglang, url('http://127.0.0.1:30000/')] });
    expect(config.train_env_manager.llm_proxy.proxy_config).toMatchObject({ base_url: ['http://127.0.0.1:30000/'], max_retries: 3, timeout_s: 120 });
    expect(config.model_update_dir).toBe(`${config.output_dir}/weights`);
  });

  test('environment plugins check their own config', async () => {
    await fails(
      { configName: 'bandit_grpo', overrides: ['custom_envs.Bandit.env_config.risky_prob=2'] },
      'custom_envs.Bandit.env_config.risky_prob: must be <= 1, got 2',
    );
    await fails(
      { configName: 'bandit_grpo', overrides: ['custom_envs.Bandit.env_type=nosuch'] },
      "custom_envs.Bandit.env_type: unknown env 'nosuch'; registered: agent, bandit",
    );
    await fails(
      { configName: 'bandit_grpo', overrides: ['custom_envs.Bandit.env_type=bandti'] },
      "custom_envs.Bandit.env_type: unknown env 'bandti' (did you mean bandit?)",
    );
    await fails(
      { configName: 'bandit_grpo', overrides: ['custom_envs.Bandit.env_type=./nope.ts'] },
      'custom_envs.Bandit.env_type: ./nope.ts: no such plugin file or folder',
    );
  });

  test('interpolation and files', async () => {
    await fails({ overrides: ['exp_name=${nosuch}'] }, 'exp_name: ${nosuch} refers to nosuch, which does not exist');
    await fails({ overrides: ['+vars.a=${vars.b}', '+vars.b=${vars.a}'] }, /interpolation cycle: vars\.(a|b) -> vars\.(a|b) -> vars\.(a|b)/);
    await fails({ configName: 'nosuch' }, /^config 'nosuch' not found in configs\/ or built in; available: agentfly, .*, webshop, webshop_compact$/);
    await fails({ configName: 'bandit_grp' }, "config 'bandit_grp' not found in configs/ or built in (did you mean bandit_grpo?); available: ");
    await fails({ configFile: 'nosuch.yaml' }, 'nosuch.yaml: no such config file');
    await fails({ configFile: 'configs' }, 'configs: is a folder; name a config file');
    await fails({ overrides: ['plugins=[./nope]'] }, 'plugins: ./nope: no such plugin file or folder');
    const dir = scratch({ 'bad.yaml': 'seed: [1,\n' });
    await fails({ cwd: dir, configFile: 'bad.yaml' }, /bad\.yaml:2:1: /);
  });

  test('conflicting ways to name a config', async () => {
    await expect(load({ configFile: 'a.yaml', configName: 'b' })).rejects.toThrow('give either -c FILE or --config-path/--config-name, not both');
    await expect(load({ configPath: 'configs' })).rejects.toThrow('--config-path needs --config-name');
  });
});

describe('outputs', () => {
  test('the printed config is itself a config that loads to the same values', async () => {
    const first = await load({ configName: 'bandit_grpo', overrides: ['seed=5'] });
    const dir = scratch({ 'resolved.yaml': stringifyYaml(first.config) });
    const second = await load({ cwd: dir, configFile: 'resolved.yaml' });
    expect(second.config).toEqual(first.config);
  });

  test('a run records its resolved config, overrides and sources next to its outputs', async () => {
    const dir = scratch();
    const loaded = await load({ overrides: ['exp_name=recorded', `output_dir=${dir}/run`] });
    const written = writeRunConfig(loaded, dir);
    expect(written).toBe(join(dir, 'run/.agentic'));
    expect(parseYaml(readFileSync(join(written, 'config.yaml'), 'utf8'), 'x')).toEqual(JSON.parse(JSON.stringify(loaded.config)));
    expect(parseYaml(readFileSync(join(written, 'overrides.yaml'), 'utf8'), 'x')).toEqual(['exp_name=recorded', `output_dir=${dir}/run`]);
    expect(readdirSync(written).sort()).toEqual(['config.yaml', 'overrides.yaml', 'sources.yaml']);
  });

  test('docs/config.md is generated from the schema and up to date (bun run docs)', () => {
    expect(readFileSync(join(ROOT, 'docs/config.md'), 'utf8')).toBe(renderConfigReference());
  });
});

describe('the configs folder', () => {
  for (const file of readdirSync(join(ROOT, 'configs')).filter((f) => f.endsWith('.yaml'))) {
    test(`configs/${file} loads`, async () => {
      await load({ configFile: `configs/${file}` });
    });
  }
});

describe('the env entries in configs/envs', () => {
  for (const file of readdirSync(join(ROOT, 'configs/envs')).filter((f) => f.endsWith('.yaml'))) {
    test(`configs/envs/${file} composes into a run and its env plays a step`, async () => {
      const dir = scratch({
        'main.yaml': `defaults:\n  - envs/${file.replace('.yaml', '')}@custom_envs.Entry\n  - _self_\ntrain_env_manager: {tags: [Entry]}\nval_env_manager: {tags: [Entry]}\n`,
      });
      symlinkSync(join(ROOT, 'configs/envs'), join(dir, 'envs'));
      const host = new PluginHost(ROOT);
      const { config } = await loadConfig({ cwd: ROOT, configFile: join(dir, 'main.yaml') }, host);
      const entry = config.custom_envs.Entry!;
      const plugin = await host.resolveEnv(entry.env_type);
      const env = new plugin.env(entry.env_config as never, host.envContext());
      const reset = await env.reset(0);
      expect(reset.info.instruction.length).toBeGreaterThan(0);
      const step = await env.step(env.sampleRandomAction());
      expect(Number.isFinite(step.reward)).toBe(true);
      await env.close();
    });
  }
});

describe('settings only the environment can check', () => {
  test('an unknown tool, reward or dataset of a tool_use entry is a one-line config error', async () => {
    for (const [override, message] of [
      // a reward is checked where the env's schema names one (RewardReference), so the error names the key
      ['custom_envs.Arithmetic.env_config.reward=nosuch', "custom_envs.Arithmetic.env_config.reward: unknown reward 'nosuch'"],
      ['custom_envs.Arithmetic.env_config.tools=[nosuch]', "custom_envs.Arithmetic.env_config: env 'tool_use' cannot be built: unknown tool 'nosuch'"],
      [
        'custom_envs.Arithmetic.env_config.dataset=/nope.jsonl',
        "custom_envs.Arithmetic.env_config: env 'tool_use' cannot be built: dataset /nope.jsonl: no such file",
      ],
    ]) {
      // the env is built at the command's start-up (cli/start_up.ts), right after its config loads
      const host = new PluginHost(ROOT);
      const started = loadConfig({ cwd: ROOT, configName: 'tool_use', overrides: [override!] }, host).then(({ config }) => checkPlugins(config, host));
      const error = await started.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toStartWith(message!);
      expect((error as Error).message).not.toContain('\n');
    }
  });
});
