/** Connect Four as a picture: the upright blue frame with a round hole per cell, a red disc for X and a yellow one for O. */
import type { RgbFrame } from 'agentic';
import { Canvas, CELL_PX, type Colour } from '../_grid/canvas';
import { type Board, type Disc, discAt } from './board';

export const COLOURS = {
  frame: [30, 70, 170],
  hole: [245, 242, 232],
  X: [210, 50, 50],
  O: [235, 190, 40],
} as const satisfies Record<string, Colour>;

/** Frame left between a hole and its cell's edge, in pixels. */
const MARGIN = 2;

/** Each cell is frame with a hole in it, filled by its disc's colour where a disc is. */
export function connectFourPicture(board: Board): RgbFrame {
  const canvas = new Canvas(board.columns * CELL_PX, board.rows * CELL_PX, COLOURS.frame);
  for (let row = 0; row < board.rows; row++) {
    for (let column = 0; column < board.columns; column++) {
      const disc: Disc | null = discAt(board, row, column);
      const centreX = column * CELL_PX + CELL_PX / 2;
      const centreY = row * CELL_PX + CELL_PX / 2;
      canvas.fillDisc(centreX, centreY, CELL_PX / 2 - MARGIN, disc ? COLOURS[disc] : COLOURS.hole);
    }
  }
  return canvas.frame();
}
