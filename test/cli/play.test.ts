/**
 * `agentic play` without a terminal, as scripts and CI drive it: a scripted FrozenLake episode to
 * the goal and a calculator episode, both saved in the format `agentic render --trajectories`
 * replays (checked by running the replay command play prints); the random policy and a model;
 * a user's own env file; and every bad input as one line and a non-zero exit.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { choosePolicy, shellWord } from '../../src/cli/play';
import { agentic, lines, scratch } from '../helpers';

setDefaultTimeout(60_000);

/**
 * Seed 20 of the default config's FrozenLake (4x4, not slippery), and the shortest way to its
 * goal, found by hand and checked by the test: the first observation must be this board.
 */
const LAKE_20 = '__PO\n_OO_\n____\n___G';
const PATH_20 = ['Left', 'Left', 'Down', 'Down', 'Down', 'Right', 'Right', 'Right'];

/** Seed 5 of tool_use's Arithmetic: 2 pens at $4 and 9 books at $6 cost 62 dollars. */
const QUESTION_5 = 'Noah buys 2 pens at $4 each and 9 books at $6 each. How many dollars in all?';
const CALL = '<tool_call>{"name": "calculator", "arguments": {"expression": "2*4 + 9*6"}}</tool_call>';

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

/** The replay command play prints, as words (these tests use paths without spaces or quotes). */
function replayWords(stderr: string): string[] {
  const line = lines(stderr).find((l) => l.includes('replay it with: '));
  if (!line) throw new Error(`no replay command in: ${stderr}`);
  const words = line.slice(line.indexOf('replay it with: ') + 'replay it with: '.length).split(' ');
  expect(words.slice(0, 2)).toEqual(['agentic', 'render']);
  return words.slice(2);
}

describe('agentic play --script: FrozenLake to the goal', () => {
  const dir = scratch({ 'moves.txt': ['I would go left', ...PATH_20.map((move) => `<answer>${move}</answer>`)].join('\n') + '\n' });
  const out = join(dir, 'lake.json');
  let run: Awaited<ReturnType<typeof agentic>>;
  beforeAll(async () => {
    run = await agentic(['play', 'FrozenLake', 'seed=20', '--script', join(dir, 'moves.txt'), '--out', out]);
  });

  test('plays every scripted response and reaches the goal', () => {
    expect(run.stderr).not.toContain('error');
    expect(run.code).toBe(0);
    expect(lines(run.stdout)[0]).toBe('playing FrozenLake (env frozen_lake, step-wise), seed 20; responses: script ' + join(dir, 'moves.txt'));
    expect(run.stdout.match(/^=== turn \d+ of at most 10$/gm)).toHaveLength(9);
    expect(run.stdout).toContain('action: none found in the response (not valid)\nreward: -0.01');
    expect(run.stdout).toContain('action: Right (valid)\nreward: 1');
    expect(run.stdout).toContain('=== episode over after 9 turns: terminated');
    expect(run.stdout).toContain('score: 0.99 (success)');
  });

  test('shows the exact prompt (the chat template applied) and the token view of each response', () => {
    expect(run.stdout).toContain(
      `--- prompt (step-wise: the whole prompt, 36 ids, chat template applied)\n<|im_start|>system\nReach G.<|im_end|>\n<|im_start|>user\n${LAKE_20}<|im_end|>\n<|im_start|>assistant\n`,
    );
    expect(run.stdout).toContain('--- response tokens: 5, all trained on (the response mask is 1 on each); log-probs n/a (no model loaded');
    expect(run.stdout).toMatch(/^ +1 +\d+ +n\/a +yes +"<answer"$/m);
  });

  test('saves the trajectory in the saved-episodes format', () => {
    const saved = readJson(out);
    expect(saved).toHaveLength(1);
    const [episode] = saved;
    expect(episode).toMatchObject({
      tag: 'FrozenLake',
      seed: 20,
      endReason: 'terminated',
      score: 0.99,
      stopped: null,
      policy: `script ${join(dir, 'moves.txt')}`,
    });
    expect(episode.turns[0].observation).toBe(LAKE_20);
    expect(episode.turns.map((t: { action: string | null }) => t.action)).toEqual([null, ...PATH_20]);
    expect(episode.turns[0].metrics.action_is_valid).toBe(false);
    expect(episode.turns.at(-1)).toMatchObject({ responseText: '<answer>Right</answer>', reward: 1, logProbs: null });
    expect(episode.finalObservation).toBe('___O\n_OO_\n____\n___√');
    expect(episode.instruction).toContain('Walk from your position to the goal');
    expect(run.stderr).toContain(`saved the trajectory to ${out}`);
  });

  test('agentic render --trajectories replays it with the command play printed', async () => {
    const renderDir = join(dir, 'render');
    const replay = await agentic(['render', ...replayWords(run.stderr), `render_save_dir=${renderDir}`]);
    expect(replay.stderr).not.toContain('error');
    expect(replay.code).toBe(0);
    expect(readdirSync(join(renderDir, 'episodes')).sort()).toEqual(['001_FrozenLake_seed20.gif', '001_FrozenLake_seed20.txt']);
    const transcript = readFileSync(join(renderDir, 'episodes', '001_FrozenLake_seed20.txt'), 'utf8');
    expect(transcript).toContain('9 turns, score 0.99, ended: terminated');
  });
});

describe('agentic play --script: a tool-use task', () => {
  const dir = scratch({ 'answers.txt': `${CALL}\n<answer>62</answer>\n` });
  const out = join(dir, 'tool.json');
  let run: Awaited<ReturnType<typeof agentic>>;
  beforeAll(async () => {
    run = await agentic(['play', 'Arithmetic', '--config-name', 'tool_use', 'seed=5', '--script', join(dir, 'answers.txt'), '--out', out]);
  });

  test('shows the calculator call and its output as they happen, then the scored answer', () => {
    expect(run.stderr).not.toContain('error');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`--- observation\n${QUESTION_5}\n`);
    expect(run.stdout).toContain(`response> ${CALL}\n--- step\naction: calculator({"expression":"2*4 + 9*6"}) (valid)\nreward: 0`);
    expect(run.stdout).toContain('--- tool calls (1)\n[1] calculator: ok\n62\n');
    // the tool's output is the next turn's observation, appended to the growing chat
    expect(run.stdout).toContain('=== turn 2 of at most 5\n--- observation\n<tool_response>\n62\n</tool_response>\n--- prompt (trajectory-wise: ');
    expect(run.stdout).toContain('Turn 2. Observation:\n<tool_response>\n62\n</tool_response>\nYou have 4 actions left.');
    expect(run.stdout).toContain('score: 1 (success)');
  });

  test('saves the tool call and its observation in the trajectory, which render replays', async () => {
    const [episode] = readJson(out);
    expect(episode).toMatchObject({ tag: 'Arithmetic', seed: 5, endReason: 'terminated', score: 1 });
    expect(episode.turns).toHaveLength(2);
    expect(episode.turns[0]).toMatchObject({ observation: QUESTION_5, responseText: CALL, toolCalls: [{ name: 'calculator', ok: true, output: '62' }] });
    expect(episode.turns[1]).toMatchObject({ observation: '<tool_response>\n62\n</tool_response>', responseText: '<answer>62</answer>' });
    const renderDir = join(dir, 'render');
    const replay = await agentic(['render', ...replayWords(run.stderr), `render_save_dir=${renderDir}`]);
    expect(replay.code).toBe(0);
    expect(readdirSync(join(renderDir, 'episodes'))).toEqual(['001_Arithmetic_seed5.txt']);
  });
});

describe('agentic play: other policies and envs', () => {
  test('--policy random --auto needs no input and is deterministic given the seed', async () => {
    const [a, b] = [join(scratch(), 'a.json'), join(scratch(), 'b.json')];
    const first = await agentic(['play', 'FrozenLake', 'seed=7', '--policy', 'random', '--auto', '--out', a]);
    const second = await agentic(['play', 'FrozenLake', 'seed=7', '--policy', 'random', '--auto', '--out', b]);
    expect(first.code).toBe(0);
    expect(second.code).toBe(0);
    expect(first.stdout).toBe(second.stdout);
    expect(readFileSync(a, 'utf8')).toBe(readFileSync(b, 'utf8'));
    expect(readJson(a)[0]).toMatchObject({ policy: 'random', logProbSource: null });
  });

  test('a model plays with --auto, and scores the responses a script gives', async () => {
    const dir = scratch({ 'moves.txt': '<think>go left</think><answer>Left</answer>\n<answer>Left</answer>\n' });
    const SHORT = ['seed=20', 'pretrain=agentic:tiny', 'custom_envs.FrozenLake.max_steps=2', 'custom_envs.FrozenLake.max_tokens_per_step=16'];
    const played = await agentic(['play', 'FrozenLake', ...SHORT, '--auto', '--out', join(dir, 'model.json')]);
    expect(played.stderr).toContain('model: agentic:tiny (random init, seed 20) on wasm');
    expect(played.code).toBe(0);
    const byModel = readJson(join(dir, 'model.json'))[0];
    expect(byModel).toMatchObject({ policy: 'model agentic:tiny (random init, seed 20)', logProbSource: 'sampled' });
    expect(byModel.turns).toHaveLength(2);
    expect(played.stdout).toContain('log-probs as the model sampled them');

    const scored = await agentic(['play', 'FrozenLake', ...SHORT, '--script', join(dir, 'moves.txt'), '--out', join(dir, 'scored.json')]);
    expect(scored.code).toBe(0);
    const byScript = readJson(join(dir, 'scored.json'))[0];
    expect(byScript.logProbSource).toBe('scored');
    expect(byScript.turns.map((t: { action: string }) => t.action)).toEqual(['Left', 'Left']);
    for (const turn of byScript.turns) {
      expect(turn.logProbs).toHaveLength(turn.responseIds.length);
      for (const logProb of turn.logProbs) expect(logProb).toBeLessThan(0);
    }
    // think_credit is false in the default config: the note's tokens get the KL term only
    expect(scored.stdout).toMatch(/inside <think> get no advantage \(think_credit: false\), only the KL term; log-probs of the loaded model/);
    expect(scored.stdout).toMatch(/^ +2 +\d+ +-\d+\.\d{4} +KL only +"/m);
  });

  test("--checkpoint plays a training checkpoint's actor with the config it was saved with", async () => {
    const dir = scratch();
    const trained = await agentic([
      'train',
      '--config-name',
      'bandit_grpo',
      'pretrain=agentic:nano',
      'max_steps=1',
      'save_steps=1',
      'eval_steps=0',
      'custom_envs.Bandit.max_tokens_per_step=6',
      'rollout_batch_size=8',
      'train_env_manager.num_env_groups=2',
      'train_env_manager.group_size=4',
      'val_batch_size=2',
      'val_env_manager.num_env_groups=2',
      'track_with=[jsonl]',
      `output_dir=${dir}`,
    ]);
    expect(trained.code).toBe(0);
    const checkpoint = join(dir, 'checkpoints', 'checkpoint-1');
    const out = join(dir, 'bandit.json');
    const { code, stdout, stderr } = await agentic(['play', 'Bandit', '--checkpoint', checkpoint, '--auto', '--out', out]);
    expect(code).toBe(0);
    expect(stderr).toContain(`checkpoint ${checkpoint} (step 1), with its saved config`);
    expect(lines(stdout)[0]).toBe(`playing Bandit (env bandit, trajectory-wise), seed 7; responses: model ${join(checkpoint, 'actor')}`);
    expect(readJson(out)[0]).toMatchObject({ tag: 'Bandit', seed: 7, logProbSource: 'sampled' });
    const words = replayWords(stderr);
    expect(words.slice(0, 2)).toEqual(['-c', join(checkpoint, 'config.yaml')]);
    const replay = await agentic(['render', ...words, `render_save_dir=${join(dir, 'render')}`]);
    expect(replay.code).toBe(0);
  });

  test("a user's own env file, played through a custom_envs entry play adds (and render replays)", async () => {
    const dir = scratch({
      'parity.ts': `import { defineEnv, parseAnswer, Rng, z, type Env } from 'agentic';
class Parity implements Env {
  private n = 0;
  reset(seed: number) {
    this.n = Rng.fromSeed(seed).intBetween(0, 100);
    return { observation: \`The number is \${this.n}.\`, info: { instruction: 'Say even or odd: <answer>even</answer>' } };
  }
  step(response: string) {
    const { action } = parseAnswer(response, { actions: ['even', 'odd'] });
    const right = action === (this.n % 2 ? 'odd' : 'even');
    return { observation: '', reward: right ? 1 : 0, terminated: action !== null, truncated: false, info: { action, metrics: { success: right, action_is_valid: action !== null } } };
  }
  render(mode: 'text' | 'rgb') { return mode === 'text' ? \`n = \${this.n}\` : null; }
  close() {}
  sampleRandomAction() { return '<answer>even</answer>'; }
}
export default defineEnv({ name: 'parity', description: 'Even or odd.', config: z.strictObject({}), env: Parity });
`,
    });
    const first = await agentic(['play', './parity.ts', 'seed=1', 'sequence_length=1024', '--policy', 'random', '--auto', '--out', 'first.json'], { cwd: dir });
    expect(first.code).toBe(0);
    const number = Number(/The number is (\d+)\./.exec(first.stdout)![1]);
    const answer = `<answer>${number % 2 ? 'odd' : 'even'}</answer>`;
    const { code, stdout, stderr } = await agentic(
      ['play', './parity.ts', 'seed=1', 'sequence_length=1024', 'custom_envs.parity.max_steps=1', '--script', '-', '--out', 'out.json'],
      { cwd: dir, stdin: `${answer}\n` },
    );
    expect(stderr).not.toContain('error');
    expect(code).toBe(0);
    expect(lines(stdout)[0]).toBe('playing parity (env ./parity.ts, trajectory-wise), seed 1; responses: script stdin');
    expect(stdout).toContain('score: 1 (success)');
    const words = replayWords(stderr);
    expect(words).toEqual([
      '--trajectories',
      'out.json',
      '+custom_envs.parity.env_type=./parity.ts',
      'seed=1',
      'sequence_length=1024',
      'custom_envs.parity.max_steps=1',
    ]);
    const replay = await agentic(['render', ...words, 'render_save_dir=render'], { cwd: dir });
    expect(replay.code).toBe(0);
    expect(existsSync(join(dir, 'render', 'episodes', '001_parity_seed1.txt'))).toBe(true);
  });

  test('a registered env by name gets a custom_envs entry of defaults; a prompt too long for sequence_length says how to go on', async () => {
    const { code, stdout } = await agentic(['play', 'frozen_lake', '--policy', 'random', '--auto', '--out', join(scratch(), 'fl.json')]);
    expect(code).toBe(0);
    expect(lines(stdout)[0]).toBe('playing frozen_lake (env frozen_lake, trajectory-wise), seed 42; responses: random');
    expect(stdout).toMatch(/the prompt fills sequence_length \(\d+ of 96 ids\): no room for a response \(to play on, raise it: sequence_length=1024\)/);
    expect(stdout).toContain('=== episode over after 0 turns: context_full');
  });
});

test("a response longer than the turn's token budget is cut there, as a model's would be", async () => {
  const long = `${'let me think about the board for a while '.repeat(3)}<answer>Left</answer>`;
  const { code, stdout } = await agentic(
    ['play', 'FrozenLake', 'seed=20', 'custom_envs.FrozenLake.max_steps=1', '--script', '-', '--out', join(scratch(), 'cut.json')],
    { stdin: `${long}\n` },
  );
  expect(code).toBe(0);
  expect(stdout).toMatch(/^note: the response is \d+ tokens; the turn allows 32, so the env gets the first 32$/m);
  expect(stdout).toContain('action: none found in the response (not valid)');
  expect(stdout).toContain('--- response tokens: 32,');
});

describe('choosePolicy and shellWord', () => {
  test('a person answers unless a model is named; flags that contradict are refused', () => {
    expect(choosePolicy({}, false)).toBe('human');
    expect(choosePolicy({}, true)).toBe('model');
    expect(choosePolicy({ human: true }, true)).toBe('human');
    expect(choosePolicy({ script: 'moves.txt' }, true)).toBe('human');
    expect(choosePolicy({ policy: 'random', auto: true }, false)).toBe('random');
    expect(() => choosePolicy({ human: true, policy: 'random' }, false)).toThrow('--human: a person answers, but --policy says random');
    expect(() => choosePolicy({ script: '' }, false)).toThrow("option '--script' needs a value");
  });

  test('shell words are quoted only when they must be', () => {
    expect(shellWord('seed=3')).toBe('seed=3');
    expect(shellWord('~custom_envs.X')).toBe("'~custom_envs.X'");
    expect(shellWord("+custom_envs.x.env_type='./a b.ts'")).toBe(`"+custom_envs.x.env_type='./a b.ts'"`);
    expect(shellWord(`it's "x"`)).toBe(`'it'\\''s "x"'`);
  });
});

describe('agentic play: bad input is one line and a non-zero exit', () => {
  test('input that ends mid-episode saves the turns played, without an ending, and exits 1', async () => {
    const dir = scratch({ 'two.txt': '<answer>Left</answer>\n<answer>Left</answer>\n' });
    const out = join(dir, 'partial.json');
    const { code, stderr } = await agentic(['play', 'FrozenLake', 'seed=20', '--script', join(dir, 'two.txt'), '--out', out]);
    expect(code).toBe(1);
    expect(lines(stderr)).toEqual([`error: the script ran out after 2 responses at turn 3, before the episode ended; saved the 2 turns played to ${out}`]);
    const [episode] = readJson(out);
    expect(episode.turns).toHaveLength(2);
    expect(episode).not.toHaveProperty('endReason');
    expect(episode).toMatchObject({ stopped: 'the responses ran out at turn 3', finalObservation: 'P__O\n_OO_\n____\n___G' });
  });

  test('an empty script from stdin ends before the first response', async () => {
    const out = join(scratch(), 'empty.json');
    const { code, stderr } = await agentic(['play', 'FrozenLake', '--script', '-', '--out', out], { stdin: '' });
    expect(code).toBe(1);
    expect(lines(stderr)).toEqual([`error: the script ran out after 0 responses at turn 1, before the episode ended; saved the 0 turns played to ${out}`]);
  });

  const scriptDir = scratch({ 'one.txt': '<answer>Left</answer>\n' });
  const script = join(scriptDir, 'one.txt');
  const cases: Array<[string, string[], string]> = [
    [
      'unknown env',
      ['play', 'Mars', '--script', script],
      "error: unknown env 'Mars': not a custom_envs tag of this config (FrozenLake, FrozenLakeTrain), a registered env (",
    ],
    ['a near miss', ['play', 'FrozenLak', '--script', script], "error: unknown env 'FrozenLak' (did you mean FrozenLake, FrozenLakeTrain or frozen_lake?)"],
    ['a missing env file', ['play', './nowhere.ts', '--script', script], 'error: ./nowhere.ts: no such plugin file or folder'],
    [
      'no terminal for a person',
      ['play', 'FrozenLake'],
      'error: stdin is not a terminal, so nobody can answer here; give the responses with --script FILE (or --script - to read them from stdin)',
    ],
    ['no terminal to press Enter', ['play', 'FrozenLake', '--policy', 'random'], 'error: stdin is not a terminal, so nobody can answer here; add --auto'],
    ['a missing script', ['play', 'FrozenLake', '--script', join(scriptDir, 'none.txt')], `error: --script ${join(scriptDir, 'none.txt')}: no such file`],
    ['a folder as script', ['play', 'FrozenLake', '--script', scriptDir], `error: --script ${scriptDir}: is a folder`],
    ['an unknown policy', ['play', 'FrozenLake', '--policy', 'smart'], "error: --policy: expected one of human, random, model, got 'smart'"],
    [
      'a script with a model policy',
      ['play', 'FrozenLake', '--policy', 'model', '--script', script],
      'error: --script: the script gives the responses, so it cannot go with --policy model',
    ],
    ['--auto for a person', ['play', 'FrozenLake', '--auto'], 'error: --auto: a person types each response'],
    ['an override first', ['play', 'seed=3'], "error: 'seed=3' is an override; name the env first"],
    ['no env', ['play'], 'error: Missing required positional argument: ENV'],
    ['an unwritable --out', ['play', 'FrozenLake', '--script', script, '--out', '/proc/nope/x.json'], 'error: --out /proc/nope/x.json: cannot write there'],
    ['a bad override', ['play', 'FrozenLake', '--script', script, 'seed=abc'], 'error: seed: expected integer'],
    ['an unknown flag', ['play', 'FrozenLake', '--speed', '3'], "error: unknown option '--speed' for 'agentic play'"],
  ];
  for (const [what, args, message] of cases) {
    test(what, async () => {
      const { code, stdout, stderr } = await agentic(args, { stdin: '' });
      expect(code).toBe(2);
      expect(lines(stderr)).toHaveLength(1);
      expect(stderr).toStartWith(message);
      expect(stdout).toBe('');
    });
  }
});

test('--help describes every flag', async () => {
  const { code, stdout } = await agentic(['play', '--help']);
  expect(code).toBe(0);
  for (const flag of ['--config', '--config-path', '--config-name', '--policy', '--human', '--script', '--auto', '--checkpoint', '--out', '--debug'])
    expect(stdout).toContain(flag);
  expect(stdout).toContain('\\n stands for a new line');
});

describe('agentic play --seat: a game of two seats', () => {
  const dir = scratch({ 'cells.txt': '[0]\n[1]\n[2]\n[3]\n[5]\n' });
  const out = join(dir, 'game.json');
  let run: Awaited<ReturnType<typeof agentic>>;
  beforeAll(async () => {
    run = await agentic(['play', 'TicTacToeVsMinimax', '--config-name', 'tic_tac_toe', '--seat', 'X', '--script', join(dir, 'cells.txt'), '--out', out]);
  });

  test('you play the seat named, the configured opponent the other; your seat is saved with the whole game, which render replays', async () => {
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('seats: O minimax, X script');
    expect(run.stdout).toContain('You are X, shown #; O is *.');
    const [game] = readJson(out);
    expect(game.seat).toMatchObject({ index: 1, names: ['O', 'X'], players: ['minimax', 'policy'] });
    // minimax never loses: X's return is -1 or 0
    expect(game.score).toBeLessThanOrEqual(0);
    expect(game.seat.moves.filter((m: { seat: number }) => m.seat === 1).map((m: { responseText: string }) => m.responseText)).toEqual(
      game.turns.map((t: { responseText: string }) => t.responseText),
    );
    const renderDir = join(dir, 'render');
    const replay = await agentic(['render', ...replayWords(run.stderr), `render_save_dir=${renderDir}`]);
    expect(replay.code).toBe(0);
    const [transcript] = readdirSync(join(renderDir, 'episodes')).filter((f) => f.endsWith('.txt'));
    expect(readFileSync(join(renderDir, 'episodes', transcript!), 'utf8')).toContain(`score ${game.score}`);
  });

  test('a seat the env does not have is one line and exit 2', async () => {
    const bad = await agentic([
      'play',
      'TicTacToeVsMinimax',
      '--config-name',
      'tic_tac_toe',
      '--seat',
      'Y',
      '--script',
      join(dir, 'cells.txt'),
      '--out',
      join(dir, 'bad.json'),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('error: --seat Y: env tic_tac_toe has seats O, X');
    expect(existsSync(join(dir, 'bad.json'))).toBe(false);
  });
});
