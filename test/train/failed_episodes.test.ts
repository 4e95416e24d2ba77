/**
 * Failed episodes as a training run reports them, with real outside agents (module agents in
 * their own files, whose model calls the micro policy answers through the gateway) and a reward
 * plugin that throws: the step line names each kind with its count and first reason, metrics.jsonl
 * counts them and keeps the reasons, TensorBoard gets the counts, curves.html lists the reasons,
 * and failed steps in a row stop the run with one line before it trains on the last, saving no policy.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withPlugins } from '../../src/cli/start_up';
import { runTraining } from '../../src/cli/training_run';
import { loadConfig } from '../../src/config/load';
import { tf } from '../../src/engine/tf';
import { TrainingError } from '../../src/errors';
import { PluginHost } from '../../src/host/plugin_host';
import { readMetricsJsonl } from '../../src/tracking/jsonl';
import { readEventFile } from '../../src/tracking/tfevents';
import { ROOT, scratch } from '../helpers';
import { microPolicyFolder } from './helpers';

setDefaultTimeout(60_000);

let pretrain = '';
beforeAll(async () => {
  pretrain = await microPolicyFolder();
});

const SDK = JSON.stringify(join(ROOT, 'src/sdk'));

/** Asks the model once (the gateway answers with the policy), then answers 42. */
const CALL_AND_ANSWER = `
  const response = await fetch(ctx.baseUrl + '/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer ' + ctx.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ model: ctx.model, messages: [{ role: 'user', content: ctx.question }] }),
  });
  await response.text();
  return { answer: '42' };`;

const AGENTS = {
  throws: `export async function run() { throw new Error('refusing to reverse stone'); }`,
  silent: `export async function run() { return { answer: '42' }; }`,
  number: `export async function run() { return { answer: 5 }; }`,
  calls: `export async function run(ctx: any) {${CALL_AND_ANSWER}\n}`,
  // the 4 episodes of the first step throw, those of the second play, and so on
  alternates: `let played = 0;
export async function run(ctx: any) {
  if (Math.floor(played++ / 4) % 2 === 0) throw new Error('an odd step');${CALL_AND_ANSWER}
}`,
};

const GRADER_OFFLINE = `import { defineReward } from ${SDK};
export default defineReward({ name: 'grader_offline', description: 'a grader that is down', score() { throw new Error('grader offline'); } });`;

/** A run of the agent env over the micro policy: 2 groups of 2 episodes a step, the agent `agent`, the reward `reward`. */
function agentYaml(agent: keyof typeof AGENTS, reward = 'math_string_equal'): string {
  return `
seed: 3
pretrain: ${pretrain}
plugins: [reward.ts]
max_steps: 1
eval_steps: 0
save_steps: 1
sequence_length: 512
rollout_batch_size: 4
track_with: [console, jsonl, html, tensorboard]
custom_envs:
  Calc:
    env_manager_cls: traj
    max_steps: 2
    max_tokens_per_step: 8
    env_type: agent
    env_config: {agent: agent.ts, dataset: arithmetic/train, reward: ${reward}}
train_env_manager: {num_env_groups: 2, group_size: 2, tags: [Calc], generating_args: {max_new_tokens: 8}}
val_env_manager: {num_env_groups: 2, group_size: 2, tags: [Calc], generating_args: {max_new_tokens: 8}}
actor_train:
  training_args: {learning_rate: 1.0e-3, per_device_train_batch_size: 4}
`;
}

interface Trained {
  /** The console's step lines. */
  console: string[];
  warnings: string[];
  out: string;
  /** The run's error, null when it finished. */
  error: Error | null;
}

/** A run folder holding config.yaml, agent.ts (`agent`) and reward.ts. */
function runFolder(agent: keyof typeof AGENTS, reward?: string): string {
  return scratch({ 'config.yaml': agentYaml(agent, reward), 'agent.ts': AGENTS[agent], 'reward.ts': GRADER_OFFLINE });
}

/** Trains in a folder of its own holding agent.ts (`agent`) and reward.ts; `overrides` on top. */
function train(agent: keyof typeof AGENTS, overrides: string[] = [], reward?: string): Promise<Trained> {
  return trainIn(runFolder(agent, reward), overrides);
}

/** Trains the run folder `dir` (its output in dir/output); `overrides` on top. */
async function trainIn(dir: string, overrides: string[]): Promise<Trained> {
  const out = join(dir, 'output');
  const host = new PluginHost(dir);
  const loaded = await loadConfig({ cwd: dir, configFile: join(dir, 'config.yaml'), overrides: [`output_dir=${out}`, ...overrides] }, host);
  const written: string[] = [];
  const warnings: string[] = [];
  const options = { info: () => {}, warn: (line: string) => warnings.push(line), write: (text: string) => written.push(text), tty: false };
  const error = await withPlugins(loaded.config, host, (started) => runTraining(loaded, started, options)).then(
    () => null,
    (e: unknown) => e as Error,
  );
  return { console: written.join('').split('\n').filter(Boolean), warnings, out, error };
}

const metricsOf = (out: string) => readMetricsJsonl(join(out, 'logs', 'metrics.jsonl'));

describe("a training step's failed episodes", () => {
  const cases = [
    ['an agent that throws', 'throws', 'env Calc#0: runAgent() threw: refusing to reverse stone'],
    ['an agent that never calls the model', 'silent', 'agent: the agent never called the model'],
    [
      'an agent whose answer is a number',
      'number',
      'env Calc#0: runAgent() returned {"answer":5}; return a string (the answer) or {answer: string, reward?: number}',
    ],
  ] as const;
  for (const [what, agent, reason] of cases) {
    test(`${what}: the step line names the kind, the count and the reason; metrics.jsonl counts it and keeps the reason`, async () => {
      const run = await train(agent, ['max_failed_steps_in_a_row=0']);
      expect(run.error).toBeNull();
      const [line] = run.console;
      expect(line).toStartWith('step 1/1  score 0.000  ');
      expect(line).toContain(`s  failed 4/4: env_failure 4 (${reason}`);
      const [step] = metricsOf(run.out);
      expect(step!.metrics['failures/total']).toBe(4);
      expect(step!.metrics['failures/env_failure']).toBe(4);
      expect(step!.failures).toMatchObject({ failed: 4, episodes: 4, kinds: [{ kind: 'env_failure', count: 4 }] });
      expect(step!.failures!.kinds[0]!.first).toBe(reason);
      const events = readdirSync(join(run.out, 'logs', 'tensorboard')).flatMap((file) => readEventFile(join(run.out, 'logs', 'tensorboard', file)));
      expect(events.find((e) => e.step === 0 && 'failures/env_failure' in e.scalars)?.scalars['failures/env_failure']).toBe(4);
      const html = readFileSync(join(run.out, 'logs', 'curves.html'), 'utf8');
      expect(html).toContain('<h3>Failed episodes</h3>');
      expect(html).toContain(`env_failure 4: ${reason}`);
    });
  }

  test('a reward that throws: reward_error with its line, and the step still trains on the episodes', async () => {
    const run = await train('calls', [], 'grader_offline');
    expect(run.error).toBeNull();
    expect(run.console[0]).toContain("failed 4/4: reward_error 4 (reward 'grader_offline': grader offline)");
    const [step] = metricsOf(run.out);
    expect(step!.metrics['failures/reward_error']).toBe(4);
    expect(step!.metrics['env/Calc/reward_error']).toBe(1);
    expect(step!.metrics['actor/optimizer_steps']).toBeGreaterThan(0);
    expect(step!.failures!.kinds).toEqual([{ kind: 'reward_error', count: 4, first: "reward 'grader_offline': grader offline" }]);
  });

  test('a step without failures logs failures/total 0 and no failures record', async () => {
    const run = await train('calls');
    const [step] = metricsOf(run.out);
    expect(step!.metrics['failures/total']).toBe(0);
    expect(step!.failures).toBeUndefined();
    expect(run.console[0]).not.toContain('failed');
  });
});

describe('failed steps in a row', () => {
  test('stop the run with one line naming the most common failure, before the last trains; earlier checkpoints stay, no policy is saved', async () => {
    const before = tf.memory().numTensors;
    const run = await train('throws', ['max_steps=4', 'max_failed_steps_in_a_row=2']);
    expect(run.error).toBeInstanceOf(TrainingError);
    expect(run.error!.message).toBe(
      'step 2: the run learns from nothing, 2 failed steps in a row (max_failed_steps_in_a_row=2; a step fails when more than max_failed_step_fraction=0.5 of its episodes fail, or when none is left to learn from because episodes failed or went untrained); in this one 4 of 4 episodes failed, most often env_failure (4): env Calc#0: runAgent() threw: refusing to reverse stone',
    );
    // step 1's line and warning (counted as the line counts); step 2 stopped before its report
    expect(run.console).toHaveLength(1);
    expect(run.console[0]).toStartWith('step 1/4 ');
    expect(run.warnings).toContain(
      'step 1: no episode left to learn from; the update is skipped (weights, learning rate, KL coefficient and policy version unchanged)',
    );
    expect(existsSync(join(run.out, 'checkpoints', 'checkpoint-1'))).toBe(true);
    expect(existsSync(join(run.out, 'checkpoints', 'checkpoint-2'))).toBe(false);
    expect(existsSync(join(run.out, 'model'))).toBe(false);
    expect(tf.memory().numTensors).toBe(before);
  });

  test('a checkpoint keeps the count: resumed after 2 failed steps, the third in a row stops the run', async () => {
    const dir = runFolder('throws');
    const overrides = ['max_steps=4', 'max_failed_steps_in_a_row=3'];
    const first = await trainIn(dir, overrides);
    const stopped = 'step 3: the run learns from nothing, 3 failed steps in a row (max_failed_steps_in_a_row=3;';
    expect(first.error!.message).toStartWith(stopped);
    const checkpoint = join(first.out, 'checkpoints', 'checkpoint-2');
    expect(JSON.parse(readFileSync(join(checkpoint, 'trainer_state.json'), 'utf8')).failed_steps_in_a_row).toBe(2);
    const resumed = await trainIn(dir, [...overrides, `resume_from_checkpoint=${checkpoint}`]);
    expect(resumed.error).toBeInstanceOf(TrainingError);
    expect(resumed.error!.message).toStartWith(stopped);
    expect(resumed.console).toEqual([]);
  });

  test('a step that failed less starts the count again', async () => {
    const run = await train('alternates', ['max_steps=3', 'max_failed_steps_in_a_row=2']);
    expect(run.error).toBeNull();
    expect(metricsOf(run.out).map((s) => s.metrics['failures/total'])).toEqual([4, 0, 4]);
    expect(existsSync(join(run.out, 'model'))).toBe(true);
  });

  test('steps that train count when too many of their episodes failed; max_failed_step_fraction=1 counts only steps with nothing left', async () => {
    // a reward that throws fails every episode, yet each step trains on them
    const counted = await train('calls', ['max_steps=2', 'max_failed_steps_in_a_row=2'], 'grader_offline');
    expect(counted.error).toBeInstanceOf(TrainingError);
    expect(counted.error!.message).toContain("most often reward_error (4): reward 'grader_offline': grader offline");
    const allowed = await train('calls', ['max_steps=2', 'max_failed_steps_in_a_row=2', 'max_failed_step_fraction=1'], 'grader_offline');
    expect(allowed.error).toBeNull();
    expect(metricsOf(allowed.out).map((s) => s.metrics['failures/reward_error'])).toEqual([4, 4]);
  });
});
