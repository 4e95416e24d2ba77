/**
 * Simple Negotiation as anyone watching sees it, both seats at once: each seat's goods, values and
 * gain, and the offer on the table; as text, and as a picture of each seat's goods as bars.
 */
import type { RgbFrame } from 'agentic';
import { Canvas, CELL_PX, type Colour } from '../_grid/canvas';
import { type Bundle, bundleText, type Inventory, inventoryValue, type Offer, RESOURCES, type Resource } from './game';
import { signed } from './texts';

/** The state of a game as render shows it. */
export interface Table {
  readonly resources: readonly [Inventory, Inventory];
  readonly values: readonly [Inventory, Inventory];
  /** Each seat's inventory value less its starting value, by its own values. */
  readonly gains: readonly number[];
  /** The offer waiting for an answer, or null. */
  readonly offer: Offer | null;
  /** Whose turn it is, or how the game ended: "Turn 3 of 10, P0 to move". */
  readonly status: string;
}

/** A line of the table: its label, then one right-aligned figure a resource, then what follows. */
function row(label: string, figures: readonly (string | number)[], tail = ''): string {
  return `${label.padEnd(10)}${figures.map((figure) => String(figure).padStart(7)).join('')}${tail}`;
}

/** Both seats' goods (with each inventory's value and gain) and values, the offer, and whose turn it is. */
export function negotiationText(table: Table): string {
  const lines = [table.status, row('', RESOURCES, '   value (gain)')];
  table.resources.forEach((resources, seat) => {
    const worth = inventoryValue(resources, table.values[seat]!);
    lines.push(
      row(
        `P${seat} has`,
        RESOURCES.map((resource) => resources[resource]),
        `   ${worth} (${signed(table.gains[seat]!)})`,
      ),
    );
    lines.push(
      row(
        `P${seat} values`,
        RESOURCES.map((resource) => table.values[seat]![resource]),
      ),
    );
  });
  const { offer } = table;
  lines.push(
    offer ? `Offer: P${offer.from} gives ${bundleText(offer.give)} for ${bundleText(offer.get)}; P${1 - offer.from} to answer` : 'No offer on the table.',
  );
  return lines.join('\n');
}

export const COLOURS = {
  paper: [245, 242, 232],
  panel: [225, 220, 205],
  mover: [40, 40, 40],
  Wheat: [230, 190, 60],
  Wood: [120, 80, 40],
  Sheep: [150, 200, 90],
  Brick: [190, 70, 50],
  Ore: [110, 110, 130],
} as const satisfies Record<string, Colour>;

/** Pixels a unit adds to a bar: a panel's bars show up to 60 units, the offer strip's up to 10. */
const UNIT_PX = 2;
const PANEL_PX = 6 * CELL_PX;
const STRIP_PX = CELL_PX;
const GAP_PX = CELL_PX / 2;
const BAR_MARGIN = 3;

/** Bars from the bottom of a band `height` pixels high at (x, y), one column a resource, `units` of each. */
function drawBars(canvas: Canvas, x: number, y: number, height: number, units: (resource: Resource) => number): void {
  RESOURCES.forEach((resource, column) => {
    const bar = Math.min(units(resource) * UNIT_PX, height);
    canvas.fillRect(x + column * CELL_PX + BAR_MARGIN, y + height - bar, CELL_PX - 2 * BAR_MARGIN, bar, COLOURS[resource]);
  });
}

/**
 * Each seat's panel, P0 on the left: a bar a resource, as high as the seat holds (2 pixels a unit),
 * under a dark line while the seat is to move; below each panel, what the offer on the table takes
 * from that seat, as short bars.
 */
export function negotiationPicture(table: Table, seatToMove: number | null): RgbFrame {
  const panelWidth = RESOURCES.length * CELL_PX;
  const canvas = new Canvas(2 * panelWidth + 3 * GAP_PX, GAP_PX + PANEL_PX + GAP_PX + STRIP_PX + GAP_PX, COLOURS.paper);
  table.resources.forEach((resources, seat) => {
    const x = GAP_PX + seat * (panelWidth + GAP_PX);
    canvas.fillRect(x, GAP_PX, panelWidth, PANEL_PX, COLOURS.panel);
    if (seat === seatToMove) canvas.fillRect(x, GAP_PX - 3, panelWidth, 2, COLOURS.mover);
    drawBars(canvas, x, GAP_PX, PANEL_PX, (resource) => resources[resource]);
    const { offer } = table;
    const handed: Bundle = offer ? (seat === offer.from ? offer.give : offer.get) : {};
    drawBars(canvas, x, 2 * GAP_PX + PANEL_PX, STRIP_PX, (resource) => handed[resource] ?? 0);
  });
  return canvas.frame();
}
