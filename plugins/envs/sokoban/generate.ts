/**
 * Solvable Sokoban rooms by reverse play. A random walk carves a floor plan out of solid wall;
 * the boxes start on their targets; then the player walks backwards through the puzzle, pulling
 * boxes. Every pull is a push played in reverse, so whatever state the reverse play reaches can be
 * pushed back to the solution: every room is solvable by construction. Of the states reached
 * within `searchDepth` reverse moves, the room keeps the one with the highest score, the number of
 * times the pulled box changed times how far the boxes ended from their targets; a state with any
 * box on a target scores 0, and a floor plan where nothing scores above 0 is drawn again.
 */
import type { Rng } from 'agentic';
import { ACTIONS, offset, type Room } from './room';

type Cell = readonly [row: number, col: number];

/** Shapes stamped along the carving walk. */
const BRUSHES: ReadonlyArray<readonly Cell[]> = [
  [
    [0, -1],
    [0, 0],
    [0, 1],
  ],
  [
    [-1, 0],
    [0, 0],
    [1, 0],
  ],
  [
    [0, 0],
    [0, 1],
    [1, 0],
    [1, 1],
  ],
  [
    [0, 0],
    [-1, 0],
    [1, 0],
    [0, -1],
    [0, 1],
  ],
  [
    [0, 0],
    [0, 1],
    [1, 0],
  ],
  [
    [0, 0],
    [0, -1],
    [-1, 0],
  ],
];
const DIRECTIONS: readonly Cell[] = [
  [-1, 0],
  [1, 0],
  [0, -1],
  [0, 1],
];
const TURN_PROBABILITY = 0.35;
const MAX_TRIES = 50;
/** Bounds the reverse search on large rooms with several boxes (its cost per reset). */
const MAX_STATES = 100_000;

/** Walls everywhere except the cells a random walk through the interior passed over. */
function carveWalls(rows: number, cols: number, rng: Rng): Uint8Array {
  const walls = new Uint8Array(rows * cols).fill(1);
  let row = rng.intBetween(1, rows - 2);
  let col = rng.intBetween(1, cols - 2);
  let [dr, dc] = rng.choice(DIRECTIONS);
  const steps = Math.floor(1.7 * (rows + cols));
  for (let i = 0; i < steps; i++) {
    if (rng.bernoulli(TURN_PROBABILITY)) [dr, dc] = rng.choice(DIRECTIONS);
    for (const [br, bc] of rng.choice(BRUSHES)) {
      const r = row + br;
      const c = col + bc;
      if (r >= 1 && r <= rows - 2 && c >= 1 && c <= cols - 2) walls[r * cols + c] = 0;
    }
    // at the wall, turn to a direction that stays inside (clamping would pile the walk up there)
    const inside = ([r, c]: Cell) => row + r >= 1 && row + r <= rows - 2 && col + c >= 1 && col + c <= cols - 2;
    if (!inside([dr, dc])) [dr, dc] = rng.choice(DIRECTIONS.filter(inside));
    row += dr;
    col += dc;
  }
  return walls;
}

interface ReverseState {
  player: number;
  /** Box i was generated from target i. */
  boxes: readonly number[];
  /** How many times the pulled box changed on the way here. */
  swaps: number;
  lastPulled: number;
  depth: number;
}

function score(state: ReverseState, targets: readonly number[], cols: number): number {
  if (state.boxes.some((box) => targets.includes(box))) return 0;
  let displacement = 0;
  state.boxes.forEach((box, i) => {
    const target = targets[i]!;
    displacement += Math.abs(Math.floor(box / cols) - Math.floor(target / cols)) + Math.abs((box % cols) - (target % cols));
  });
  return state.swaps * displacement;
}

/** Breadth-first reverse play from the solved state; the best-scoring state, or null if none scores. */
function reversePlay(walls: Uint8Array, cols: number, targets: readonly number[], player: number, searchDepth: number): ReverseState | null {
  const cells = walls.length;
  const key = (at: number, boxes: readonly number[]) => boxes.reduce((k, box) => k * cells + box, at);
  const start: ReverseState = { player, boxes: targets, swaps: 0, lastPulled: -1, depth: 0 };
  const seen = new Set([key(player, targets)]);
  const queue = [start];
  let best: ReverseState | null = null;
  let bestScore = 0;
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head]!;
    const value = score(state, targets, cols);
    if (value > bestScore) [best, bestScore] = [state, value];
    if (state.depth >= searchDepth) continue;
    for (const action of ACTIONS) {
      const step = offset(cols, action);
      const to = state.player + step;
      if (walls[to] || state.boxes.includes(to)) continue;
      // walking away from a box may pull it along (the reverse of pushing it)
      const behind = state.boxes.indexOf(state.player - step);
      for (const pulled of behind < 0 ? [-1] : [-1, behind]) {
        const boxes = pulled < 0 ? state.boxes : state.boxes.with(pulled, state.player);
        const id = key(to, boxes);
        if (seen.has(id) || seen.size >= MAX_STATES) continue;
        seen.add(id);
        queue.push({
          player: to,
          boxes,
          swaps: state.swaps + (pulled >= 0 && pulled !== state.lastPulled ? 1 : 0),
          lastPulled: pulled >= 0 ? pulled : state.lastPulled,
          depth: state.depth + 1,
        });
      }
    }
  }
  return best;
}

/** Up to three plain steps, so the player does not always start right next to a box. */
function wander(room: Room, rng: Rng): void {
  const steps = rng.int(4);
  for (let i = 0; i < steps; i++) {
    const open = ACTIONS.filter((action) => {
      const to = room.player + offset(room.cols, action);
      return !room.walls[to] && !room.boxes.includes(to);
    });
    if (open.length === 0) return;
    room.player += offset(room.cols, rng.choice(open));
  }
}

export function generateRoom(rows: number, cols: number, numBoxes: number, searchDepth: number, rng: Rng): Room {
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    const walls = carveWalls(rows, cols, rng);
    const floor = [...walls.keys()].filter((cell) => !walls[cell]);
    if (floor.length < numBoxes + 2) continue;
    const [player, ...targets] = rng.shuffle(floor).slice(0, numBoxes + 1) as [number, ...number[]];
    const best = reversePlay(walls, cols, targets, player, searchDepth);
    if (!best) continue;
    const room: Room = { rows, cols, walls, targets, boxes: [...best.boxes], player: best.player };
    wander(room, rng);
    return room;
  }
  throw new Error(`could not generate a ${rows}x${cols} Sokoban room with ${numBoxes} boxes in ${MAX_TRIES} tries; use a larger dim_room or fewer boxes`);
}
