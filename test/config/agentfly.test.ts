/**
 * AgentFly's command lines run as written (issue #32): the two training commands of AgentFly's
 * guide (the calculator math agent with GRPO, the ReAct search agent with REINFORCE++), pasted
 * after `agentic train` with the model and data pointed at what ships here, pass `agentic config`
 * and train 2 steps. Their keys map to ours; GPU, vLLM and FSDP keys are named once at start-up;
 * what cannot be honoured is a one-line error.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAgentFlyPath, translateAgentFly } from '../../src/config/agentfly';
import { AGENTFLY_CONFIG_NAME, loadConfig } from '../../src/config/load';
import { parseOverride } from '../../src/config/overrides';
import { rollKeysWarning } from '../../src/config/roll';
import { ConfigError } from '../../src/errors';
import { PluginHost } from '../../src/host/plugin_host';
import { agentic, scratch } from '../helpers';

/** AgentFly's train_example.sh (GSM8K with a calculator), on the shipped arithmetic problems. */
const MATH = [
  'algorithm.adv_estimator=grpo',
  'data.train_files=arithmetic/train',
  'data.val_files=arithmetic/val',
  'data.train_batch_size=64',
  'agent.init_config.agent_type=hf',
  'agent.init_config.tools=[calculator]',
  'agent.init_config.template=qwen2.5',
  'agent.init_config.model_name_or_path=agentic:nano',
  'agent.init_config.backend=async_verl',
  'agent.init_config.reward_name=math_equal_reward_tool',
  'agent.init_config.max_model_len=4096',
  'agent.generation_config.max_tokens=512',
  'agent.max_turns=1',
  'agent.num_chains=8',
  'actor_rollout_ref.actor.optim.lr=5e-7',
  'actor_rollout_ref.actor.ppo_mini_batch_size=64',
  'actor_rollout_ref.actor.use_kl_loss=True',
  'actor_rollout_ref.actor.kl_loss_coef=0.001',
  'actor_rollout_ref.actor.kl_loss_type=mse',
  'actor_rollout_ref.actor.entropy_coeff=0.001',
  'actor_rollout_ref.model.use_remove_padding=False',
  'actor_rollout_ref.rollout.name=vllm',
  'actor_rollout_ref.rollout.gpu_memory_utilization=0.5',
  'actor_rollout_ref.rollout.tensor_model_parallel_size=1',
  'actor_rollout_ref.actor.fsdp_config.param_offload=False',
  'algorithm.kl_ctrl.kl_coef=0.001',
  'trainer.critic_warmup=0',
  "trainer.logger=['console']",
  'trainer.n_gpus_per_node=1',
  'trainer.nnodes=1',
  'trainer.save_freq=50',
  'trainer.test_freq=10',
  'trainer.total_training_steps=100',
  'trainer.val_before_train=True',
];

/** AgentFly's run_react_agent.sh (QA with Google search), on the shipped corpus and its questions. */
const SEARCH = [
  'algorithm.adv_estimator=reinforce_plus_plus',
  'data.train_files=corpus_qa/train',
  'data.val_files=corpus_qa/val',
  'data.train_batch_size=128',
  'agent.agent_type=react',
  'agent.tools=[google_search,answer]',
  'agent.reward_name=qa_f1_reward',
  'agent.max_turns=4',
  'agent.num_chains=1',
  'actor_rollout_ref.model.path=agentic:nano',
  'actor_rollout_ref.actor.optim.lr=5e-7',
  'actor_rollout_ref.actor.ppo_mini_batch_size=128',
  'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4',
  'actor_rollout_ref.actor.use_kl_loss=True',
  'actor_rollout_ref.actor.kl_loss_coef=0.001',
  'actor_rollout_ref.actor.kl_loss_type=mse',
  'actor_rollout_ref.actor.entropy_coeff=0.001',
  'actor_rollout_ref.rollout.tensor_model_parallel_size=2',
  'actor_rollout_ref.rollout.gpu_memory_utilization=0.6',
  'actor_rollout_ref.ref.fsdp_config.param_offload=True',
  'trainer.n_gpus_per_node=8',
  'trainer.save_freq=50',
  'trainer.test_freq=10',
  'trainer.total_training_steps=200',
];

/** Appended to keep the runs short: 2 steps of a few short episodes, a small validation. */
const FAST = [
  'data.train_batch_size=2',
  'data.val_batch_size=2',
  'agent.generation_config.max_tokens=12',
  'agent.max_model_len=1024',
  'actor_rollout_ref.actor.ppo_mini_batch_size=2',
  'trainer.total_training_steps=2',
  'trainer.test_freq=2',
];

/** The calculator line plays 8 chains a question; its training runs here play 4: half the episodes, GRPO's groups still of several. */
const FEWER_CHAINS = 'agent.num_chains=4';

const load = (overrides: string[], extra: { configName?: string } = {}) => loadConfig({ overrides, ...extra }, new PluginHost());

async function fails(overrides: string[], message: string | RegExp): Promise<void> {
  const error = await load(overrides).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).toMatch(message);
  expect((error as Error).message).not.toContain('\n');
}

describe('AgentFly command lines through agentic config', () => {
  test('the calculator agent with GRPO', async () => {
    const loaded = await load(MATH);
    const c = loaded.config;
    expect(loaded.files).toEqual([AGENTFLY_CONFIG_NAME]);
    expect([c.adv_estimator, c.pretrain, c.sequence_length, c.max_steps, c.save_steps, c.eval_steps, c.critic_warmup]).toEqual([
      'grpo',
      'agentic:nano',
      4096,
      100,
      50,
      10,
      0,
    ]);
    expect([c.rollout_batch_size, c.train_env_manager.num_env_groups, c.train_env_manager.group_size]).toEqual([512, 64, 8]);
    expect(c.actor_train.training_args).toMatchObject({ learning_rate: 5e-7, per_device_train_batch_size: 8, gradient_accumulation_steps: 8 });
    expect([c.use_kl_loss, c.kl_loss_coef, c.kl_loss_type, c.entropy_loss_coef, c.init_kl_coef, c.add_token_level_kl]).toEqual([
      true,
      0.001,
      'mse',
      0.001,
      0.001,
      false,
    ]);
    expect(c.track_with).toEqual(['console']);
    for (const tag of ['AgentFly', 'AgentFlyVal']) {
      expect(c.custom_envs[tag]!).toMatchObject({ max_steps: 1, max_tokens_per_step: 512 });
      expect(c.custom_envs[tag]!.env_config).toMatchObject({ tools: ['calculator'], reward: 'math_equal_reward_tool', agent_format: 'json', max_turns: 1 });
    }
    expect(c.custom_envs.AgentFly!.env_config.dataset).toBe('arithmetic/train');
    expect(c.custom_envs.AgentFlyVal!.env_config.dataset).toBe('arithmetic/val');
    expect(c.train_env_manager.generating_args!.max_new_tokens).toBe(512);
    expect(rollKeysWarning(loaded)).toBe(
      'AgentFly keys with no effect here: template=qwen2.5, backend=async_verl, use_remove_padding=false, name=vllm, gpu_memory_utilization=0.5, tensor_model_parallel_size=1, param_offload=false, n_gpus_per_node=1, nnodes=1 (docs/agentfly.md)',
    );
  });

  test('the ReAct search agent with REINFORCE++', async () => {
    const loaded = await load(SEARCH);
    const c = loaded.config;
    expect([c.adv_estimator, c.pretrain, c.max_steps, c.rollout_batch_size, c.train_env_manager.group_size]).toEqual([
      'reinforce_plus_plus',
      'agentic:nano',
      200,
      128,
      1,
    ]);
    expect(c.actor_train.training_args).toMatchObject({ per_device_train_batch_size: 4, gradient_accumulation_steps: 32 });
    expect(c.custom_envs.AgentFly!.env_config).toMatchObject({
      dataset: 'corpus_qa/train',
      tools: ['google_search', 'answer'],
      reward: 'qa_f1_reward',
      agent_format: 'react',
      max_turns: 4,
    });
    expect(c.custom_envs.AgentFlyVal!.env_config.dataset).toBe('corpus_qa/val');
    expect(loaded.agentFlyInert).toEqual([
      'actor_rollout_ref.rollout.tensor_model_parallel_size=2',
      'actor_rollout_ref.rollout.gpu_memory_utilization=0.6',
      'actor_rollout_ref.ref.fsdp_config.param_offload=true',
      'trainer.n_gpus_per_node=8',
    ]);
  });

  test('on a named config the keys go to its env entries; agentic keys on the same line win', async () => {
    const { config: c } = await load(
      ['data.train_files=arithmetic/val', 'agent.num_chains=4', 'data.train_batch_size=2', 'train_env_manager.group_size=2', 'rollout_batch_size=4'],
      { configName: 'agentfly_math_grpo' },
    );
    expect(c.custom_envs.Arithmetic!.env_config.dataset).toBe('arithmetic/val');
    expect([c.train_env_manager.group_size, c.rollout_batch_size, c.train_env_manager.num_env_groups]).toEqual([2, 4, 2]);
    expect((await load(['trainer.total_epochs=3'])).config.max_epochs).toBe(3);
    // new chains alone keep the questions of a batch (AgentFly's defaults here: 8 questions of 5 chains)
    expect((await load(['agent.num_chains=2'])).config.rollout_batch_size).toBe(16);
    expect(
      (await load(['agent.init_args.agent_type=code', 'agent.init_args.tools=[python_executor]'])).config.custom_envs.AgentFly!.env_config.agent_format,
    ).toBe('code');
  });

  test('without data.val_batch_size (or with null) validation plays every row of data.val_files once, as verl does', async () => {
    const rows = Array.from({ length: 5 }, (_, i) => JSON.stringify({ question: `${i} + 1`, answer: String(i + 1) })).join('\n');
    const file = `${scratch({ 'val.jsonl': rows })}/val.jsonl`;
    for (const given of [[], ['data.val_batch_size=null']]) {
      const { config } = await load(['data.train_files=arithmetic/train', `data.val_files=${file}`, 'agent.model_name_or_path=agentic:nano', ...given]);
      expect(config.val_batch_size).toBe(5 * config.val_env_manager.group_size);
      expect(config.val_env_manager.num_env_groups).toBe(5);
    }
    const named = await load(['data.val_files=arithmetic/val', 'agent.model_name_or_path=agentic:nano', 'data.val_batch_size=3']);
    expect(named.config.val_env_manager.num_env_groups).toBe(3);
    await fails([`data.val_files=${file.replace('.jsonl', '_gone.jsonl')}`], /^data\.val_files: dataset .*val_gone\.jsonl: no such file$/);
  });

  test('what cannot be honoured is one line', async () => {
    await fails(['actor_rollout_ref.actor.clip_ratio_c=3.0'], /^actor_rollout_ref\.actor\.clip_ratio_c=3: agentic's dual clip bound/);
    await fails(['actor_rollout_ref.rollout.n=4'], /rollout\.n=4: chains of one question are agent\.num_chains/);
    await fails(['agent.agent_type=gui'], /agent\.agent_type=gui: agent types here: hf, react, code/);
    await fails(['data.train_files=[a.json,b.json]'], /one dataset per custom_envs entry/);
    await fails(['trainer.val_before_train=maybe'], /^trainer\.val_before_train=maybe: expected true or false$/);
    await fails(['actor_rollout_ref.model.enable_gradient_checkpointing=1'], /enable_gradient_checkpointing=1: expected true or false/);
    await fails(
      ['actor_rollout_ref.actor.optim.lrr=1'],
      /optim\.lrr: an AgentFly key agentic does not read \(did you mean actor_rollout_ref\.actor\.optim\.lr\?\)/,
    );
    await fails(
      ['actor_rollout_ref.actor.ppo_mini_batch_size=6', 'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4'],
      /ppo_mini_batch_size=6: not a whole number of micro-batches of 4/,
    );
    await fails(['~trainer.nnodes'], /cannot be deleted/);
    const frozen = await load(['data.train_files=arithmetic/train'], { configName: 'frozen_lake' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((frozen as Error).message).toMatch(/custom_envs\.\w+ is a frozen_lake env, not an AgentFly agent/);
  });

  test("verl's LoRA keys: a rank above 0 turns LoRA on, over target_modules (all-linear) with lora_alpha (16)", async () => {
    const on = (await load([...MATH, 'actor_rollout_ref.model.lora_rank=32'])).config.actor_train.model_args;
    expect(on).toMatchObject({ lora_rank: 32, lora_target: 'all-linear', lora_alpha: 16 });
    const given = (
      await load([
        ...MATH,
        'actor_rollout_ref.model.lora_rank=8',
        'actor_rollout_ref.model.lora_alpha=32',
        'actor_rollout_ref.model.target_modules=[q_proj,v_proj]',
      ])
    ).config.actor_train.model_args;
    expect(given).toMatchObject({ lora_rank: 8, lora_target: 'q_proj,v_proj', lora_alpha: 32 });
    expect((await load([...MATH, 'actor_rollout_ref.model.lora_rank=0'])).config.actor_train.model_args.lora_target).toBeNull();
  });

  test('AgentFly keys are told apart from ours; critic is shared', () => {
    expect(isAgentFlyPath(['critic', 'optim', 'lr'])).toBe(true);
    expect(isAgentFlyPath(['critic', 'training_args', 'learning_rate'])).toBe(false);
    expect(isAgentFlyPath(['trainer', 'nnodes'])).toBe(true);
    expect(isAgentFlyPath(['train_env_manager', 'tags'])).toBe(false);
    expect(rollKeysWarning({ inert: ['hydra'], agentFlyInert: ['trainer.nnodes=1', 'actor_rollout_ref.ref.fsdp_config'] })).toBe(
      'ROLL keys with no effect here: hydra; AgentFly keys with no effect here: nnodes=1, fsdp_config (docs/roll.md, docs/agentfly.md)',
    );
    const { overrides } = translateAgentFly([parseOverride('critic.optim.lr=1e-5'), parseOverride('trainer.resume_mode=disable')], {});
    expect(overrides.map((o) => [o.path.join('.'), o.value])).toEqual([
      ['critic.training_args.learning_rate', 1e-5],
      ['resume_from_checkpoint', false],
    ]);
  });

  test("verl's algorithm.filter_groups is DAPO's dynamic sampling, by the episode score", async () => {
    const base = ['agent.model_name_or_path=agentic:nano'];
    const on = (
      await load([...base, 'algorithm.filter_groups.enable=True', 'algorithm.filter_groups.metric=score', 'algorithm.filter_groups.max_num_gen_batches=0'])
    ).config.filter_groups;
    expect(on).toEqual({ enable: true, metric: 'score', max_num_gen_batches: 0 });
    expect((await load([...base, 'algorithm.filter_groups.metric=null'])).config.filter_groups.metric).toBe('score');
    await fails(['algorithm.filter_groups.metric=acc'], /^algorithm\.filter_groups\.metric=acc: groups are compared by the episode score here/);
  });

  test("verl's trainer keys: val_before_train, gradient checkpointing, resume_mode", async () => {
    const base = ['agent.model_name_or_path=agentic:nano'];
    expect((await load([...base, 'trainer.val_before_train=False'])).config.val_before_train).toBe(false);
    expect((await load([...base, 'trainer.val_before_train=True'])).config.val_before_train).toBe(true);
    const on = (await load([...base, 'actor_rollout_ref.model.enable_gradient_checkpointing=True', 'critic.model.enable_gradient_checkpointing=True'])).config;
    expect([on.actor_train.model_args.disable_gradient_checkpointing, on.critic.model_args.disable_gradient_checkpointing]).toEqual([false, false]);
    const off = (await load([...base, 'actor_rollout_ref.model.enable_gradient_checkpointing=False'])).config;
    expect(off.actor_train.model_args.disable_gradient_checkpointing).toBe(true);
    // auto: the newest checkpoint of default_local_dir, if any; disable: from scratch (an earlier run's checkpoints still stop it)
    const auto = (await load([...base, 'trainer.resume_mode=auto', 'trainer.resume_from_path=ignored'])).config;
    expect(auto.resume_from_checkpoint).toBe('auto');
    const disable = (await load([...base, 'trainer.resume_mode=disable'])).config;
    expect([disable.resume_from_checkpoint, disable.overwrite_output_dir]).toEqual([false, false]);
    const folder = scratch({ 'checkpoint-3/.keep': '' });
    const path = (await load([...base, 'trainer.resume_mode=resume_path', `trainer.resume_from_path=${folder}/checkpoint-3`])).config;
    expect(path.resume_from_checkpoint).toBe(`${folder}/checkpoint-3`);
    await fails(
      [...base, 'trainer.resume_mode=resume_path', `trainer.resume_from_path=${folder}/checkpoint-9`],
      /^trainer\.resume_from_path=.*checkpoint-9: no such checkpoint folder$/,
    );
  });
});

describe('AgentFly command lines train 2 steps', () => {
  for (const [name, line] of [
    ['calculator, GRPO', [...MATH, FEWER_CHAINS]],
    ['ReAct search, REINFORCE++', SEARCH],
  ] as const) {
    test(name, async () => {
      const cwd = scratch();
      const run = await agentic(['train', ...line, ...FAST], { cwd });
      const output = run.stdout + run.stderr;
      expect(output).toContain('AgentFly keys with no effect here:');
      expect(output).toContain('done: 2 steps');
      expect(run.code).toBe(0);
    }, 60_000);
  }

  test('trainer.val_before_train=False starts training without the step-0 validation; later ones run', async () => {
    const cwd = scratch();
    const line = [...MATH, ...FAST, FEWER_CHAINS, 'trainer.logger=[console,jsonl]', 'trainer.test_freq=1', 'trainer.val_before_train=False'];
    const run = await agentic(['train', ...line], { cwd });
    expect(run.code).toBe(0);
    const steps = readFileSync(join(cwd, 'output', 'agentfly', 'logs', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { step: number; metrics: Record<string, number> });
    const validated = steps.filter((s) => Object.keys(s.metrics).some((k) => k.startsWith('val/'))).map((s) => s.step);
    expect(validated).toEqual([1, 2]);
  }, 60_000);

  test('trainer.resume_mode=resume_path continues from trainer.resume_from_path', async () => {
    const cwd = scratch();
    const line = [...MATH, ...FAST, FEWER_CHAINS, 'trainer.test_freq=-1', 'trainer.default_local_dir=ckpt', 'trainer.save_freq=1'];
    const first = await agentic(['train', ...line, 'trainer.total_training_steps=1'], { cwd });
    expect(first.code).toBe(0);
    const resumed = await agentic(
      ['train', ...line, 'trainer.total_training_steps=2', 'trainer.resume_mode=resume_path', 'trainer.resume_from_path=ckpt/checkpoint-1'],
      { cwd },
    );
    const output = resumed.stdout + resumed.stderr;
    expect(output).toContain('resuming from ckpt/checkpoint-1: step 1 of 2');
    expect(output).toContain('done: 1 step');
    expect(resumed.code).toBe(0);
  }, 60_000);

  test('trainer.total_epochs ends the run after that many passes over data.train_files', async () => {
    const rows = Array.from({ length: 6 }, (_, i) => JSON.stringify({ question: `What is ${i} + 1?`, answer: String(i + 1) })).join('\n');
    const cwd = scratch({ 'train.jsonl': rows, 'val.json': JSON.stringify([{ question: 'What is 2 + 2?', answer: '4' }]) });
    const line = [
      ...MATH,
      ...FAST,
      'data.train_files=train.jsonl',
      'data.val_files=val.json',
      'data.val_batch_size=1',
      'data.train_batch_size=4',
      'agent.num_chains=2',
      'trainer.total_epochs=1',
      'trainer.total_training_steps=null',
      'trainer.test_freq=-1',
    ];
    const run = await agentic(['train', ...line], { cwd });
    const output = run.stdout + run.stderr;
    // 6 rows, 4 questions a step: the second step completes the epoch (no total_training_steps: the config's max_steps, 100, is the cap)
    expect(output).toContain('max_steps 2: max_epochs 1 of the training data (AgentFly 6 rows, 4 a step)');
    expect(output).toContain('done: 2 steps');
    expect(run.code).toBe(0);
  }, 60_000);
});
