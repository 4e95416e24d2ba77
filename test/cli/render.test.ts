/**
 * `agentic render` as a user runs it: plays episodes with random actions into render_save_dir,
 * replays them from the episodes.json it wrote, and refuses bad input with one line; an outside
 * agent's failed episodes are rendered as failed, with their reasons.
 */
import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentic, lines, scratch } from '../helpers';
import { microPolicyFolder } from '../train/helpers';
import { AGENT_REASON, failingAgentFolder } from './failing_agent';

const SMALL = ['custom_envs.FrozenLake.max_steps=3', 'custom_envs.FrozenLake.max_tokens_per_step=12'];

const dir = scratch({
  'logs/metrics.jsonl':
    [0, 1, 2, 3]
      .map((step) =>
        JSON.stringify({
          step,
          metrics: { 'val/env/FrozenLake/success': step / 5, 'val/score/mean': step / 5, 'rollout/score/mean': step / 6, 'time/elapsed': 4 * step },
        }),
      )
      .join('\n') + '\n',
});
const renderDir = join(dir, 'render');
const first = await agentic([
  'render',
  '--config-name',
  'frozen_lake',
  '--policy',
  'random',
  '--episodes',
  '3',
  `render_save_dir=${renderDir}`,
  `logging_dir=${join(dir, 'logs')}`,
  ...SMALL,
]);

const files = (folder: string) => readdirSync(folder).sort();

describe('agentic render', () => {
  test('plays episodes into render_save_dir: a GIF and a transcript each, episodes.json, report.html; progress on stderr', () => {
    expect(first.stderr).not.toContain('error');
    expect(first.code).toBe(0);
    const progress = lines(first.stderr).filter((l) => l.startsWith('rendered '));
    expect(progress.map((l) => l.slice(0, 'rendered 1/3'.length))).toEqual(['rendered 1/3', 'rendered 2/3', 'rendered 3/3']);
    expect(progress[0]).toMatch(/^rendered 1\/3: FrozenLake seed \d+, \d+ turns, score -?[\d.]+, \d+ frames$/);
    expect(lines(first.stdout)[1]).toMatch(/^FrozenLake +3 /);
    expect(files(renderDir)).toEqual(['episodes', 'episodes.json', 'report.html']);
    const episodeFiles = files(join(renderDir, 'episodes'));
    expect(episodeFiles.filter((f) => f.endsWith('.gif'))).toHaveLength(3);
    expect(episodeFiles.filter((f) => f.endsWith('.txt'))).toHaveLength(3);
    expect(episodeFiles[0]).toMatch(/^001_FrozenLake_seed\d+\.gif$/);
    for (const gif of episodeFiles.filter((f) => f.endsWith('.gif')))
      expect(new TextDecoder().decode(readFileSync(join(renderDir, 'episodes', gif)).subarray(0, 6))).toBe('GIF89a');
    const saved = JSON.parse(readFileSync(join(renderDir, 'episodes.json'), 'utf8'));
    expect(saved).toHaveLength(3);
    expect(saved[0]).toMatchObject({ tag: 'FrozenLake' });
    expect(saved[0].turns[0]).toHaveProperty('responseText');
    const html = readFileSync(join(renderDir, 'report.html'), 'utf8');
    expect(html).toContain('3 validation episodes played by random actions (seed 42).');
    expect(html.match(/<img class="frames" src="data:image\/gif;base64,/g)).toHaveLength(3);
    expect(html).toContain('validation success');
  });

  test('--trajectories replays the saved episodes to the same GIFs and the same episodes.json', async () => {
    const again = join(dir, 'again');
    const { code, stderr } = await agentic([
      'render',
      '--config-name',
      'frozen_lake',
      '--trajectories',
      join(renderDir, 'episodes.json'),
      `render_save_dir=${again}`,
      ...SMALL,
    ]);
    expect(stderr).not.toContain('error');
    expect(code).toBe(0);
    expect(stderr).toContain(`replaying 3 saved episode(s) from ${join(renderDir, 'episodes.json')}`);
    expect(files(join(again, 'episodes'))).toEqual(files(join(renderDir, 'episodes')));
    for (const name of files(join(renderDir, 'episodes')).filter((f) => f.endsWith('.gif'))) {
      expect(readFileSync(join(again, 'episodes', name))).toEqual(readFileSync(join(renderDir, 'episodes', name)));
    }
    expect(readFileSync(join(again, 'episodes.json'), 'utf8')).toBe(readFileSync(join(renderDir, 'episodes.json'), 'utf8'));
    expect(readFileSync(join(again, 'report.html'), 'utf8')).toContain(`3 episodes replayed from ${join(renderDir, 'episodes.json')}.`);
  });

  test('bad input is one line and a non-zero exit, and the previous render stays as it was', async () => {
    const saved = JSON.parse(readFileSync(join(renderDir, 'episodes.json'), 'utf8'));
    const longest = saved.reduce((best: number, e: { turns: unknown[] }, i: number) => (e.turns.length > saved[best].turns.length ? i : best), 0);
    saved[longest].turns.at(-1).observation = 'a board nobody saw';
    const bad = scratch({
      'garbled.json': '[{"tag": "FrozenLake", "seed": 1, "turns": [',
      'unknown_tag.json': JSON.stringify([{ tag: 'Mars', seed: 1, turns: [] }]),
      'diverging.json': JSON.stringify(saved),
      'stranger/notes.txt': 'keep me',
    });
    const report = readFileSync(join(renderDir, 'report.html'), 'utf8');
    const cases: Array<[string[], number, string]> = [
      [['--trajectories', join(bad, 'missing.json')], 2, `${join(bad, 'missing.json')}: no such file`],
      [['--trajectories', join(bad, 'garbled.json')], 2, `${join(bad, 'garbled.json')}: not valid JSON`],
      [['--trajectories', join(bad, 'unknown_tag.json')], 2, "episode 1: tag 'Mars' is not in this config's custom_envs (defined: FrozenLake)"],
      [
        ['--trajectories', join(bad, 'diverging.json')],
        1,
        `episode ${longest + 1} (FrozenLake, seed ${saved[longest].seed}): the replay diverges at turn ${saved[longest].turns.length}: the observation differs from the recorded one (line 1: recorded "a board nobody saw"`,
      ],
      [['--trajectories', join(bad, 'garbled.json'), '--policy', 'random'], 2, '--policy: --trajectories replays saved responses'],
      [['--episodes', '0'], 2, "--episodes: expected a whole number of at least 1, got '0'"],
      [['--episodes', 'many'], 2, "--episodes: expected a whole number of at least 1, got 'many'"],
      [['--policy', 'smart'], 2, "--policy: expected one of model, random, got 'smart'"],
      [
        ['--policy', 'random', '--episodes', '3', 'val_env_manager.group_size=2', 'val_batch_size=2'],
        2,
        '--episodes: 3 is not whole groups of val_env_manager.group_size (2)',
      ],
    ];
    const results = await Promise.all(
      cases.map(([args]) => agentic(['render', '--config-name', 'frozen_lake', ...args, `render_save_dir=${renderDir}`, ...SMALL])),
    );
    results.forEach(({ code, stderr }, i) => {
      const [, exit, message] = cases[i]!;
      const errors = lines(stderr).filter((l) => l.startsWith('error:'));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(message);
      expect(stderr).not.toMatch(/^\s+at /m);
      expect(code).toBe(exit);
    });
    expect(readFileSync(join(renderDir, 'report.html'), 'utf8')).toBe(report);
    // a folder that is not an earlier render is never replaced
    const stranger = await agentic(['render', '--config-name', 'frozen_lake', '--policy', 'random', `render_save_dir=${join(bad, 'stranger')}`, ...SMALL]);
    expect(stranger.code).toBe(2);
    expect(lines(stranger.stderr)).toEqual([
      `error: render_save_dir: ${join(bad, 'stranger')} holds files but no earlier render (no report.html); a render replaces the whole folder, so choose an empty or new one`,
    ]);
    expect(readFileSync(join(bad, 'stranger', 'notes.txt'), 'utf8')).toBe('keep me');
    expect(existsSync(join(bad, 'stranger', 'report.html'))).toBe(false);
    // nor does it play for minutes before finding it cannot write
    const nowhere = await agentic(['render', '--config-name', 'frozen_lake', '--policy', 'random', 'render_save_dir=/proc/nowhere/render', ...SMALL]);
    expect(nowhere.code).toBe(2);
    expect(lines(nowhere.stderr)).toHaveLength(1);
    expect(nowhere.stderr).toStartWith('error: render_save_dir: cannot write in /proc/nowhere: ');
  }, 60_000);

  test('--help describes the command, its flags and what it writes', async () => {
    const { code, stdout } = await agentic(['render', '--help']);
    expect(code).toBe(0);
    for (const text of ['--episodes', '--policy', '--trajectories', 'report.html', 'episodes.json', 'render_save_dir']) expect(stdout).toContain(text);
    expect(stdout).not.toContain('not implemented');
  });
});

describe('agentic render of an outside agent that fails every other episode', () => {
  test('a failed episode is rendered as failed, with its reason; the others replay the scoring of their answer; the saved episodes render again the same', async () => {
    const dir = failingAgentFolder(await microPolicyFolder(), { everyOther: true });
    const played = await agentic(['render', '-c', 'config.yaml', '--episodes', '4', 'render_save_dir=render'], { cwd: dir });
    expect(played.stderr).not.toContain('error');
    expect(played.code).toBe(0);
    const [, row, reasons] = lines(played.stdout);
    expect(row).toMatch(/^Calc +4 .* 50\.0%$/);
    expect(reasons).toEndWith(`: ${AGENT_REASON})`);
    const transcripts = () => files(join(dir, 'render', 'episodes')).map((name) => lines(readFileSync(join(dir, 'render', 'episodes', name), 'utf8'))[2]!);
    const ended = transcripts();
    expect(ended.filter((line) => /^1 turn, score [01], ended: terminated$/.test(line))).toHaveLength(2);
    const failed = ended.filter((line) => line.startsWith('1 turn, score 0, ended: env_failure (env Calc#'));
    expect(failed).toHaveLength(2);
    for (const line of failed) expect(line).toEndWith(`: ${AGENT_REASON})`);
    expect(readFileSync(join(dir, 'render', 'report.html'), 'utf8')).toContain(`ended: env_failure (env Calc#`);
    const saved = JSON.parse(readFileSync(join(dir, 'render', 'episodes.json'), 'utf8'));
    expect(saved.filter((e: { failure?: string }) => e.failure?.endsWith(AGENT_REASON))).toHaveLength(2);

    const replayed = await agentic(['render', '-c', 'config.yaml', '--trajectories', 'render/episodes.json', 'render_save_dir=again'], { cwd: dir });
    expect(replayed.code).toBe(0);
    expect(readFileSync(join(dir, 'again', 'episodes.json'), 'utf8')).toBe(readFileSync(join(dir, 'render', 'episodes.json'), 'utf8'));
  }, 60_000);
});
