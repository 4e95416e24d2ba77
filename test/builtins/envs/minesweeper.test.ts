import { describe, expect, test } from 'bun:test';
import minesweeper from '../../../plugins/envs/minesweeper';
import { Board } from '../../../plugins/envs/minesweeper/board';
import { checkEnv } from '../../../src/cli/plugins_check';
import { ConfigError } from '../../../src/errors';
import { Rng } from '../../../src/engine/rng';
import { PluginHost } from '../../../src/host/plugin_host';
import type { Env, ResetResult, StepResult } from '../../../src/sdk/types';

const make = (config: Record<string, unknown> = {}) => new minesweeper.env(minesweeper.config.parse(config), new PluginHost().envContext()) as Env;
const step = (env: Env, response: string) => env.step(response) as StepResult;
const board = (env: Env) => env.render('text') as string;

describe('minesweeper env', () => {
  test('mines are laid after the first reveal, never in the 3x3 block around it, num_mines of them', () => {
    for (let seed = 0; seed < 20; seed++) {
      const b = new Board(6, 7, 12);
      const [row, col] = [seed % 6, seed % 7];
      b.layMines(row, col, Rng.fromSeed(seed, 'test'));
      let mines = 0;
      for (let r = 0; r < 6; r++) {
        for (let c = 0; c < 7; c++) {
          if (!b.isMine(r, c)) continue;
          mines++;
          expect(Math.abs(r - row) > 1 || Math.abs(c - col) > 1).toBe(true);
        }
      }
      expect(mines).toBe(12);
    }
  });

  test('the same seed and the same first reveal give the same board; seeds differ', () => {
    const after = (seed: number) => {
      const env = make();
      env.reset(seed);
      step(env, '\\boxed{reveal 4 4}');
      return board(env);
    };
    expect(after(9)).toBe(after(9));
    expect(new Set(Array.from({ length: 10 }, (_, seed) => after(seed))).size).toBeGreaterThan(8);
  });

  test("reset shows GEM's instruction; the board comes in GEM's suffix, after reset and every step", () => {
    const env = make({ rows: 2, cols: 3, num_mines: 0 });
    const reset = env.reset(0) as ResetResult;
    expect(reset.observation).toStartWith(
      'You are playing the Minesweeper game.\nThe objective of the game is to reveal all cells that do not contain mines.\n',
    );
    expect(reset.observation).toMatch(/- \\boxed\{reveal (\d) (\d)\} to reveal the cell in Row \1, Column \2\.\n/);
    expect(reset.observation).toEndWith('Be mindful not to choose revealed or flagged cells.\n');
    expect(reset.info).toEqual({
      instruction: '',
      suffix: 'Here is the current board layout:\n    0  1  2\n 0  .  .  . \n 1  .  .  . \n\nEnter your guess.',
    });
    expect(step(env, '\\boxed{flag 1 2}').info.suffix).toBe('Here is the current board layout:\n    0  1  2\n 0  .  .  . \n 1  .  .  F \n\nEnter your guess.');
  });

  test('a board with no mines is cleared by the first reveal: reward 1, success', () => {
    const env = make({ rows: 3, cols: 3, num_mines: 0 });
    env.reset(1);
    const won = step(env, 'so \\boxed{Reveal 1 1}');
    expect(won).toMatchObject({
      observation: 'Congratulations! You have successfully cleared the Minesweeper board.',
      reward: 1,
      terminated: true,
      truncated: false,
    });
    expect(won.info.metrics).toEqual({ success: true, action_is_valid: true, action_is_effective: true, hit_mine: false });
    expect(won.info.action).toBe('reveal 1 1');
  });

  test('a winning game: reveals pay their share of the safe cells, and the mines must be flagged before the last reveal', () => {
    // One row of five, one mine: the first reveal at the left end floods up to the cell next to the mine.
    for (let seed = 0; seed < 10; seed++) {
      const env = make({ rows: 1, cols: 5, num_mines: 1 });
      env.reset(seed);
      const first = step(env, '\\boxed{reveal 0 0}');
      const cells = board(env).split('\n')[1]!.trim().split(/\s+/).slice(1);
      const mine = cells.indexOf('1') + 1;
      expect(first.reward).toBe(mine / 4);
      if (mine === 4) continue; // every safe cell is out and the mine unflagged: as in GEM, no reveal is left to win with
      expect(first.observation).toBe('At turn 1, you successfully revealed cell (0, 0).');
      expect(step(env, `\\boxed{flag 0 ${mine}}`)).toMatchObject({ reward: 0, observation: `At turn 2, you added a flag on cell (0, ${mine}).` });
      let total = first.reward;
      for (let col = mine + 1; col < 5; col++) {
        const result = step(env, `\\boxed{reveal 0 ${col}}`);
        total += result.reward;
        if (col === 4) expect(result).toMatchObject({ terminated: true, truncated: false, info: { metrics: { success: true } } });
      }
      expect(total).toBeCloseTo(1);
      return;
    }
    throw new Error('no seed put the mine where the game can be won');
  });

  test('revealing a mine ends the game with 0; flagging does not protect a mine', () => {
    // One row of five, two mines: a first reveal in the middle leaves room for them only at the ends.
    const env = make({ rows: 1, cols: 5, num_mines: 2 });
    env.reset(0);
    expect(step(env, '\\boxed{reveal 0 2}')).toMatchObject({ reward: 1, terminated: false });
    expect(board(env).split('\n')[1]).toBe(' 0  .  1  0  1  . ');
    step(env, '\\boxed{flag 0 0}');
    const boom = step(env, '\\boxed{reveal 0 0}');
    expect(boom).toMatchObject({ observation: 'Game over! You hit a mine at (0, 0)', reward: 0, terminated: true, truncated: false });
    expect(boom.info.metrics).toEqual({ success: false, action_is_valid: true, action_is_effective: true, hit_mine: true });
  });

  test('a response with no boxed move pays -0.1 and ends the episode', () => {
    const env = make();
    env.reset(2);
    const bad = step(env, '\\boxed{reveal 1,2}');
    expect(bad).toMatchObject({ observation: 'At turn 1, you did not provide a valid guess.', reward: -0.1, terminated: true, truncated: false });
    expect(bad.info).toMatchObject({ action: null, metrics: { action_is_valid: false, action_is_effective: false } });
  });

  test('a move the rules refuse pays 0 and uses up the turn', () => {
    const env = make({ rows: 1, cols: 5, num_mines: 2 });
    env.reset(0);
    const off = step(env, '\\boxed{reveal 0 5}');
    expect(off).toMatchObject({ reward: 0, terminated: false, observation: 'At turn 1, you chose cell (0, 5), which is outside the bounds of the grid.' });
    expect(off.info.metrics).toMatchObject({ action_is_valid: true, action_is_effective: false });
    step(env, '\\boxed{reveal 0 2}');
    expect(step(env, '\\boxed{reveal 0 1}').observation).toBe('At turn 3, you chose to reveal cell (0, 1), which has already been revealed.');
    expect(step(env, '\\boxed{flag 0 1}').observation).toBe('At turn 4, you chose to flag cell (0, 1), which has already been revealed.');
    const dig = step(env, '\\boxed{dig 0 3}');
    expect(dig.observation).toBe("At turn 5, you chose an invalid action 'dig'. Valid actions are 'reveal' or 'flag'.");
    expect(dig.info.metrics).toMatchObject({ action_is_valid: true, action_is_effective: false });
    expect(step(env, '\\boxed{flag 0 4}').observation).toBe('At turn 6, you added a flag on cell (0, 4).');
    expect(step(env, '\\boxed{flag 0 4}').observation).toBe('At turn 7, you removed a flag on cell (0, 4).');
  });

  test('max_turns ends the episode, terminated and truncated as GEM sets them', () => {
    const env = make({ max_turns: 2 });
    env.reset(3);
    expect(step(env, '\\boxed{flag 0 0}')).toMatchObject({ terminated: false, truncated: false });
    expect(step(env, '\\boxed{flag 0 0}')).toMatchObject({ observation: 'You have reached the maximum number of turns.', terminated: true, truncated: true });
  });

  test('rows, cols and num_mines shape the board; too many mines are refused in one line', async () => {
    const env = make({ rows: 4, cols: 9, num_mines: 5 });
    env.reset(0);
    expect(board(env).split('\n')).toHaveLength(4 + 2);
    expect(board(env).split('\n')[0]).toBe('    0  1  2  3  4  5  6  7  8');
    const context = new PluginHost().envContext();
    await expect(checkEnv(minesweeper, { rows: 3, cols: 4, num_mines: 4 }, { context })).rejects.toThrow(
      new ConfigError(
        "env 'minesweeper': env_config.num_mines: a 3x4 board has room for 3 mines outside the 3x3 block kept clear around the first reveal; got 4",
      ),
    );
    await expect(checkEnv(minesweeper, { size: 8 }, { context })).rejects.toThrow(/env_config\.size: unknown key/);
  });

  test('random actions are moves the rules allow', () => {
    for (let seed = 0; seed < 10; seed++) {
      const env = make({ rows: 4, cols: 4, num_mines: 2, max_turns: 30 });
      env.reset(seed);
      for (let i = 0; i < 30; i++) {
        const action = env.sampleRandomAction();
        expect(action).toMatch(/^\\boxed\{(reveal|flag) [0-3] [0-3]\}$/);
        const result = step(env, action);
        expect(result.info.metrics.action_is_effective).toBe(true);
        if (result.terminated) break;
      }
    }
  });

  test("ROLL's id game:Minesweeper-v0 is this env, and ROLL's env_config fits it", async () => {
    const plugin = await new PluginHost().resolveEnv('game:Minesweeper-v0');
    expect(plugin.name).toBe('minesweeper');
    expect(plugin.config.parse({ rows: 8, cols: 8, num_mines: 10, max_turns: 10 })).toEqual({ rows: 8, cols: 8, num_mines: 10, max_turns: 10 });
  });
});
