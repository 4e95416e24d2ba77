/** TicTacToe as a picture: the 3x3 grid with a red cross for X and a blue ring for O. */
import type { RgbFrame } from 'agentic';
import { Canvas, CELL_PX, type Colour } from '../_grid/canvas';
import type { Board, Mark } from './board';

export const COLOURS = {
  gridLine: [60, 60, 60],
  paper: [245, 242, 232],
  X: [210, 50, 50],
  O: [40, 90, 200],
} as const satisfies Record<string, Colour>;

const SIDE = 3;
/** Space left between a glyph and its cell's edge, and the width of its strokes, in pixels. */
const MARGIN = 4;
const STROKE = 2;

/** Both diagonals of the cell at (x, y), as a staircase of small squares. */
function drawCross(canvas: Canvas, x: number, y: number): void {
  const last = CELL_PX - MARGIN - STROKE;
  for (let step = MARGIN; step <= last; step++) {
    canvas.fillRect(x + step, y + step, STROKE, STROKE, COLOURS.X);
    canvas.fillRect(x + MARGIN + last - step, y + step, STROKE, STROKE, COLOURS.X);
  }
}

/** A ring: a disc in the mark's colour with a paper-coloured disc cut out of its middle. */
function drawRing(canvas: Canvas, x: number, y: number): void {
  const outer = CELL_PX / 2 - MARGIN;
  canvas.fillDisc(x + CELL_PX / 2, y + CELL_PX / 2, outer, COLOURS.O);
  canvas.fillDisc(x + CELL_PX / 2, y + CELL_PX / 2, outer - STROKE, COLOURS.paper);
}

const DRAW: Record<Mark, (canvas: Canvas, x: number, y: number) => void> = { X: drawCross, O: drawRing };

/** Each cell is paper inside a one-pixel grid line, with its mark's glyph on top. */
export function ticTacToePicture(board: Board): RgbFrame {
  const side = SIDE * CELL_PX;
  const canvas = new Canvas(side, side, COLOURS.gridLine);
  board.forEach((mark, cell) => {
    const x = (cell % SIDE) * CELL_PX;
    const y = Math.floor(cell / SIDE) * CELL_PX;
    canvas.fillRect(x + 1, y + 1, CELL_PX - 2, CELL_PX - 2, COLOURS.paper);
    if (mark) DRAW[mark](canvas, x, y);
  });
  return canvas.frame();
}
