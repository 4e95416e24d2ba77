/**
 * Shortest solutions by breadth-first search over the puzzle's states (the player and the boxes),
 * level by level, carrying for each state the first moves that reach it in the fewest moves. The
 * env's worked solution (solutionAction) plays one of them; scripts/experiments/probe_sokoban.ts
 * reads them all to judge a policy's move.
 */
import { ACTIONS, boxesOnTargets, copyRoom, move, type Action, type Room } from './room';

/** States searched before giving up: far more than a 6x6 room with one box has (about 250). */
const MAX_STATES = 200_000;

const stateKey = (room: Room) => `${room.player}:${[...room.boxes].sort((a, b) => a - b).join(',')}`;
const isSolved = (room: Room) => boxesOnTargets(room) === room.boxes.length;

/**
 * The first moves of every shortest solution from `room`, in ACTIONS order, and the solution's
 * length; null when the room is solved already, cannot be solved, or needs more than MAX_STATES
 * states searched.
 */
export function shortestSolution(room: Room): { firstMoves: Action[]; length: number } | null {
  if (isSolved(room)) return null;
  let level = new Map([[stateKey(room), { room, firstMoves: new Set<Action>() }]]);
  const seen = new Set(level.keys());
  for (let depth = 1; level.size > 0 && seen.size <= MAX_STATES; depth++) {
    const next = new Map<string, { room: Room; firstMoves: Set<Action> }>();
    const solving = new Set<Action>();
    for (const { room: state, firstMoves } of level.values()) {
      for (const action of ACTIONS) {
        const after = copyRoom(state);
        if (move(after, action).kind === 'blocked') continue;
        const key = stateKey(after);
        const reachedBy = depth === 1 ? [action] : [...firstMoves];
        if (isSolved(after)) for (const first of reachedBy) solving.add(first);
        if (seen.has(key) && !next.has(key)) continue;
        const entry = next.get(key) ?? { room: after, firstMoves: new Set<Action>() };
        for (const first of reachedBy) entry.firstMoves.add(first);
        next.set(key, entry);
        seen.add(key);
      }
    }
    if (solving.size > 0) return { firstMoves: ACTIONS.filter((action) => solving.has(action)), length: depth };
    level = next;
  }
  return null;
}
