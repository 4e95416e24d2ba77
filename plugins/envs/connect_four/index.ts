/**
 * Connect Four for two seats, as TextArena's ConnectFour-v0 plays it (board.ts names the source):
 * seat X (player 0) moves first, seat O second; a move is a column in brackets, `[3]`, and the
 * disc falls to the lowest empty cell. The first bad move of a turn (no column, a column off the
 * board, a full column) only costs a retry, as TextArena's error allowance of 1 does; a second in
 * a row loses the game. Win +1 and loss -1, a draw 0 each, and nothing before the end: zero-sum,
 * with no format penalty (TextArena gives none).
 *
 * Opponents: random (a random open column) and heuristic (heuristic.ts: a one-move lookahead that
 * wins, blocks and avoids handing over a win, centre first; not optimal). No solution hook: only a
 * deep search knows the best move. `opening_moves` starts each game from that many random moves
 * (seeded), and a suite's episode `{board: "......./.../...XO.."}` replays a given position.
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
  z,
} from 'agentic';
import { errorAllowance, gameResult, invalidMoveMessage, mostOpeningMoves, openingLength, openingMoves, RETRY_NOTE } from '../_textarena/two_player';
import {
  type Board,
  boardFromString,
  boardString,
  boardText,
  DEFAULT_COLUMNS,
  DEFAULT_ROWS,
  type Disc,
  emptyBoard,
  isFull,
  isOver,
  isSettled,
  landingRow,
  legalMoves,
  PLAYER_DISCS,
  parseColumn,
  play,
  toMove,
  winner,
} from './board';
import { heuristicColumn } from './heuristic';
import { connectFourPicture } from './render';

/** Discs a game needs before anyone can have four: an opening shorter than this never ends the game. */
const FEWEST_DISCS_TO_WIN = 7;

const Config = z
  .strictObject({
    num_rows: z.int().min(1).max(10).default(DEFAULT_ROWS).describe("Rows of the board (TextArena's num_rows)."),
    num_cols: z
      .int()
      .min(1)
      .max(10)
      .default(DEFAULT_COLUMNS)
      .describe("Columns of the board (TextArena's num_cols); at most 10, so every column number is one digit and the board's text stays aligned."),
    is_open: z
      .boolean()
      .default(true)
      .describe("Whether the players see the board (TextArena's is_open; false is ConnectFour-v0-blind: only the moves are told)."),
    error_allowance: errorAllowance(),
    prompt_style: z
      .enum(['textarena', 'compact'])
      .default('textarena')
      .describe(
        "textarena: TextArena's own texts (its instruction, then the last move and the board under its column numbers; about 300 tokens a turn with the built-in tokenizer). compact: the same game told in few words for small policies: 'You are X, against O. Four in a row wins. ...' and the board as six lines of seven characters, X, O or '.' from column 0 on the left ('...X...'), one token a cell; about 80 tokens a turn (79 to 84 over random games: the instruction 38, the board 42 to 47).",
      ),
    opening_moves: openingMoves(FEWEST_DISCS_TO_WIN - 1),
  })
  .refine((c) => mostOpeningMoves(c.opening_moves) < c.num_rows * c.num_cols, 'opening_moves must leave a free cell on the board');
type ConnectFourConfig = z.output<typeof Config>;

/** A reply that names the middle column (the left one of two), the example the prompts give. */
const exampleColumn = (config: ConnectFourConfig) => Math.floor((config.num_cols - 1) / 2);

/** TextArena's prompt of player `seat`, or its compact form. */
function seatInstruction(seat: number, config: ConnectFourConfig): string {
  const mine = PLAYER_DISCS[seat]!;
  const lastColumn = config.num_cols - 1;
  if (config.prompt_style === 'compact') {
    return `You are ${mine}, against ${PLAYER_DISCS[1 - seat]}. Four in a row wins. Answer with a column 0-${lastColumn}, e.g. [${exampleColumn(config)}].`;
  }
  return [
    `You are Player ${seat} in Connect Four.`,
    `Your disc symbol: ${mine}.`,
    `The game board has ${config.num_rows} rows and ${config.num_cols} columns.`,
    `Players take turns dropping their disc into one of the columns (0 to ${lastColumn}).`,
    'The first to connect (their own) four discs vertically, horizontally, or diagonally wins.',
    'On your turn, enter the column number in squared brackets to make your move.',
    "For example: '[col 4]' or '[col 1]'.",
  ].join('\n');
}

const seatOf = (disc: Disc) => PLAYER_DISCS.indexOf(disc as (typeof PLAYER_DISCS)[number]);

/** Why a reply is not a move of player `seat` on `board` (TextArena's three reasons), or null. */
function badMove(board: Board, seat: number, column: number | null): string | null {
  if (column === null) return `Player ${seat}, Invalid action format. Expected format: '[col x]'.`;
  if (column >= board.columns) return `Player ${seat}, Invalid action. Column ${column} is out of bounds.`;
  if (landingRow(board, column) === null) return `Player ${seat}, Invalid action. Column ${column} is full.`;
  return null;
}

class ConnectFour implements SeatedEnv, OpponentHooks {
  private board: Board = emptyBoard();
  /** Every column played this game, the opening's included, for the blind compact view. */
  private moves: number[] = [];
  /** Bad moves in a row of the seat to move. */
  private errors = 0;
  private randomMoves = Rng.fromSeed(0, 'connect_four', 'random-move');
  private heuristicDraws = Rng.fromSeed(0, 'connect_four', 'heuristic');

  constructor(private readonly config: ConnectFourConfig) {}

  reset(seed: number, _draw?: EpisodeDraw, options?: ResetOptions): SeatedResetResult {
    this.moves = [];
    this.board = options?.episode ? this.positionOf(options.episode) : this.opening(Rng.fromSeed(seed, 'connect_four', 'opening'));
    this.errors = 0;
    this.randomMoves = Rng.fromSeed(seed, 'connect_four', 'random-move');
    this.heuristicDraws = Rng.fromSeed(seed, 'connect_four', 'heuristic');
    const instructions = PLAYER_DISCS.map((_, seat) => seatInstruction(seat, this.config));
    const seat = this.seatToMove;
    const hidden = !this.config.is_open && this.config.prompt_style === 'textarena';
    // a blind game is told by its moves, which a position does not keep: it cannot be replayed from one
    const episode = this.config.is_open ? { episode: { board: boardString(this.board) } } : {};
    return {
      observation: hidden ? 'The game board is not visible to players.' : this.view(),
      info: { instruction: instructions[seat]!, ...episode },
      seat,
      instructions,
    };
  }

  /** `opening_moves` random moves from the empty board; fewer than seven, so none ends the game. */
  private opening(rng: Rng): Board {
    let board = emptyBoard(this.config.num_rows, this.config.num_cols);
    const length = openingLength(this.config.opening_moves, rng);
    for (let i = 0; i < length; i++) {
      const column = rng.choice(legalMoves(board));
      board = play(board, column, toMove(board));
      this.moves.push(column);
    }
    return board;
  }

  /** A suite episode's position, `{board: "......./.../...XO.."}` (board.ts's boardString). */
  private positionOf(episode: Readonly<Record<string, unknown>>): Board {
    if (typeof episode.board !== 'string') throw new Error('a connect_four episode is {board: "......./......."}, rows of X, O and . from the top, split by /');
    const board = boardFromString(episode.board);
    const { num_rows: rows, num_cols: columns } = this.config;
    if (board.rows !== rows || board.columns !== columns) throw new Error(`the connect_four position ${episode.board} is not ${rows} rows of ${columns}`);
    if (!this.config.is_open) throw new Error('a blind connect_four game (is_open: false) tells only its moves, which a given position lacks');
    const [x, o] = PLAYER_DISCS.map((disc) => board.cells.filter((cell) => cell === disc).length);
    // X moves first, so X has as many discs as O or one more; every disc lies where it fell
    if ((x! !== o! && x! !== o! + 1) || !isSettled(board))
      throw new Error(`the connect_four position ${episode.board} cannot arise: X moves first, and every disc rests on another or on the bottom`);
    if (isOver(board)) throw new Error(`the connect_four position ${episode.board} is already over`);
    return board;
  }

  private get seatToMove(): number {
    return seatOf(toMove(this.board));
  }

  /**
   * What the seat to move sees of the game now: TextArena's board state, or nothing in its blind
   * variant; compact: the board's rows, or (blind) the moves so far.
   */
  private view(): string {
    const { prompt_style: style, is_open: open } = this.config;
    if (style === 'textarena') return open ? `Board state:\n${boardText(this.board)}` : '';
    if (open) return boardString(this.board).replaceAll('/', '\n');
    const moves = this.moves.map((column, at) => `${PLAYER_DISCS[at % 2]} [${column}]`).join(', ');
    return `Moves: ${moves || 'none'}`;
  }

  /** `text`, then the view where there is one. */
  private withView(text: string): string {
    return [text, this.view()].filter((part) => part !== '').join('\n');
  }

  step(response: string): SeatedStepResult {
    const mover = this.seatToMove;
    const column = parseColumn(response);
    const problem = badMove(this.board, mover, column);
    if (problem) return this.badMove(mover, problem);
    this.errors = 0;
    this.board = play(this.board, column!, PLAYER_DISCS[mover]!);
    this.moves.push(column!);
    const dropped = `Player ${mover} dropped their disk (${PLAYER_DISCS[mover]}) into column ${column}.`;
    const valid = { metrics: { action_is_valid: true }, action: `[${column}]`, actionDesc: dropped };
    if (winner(this.board) !== null) return this.ended(`${dropped}\nPlayer ${mover} wins by connecting four!`, mover, mover, valid);
    if (isFull(this.board)) return this.ended(`${dropped}\nGame ended in a draw.`, mover, null, valid);
    return {
      // compact: the board (or the moves) alone shows the move
      observation: this.config.prompt_style === 'compact' ? this.view() : this.withView(dropped),
      reward: 0,
      terminated: false,
      truncated: false,
      info: valid,
      seat: this.seatToMove,
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
    const retry = this.config.prompt_style === 'compact' ? 'Not an open column; once more.' : `${invalidMoveMessage(mover, reason)} ${RETRY_NOTE}`;
    return { observation: this.withView(retry), reward: 0, terminated: false, truncated: false, info, seat: mover, rewards: [0, 0] };
  }

  /** The step of seat `mover` that ends the game, won by seat `winnerSeat` (+1, the other -1) or drawn (null). */
  private ended(observation: string, mover: number, winnerSeat: number | null, info: SeatedStepResult['info']): SeatedStepResult {
    const { rewards, outcome } = gameResult(PLAYER_DISCS.length, winnerSeat);
    return { observation: this.withView(observation), reward: rewards[mover]!, terminated: true, truncated: false, info, seat: mover, rewards, outcome };
  }

  render(mode: RenderMode): string | RgbFrame {
    return mode === 'text' ? boardText(this.board) : connectFourPicture(this.board);
  }

  close(): void {}

  /** A random open column for the seat to move. */
  sampleRandomAction(): string {
    return `[${this.randomMoves.choice(legalMoves(this.board))}]`;
  }

  /** Opponent `name`: 'heuristic' (heuristic.ts), its ties between equally central columns drawn by the env's seeded stream. */
  opponentAction(name: string): string {
    if (name !== 'heuristic') throw new Error(`connect_four has no opponent '${name}' (random, heuristic)`);
    return `[${heuristicColumn(this.board, (columns) => this.heuristicDraws.choice(columns))}]`;
  }
}

export default defineSeatedEnv({
  name: 'connect_four',
  description: "Connect Four for two seats (TextArena's ConnectFour-v0): X moves first, a move is a column in brackets, [3]; four in a row wins.",
  config: Config,
  seats: { names: [...PLAYER_DISCS], zeroSum: true, opponents: ['heuristic'] },
  env: ConnectFour,
});
