/**
 * The best any policy can do on a lake: the probability of reaching the goal from a cell within
 * a number of moves, by finite-horizon value iteration over the env's own dynamics (index.ts's
 * step): a move goes to `neighbour` (the edge leaves the player where it is), on slippery ice to
 * the intended direction or either perpendicular one, a third each; the goal ends the episode with
 * success, a hole ends it without. A turn without a valid move leaves the player where it is,
 * which never beats moving (one more move left is worth at least as much), so it is not counted.
 * On ice that does not slip the values are 0 or 1: 1 where a walk around the holes reaches the
 * goal within the moves.
 */
import { ACTIONS, neighbour, type Lake } from './lake';

/** The directions a move towards action `id` may go: itself alone, or itself and both perpendiculars on slippery ice. */
function outcomes(id: number, slippery: boolean): number[] {
  return slippery ? [(id + 3) % 4, id, (id + 1) % 4] : [id];
}

/** The probability that the best policy reaches the goal from `cell` within `moves` moves. */
export function optimalSuccess(lake: Lake, cell: number, moves: number, slippery: boolean): number {
  if (lake.tiles[cell] === 'goal') return 1;
  if (lake.tiles[cell] === 'hole') return 0;
  // value[c]: success from frozen cell c with the moves counted so far left; the goal is worth 1 and a hole 0 at any horizon
  const terminal = (c: number): number => (lake.tiles[c] === 'goal' ? 1 : 0);
  let value = lake.tiles.map((_, c) => terminal(c));
  for (let left = 1; left <= moves; left++) {
    const previous = value;
    value = lake.tiles.map((tile, c) => {
      if (tile !== 'frozen') return terminal(c);
      let best = 0;
      for (let id = 0; id < ACTIONS.length; id++) {
        const ways = outcomes(id, slippery);
        const reach = ways.reduce((sum, way) => sum + previous[neighbour(lake.size, c, ACTIONS[way]!)]!, 0) / ways.length;
        best = Math.max(best, reach);
      }
      return best;
    });
  }
  return value[cell]!;
}
