/**
 * Checkpoints from the command line: a real `agentic train` killed with SIGKILL after its first
 * checkpoint and continued with `agentic resume` ends byte-identical to an uninterrupted run, with
 * the same metrics (timings aside) and every step logged once; `agentic eval --checkpoint` writes
 * its JSON beside the checkpoint; a damaged or missing checkpoint is one line and exit 2.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMetricsJsonl } from '../../src/tracking/jsonl';
import { comparable } from '../checkpoint/helpers';
import { agentic, lines, MAIN, ROOT, scratch } from '../helpers';
import { microPolicyFolder } from '../train/helpers';

setDefaultTimeout(90_000);

let pretrain = '';
beforeAll(async () => {
  pretrain = await microPolicyFolder();
});

const RUN = () => [
  '--config-name',
  'bandit_grpo',
  `pretrain=${pretrain}`,
  'max_steps=3',
  'save_steps=1',
  'custom_envs.Bandit.max_tokens_per_step=6',
  'eval_steps=2',
  'rollout_batch_size=8',
  'train_env_manager.num_env_groups=2',
  'train_env_manager.group_size=4',
  'val_batch_size=2',
  'val_env_manager.num_env_groups=2',
  'track_with=[jsonl]',
];

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await Bun.sleep(5);
  }
}

const metricsOf = (out: string) => readMetricsJsonl(join(out, 'logs', 'metrics.jsonl'));
const weightsOf = (out: string) => readFileSync(join(out, 'model', 'model.safetensors'));

describe('agentic resume', () => {
  test('continues a run killed with SIGKILL after its first checkpoint to the very bytes of an uninterrupted run', async () => {
    const straight = scratch();
    const killed = scratch();
    const env = { ...process.env, NO_COLOR: '1' };
    const child = Bun.spawn([process.execPath, MAIN, 'train', ...RUN(), `output_dir=${killed}`], { cwd: ROOT, env, stdout: 'ignore', stderr: 'ignore' });
    const uninterrupted = agentic(['train', ...RUN(), `output_dir=${straight}`]);
    await until(() => existsSync(join(killed, 'checkpoints', 'checkpoint-1')), 60_000);
    child.kill('SIGKILL');
    await child.exited;
    expect(child.signalCode).toBe('SIGKILL');
    expect(existsSync(join(killed, 'model'))).toBe(false);

    const resumed = await agentic(['resume', '--config-name', 'bandit_grpo', `output_dir=${killed}`]);
    expect(resumed.stderr).not.toContain('error');
    expect(resumed.code).toBe(0);
    expect(lines(resumed.stderr)).toContainEqual(expect.stringMatching(/^resuming from .*checkpoint-[12]: step [12] of 3$/));
    // its base is the step-0 validation of the checkpoint's log
    expect(lines(resumed.stderr)).toContainEqual(expect.stringMatching(/^held-out success \(2 episodes drawn by seed, .*\): base [01]\.\d{3} -> final /));
    const straightRun = await uninterrupted;
    expect(straightRun.code).toBe(0);

    expect(weightsOf(killed).equals(weightsOf(straight))).toBe(true);
    const [a, b] = [metricsOf(straight), metricsOf(killed)];
    expect(b.map((r) => r.step)).toEqual([0, 1, 2, 3]);
    expect(comparable(b)).toEqual(comparable(a));
  });

  test('refuses in one line a partial or missing checkpoint, config flags beside a folder, and a run without checkpoints', async () => {
    // what a writer killed before the manifest would leave, were the folder not renamed into place last
    const folder = join(scratch(), 'checkpoint-3');
    mkdirSync(join(folder, 'actor'), { recursive: true });
    const damaged = await agentic(['resume', folder, 'max_steps=4']);
    expect(damaged.code).toBe(2);
    expect(lines(damaged.stderr)).toEqual([`error: ${folder}: incomplete checkpoint (no manifest.json)`]);

    for (const [args, line] of [
      [['/no/such/checkpoint'], 'error: /no/such/checkpoint: no such checkpoint folder'],
      [[`output_dir=${scratch()}`, 'max_steps=[1,'], "error: override 'max_steps=[1,': unclosed '['"],
    ] as const) {
      const result = await agentic(['resume', ...args]);
      expect(result.code).toBe(2);
      expect(lines(result.stderr)).toEqual([line]);
    }

    const empty = scratch();
    const none = await agentic(['resume', `output_dir=${empty}`]);
    expect(none.code).toBe(2);
    expect(lines(none.stderr)).toEqual([`error: no complete checkpoint in ${join(empty, 'checkpoints')} (checkpoint_config.output_dir of exp_name agentic)`]);

    const flags = await agentic(['resume', folder, '--config-name', 'bandit_grpo']);
    expect(flags.code).toBe(2);
    expect(lines(flags.stderr)).toEqual([
      'error: --config-name: a checkpoint folder brings its own config; give overrides only (or use auto to find the checkpoint through a config)',
    ]);
  });

  test('--help describes the command, not a placeholder', async () => {
    const { code, stdout } = await agentic(['resume', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Continue a run from a checkpoint, with its saved config');
    expect(stdout).not.toContain('not implemented');
  });
});

describe('agentic eval --checkpoint', () => {
  test("evaluates a checkpoint's actor with its saved config and writes checkpoint-N.eval.json beside it; auto finds the newest", async () => {
    const out = scratch();
    const trained = await agentic(['train', ...RUN(), 'max_steps=2', 'eval_steps=0', `output_dir=${out}`]);
    expect(trained.code).toBe(0);
    const folder = join(out, 'checkpoints', 'checkpoint-1');
    const named = await agentic(['eval', '--checkpoint', folder]);
    expect(named.stderr).not.toContain('error');
    expect(named.code).toBe(0);
    const json = JSON.parse(readFileSync(`${folder}.eval.json`, 'utf8'));
    expect(json).toMatchObject({ checkpoint: folder, global_step: 1, exp_name: 'bandit_grpo', policy: 'model', model: join(folder, 'actor'), episodes: 2 });

    const auto = await agentic(['eval', '--config-name', 'bandit_grpo', `output_dir=${out}`, '--checkpoint', 'auto']);
    expect(auto.code).toBe(0);
    expect(JSON.parse(readFileSync(join(out, 'checkpoints', 'checkpoint-2.eval.json'), 'utf8')).global_step).toBe(2);
  });
});
