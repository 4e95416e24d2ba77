/** A Sokoban room as text (ROLL's symbols) and as a picture. */
import type { RgbFrame } from 'agentic';
import { Canvas, CELL_PX, type Colour } from '../_grid/canvas';
import { gridText } from '../_grid/text';
import type { Room } from './room';

export const SYMBOLS = {
  '#': 'wall',
  _: 'empty floor',
  O: 'target',
  X: 'box',
  '√': 'box on a target',
  P: 'player',
  S: 'player on a target',
} as const;

export type Content = 'wall' | 'floor' | 'target' | 'box' | 'boxOnTarget' | 'player' | 'playerOnTarget';

function contentAt(room: Room, cell: number): Content {
  if (room.walls[cell]) return 'wall';
  const target = room.targets.includes(cell);
  if (room.boxes.includes(cell)) return target ? 'boxOnTarget' : 'box';
  if (cell === room.player) return target ? 'playerOnTarget' : 'player';
  return target ? 'target' : 'floor';
}

/** ROLL's grid_lookup numbering of what a cell holds. */
export const ROLL_GRID_INDEX: readonly Content[] = ['wall', 'floor', 'target', 'boxOnTarget', 'box', 'player', 'playerOnTarget'];

export type RoomSymbols = Readonly<Record<Content, string>>;

export const SYMBOL: RoomSymbols = {
  wall: '#',
  floor: '_',
  target: 'O',
  box: 'X',
  boxOnTarget: '√',
  player: 'P',
  playerOnTarget: 'S',
};

export function roomText(room: Room, symbols: RoomSymbols = SYMBOL): string {
  return gridText(room.rows, room.cols, (cell) => symbols[contentAt(room, cell)]);
}

export const COLOURS = {
  wall: [70, 72, 84],
  floor: [228, 222, 206],
  target: [210, 50, 50],
  box: [196, 132, 48],
  boxOnTarget: [56, 168, 80],
  boxEdge: [90, 60, 25],
  player: [45, 95, 220],
} as const satisfies Record<string, Colour>;

/**
 * Walls are solid; a target is a red ring with a red centre on the floor; a box is an orange
 * square (green once on a target); the player is a blue disc, inside the ring when on a target.
 */
export function roomPicture(room: Room): RgbFrame {
  const canvas = new Canvas(room.cols * CELL_PX, room.rows * CELL_PX, COLOURS.floor);
  const c = CELL_PX;
  for (let cell = 0; cell < room.walls.length; cell++) {
    const x = (cell % room.cols) * c;
    const y = Math.floor(cell / room.cols) * c;
    const content = contentAt(room, cell);
    if (content === 'wall') {
      canvas.fillRect(x, y, c, c, COLOURS.wall);
      continue;
    }
    if (content === 'target' || content === 'playerOnTarget') {
      canvas.strokeRect(x + 2, y + 2, c - 4, c - 4, 2, COLOURS.target);
      canvas.fillRect(x + c / 2 - 2, y + c / 2 - 2, 4, 4, COLOURS.target);
    }
    if (content === 'box' || content === 'boxOnTarget') {
      canvas.fillRect(x + 2, y + 2, c - 4, c - 4, COLOURS.boxEdge);
      canvas.fillRect(x + 4, y + 4, c - 8, c - 8, content === 'box' ? COLOURS.box : COLOURS.boxOnTarget);
    }
    if (content === 'player' || content === 'playerOnTarget') canvas.fillDisc(x + c / 2, y + c / 2, c * 0.3, COLOURS.player);
  }
  return canvas.frame();
}
