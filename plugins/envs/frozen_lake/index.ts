/**
 * FrozenLake as ROLL plays it: walk across a square lake to the goal without falling into a hole,
 * one move per turn (or up to max_actions_per_turn of them, ../_grid/moves.ts), the grid shown as text. Start and goal are placed at random on a map that is
 * always solvable; on slippery ice a move goes the intended way or to either side, a third each.
 * Reaching the goal pays 1 and ends the episode, a hole ends it with 0.
 */
import {
  actionPattern,
  defineEnv,
  envInstruction,
  type Env,
  type EpisodeDraw,
  type EvaluationHooks,
  type RenderMode,
  type ResetOptions,
  type ResetResult,
  type RgbFrame,
  Rng,
  type StepResult,
  type WarmStartHooks,
  z,
} from 'agentic';
import { gridInstruction } from '../_grid/instruction';
import { invalidActionStep } from '../_grid/invalid';
import { type MoveResult, movesMetric, movesPerTurnKeys, movesStep, parseMoves, playMoves, randomMovesResponse } from '../_grid/moves';
import { gridNotes, gridQuestions, type GridQuestionSpec } from '../_grid/questions';
import { responseFor } from '../_grid/response';
import { ACTIONS, generateLake, neighbour, shortestMove, type Action, type Lake } from './lake';
import { optimalSuccess } from './optimum';
import { lakePicture, lakeText, SYMBOLS } from './render';
import { isHeldOutMap, lakeEpisode, lakeOf } from './suite';

const Config = z.strictObject({
  size: z.int().min(2).max(32).default(4).describe('Side of the square lake, in cells.'),
  p: z.number().gt(0).max(1).default(0.8).describe('Probability that a cell is frozen (the rest are holes).'),
  is_slippery: z.boolean().default(true).describe('Whether a move may slip to either side of the intended direction (1/3 each way).'),
  max_steps: z.int().min(1).default(20).describe('Turns before the episode is truncated; invalid responses count.'),
  hold_out_maps: z
    .boolean()
    .default(false)
    .describe(
      'Never draw a held-out map (one map in eight, by a hash of its rows: the maps frozen_lake/v2 is drawn from). Training envs set it, so no seed trains on a map the suite scores.',
    ),
  format_penalty: z.number().max(0).default(0).describe('Reward of a response with no valid action (<= 0).'),
  action_pattern: actionPattern(),
  env_instruction: envInstruction(),
  ...movesPerTurnKeys(ACTIONS),
});
type FrozenLakeConfig = z.output<typeof Config>;

/** What the warm start's questions and notes name on the board (scripts/experiments/probe_frozen_lake.ts reads it too). */
export const BOARD: GridQuestionSpec = { player: ['P', 'X', '√'], things: [{ name: 'the goal', symbols: ['G'] }], hazards: { name: 'holes', symbols: ['O'] } };

function instruction(config: FrozenLakeConfig): string {
  return gridInstruction(
    config.env_instruction ??
      'You are crossing a frozen lake drawn as a grid. Walk from your position to the goal without stepping into a hole: ' +
        'falling into a hole ends the game. Walking into the edge of the grid leaves you where you are.' +
        (config.is_slippery ? ' The ice is slippery: a move can carry you to either side of the direction you chose.' : ''),
    SYMBOLS,
    ACTIONS,
    { max_actions_per_turn: config.max_actions_per_turn, action_sep: config.action_sep, examples: ['Right', 'Down'] },
  );
}

class FrozenLake implements Env, WarmStartHooks, EvaluationHooks {
  private lake: Lake | null = null;
  private player = 0;
  private turns = 0;
  private slips = Rng.fromSeed(0, 'frozen_lake', 'slip');
  private randomActions = Rng.fromSeed(0, 'frozen_lake', 'random-action');

  constructor(private readonly config: FrozenLakeConfig) {}

  reset(seed: number, _draw?: EpisodeDraw, options?: ResetOptions): ResetResult {
    // a suite's map replays as it is: size and p only shape the maps drawn by the seed
    this.lake = options?.episode ? lakeOf(options.episode) : this.drawLake(Rng.fromSeed(seed, 'frozen_lake', 'map'));
    this.slips = Rng.fromSeed(seed, 'frozen_lake', 'slip');
    this.randomActions = Rng.fromSeed(seed, 'frozen_lake', 'random-action');
    this.player = this.lake.start;
    this.turns = 0;
    return {
      observation: lakeText(this.lake, this.player),
      info: { instruction: instruction(this.config), episode: lakeEpisode(this.lake) },
    };
  }

  /** A lake drawn by `rng`; with hold_out_maps the same rng draws again past held-out maps, so a seed still gives one map. */
  private drawLake(rng: Rng): Lake {
    for (;;) {
      const lake = generateLake(this.config.size, this.config.p, rng);
      if (!(this.config.hold_out_maps && isHeldOutMap(lake))) return lake;
    }
  }

  step(response: string): StepResult {
    const lake = this.lake!;
    this.turns += 1;
    const outOfTurns = this.turns >= this.config.max_steps;
    const parsed = parseMoves(response, this.config, ACTIONS);
    if (parsed.moves.length === 0) {
      return invalidActionStep({
        observation: lakeText(lake, this.player),
        reward: this.config.format_penalty,
        formatPenalty: this.config.format_penalty,
        outOfTurns,
        turn: this.turns,
        effect: 'you stayed where you were',
        moreMetrics: movesMetric(this.config, 0),
      });
    }
    const turn = playMoves(parsed.moves, (move) => this.walk(move));
    return movesStep(this.config, {
      observation: lakeText(lake, this.player),
      parsed,
      turn,
      success: lake.tiles[this.player] === 'goal',
      formatPenalty: this.config.format_penalty,
      outOfTurns,
      number: this.turns,
    });
  }

  /** One move: a step the intended way (or, on slippery ice, perhaps to a side); the goal pays 1, the goal and a hole end the episode. */
  private walk(intended: Action): MoveResult {
    const lake = this.lake!;
    const taken = this.config.is_slippery ? this.slip(intended) : intended;
    const from = this.player;
    this.player = neighbour(lake.size, from, taken);
    const tile = lake.tiles[this.player]!;
    const moved = this.player !== from;
    const slipped = taken !== intended ? ` but slipped and went ${taken}` : '';
    const outcome = tile === 'goal' ? ' and reached the goal' : tile === 'hole' ? ' and fell into a hole' : moved ? '' : ', which left you where you were';
    return { reward: tile === 'goal' ? 1 : 0, ends: tile !== 'frozen', effective: moved, said: `tried to go ${intended}${slipped}${outcome}` };
  }

  /** Gym's slippery ice: the intended direction or one of its two perpendiculars, a third each. */
  private slip(intended: Action): Action {
    const id = ACTIONS.indexOf(intended);
    return ACTIONS[(id + this.slips.int(3) + 3) % 4]!;
  }

  /** The best chance of reaching the goal from here within the moves left: the caller's and this env's turn limit, whichever ends first. */
  optimalSuccess(maxSteps: number): number {
    const moves = Math.min(maxSteps, this.config.max_steps - this.turns);
    return optimalSuccess(this.lake!, this.player, moves, this.config.is_slippery);
  }

  render(mode: RenderMode): string | RgbFrame {
    return mode === 'text' ? lakeText(this.lake!, this.player) : lakePicture(this.lake!, this.player);
  }

  close(): void {}

  /** A random answer: one random move, or at max_actions_per_turn N > 1 one to N of them (randomMovesResponse). */
  sampleRandomAction(): string {
    return randomMovesResponse(this.randomActions, ACTIONS, this.config);
  }

  stateQuestions() {
    return gridQuestions(lakeText(this.lake!, this.player), BOARD);
  }

  stateNotes(): string {
    return gridNotes(lakeText(this.lake!, this.player), BOARD);
  }

  /** The first move of a shortest walk to the goal around the holes (on slippery ice, the move intended). */
  solutionAction(): string | null {
    const move = shortestMove(this.lake!, this.player);
    return move === null ? null : responseFor(move, this.config.action_pattern, ACTIONS);
  }
}

export default defineEnv({
  name: 'frozen_lake',
  description: 'FrozenLake: walk to the goal across a grid without falling into a hole (random, always solvable maps).',
  config: Config,
  env: FrozenLake,
});
