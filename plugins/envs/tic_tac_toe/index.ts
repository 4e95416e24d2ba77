/**
 * TicTacToe for two seats, as TextArena's TicTacToe-v0 plays it (board.ts names the source): seat
 * O (player 0) moves first, seat X second; a move is a cell in brackets, `[4]`. The first bad move
 * of a turn (no cell, a cell outside 0-8, a taken cell) only costs a retry, as TextArena's error
 * allowance of 1 does; a second in a row loses the game. Win +1 and loss -1, a draw 0 each, and
 * nothing else: zero-sum, with no format penalty (TextArena gives none).
 *
 * Opponents: random (a random free cell) and minimax (an optimal move, drawn at random among the
 * optimal ones by the env's seeded stream, so it never loses and still varies its games). The
 * solution hook gives minimax's first optimal move: an honest solver, for a base of worked games.
 * The notes hook (stateNotes) reads out where each seat would complete a line.
 * `opening_moves` starts each game from that many random moves (seeded; or a count drawn in a
 * range, game by game), and a suite's episode
 * `{board: "O...X...."}` replays a given position.
 */
import {
  defineSeatedEnv,
  type EpisodeDraw,
  type OpponentHooks,
  type RenderMode,
  type ResetOptions,
  type RgbFrame,
  Rng,
  type SeatedEnv,
  type SeatedResetResult,
  type SeatedStepResult,
  type WarmStartHooks,
  z,
} from 'agentic';
import { errorAllowance, gameResult, invalidMoveMessage, openingLength, openingMoves, RETRY_NOTE } from '../_textarena/two_player';
import {
  type Board,
  boardFromString,
  boardString,
  boardText,
  completingCells,
  emptyBoard,
  isFull,
  legalMoves,
  type Mark,
  PLAYER_MARKS,
  parseCell,
  play,
  toMove,
  winner,
} from './board';
import { minimaxCell } from './minimax';
import { ticTacToePicture } from './render';

const Config = z.strictObject({
  error_allowance: errorAllowance(),
  prompt_style: z
    .enum(['textarena', 'compact'])
    .default('textarena')
    .describe(
      "textarena: TextArena's own texts (its instruction, the board with its separators, the list of available moves; about 300 tokens a turn). compact: the same game told in few words for small policies, the board as the seat to move sees it: its own marks #, the other's *, a free cell by its number, one token a cell ('01*' / '3#5' / '678'); about 45 tokens.",
    ),
  opening_moves: openingMoves(4),
});
type TicTacToeConfig = z.output<typeof Config>;

/** The compact board's marks: the seat to move's own, and the other seat's. */
const OWN_MARK = '#';
const OTHER_MARK = '*';

/**
 * TextArena's prompt of player `seat`, or its compact form. The compact one holds no cell number
 * (the board's free cells are the only digits a compact prompt shows) and names the marks once.
 */
function seatInstruction(seat: number, style: TicTacToeConfig['prompt_style']): string {
  const mine = PLAYER_MARKS[seat]!;
  const theirs = PLAYER_MARKS[1 - seat]!;
  if (style === 'compact') return `You are ${mine}, shown ${OWN_MARK}; ${theirs} is ${OTHER_MARK}. Three in a row wins. Answer with a free cell in brackets.`;
  return [
    `You are Player ${seat} in Tic Tac Toe.`,
    'Your goal is to win three in a row (horizontally, vertically, or diagonally) on the board.',
    'On your turn, you should select the square number (0-8) you want to put your mark in next.',
    "For example, '[4]' places your mark in the center cell of the board.",
    '',
    `As Player ${seat}, you will be '${mine}', while your opponent is '${theirs}'.`,
  ].join('\n');
}

/**
 * What seat `viewer` sees of the board: TextArena's board observation, or (compact) three lines of
 * one token a cell, the viewer's marks #, the other's *, a free cell its number. Seen from the seat
 * to move, as a game-playing network's input planes are (the mover's stones, the opponent's): both
 * seats' positions read alike, so what a policy learns as one seat serves the other.
 */
function boardObservation(board: Board, style: TicTacToeConfig['prompt_style'], viewer: number): string {
  if (style === 'compact') {
    const shown = (cell: number) => (board[cell] === null ? String(cell) : board[cell] === PLAYER_MARKS[viewer] ? OWN_MARK : OTHER_MARK);
    return [0, 3, 6].map((row) => [0, 1, 2].map((col) => shown(row + col)).join('')).join('\n');
  }
  const moves = legalMoves(board)
    .map((cell) => `'[${cell}]'`)
    .join(', ');
  return `Current Board:\n\n${boardText(board)}\n\nAvailable Moves: ${moves}`;
}

/**
 * The notes on a position for seat `mover`: for it and then the other seat, the free cells where
 * its mark would complete three in a row, `-` where none, in the marks its prompt shows (compact:
 * `#2 *68`, its own # first; textarena: `O2 X68`). A reading of the board, as FrozenLake's notes
 * name the adjacent holes; which cell to take it leaves to the policy.
 */
export function lineNotes(board: Board, mover: number, style: TicTacToeConfig['prompt_style']): string {
  return [mover, 1 - mover]
    .map((seat) => {
      const cells = completingCells(board, PLAYER_MARKS[seat]!).join('');
      const shown = style === 'compact' ? (seat === mover ? OWN_MARK : OTHER_MARK) : PLAYER_MARKS[seat];
      return `${shown}${cells || '-'}`;
    })
    .join(' ');
}

const seatOf = (mark: Mark) => PLAYER_MARKS.indexOf(mark as (typeof PLAYER_MARKS)[number]);

/** Why a reply is not a move on `board` (TextArena's three reasons), or null. */
function badMove(board: Board, cell: number | null): string | null {
  if (cell === null) return 'The submitted move does not follow the correct format.';
  if (cell < 0 || cell > 8) return `${cell}. Must be between 0 and 8.`;
  if (board[cell] !== null) return `cell ${cell} is already occupied.`;
  return null;
}

class TicTacToe implements SeatedEnv, OpponentHooks, WarmStartHooks {
  private board: Board = emptyBoard();
  /** Bad moves in a row of the seat to move. */
  private errors = 0;
  private randomMoves = Rng.fromSeed(0, 'tic_tac_toe', 'random-move');
  private minimaxChoices = Rng.fromSeed(0, 'tic_tac_toe', 'minimax');

  constructor(private readonly config: TicTacToeConfig) {}

  reset(seed: number, _draw?: EpisodeDraw, options?: ResetOptions): SeatedResetResult {
    this.board = options?.episode ? positionOf(options.episode) : this.opening(Rng.fromSeed(seed, 'tic_tac_toe', 'opening'));
    this.errors = 0;
    this.randomMoves = Rng.fromSeed(seed, 'tic_tac_toe', 'random-move');
    this.minimaxChoices = Rng.fromSeed(seed, 'tic_tac_toe', 'minimax');
    const instructions = PLAYER_MARKS.map((_, seat) => seatInstruction(seat, this.config.prompt_style));
    const seat = this.seatToMove;
    return {
      observation: boardObservation(this.board, this.config.prompt_style, seat),
      info: { instruction: instructions[seat]!, episode: { board: boardString(this.board) } },
      seat,
      instructions,
    };
  }

  /** `opening_moves` random moves from the empty board (at most 4), so none ends the game. */
  private opening(rng: Rng): Board {
    let board = emptyBoard();
    const length = openingLength(this.config.opening_moves, rng);
    for (let i = 0; i < length; i++) board = play(board, rng.choice(legalMoves(board)), toMove(board));
    return board;
  }

  private get seatToMove(): number {
    return seatOf(toMove(this.board));
  }

  step(response: string): SeatedStepResult {
    const mover = this.seatToMove;
    const cell = parseCell(response);
    const problem = badMove(this.board, cell);
    if (problem) return this.badMove(mover, problem);
    this.errors = 0;
    this.board = play(this.board, cell!, PLAYER_MARKS[mover]!);
    const placed = `Player ${mover} placed their symbol (${PLAYER_MARKS[mover]}) in cell ${cell}.`;
    const valid = { metrics: { action_is_valid: true }, action: `[${cell}]`, actionDesc: placed };
    if (winner(this.board) !== null) {
      return this.ended(`${placed}\nPlayer ${mover} has won!`, mover, mover, valid);
    }
    if (isFull(this.board)) return this.ended(`${placed}\nThe game is a draw!`, mover, null, valid);
    const next = this.seatToMove;
    return {
      // compact: the board alone shows the move
      observation:
        this.config.prompt_style === 'compact'
          ? boardObservation(this.board, 'compact', next)
          : `${placed}\n${boardObservation(this.board, 'textarena', next)}`,
      reward: 0,
      terminated: false,
      truncated: false,
      info: valid,
      seat: next,
      rewards: [0, 0],
    };
  }

  /** A bad move: a retry while the allowance lasts (the same seat moves again), else the game lost. */
  private badMove(mover: number, reason: string): SeatedStepResult {
    const info = { metrics: { action_is_valid: false }, action: null, actionDesc: `an invalid move: ${reason}` };
    this.errors += 1;
    if (this.errors > this.config.error_allowance) {
      return this.ended(`${invalidMoveMessage(mover, reason)}\nPlayer ${1 - mover} has won!`, mover, 1 - mover, info);
    }
    const retry = this.config.prompt_style === 'compact' ? 'Not a free cell; once more.' : `${invalidMoveMessage(mover, reason)} ${RETRY_NOTE}`;
    return {
      observation: `${retry}\n${boardObservation(this.board, this.config.prompt_style, mover)}`,
      reward: 0,
      terminated: false,
      truncated: false,
      info,
      seat: mover,
      rewards: [0, 0],
    };
  }

  /** The step of seat `mover` that ends the game, won by seat `winnerSeat` (+1, the other -1) or drawn (null). */
  private ended(observation: string, mover: number, winnerSeat: number | null, info: SeatedStepResult['info']): SeatedStepResult {
    const { rewards, outcome } = gameResult(PLAYER_MARKS.length, winnerSeat);
    return {
      observation: `${observation}\n${boardObservation(this.board, this.config.prompt_style, mover)}`,
      reward: rewards[mover]!,
      terminated: true,
      truncated: false,
      info,
      seat: mover,
      rewards,
      outcome,
    };
  }

  render(mode: RenderMode): string | RgbFrame {
    return mode === 'text' ? boardText(this.board) : ticTacToePicture(this.board);
  }

  close(): void {}

  /** A random free cell for the seat to move. */
  sampleRandomAction(): string {
    return `[${this.randomMoves.choice(legalMoves(this.board))}]`;
  }

  /** Opponent `name`: 'minimax' plays an optimal cell, drawn among the optimal ones by the env's seeded stream. */
  opponentAction(name: string): string {
    if (name !== 'minimax') throw new Error(`tic_tac_toe has no opponent '${name}' (random, minimax)`);
    return `[${minimaxCell(this.board, (cells) => this.minimaxChoices.choice(cells))}]`;
  }

  /** The warm start's notes on the position (warm_start.think): lineNotes for the seat to move. */
  stateNotes(): string {
    return lineNotes(this.board, this.seatToMove, this.config.prompt_style);
  }

  /** Minimax's first optimal cell: an honest solution for the seat to move. */
  solutionAction(): string {
    return `[${minimaxCell(this.board)}]`;
  }
}

/** The position of a suite episode, `{board: "O...X...."}` (board.ts's boardString). */
function positionOf(episode: Readonly<Record<string, unknown>>): Board {
  if (typeof episode.board !== 'string') throw new Error('a tic_tac_toe episode is {board: "O...X...."}, nine of O, X and .');
  const board = boardFromString(episode.board);
  const [o, x] = PLAYER_MARKS.map((mark) => board.filter((cell) => cell === mark).length);
  // O moves first, so O has as many marks as X or one more
  if (o! !== x! && o! !== x! + 1)
    throw new Error(`the tic_tac_toe position ${episode.board} cannot arise: O moves first, so O has as many marks as X or one more`);
  if (legalMoves(board).length === 0) throw new Error(`the tic_tac_toe position ${episode.board} is already over`);
  return board;
}

export default defineSeatedEnv({
  name: 'tic_tac_toe',
  description: "TicTacToe for two seats (TextArena's TicTacToe-v0): O moves first, a move is a cell in brackets, [4].",
  config: Config,
  seats: { names: [...PLAYER_MARKS], zeroSum: true, opponents: ['minimax'] },
  env: TicTacToe,
});
