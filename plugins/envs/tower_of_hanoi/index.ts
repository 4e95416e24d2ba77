/**
 * GEM's TowerofHanoi (game:TowerofHanoi-v0): move the stack of disks from tower A to tower C, one
 * top disk a turn, never a larger disk on a smaller one; a move is `\boxed{A C}`. There is no
 * randomness: every episode starts from the same stack. GEM's rules, texts and rewards (Apache-2.0,
 * gem/envs/game_env/tower_of_hanoi.py); the code is ours.
 */
import { defineEnv, type Env, type ResetResult, Rng, type StepResult, z } from 'agentic';
import { lastBoxed } from '../_gem/boxed';
import { LanguageGameReward } from '../_gem/rewards';

const Config = z.strictObject({
  num_disks: z.number().int().min(1).max(20).default(3).describe('Disks on tower A at the start.'),
  max_turns: z.number().int().min(1).default(100).describe('Turns before the episode ends; the reward of that last turn is the share of disks on tower C.'),
});
type HanoiConfig = z.output<typeof Config>;

const TOWERS = ['A', 'B', 'C'] as const;
type Tower = (typeof TOWERS)[number];
/** Each tower's disks bottom to top (disk 1 is the smallest). */
type Towers = Record<Tower, number[]>;
type Move = { from: Tower; to: Tower };

class TowerOfHanoi implements Env {
  private towers: Towers = { A: [], B: [], C: [] };
  private turn = 0;
  private randomActions = Rng.fromSeed(0, 'tower_of_hanoi', 'random-action');

  constructor(private readonly config: HanoiConfig) {}

  reset(seed: number): ResetResult {
    this.towers = { A: Array.from({ length: this.config.num_disks }, (_, i) => this.config.num_disks - i), B: [], C: [] };
    this.randomActions = Rng.fromSeed(seed, 'tower_of_hanoi', 'random-action');
    this.turn = 0;
    return { observation: this.instructions(), info: { instruction: '', suffix: this.suffix() } };
  }

  step(response: string): StepResult {
    this.turn++;
    const boxed = lastBoxed(response, /([ABCabc])\s*,?\s*([ABCabc])/);
    if (boxed === null) {
      const end = { terminated: true, truncated: this.turn === this.config.max_turns };
      return this.result('You did not provide a valid action.', LanguageGameReward.formatError, null, false, end);
    }
    const move = { from: boxed[1]!.toUpperCase() as Tower, to: boxed[2]!.toUpperCase() as Tower };
    const refusal = this.refusal(move);
    let feedback: string;
    if (refusal === null) {
      const disk = this.towers[move.from].pop()!;
      this.towers[move.to].push(disk);
      if (this.solved()) {
        return this.result('Congratulations! You solved the Tower of Hanoi Puzzle', LanguageGameReward.success, move, true, {
          terminated: true,
          truncated: false,
        });
      }
      feedback = `At turn ${this.turn}, you moved disk ${disk} from tower ${move.from} to tower ${move.to}.`;
    } else {
      feedback = `At turn ${this.turn}, ${refusal}`;
    }
    if (this.turn >= this.config.max_turns) {
      const onTarget = this.towers.C.length / this.config.num_disks;
      return this.result('You have reached the maximum number of turns.', onTarget, move, refusal === null, { terminated: true, truncated: true });
    }
    const reward = refusal === null ? LanguageGameReward.internalStep : LanguageGameReward.invalidAction;
    return this.result(feedback, reward, move, refusal === null, { terminated: false, truncated: false });
  }

  render(mode: 'text' | 'rgb'): string | null {
    return mode === 'text' ? this.towersText() : null;
  }

  close(): void {}

  /** A move the rules allow, drawn uniformly (GEM's env has no random action of its own). */
  sampleRandomAction(): string {
    const legal = TOWERS.flatMap((from) => TOWERS.map((to) => ({ from, to }))).filter((move) => this.refusal(move) === null);
    const move = this.randomActions.choice(legal);
    return `\\boxed{${move.from} ${move.to}}`;
  }

  /** Why the rules refuse `move` (GEM's words), or null when they allow it. */
  private refusal({ from, to }: Move): string | null {
    const source = this.towers[from].at(-1);
    const target = this.towers[to].at(-1);
    if (source === undefined) return `you tried to move from tower ${from}, which is empty.`;
    if (target !== undefined && source > target) {
      return `you tried to move from tower ${from} to tower ${to}, but the top disk on tower ${from} is larger than the top disk on tower ${to}.`;
    }
    return null;
  }

  private solved(): boolean {
    return this.towers.C.length === this.config.num_disks;
  }

  private result(observation: string, reward: number, move: Move | null, moved: boolean, end: { terminated: boolean; truncated: boolean }): StepResult {
    return {
      observation,
      reward,
      ...end,
      info: {
        action: move && `${move.from} ${move.to}`,
        suffix: this.suffix(),
        metrics: {
          success: this.solved(),
          action_is_valid: move !== null,
          action_is_effective: moved,
          disks_on_target: this.towers.C.length / this.config.num_disks,
        },
        metricsAgg: { success: 'last', disks_on_target: 'last' },
      },
    };
  }

  private instructions(): string {
    return (
      `You are playing Tower of Hanoi with ${this.config.num_disks} disks.\n` +
      'You have to move the disks from tower A to tower C.\n' +
      "To move a disk, type the source tower and the target tower (e.g., '\\boxed{A C}').\n" +
      'Note that you can only move the top disk of a tower, and that a bigger disk cannot be placed on a smaller disk.\n' +
      'As you play, the history of your moves will be displayed.\n'
    );
  }

  private suffix(): string {
    return `Here is the current state of the tower of hanoi:\n${this.towersText()}\nEnter your move.`;
  }

  /** Each tower as GEM prints it, a Python list bottom to top: `A: [3, 2, 1]`. */
  private towersText(): string {
    return TOWERS.map((tower) => `${tower}: [${this.towers[tower].join(', ')}]\n`).join('');
  }
}

export default defineEnv({
  name: 'tower_of_hanoi',
  description: "GEM's TowerofHanoi: move the disks from tower A to tower C, a move a turn in \\boxed{A C}.",
  config: Config,
  env: TowerOfHanoi,
});
