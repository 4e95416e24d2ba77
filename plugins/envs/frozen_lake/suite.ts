/**
 * A lake as an evaluation suite lists it: `{map: ["SFFF", "FHFH", ...]}`, rows from the top, in
 * Gymnasium's map letters (S start, F frozen, H hole, G goal), so a suite file reads like gym's
 * own maps and replays whatever the config's size and p say.
 */
import { hashSeed, type SuiteEpisode } from 'agentic';
import type { Lake, Tile } from './lake';

const LETTER: Record<Tile, string> = { frozen: 'F', hole: 'H', goal: 'G' };

export function lakeEpisode(lake: Lake): SuiteEpisode {
  return { map: mapRows(lake) };
}

/** The lake's rows from the top in gym's letters: `["SFFF", "FHFH", ...]`. */
function mapRows(lake: Lake): string[] {
  const rows: string[] = [];
  for (let row = 0; row < lake.size; row++) {
    let text = '';
    for (let col = 0; col < lake.size; col++) {
      const cell = row * lake.size + col;
      text += cell === lake.start ? 'S' : LETTER[lake.tiles[cell]!];
    }
    rows.push(text);
  }
  return rows;
}

/** The lake of a suite entry; a malformed one throws a one-line error saying what is wrong. */
export function lakeOf(episode: SuiteEpisode): Lake {
  const map = episode.map;
  const bad = (why: string) => new Error(`frozen_lake: cannot replay the episode ${JSON.stringify(episode).slice(0, 80)}: ${why}`);
  if (!Array.isArray(map) || map.length < 2 || !map.every((row) => typeof row === 'string' && row.length === map.length))
    throw bad('expected {map: [...]}, a square of equal rows of at least 2');
  const size = map.length;
  const tiles: Tile[] = [];
  let start = -1;
  let goal = -1;
  for (const [cell, letter] of [...(map as string[]).join('')].entries()) {
    if (letter === 'S') start = start === -1 ? cell : -2;
    if (letter === 'G') goal = goal === -1 ? cell : -2;
    if (!'SFHG'.includes(letter)) throw bad(`'${letter}' is not one of S, F, H, G`);
    tiles.push(letter === 'H' ? 'hole' : letter === 'G' ? 'goal' : 'frozen');
  }
  if (start < 0 || goal < 0) throw bad('the map needs exactly one S and one G');
  return { size, tiles, start, goal };
}

/** One map in this many is held out. */
const HELD_OUT_SHARE = 8;

/**
 * Whether the map (its rows: holes, start and goal) is held out: the maps frozen_lake/v2 holds,
 * which an env with hold_out_maps never draws. The split is by map, not by seed, so a suite map is
 * one no training seed has played, whichever seed would draw it.
 */
export function isHeldOutMap(lake: Lake): boolean {
  return hashSeed('frozen_lake', 'held-out map', ...mapRows(lake)) % HELD_OUT_SHARE === 0;
}
