/**
 * `agentic train` as a user runs it: console lines per step, the resolved config, metrics.jsonl
 * and the trained policy as a folder that `agentic eval` loads; and one-line errors for what it
 * cannot do.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentic, lines, scratch } from '../helpers';
import { microPolicyFolder } from '../train/helpers';
import { AGENT_REASON, failingAgentFolder } from './failing_agent';

setDefaultTimeout(60_000);

let pretrain = '';
beforeAll(async () => {
  pretrain = await microPolicyFolder();
});

const SMALL = [
  'max_steps=2',
  'eval_steps=1',
  'rollout_batch_size=8',
  'train_env_manager.num_env_groups=2',
  'train_env_manager.group_size=4',
  'val_batch_size=2',
  'val_env_manager.num_env_groups=2',
  'track_with=[console,jsonl,html]',
];

describe('agentic sft', () => {
  test('builds the base model of a config: a Hugging Face folder with the fingerprint of its settings', async () => {
    const out = scratch();
    const args = [
      'sft',
      '--config-name',
      'agentic',
      `pretrain=${pretrain}`,
      'warm_start.episodes=8',
      'warm_start.worked_examples=8',
      'warm_start.epochs=1',
      `warm_start.output_dir=${out}/base`,
    ];
    const { code, stderr } = await agentic(args);
    expect(stderr).not.toContain('error');
    expect(code).toBe(0);
    expect(lines(stderr).at(-1)).toMatch(/base model saved to .*base \(\d+ rows, final loss [\d.]+\)$/);
    expect(stderr).toContain('8 worked examples (0 of the 8 played were not solved and are left out)');
    expect(stderr).toContain('(notes in <think>, then the move; of the random episodes the notes alone)');
    expect(existsSync(join(out, 'base', 'model.safetensors'))).toBe(true);
    expect(JSON.parse(readFileSync(join(out, 'base', 'warm_start.json'), 'utf8')).fingerprint).toMatch(/^[0-9a-f]{16}$/);
  });

  test('think notes need step-wise prompts and an env that can write them: one line naming the key', async () => {
    const base = ['sft', '--config-name', 'bandit_grpo', `pretrain=${pretrain}`, 'warm_start.think=true', `warm_start.output_dir=${scratch()}/b`];
    const traj = await agentic(base);
    expect(traj.code).toBe(2);
    expect(lines(traj.stderr)).toEqual([
      'error: warm_start.think: custom_envs.Bandit must be step-wise with history_length 0 (the prompts the notes are taught on hold only the current state)',
    ]);
    const step = await agentic([...base, 'custom_envs.Bandit.env_manager_cls=step', 'custom_envs.Bandit.history_length=0']);
    expect(step.code).toBe(2);
    expect(lines(step.stderr)).toEqual([
      'error: warm_start.think: env bandit (custom_envs.Bandit) has no stateNotes(), so there is nothing to teach in <think>',
    ]);
  });
});

describe('agentic train', () => {
  test('trains, logs a line per step, and writes the config, the metrics and the policy', async () => {
    const out = scratch();
    const { code, stderr } = await agentic(['train', '--config-name', 'bandit_grpo', `pretrain=${pretrain}`, `output_dir=${out}`, ...SMALL]);
    expect(stderr).not.toContain('error');
    expect(code).toBe(0);
    const log = lines(stderr);
    expect(log.filter((l) => /^step [12]\/2 +score /.test(l))).toHaveLength(2);
    expect(log.some((l) => /^final +val_/.test(l))).toBe(true);
    // the base (validated before step 1) and the trained policy on the same held-out episodes
    expect(log).toContainEqual(
      expect.stringMatching(/^held-out success \(2 episodes drawn by seed, greedy\): base [01]\.\d{3} -> final [01]\.\d{3} \([+-][01]\.\d{3}\)$/),
    );
    expect(log.at(-1)).toMatch(/^done: 2 steps; policy saved to .*model; metrics in .*metrics\.jsonl; curves in .*curves\.html$/);

    expect(readFileSync(join(out, '.agentic', 'config.yaml'), 'utf8')).toContain('exp_name: bandit_grpo');
    const records = lines(readFileSync(join(out, 'logs', 'metrics.jsonl'), 'utf8')).map((l) => JSON.parse(l));
    expect(records.map((r) => r.step)).toEqual([0, 1, 2]);
    expect(records[0].metrics['actor/pg_loss']).toBeNumber();
    expect(records[2].metrics['val/score/mean']).toBeNumber();
    expect(existsSync(join(out, 'model', 'config.json'))).toBe(true);
    expect(existsSync(join(out, 'model', 'model.safetensors'))).toBe(true);
    expect(existsSync(join(out, 'checkpoints', 'checkpoint-2', 'manifest.json'))).toBe(true);
    const curves = readFileSync(join(out, 'logs', 'curves.html'), 'utf8');
    expect(curves).toContain('<svg');
    expect(curves).toContain('validation score');

    const evaluated = await agentic([
      'eval',
      '--config-name',
      'bandit_grpo',
      `pretrain=${join(out, 'model')}`,
      'val_batch_size=2',
      'val_env_manager.num_env_groups=2',
      `--out=${join(out, 'eval.json')}`,
    ]);
    expect(evaluated.code).toBe(0);

    // a second fresh run into the same folder is refused in one line, before it touches anything
    const again = await agentic(['train', '--config-name', 'bandit_grpo', `pretrain=${pretrain}`, `output_dir=${out}`, ...SMALL]);
    expect(again.code).toBe(2);
    expect(lines(again.stderr)).toEqual([
      `error: checkpoint_config.output_dir: ${join(out, 'checkpoints')} holds an earlier run (checkpoint-2); continue it with \`agentic resume\` or resume_from_checkpoint=auto, replace it with overwrite_output_dir=true, or choose another exp_name`,
    ]);
    expect(existsSync(join(out, 'checkpoints', 'checkpoint-2', 'manifest.json'))).toBe(true);
  });

  test('a run whose every episode fails says why at every step, then stops at the third with exit 1 and one line, saving no policy', async () => {
    const dir = failingAgentFolder(pretrain);
    const { code, stderr } = await agentic(['train', '-c', 'config.yaml', `output_dir=${join(dir, 'output')}`, 'save_steps=1'], { cwd: dir });
    expect(code).toBe(1);
    const log = lines(stderr);
    const reason = `env Calc#0: ${AGENT_REASON}`;
    const steps = log.filter((l) => l.startsWith('step '));
    expect(steps).toHaveLength(2);
    steps.forEach((line, i) => {
      expect(line).toStartWith(`step ${i + 1}/5  score 0.000  `);
      expect(line).toEndWith(`s  failed 4/4: env_failure 4 (${reason})`);
    });
    expect(log.at(-1)).toBe(
      `error: step 3: the run learns from nothing, 3 failed steps in a row (max_failed_steps_in_a_row=3; a step fails when more than max_failed_step_fraction=0.5 of its episodes fail, or when none is left to learn from because episodes failed or went untrained); in this one 4 of 4 episodes failed, most often env_failure (4): ${reason}`,
    );
    expect(stderr).not.toContain('policy saved');
    // the steps before stay as they were checkpointed; the third is not
    expect(existsSync(join(dir, 'output', 'checkpoints', 'checkpoint-2'))).toBe(true);
    expect(existsSync(join(dir, 'output', 'checkpoints', 'checkpoint-3'))).toBe(false);
    expect(existsSync(join(dir, 'output', 'model'))).toBe(false);
  });

  test('an output_dir that is a file, or cannot be created, is one line naming the key (exit 2)', async () => {
    const file = join(scratch({ taken: 'x' }), 'taken');
    for (const [dir, reason] of [
      [file, `${file} is a file, not a folder`],
      ['/proc/agentic_nope/x', '/proc is not writable (ENOENT)'],
    ] as const) {
      const { code, stderr } = await agentic(['train', '--config-name', 'bandit_grpo', `pretrain=${pretrain}`, `output_dir=${dir}`, ...SMALL]);
      expect(code).toBe(2);
      expect(lines(stderr)).toEqual([`error: output_dir: cannot write to ${dir}: ${reason}`]);
    }
  });

  test('a config the algorithm cannot use is one line naming the key', async () => {
    const { code, stderr } = await agentic(['train', 'custom_envs.FrozenLakeTrain.env_manager_cls=traj', '~custom_envs.FrozenLakeTrain.agent_template']);
    expect(code).toBe(2);
    expect(lines(stderr)).toEqual([
      'error: adv_estimator: gigpo needs one row per step, but custom_envs.FrozenLakeTrain.env_manager_cls is traj; set it to step',
    ]);
  });
});
