/**
 * GEM's TowerofHanoi (game:TowerofHanoi-v0): move the stack of disks from tower A to tower C, one
 * top disk a turn, never a larger disk on a smaller one; a move is `\boxed{A C}`. There is no
 * randomness: every episode starts from the same stack. GEM's rules, texts and rewards (Apache-2.0,
 * gem/envs/game_env/tower_of_hanoi.py); the code is ours.
 */
import { defineEnv, type Env, type ResetResult, Rng, type StepResult, z } from 'agentic';
import { lastBoxed } from '../_gem/boxed';
import { formatError, gameStep, type GameTurn, refused } from '../_gem/game_step';
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
    const played = this.play(response);
    return gameStep(played, { turn: this.turn, maxTurns: this.config.max_turns, suffix: this.suffix(), metrics: { disks_on_target: this.disksOnTarget() } });
  }

  /** The share of the disks on tower C. */
  private disksOnTarget(): number {
    return this.towers.C.length / this.config.num_disks;
  }

  private play(response: string): GameTurn {
    const boxed = lastBoxed(response, /([ABCabc])\s*,?\s*([ABCabc])/);
    if (boxed === null) return formatError('You did not provide a valid action.');
    const move = { from: boxed[1]!.toUpperCase() as Tower, to: boxed[2]!.toUpperCase() as Tower };
    const action = `${move.from} ${move.to}`;
    const refusal = this.refusal(move);
    const turn = refusal === null ? this.moveDisk(move) : refused(`At turn ${this.turn}, ${refusal}`, action);
    // GEM's last turn pays the share of disks on tower C instead of its own reward, unless it wins.
    return this.turn >= this.config.max_turns && turn.outcome === undefined ? { ...turn, reward: this.disksOnTarget() } : turn;
  }

  /** Moves the top disk of `from` onto `to`, a move the rules allow. */
  private moveDisk({ from, to }: Move): GameTurn {
    const disk = this.towers[from].pop()!;
    this.towers[to].push(disk);
    const action = `${from} ${to}`;
    if (this.solved()) {
      return { feedback: 'Congratulations! You solved the Tower of Hanoi Puzzle', reward: LanguageGameReward.success, action, effective: true, outcome: 'won' };
    }
    const feedback = `At turn ${this.turn}, you moved disk ${disk} from tower ${from} to tower ${to}.`;
    return { feedback, reward: LanguageGameReward.internalStep, action, effective: true };
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
