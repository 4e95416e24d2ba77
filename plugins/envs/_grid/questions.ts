/**
 * Questions about a drawn grid and their answers (WarmStartHooks.stateQuestions): where the
 * player is, where the named things are (on the board and from the player), and what lies one cell
 * away in each direction. They teach a small policy to read the board during the warm start; none of them says
 * which move is good, and no answer uses an action's name.
 */
import type { StateQuestion } from 'agentic';

const STEPS: Readonly<Record<string, readonly [number, number]>> = { Up: [-1, 0], Down: [1, 0], Left: [0, -1], Right: [0, 1] };

export interface GridQuestionSpec {
  /** Symbols the player is drawn with. */
  player: readonly string[];
  /**
   * Things asked about by name ("the goal"), with the symbols they are drawn with. A thing with
   * `from` (another thing's name) is placed from that thing instead of from the player: where
   * the target lies from the box is what a Sokoban push depends on.
   */
  things: ReadonlyArray<{ name: string; symbols: readonly string[]; from?: string }>;
  /** Cells worth naming when they are next to the player (holes, walls), for the notes. */
  hazards?: { name: string; symbols: readonly string[] };
}

const place = (row: number, col: number) => `<answer>row ${row + 1}, column ${col + 1}</answer>`;

const count = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;

/** Where a cell lies from the player, in lower-case words that are not action names. */
function offset(from: readonly [number, number], to: readonly [number, number]): string {
  const [dr, dc] = [to[0] - from[0], to[1] - from[1]];
  const rows = dr === 0 ? 'same row' : `${count(Math.abs(dr), 'row')} ${dr > 0 ? 'below' : 'above'}`;
  const cols = dc === 0 ? 'same column' : `${count(Math.abs(dc), 'column')} to the ${dc > 0 ? 'east' : 'west'}`;
  return `<answer>${rows}, ${cols}</answer>`;
}

function parseGrid(text: string) {
  const grid = text.split('\n').map((line) => [...line]);
  const find = (symbols: readonly string[]): [number, number] | null => {
    for (let row = 0; row < grid.length; row++) {
      const col = grid[row]!.findIndex((cell) => symbols.includes(cell));
      if (col >= 0) return [row, col];
    }
    return null;
  };
  return { grid, find };
}

/** A short offset in words: "2 below 1 east", "same row 3 west", "here". */
function shortOffset(from: readonly [number, number], to: readonly [number, number]): string {
  const [dr, dc] = [to[0] - from[0], to[1] - from[1]];
  if (dr === 0 && dc === 0) return 'here';
  const rows = dr === 0 ? 'same row' : `${Math.abs(dr)} ${dr > 0 ? 'below' : 'above'}`;
  const cols = dc === 0 ? 'same column' : `${Math.abs(dc)} ${dc > 0 ? 'east' : 'west'}`;
  return `${rows} ${cols}`;
}

const bare = (name: string) => name.replace(/^the /, '');

/** Where a thing is measured from: the player, or the thing its `from` names (null if that is not drawn). */
function originOf(
  thing: GridQuestionSpec['things'][number],
  spec: GridQuestionSpec,
  find: (symbols: readonly string[]) => [number, number] | null,
  player: [number, number],
) {
  if (thing.from === undefined) return player;
  const origin = spec.things.find((other) => other.name === thing.from);
  if (!origin) throw new Error(`grid spec: '${thing.name}' is placed from '${thing.from}', which is not one of its things`);
  return find(origin.symbols);
}

/**
 * WarmStartHooks.stateNotes for a grid: each named thing's offset from the player (or from the
 * thing its `from` names), then the directions in which a hazard is next to the player. For example
 * `goal 2 below 1 east; holes Down Left`, or for Sokoban `box 1 below same column; target from
 * box same row 2 east; walls Up`. A reading of the board in a few tokens; which move to make is
 * left to the policy.
 */
export function gridNotes(text: string, spec: GridQuestionSpec): string {
  const { grid, find } = parseGrid(text);
  const player = find(spec.player);
  if (!player) return 'no player on the board';
  const parts = spec.things.map((thing) => {
    const at = find(thing.symbols);
    const origin = originOf(thing, spec, find, player);
    const name = thing.from === undefined ? bare(thing.name) : `${bare(thing.name)} from ${bare(thing.from)}`;
    return `${name} ${at && origin ? shortOffset(origin, at) : 'gone'}`;
  });
  if (spec.hazards) {
    const near = Object.entries(STEPS)
      .filter(([, [dr, dc]]) => spec.hazards!.symbols.includes(grid[player[0] + dr]?.[player[1] + dc] ?? ''))
      .map(([direction]) => direction);
    parts.push(`${spec.hazards.name} ${near.length ? near.join(' ') : 'none'}`);
  }
  return parts.join('; ');
}

export function gridQuestions(text: string, spec: GridQuestionSpec): StateQuestion[] {
  const { grid, find } = parseGrid(text);
  const questions: StateQuestion[] = [];
  const player = find(spec.player);
  if (!player) return questions;
  questions.push({ question: 'Where are you?', answer: place(...player) });
  for (const thing of spec.things) {
    const at = find(thing.symbols);
    if (!at) continue;
    questions.push({ question: `Where is ${thing.name}?`, answer: place(...at) });
    questions.push({ question: `Where is ${thing.name} from you?`, answer: offset(player, at) });
    const origin = originOf(thing, spec, find, player);
    if (thing.from !== undefined && origin) questions.push({ question: `Where is ${thing.name} from ${thing.from}?`, answer: offset(origin, at) });
  }
  for (const [direction, [dr, dc]] of Object.entries(STEPS)) {
    const cell = grid[player[0] + dr]?.[player[1] + dc];
    questions.push({ question: `What is ${direction} of you?`, answer: `<answer>${cell ?? 'edge'}</answer>` });
  }
  return questions;
}
