/** FrozenLake as text (ROLL's symbols) and as a picture. */
import type { RgbFrame } from 'agentic';
import { Canvas, CELL_PX, type Colour } from '../_grid/canvas';
import { gridText } from '../_grid/text';
import type { Lake, Tile } from './lake';

export const SYMBOLS = {
  P: 'player',
  _: 'frozen ice',
  O: 'hole',
  G: 'goal',
  X: 'player fallen into a hole',
  '√': 'player on the goal',
} as const;

const TILE_SYMBOL: Record<Tile, string> = { frozen: '_', hole: 'O', goal: 'G' };
const PLAYER_SYMBOL: Record<Tile, string> = { frozen: 'P', hole: 'X', goal: '√' };

export function lakeText(lake: Lake, player: number): string {
  return gridText(lake.size, lake.size, (cell) => (cell === player ? PLAYER_SYMBOL : TILE_SYMBOL)[lake.tiles[cell]!]);
}

export const COLOURS = {
  gridLine: [150, 180, 200],
  frozen: [215, 238, 250],
  hole: [20, 35, 75],
  goal: [245, 190, 30],
  player: [215, 45, 45],
} as const satisfies Record<string, Colour>;

/** Each cell is its tile's colour inside a one-pixel grid line; the player is a red disc on top. */
export function lakePicture(lake: Lake, player: number): RgbFrame {
  const side = lake.size * CELL_PX;
  const canvas = new Canvas(side, side, COLOURS.gridLine);
  lake.tiles.forEach((tile, cell) => {
    const x = (cell % lake.size) * CELL_PX;
    const y = Math.floor(cell / lake.size) * CELL_PX;
    canvas.fillRect(x + 1, y + 1, CELL_PX - 2, CELL_PX - 2, COLOURS[tile]);
    if (cell === player) canvas.fillDisc(x + CELL_PX / 2, y + CELL_PX / 2, CELL_PX * 0.3, COLOURS.player);
  });
  return canvas.frame();
}
