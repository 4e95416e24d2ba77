/**
 * Failed episodes reach the user with their reason, end to end: `agentic train` as a child
 * process, its envs failing for a reason outside the trainer, the step line on stderr and
 * metrics.jsonl read as a user reads them. A code env whose Python sandbox is missing (bwrap made
 * unusable the documented way, AGENTIC_BWRAP naming a binary that does not exist), and an env that
 * fails inside an `agentic worker` process of a distributed run, against a real redis-server.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { readMetricsJsonl } from '../../src/tracking/jsonl';
import { agentic, lines, ROOT, scratch } from '../helpers';
import { RedisServer, WorkerProcess } from '../rollout_sources/distributed/helpers';
import { missing } from '../system_tools';

const started: Array<{ stop(): unknown }> = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
});

const SDK = JSON.stringify(join(ROOT, 'src/sdk'));

/** An env of one step that runs the response as Python, as a code env of a user's would. */
const CODE_ENV = `import { defineEnv, runPython, type EnvContext } from ${SDK};
export default defineEnv({
  name: 'runs_code',
  description: 'Runs the response as Python: printing 42 wins.',
  env: class {
    constructor(_config: unknown, private readonly context: EnvContext) {}
    reset() {
      return { observation: 'Print 42.', info: { instruction: 'Answer with a Python program.' } };
    }
    async step(response: string) {
      const run = await runPython(response, { sandbox: this.context.pythonSandbox });
      const won = run.stdout.trim() === '42';
      return { observation: run.stdout, reward: won ? 1 : 0, terminated: true, truncated: false, info: { metrics: { success: won } } };
    }
    render() { return 'Print 42.'; }
    close() {}
    sampleRandomAction() { return 'print(42)'; }
  },
});
`;

/** An env whose reset always fails, as one whose service is down does. */
const DOWN_ENV = `import { defineEnv } from ${SDK};
export default defineEnv({
  name: 'service_down',
  description: 'Its service refuses every connection.',
  env: class {
    async reset(): Promise<never> { throw new Error('the table service at 127.0.0.1:9 refused the connection'); }
    step(): never { throw new Error('no episode'); }
    render() { return ''; }
    close() {}
    sampleRandomAction() { return '<answer>0</answer>'; }
  },
});
`;

/** One step of 2 groups of 2 episodes of `tag` (env `env`, in `plugin`), played by the random policy over the nano model. */
function oneStepYaml(plugin: string, tag: string, env: string, extra = ''): string {
  return `
pretrain: agentic:nano
warm_start: {enabled: false}
plugins: [${plugin}]
max_steps: 1
save_steps: 0
eval_steps: 0
track_with: [console, jsonl]
sequence_length: 256
custom_envs:
  ${tag}: {env_type: ${env}, max_steps: 1, max_tokens_per_step: 8}
train_env_manager: {num_env_groups: 2, group_size: 2, tags: [${tag}], llm_proxy: {proxy_type: random}, max_env_num_per_worker: 4}
rollout_batch_size: 4
actor_train: {training_args: {per_device_train_batch_size: 4}}
${extra}`;
}

/** The run's step line (stderr) and metrics.jsonl record of its one step. */
function stepOf(dir: string, stderr: string) {
  const line = lines(stderr).find((l) => l.startsWith('step 1/1 '));
  const [record] = readMetricsJsonl(join(dir, 'output', 'logs', 'metrics.jsonl'));
  return { line, record: record! };
}

describe('the reason of a failed episode, in the step line and in metrics.jsonl', () => {
  test.skipIf(missing('python'))(
    'a code env whose sandbox is missing',
    async () => {
      const dir = scratch({ 'config.yaml': oneStepYaml('runs_code.ts', 'Code', 'runs_code'), 'runs_code.ts': CODE_ENV });
      const { code, stderr } = await agentic(['train', '-c', 'config.yaml', 'output_dir=output'], { cwd: dir, env: { AGENTIC_BWRAP: '/nonexistent/bwrap' } });
      expect(code).toBe(0);
      const missingBwrap = 'step() threw: python sandbox: AGENTIC_BWRAP=/nonexistent/bwrap: no such file; install bubblewrap (apt-get install bubblewrap)';
      const { line, record } = stepOf(dir, stderr);
      // the line shows the reason's start, metrics.jsonl keeps it whole
      expect(line).toMatch(/ {2}failed 4\/4: env_failure 4 \(env Code#\d: /);
      expect(line).toContain(missingBwrap);
      expect(record.metrics['failures/total']).toBe(4);
      expect(record.metrics['failures/env_failure']).toBe(4);
      expect(record.failures!.kinds[0]!.first).toMatch(
        /^env Code#\d: step\(\) threw: python sandbox: AGENTIC_BWRAP=\/nonexistent\/bwrap: no such file; install bubblewrap \(apt-get install bubblewrap\), or set python_sandbox=unconfined to run model-written code without a boundary$/,
      );
    },
    60_000,
  );

  describe.skipIf(missing('redis'))('a distributed run', () => {
    test('a worker whose env fails', async () => {
      const redis = await RedisServer.start();
      started.push(redis);
      const yaml = oneStepYaml('service_down.ts', 'Down', 'service_down', `distributed: {redis_url: '${redis.url}'}`);
      const dir = scratch({ 'config.yaml': yaml, 'service_down.ts': DOWN_ENV });
      const worker = WorkerProcess.start('w1', ['-c', 'config.yaml', 'output_dir=output'], { cwd: dir });
      started.push({ stop: () => (worker.kill(9), worker.done) });
      await worker.ready();
      const { code, stderr } = await agentic(['train', '-c', 'config.yaml', 'output_dir=output'], { cwd: dir });
      expect(code).toBe(0);
      const { line, record } = stepOf(dir, stderr);
      expect(line).toMatch(/ {2}failed 4\/4: env_failure 4 \(env Down#\d: reset\(\) threw: the table service at 127\.0\.0\.1:9 refused the connection\)$/);
      expect(record.metrics['failures/total']).toBe(4);
      expect(record.metrics['failures/env_failure']).toBe(4);
      expect(record.failures!.kinds[0]!.first).toMatch(/^env Down#\d: reset\(\) threw: the table service at 127\.0\.0\.1:9 refused the connection$/);
    }, 120_000);
  });
});
