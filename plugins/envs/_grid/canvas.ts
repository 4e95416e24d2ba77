/**
 * A tiny RGB drawing surface for the grid-world envs' pictures: filled rectangles, square
 * outlines and discs, clipped to the frame. Enough for one glyph per cell, nothing more.
 * (This folder starts with `_`, so the plugin loader does not take it for a plugin.)
 */
import type { RgbFrame } from 'agentic';

export type Colour = readonly [red: number, green: number, blue: number];

/** Side of one grid cell in the envs' pictures, in pixels. */
export const CELL_PX = 20;

export class Canvas {
  private readonly data: Uint8Array;

  constructor(
    readonly width: number,
    readonly height: number,
    background: Colour,
  ) {
    this.data = new Uint8Array(width * height * 3);
    this.fillRect(0, 0, width, height, background);
  }

  fillRect(x: number, y: number, w: number, h: number, colour: Colour): void {
    const x0 = Math.max(0, Math.floor(x));
    const y0 = Math.max(0, Math.floor(y));
    const x1 = Math.min(this.width, Math.floor(x + w));
    const y1 = Math.min(this.height, Math.floor(y + h));
    for (let row = y0; row < y1; row++) {
      for (let col = x0; col < x1; col++) this.put(col, row, colour);
    }
  }

  /** A square-cornered outline `thickness` pixels wide, inside the rectangle. */
  strokeRect(x: number, y: number, w: number, h: number, thickness: number, colour: Colour): void {
    this.fillRect(x, y, w, thickness, colour);
    this.fillRect(x, y + h - thickness, w, thickness, colour);
    this.fillRect(x, y, thickness, h, colour);
    this.fillRect(x + w - thickness, y, thickness, h, colour);
  }

  /** The pixels whose centres lie within `radius` of (cx, cy). */
  fillDisc(cx: number, cy: number, radius: number, colour: Colour): void {
    const y0 = Math.max(0, Math.floor(cy - radius));
    const y1 = Math.min(this.height, Math.ceil(cy + radius));
    const x0 = Math.max(0, Math.floor(cx - radius));
    const x1 = Math.min(this.width, Math.ceil(cx + radius));
    for (let row = y0; row < y1; row++) {
      for (let col = x0; col < x1; col++) {
        const dx = col + 0.5 - cx;
        const dy = row + 0.5 - cy;
        if (dx * dx + dy * dy <= radius * radius) this.put(col, row, colour);
      }
    }
  }

  frame(): RgbFrame {
    return { width: this.width, height: this.height, data: this.data.slice() };
  }

  private put(x: number, y: number, [r, g, b]: Colour): void {
    const at = (y * this.width + x) * 3;
    this.data[at] = r;
    this.data[at + 1] = g;
    this.data[at + 2] = b;
  }
}
