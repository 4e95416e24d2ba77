/**
 * A room as an evaluation suite lists it: `{room: ["######", "#_P_X#", ...]}`, rows from the top
 * in the default symbols (# wall, _ floor, O target, X box, √ box on target, P player, S player on
 * target), so a suite replays whatever the config's dim_room, num_boxes and search_depth say.
 */
import { hashSeed, type SuiteEpisode } from 'agentic';
import { roomText, SYMBOL } from './render';
import type { Room } from './room';

export function roomEpisode(room: Room): SuiteEpisode {
  return { room: roomText(room, SYMBOL).split('\n') };
}

/** The room of a suite entry; a malformed one throws a one-line error saying what is wrong. */
export function roomOf(episode: SuiteEpisode): Room {
  const lines = episode.room;
  const bad = (why: string) => new Error(`sokoban: cannot replay the episode ${JSON.stringify(episode).slice(0, 80)}: ${why}`);
  if (!Array.isArray(lines) || lines.length < 3 || !lines.every((line) => typeof line === 'string' && line.length === lines[0].length && line.length >= 3))
    throw bad('expected {room: [...]}, equal rows of at least 3');
  const rows = lines.length;
  const cols = (lines[0] as string).length;
  const walls = new Uint8Array(rows * cols);
  const targets: number[] = [];
  const boxes: number[] = [];
  const players: number[] = [];
  for (const [cell, symbol] of [...(lines as string[]).join('')].entries()) {
    const row = Math.floor(cell / cols);
    const col = cell % cols;
    const edge = row === 0 || col === 0 || row === rows - 1 || col === cols - 1;
    if (symbol === SYMBOL.wall) walls[cell] = 1;
    else if (edge) throw bad('the outer ring must be wall');
    if (symbol === SYMBOL.target || symbol === SYMBOL.boxOnTarget || symbol === SYMBOL.playerOnTarget) targets.push(cell);
    if (symbol === SYMBOL.box || symbol === SYMBOL.boxOnTarget) boxes.push(cell);
    if (symbol === SYMBOL.player || symbol === SYMBOL.playerOnTarget) players.push(cell);
    if (!Object.values(SYMBOL).includes(symbol)) throw bad(`'${symbol}' is not a room symbol (${Object.values(SYMBOL).join(' ')})`);
  }
  if (players.length !== 1) throw bad('the room needs exactly one player');
  if (boxes.length === 0 || boxes.length !== targets.length) throw bad('the room needs as many targets as boxes, at least one');
  return { rows, cols, walls, targets, boxes, player: players[0]! };
}

/** One layout in this many is held out. */
const HELD_OUT_SHARE = 8;

/**
 * Whether the room's walls and targets are a held-out layout: the rooms sokoban/v2 holds, which an
 * env with hold_out_rooms never draws. 6x6 rooms of one box repeat (20,000 draws give about 6,500
 * rooms and 2,900 layouts of walls and targets), so the split is by layout, not by seed: a suite
 * room's puzzle is one no training seed has played, whoever stands where.
 */
export function isHeldOutLayout(room: Room): boolean {
  return hashSeed('sokoban', 'held-out layout', room.cols, Array.from(room.walls).join(''), room.targets.join(',')) % HELD_OUT_SHARE === 0;
}
