/**
 * A Sokoban room and the rules of play. Cells are numbered row by row from the top left; the
 * outer ring of every room is wall, so a step from any floor cell stays inside the grid.
 */

export const ACTIONS = ['Up', 'Down', 'Left', 'Right'] as const;
export type Action = (typeof ACTIONS)[number];

export interface Room {
  rows: number;
  cols: number;
  /** 1 where a cell is wall. */
  walls: Uint8Array;
  targets: readonly number[];
  /** Where each box stands (box i was generated from target i). */
  boxes: number[];
  player: number;
}

/** How far a step moves in cell numbers. */
export function offset(cols: number, action: Action): number {
  return action === 'Up' ? -cols : action === 'Down' ? cols : action === 'Left' ? -1 : 1;
}

export function copyRoom(room: Room): Room {
  return { ...room, boxes: [...room.boxes] };
}

export function boxesOnTargets(room: Room): number {
  return room.boxes.filter((box) => room.targets.includes(box)).length;
}

export type MoveOutcome = { kind: 'blocked' } | { kind: 'walked' } | { kind: 'pushed'; from: number; to: number };

/** Steps the player towards `action`, pushing a box that is in the way if the cell behind it is free. */
export function move(room: Room, action: Action): MoveOutcome {
  const step = offset(room.cols, action);
  const next = room.player + step;
  if (room.walls[next]) return { kind: 'blocked' };
  const box = room.boxes.indexOf(next);
  if (box < 0) {
    room.player = next;
    return { kind: 'walked' };
  }
  const behind = next + step;
  if (room.walls[behind] || room.boxes.includes(behind)) return { kind: 'blocked' };
  room.boxes[box] = behind;
  room.player = next;
  return { kind: 'pushed', from: next, to: behind };
}
