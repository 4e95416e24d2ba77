/**
 * How a TicTacToe policy reads and moves (issue #69): `bun scripts/experiments/probe_tic_tac_toe.ts
 * <model-folder> [games] [key=value ...]`; the overrides apply to configs/tic_tac_toe.yaml, whose
 * validation the probe plays: `games` greedy games (a multiple of 64) against random and minimax,
 * both seats. At every turn of the policy it reads the compact board the turn showed and checks
 * the answer: its notes against the env's (stateNotes: where each seat would complete a line), a
 * free cell, the winning cell where the mover has one, and otherwise the blocking cell where the
 * other seat has one. Then the results per opponent, as `bun run learn:tic_tac_toe` prints them,
 * and with --losses=N the first N games lost to minimax, turn by turn.
 */
import { loadConfig } from '../../src/config/load';
import { PluginHost } from '../../src/host/plugin_host';
import { evaluate } from '../../src/rollout/evaluate';
import { seatResultLines } from '../../src/rollout/seat_results';
import type { Episode } from '../../src/rollout/types';
import { type Board, completingCells, PLAYER_MARKS } from '../../plugins/envs/tic_tac_toe/board';
import { lineNotes } from '../../plugins/envs/tic_tac_toe';
import { orExit } from './probe_setup';

/** What the policy's turns show: how many there were, and how many of each kind it answered well. */
interface Reading {
  turns: number;
  notesRight: number;
  freeCell: number;
  canWin: number;
  won: number;
  /** Turns that could win and read it right, and of those, the ones that won or blocked instead. */
  canWinRead: number;
  wonRead: number;
  blockedInstead: number;
  mustBlock: number;
  blocked: number;
}

/**
 * The compact board of a turn's observation (its last three lines: the mover's marks #, the
 * other's *, free cells by number) as a board where the mover is O; null where the turn shows none.
 */
function moverBoard(observation: string): Board | null {
  const rows = observation.split('\n').slice(-3);
  if (rows.length !== 3 || rows.some((row) => !/^[#*0-8]{3}$/.test(row))) return null;
  const [mover, other] = PLAYER_MARKS;
  return [...rows.join('')].map((cell) => (cell === '#' ? mover : cell === '*' ? other : null));
}

/** Every turn of the policy in `episodes`, read against the board it was shown. */
function readTurns(episodes: readonly Episode[]): Reading {
  const reading: Reading = { turns: 0, notesRight: 0, freeCell: 0, canWin: 0, won: 0, canWinRead: 0, wonRead: 0, blockedInstead: 0, mustBlock: 0, blocked: 0 };
  const [mover, other] = PLAYER_MARKS;
  for (const turn of episodes.flatMap((episode) => episode.turns)) {
    const board = moverBoard(turn.observation);
    if (!board) continue;
    const wins = completingCells(board, mover);
    const threats = completingCells(board, other);
    const notes = /<think>(.*?)<\/think>/s.exec(turn.responseText)?.[1];
    const cell = Number(/\[(\d)\]/.exec(turn.responseText.split('</think>').at(-1)!)?.[1] ?? -1);
    const readRight = notes === lineNotes(board, 0, 'compact');
    reading.turns += 1;
    if (readRight) reading.notesRight += 1;
    if (cell >= 0 && board[cell] === null) reading.freeCell += 1;
    if (wins.length > 0) {
      reading.canWin += 1;
      if (wins.includes(cell)) reading.won += 1;
      if (readRight) {
        reading.canWinRead += 1;
        if (wins.includes(cell)) reading.wonRead += 1;
        else if (threats.includes(cell)) reading.blockedInstead += 1;
      }
    } else if (threats.length > 0) {
      reading.mustBlock += 1;
      if (threats.includes(cell)) reading.blocked += 1;
    }
  }
  return reading;
}

/** The policy's lost games against minimax, turn by turn: the board it saw (rows split by |), then its answer. */
function lostGames(episodes: readonly Episode[], most: number): string[] {
  const lost = episodes.filter((episode) => episode.tag === 'TicTacToeVsMinimax' && episode.score < 0).slice(0, most);
  return lost.flatMap((episode, i) => [
    `lost game ${i + 1} (seed ${episode.seed}):`,
    ...episode.turns.map((turn) => `  ${turn.observation.split('\n').slice(-3).join('|')}  ->  ${turn.responseText.replaceAll('\n', ' ')}`),
  ]);
}

const share = (count: number, of: number) => `${count}/${of} (${of === 0 ? '-' : (count / of).toFixed(2)})`;

const args = process.argv.slice(2);
const losses = args.find((arg) => arg.startsWith('--losses='));
const [folder, count = '256', ...overrides] = args.filter((arg) => arg !== losses);
const shownLosses = losses ? Number(losses.slice('--losses='.length)) : 0;
const games = Number(count);
if (!folder || !Number.isInteger(games) || games < 64 || games % 64 !== 0 || !Number.isInteger(shownLosses) || shownLosses < 0) {
  console.error('usage: bun scripts/experiments/probe_tic_tac_toe.ts <model-folder> [games, a multiple of 64] [--losses=N] [key=value ...]');
  process.exit(2);
}
const host = new PluginHost();
const { config } = await orExit(
  loadConfig(
    { configName: 'tic_tac_toe', overrides: [`pretrain=${folder}`, `val_batch_size=${games}`, `val_env_manager.num_env_groups=${games}`, ...overrides] },
    host,
  ),
);
const result = await orExit(evaluate(config, host, (line) => console.error(line)));
const reading = readTurns(result.batch.episodes);
console.log(`\n${folder}: ${result.batch.episodes.length} greedy games against random and minimax, both seats`);
console.log(`turns read: ${reading.turns}`);
console.log(`  notes as the env's (where each seat would complete a line): ${share(reading.notesRight, reading.turns)}`);
console.log(`  a free cell: ${share(reading.freeCell, reading.turns)}`);
console.log(`  the mover can complete a line, and does: ${share(reading.won, reading.canWin)}`);
console.log(
  `    of those with the notes right: ${share(reading.wonRead, reading.canWinRead)} (blocks the other seat instead: ${share(reading.blockedInstead, reading.canWinRead - reading.wonRead)} of the rest)`,
);
console.log(`  it cannot, the other seat could, and it blocks: ${share(reading.blocked, reading.mustBlock)}`);
for (const line of seatResultLines(result.json.seats ?? {})) console.log(line);
for (const line of lostGames(result.batch.episodes, shownLosses)) console.log(line);
