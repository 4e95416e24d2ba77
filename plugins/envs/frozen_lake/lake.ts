/**
 * FrozenLake maps: a square of frozen cells and holes with a start and a goal, both placed at
 * random. Maps are drawn from the env's seeded Rng until the goal can be walked to from the start
 * without stepping into a hole, so every map is solvable.
 */
import type { Rng } from 'agentic';

export type Tile = 'frozen' | 'hole' | 'goal';

export interface Lake {
  size: number;
  /** Row by row from the top left; the start is a frozen tile. */
  tiles: Tile[];
  start: number;
  goal: number;
}

/** Action names in gym's order; index = direction id, so id ± 1 (mod 4) are the perpendiculars. */
export const ACTIONS = ['Left', 'Down', 'Right', 'Up'] as const;
export type Action = (typeof ACTIONS)[number];
const STEP: Record<Action, readonly [row: number, col: number]> = { Left: [0, -1], Down: [1, 0], Right: [0, 1], Up: [-1, 0] };

// With p > 0, a start next to the goal alone makes a solvable map (about 4/size^2 of the draws),
// so this many tries fail only for a near-zero p on the largest lakes.
const MAX_TRIES = 20_000;

/** The cell one step from `cell` towards `action`, or `cell` itself at the edge. */
export function neighbour(size: number, cell: number, action: Action): number {
  const [dr, dc] = STEP[action];
  const row = Math.floor(cell / size) + dr;
  const col = (cell % size) + dc;
  return row < 0 || row >= size || col < 0 || col >= size ? cell : row * size + col;
}

function reachable(lake: Lake): boolean {
  const seen = new Set([lake.start]);
  const queue = [lake.start];
  for (let head = 0; head < queue.length; head++) {
    for (const action of ACTIONS) {
      const next = neighbour(lake.size, queue[head]!, action);
      if (next === lake.goal) return true;
      if (lake.tiles[next] === 'frozen' && !seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return false;
}

/** A solvable `size` x `size` lake whose cells are frozen with probability `p`. */
export function generateLake(size: number, p: number, rng: Rng): Lake {
  const cells = size * size;
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    const tiles = Array.from({ length: cells }, (): Tile => (rng.bernoulli(p) ? 'frozen' : 'hole'));
    const start = rng.int(cells);
    const goal = rng.int(cells);
    if (start === goal) continue;
    tiles[start] = 'frozen';
    tiles[goal] = 'goal';
    const lake = { size, tiles, start, goal };
    if (reachable(lake)) return lake;
  }
  throw new Error(`found no solvable ${size}x${size} lake with p=${p} in ${MAX_TRIES} tries; raise p`);
}

/**
 * A first move of a shortest walk from `cell` to the goal that steps on no hole, or null where the
 * goal cannot be reached (never from a solvable map's frozen cells). Of equally short moves it takes
 * the one along the axis with more of the way left, then gym's order: one rule a policy can learn.
 */
export function shortestMove(lake: Lake, cell: number): Action | null {
  const distance = distancesToGoal(lake);
  if (!Number.isFinite(distance[cell]!)) return null;
  const [rowsLeft, colsLeft] = [
    Math.abs(Math.floor(lake.goal / lake.size) - Math.floor(cell / lake.size)),
    Math.abs((lake.goal % lake.size) - (cell % lake.size)),
  ];
  const alongLongerAxis = (action: Action) => (STEP[action][0] !== 0) === rowsLeft > colsLeft;
  const shortest = ACTIONS.filter((action) => {
    const next = neighbour(lake.size, cell, action);
    return next !== cell && distance[next]! === distance[cell]! - 1;
  });
  return shortest.find(alongLongerAxis) ?? shortest[0] ?? null;
}

/** Steps from each cell to the goal over frozen cells (a breadth-first search from the goal); Infinity for holes and cut-off cells. */
function distancesToGoal(lake: Lake): number[] {
  const distance = lake.tiles.map(() => Number.POSITIVE_INFINITY);
  distance[lake.goal] = 0;
  const queue = [lake.goal];
  for (let head = 0; head < queue.length; head++) {
    const cell = queue[head]!;
    for (const action of ACTIONS) {
      const from = neighbour(lake.size, cell, action);
      if (lake.tiles[from] === 'frozen' && distance[from] === Number.POSITIVE_INFINITY) {
        distance[from] = distance[cell]! + 1;
        queue.push(from);
      }
    }
  }
  return distance;
}
