import { describe, expect, test } from 'bun:test';
import towerOfHanoi from '../../../plugins/envs/tower_of_hanoi';
import { makeEnv, resetOf, resolvedName, stepOf } from './gem_games';

const make = (config: Record<string, unknown> = {}) => makeEnv(towerOfHanoi, config);

/** The classic solution: n disks from `from` to `to` by way of `via`. */
function hanoi(n: number, from = 'A', to = 'C', via = 'B'): string[] {
  return n === 0 ? [] : [...hanoi(n - 1, from, via, to), `${from} ${to}`, ...hanoi(n - 1, via, to, from)];
}

describe('tower_of_hanoi env (GEM TowerofHanoi)', () => {
  test('every seed starts from the same stack on A; the instruction is the observation, the towers the suffix', () => {
    const env = make();
    const reset = resetOf(env, 1);
    expect(reset).toEqual(resetOf(make(), 99));
    expect(reset.info.instruction).toBe('');
    expect(reset.observation).toStartWith('You are playing Tower of Hanoi with 3 disks.\n');
    expect(reset.info.suffix).toBe('Here is the current state of the tower of hanoi:\nA: [3, 2, 1]\nB: []\nC: []\n\nEnter your move.');
  });

  test('the classic solution wins with reward 1; earlier moves pay 0', () => {
    const env = make({ num_disks: 3 });
    resetOf(env, 0);
    const steps = hanoi(3).map((move, i) => stepOf(env, i % 2 === 0 ? `\\boxed{${move}}` : `\\boxed{${move.toLowerCase().replace(' ', ',')}}`));
    expect(steps).toHaveLength(7);
    expect(steps.slice(0, -1).every((s) => s.reward === 0 && !s.terminated)).toBe(true);
    expect(steps[0]!.observation).toBe('At turn 1, you moved disk 1 from tower A to tower C.');
    expect(steps.at(-1)).toMatchObject({ observation: 'Congratulations! You solved the Tower of Hanoi Puzzle', reward: 1, terminated: true, truncated: false });
    expect(steps.at(-1)!.info.metrics).toMatchObject({ success: true, action_is_valid: true, disks_on_target: 1 });
    expect(env.render('text')).toBe('A: []\nB: []\nC: [3, 2, 1]\n');
  });

  test('a response without a boxed move is a format error: -0.1, and the episode ends', () => {
    const env = make();
    resetOf(env, 0);
    const step = stepOf(env, 'A to C');
    expect(step).toMatchObject({ observation: 'You did not provide a valid action.', reward: -0.1, terminated: true, truncated: false });
    expect(step.info.metrics).toMatchObject({ action_is_valid: false, success: false });
  });

  test('moves the rules refuse pay 0 and change nothing; the turn limit pays the share of disks on C', () => {
    const env = make({ num_disks: 2, max_turns: 3 });
    resetOf(env, 0);
    const empty = stepOf(env, '\\boxed{B C}');
    expect(empty).toMatchObject({ observation: 'At turn 1, you tried to move from tower B, which is empty.', reward: 0, terminated: false });
    expect(empty.info.metrics).toMatchObject({ action_is_valid: true, action_is_effective: false });
    expect(stepOf(env, '\\boxed{A C}').reward).toBe(0);
    const larger = stepOf(env, '\\boxed{A C}');
    expect(larger.observation).toBe('You have reached the maximum number of turns.');
    expect(larger).toMatchObject({ reward: 0.5, terminated: true, truncated: true });
    expect(env.render('text')).toBe('A: [2]\nB: []\nC: [1]\n');
    const refused = make({ num_disks: 2 });
    resetOf(refused, 0);
    stepOf(refused, '\\boxed{A C}');
    expect(stepOf(refused, '\\boxed{A C}').observation).toBe(
      'At turn 2, you tried to move from tower A to tower C, but the top disk on tower A is larger than the top disk on tower C.',
    );
  });

  test('num_disks and max_turns are honoured; bad keys are refused; the GEM id resolves', async () => {
    const env = make({ num_disks: 4, max_turns: 1 });
    expect(resetOf(env, 0).info.suffix).toContain('A: [4, 3, 2, 1]');
    expect(stepOf(env, '\\boxed{A B}')).toMatchObject({ reward: 0, terminated: true, truncated: true });
    expect(towerOfHanoi.config.safeParse({ num_disks: 0 }).success).toBe(false);
    expect(towerOfHanoi.config.safeParse({ disks: 3 }).success).toBe(false);
    expect(await resolvedName('game:TowerofHanoi-v0')).toBe('tower_of_hanoi');
  });

  test('random actions are moves the rules allow, drawn from the seed', () => {
    const env = make({ max_turns: 1000 });
    const play = (seed: number) => {
      env.reset(seed);
      const actions: string[] = [];
      for (let ended = false; !ended && actions.length < 30; ) {
        actions.push(env.sampleRandomAction());
        const step = stepOf(env, actions.at(-1)!);
        expect(step.info.metrics.action_is_effective).toBe(true);
        ended = step.terminated;
      }
      return actions;
    };
    expect(play(3)).toEqual(play(3));
    expect(new Set(Array.from({ length: 8 }, (_, s) => play(s).join())).size).toBeGreaterThan(1);
  });
});
