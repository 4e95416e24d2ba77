/**
 * How a Sokoban policy reads and decides: `bun scripts/experiments/probe_sokoban.ts <model-folder> [rooms] [key=value ...]`.
 * The overrides apply to configs/sokoban_compact.yaml, the config the probe plays with.
 *
 * On held-out rooms of the task (seeds no run trains or validates on), with the run's prompt (the
 * first turn as the config's SimpleSokoban entry makes it, through the rollout's TurnPrompts:
 * system "Push X onto O.", the bare room; an override of its template is probed as written) and
 * greedy decoding:
 *   - reading: how often the model's own think notes on the first state equal the env's
 *     (`WarmStartHooks.stateNotes`), whole and by part (the box from the player, the target from
 *     the box, the walls next to the player);
 *   - deciding: the player put on every free cell of the same rooms (the box where it starts), the
 *     env's notes forced into the response, and the move that follows: how often it is a move of
 *     a shortest solution (the env's breadth-first search over the whole puzzle, which its worked
 *     examples play too), against the share a uniformly random move would get; then on the states
 *     where the player stands behind the box and a push brings it closer to the target, how
 *     often the move is that push;
 *   - notes: those push states again with the target's offset from the box mirrored in the notes:
 *     a move read from the notes stops pushing there, one read from the board does not;
 *   - playing: whole validation episodes as the run plays them (held-out seeds, greedy; PROBE_TEMP=T
 *     samples them at temperature T instead): success, and of the failures, how many left the box
 *     where no push can move it again (in a corner), how many ran out of turns with the box still
 *     movable, and how many came back to a state they had been in (a cycle greedy play repeats),
 *     by the length of that cycle (1: a move that changed nothing, 2: a move and its undoing).
 */
import { hashSeed } from '../../src/engine/rng';
import { generate } from '../../src/model/generate';
import { loadConfig } from '../../src/config/load';
import { evaluate } from '../../src/rollout/evaluate';
import { firstTurnPrompt, greedyRequest, orExit, probeSetup } from './probe_setup';
import sokoban, { BOARD } from '../../plugins/envs/sokoban';
import { gridNotes } from '../../plugins/envs/_grid/questions';
import { roomText } from '../../plugins/envs/sokoban/render';
import { ACTIONS, boxesOnTargets, copyRoom, offset, type Action, type Room } from '../../plugins/envs/sokoban/room';
import { shortestSolution } from '../../plugins/envs/sokoban/solve';
import type { Env, WarmStartHooks } from '../../src/sdk/types';

/** Moves of a shortest solution from `room`. */
const solutionMoves = (room: Room): Set<Action> => new Set(shortestSolution(room)?.firstMoves ?? []);

const distance = (room: Room, a: number, b: number) =>
  Math.abs(Math.floor(a / room.cols) - Math.floor(b / room.cols)) + Math.abs((a % room.cols) - (b % room.cols));

/** The push the player can make from where it stands that brings the box closer to its target, if any. */
function closingPush(room: Room): Action | null {
  const [box, target] = [room.boxes[0]!, room.targets[0]!];
  for (const action of ACTIONS) {
    const step = offset(room.cols, action);
    if (room.player + step !== box || room.walls[box + step]) continue;
    if (distance(room, box + step, target) < distance(room, box, target)) return action;
  }
  return null;
}

/** A box off its target that no push can move again: walls on two sides that meet at a corner. */
function boxStuck(room: Room): boolean {
  const box = room.boxes[0]!;
  if (room.targets.includes(box)) return false;
  const wall = (action: Action) => room.walls[box + offset(room.cols, action)] === 1;
  return (wall('Up') || wall('Down')) && (wall('Left') || wall('Right'));
}

const { folder, n, overrides, model, tokenizer, chat, host, withNotes, moveOf } = await probeSetup('probe_sokoban.ts', 'rooms', 128);
const playTemperature = Number(process.env.PROBE_TEMP ?? 0);
const sampled = playTemperature > 0 ? [`val_env_manager.generating_args.temperature=${playTemperature}`, 'val_env_manager.generating_args.do_sample=true'] : [];
const { config } = await orExit(
  loadConfig(
    {
      configName: 'sokoban_compact',
      overrides: [`pretrain=${folder}`, 'warm_start.enabled=false', `val_batch_size=${n}`, `val_env_manager.num_env_groups=${n}`, ...sampled, ...overrides],
    },
    host,
  ),
);
const envConfig = sokoban.config.parse(config.custom_envs.SimpleSokoban!.env_config);
const env = new sokoban.env(envConfig, host.envContext()) as Env & WarmStartHooks;
/** The env's room, read back through its text (the env keeps it private). */
function roomOf(text: string): Room {
  const lines = text.split('\n');
  const cols = lines[0]!.length;
  const cells = lines.join('');
  const where = (symbols: string) => [...cells].flatMap((cell, at) => (symbols.includes(cell) ? [at] : []));
  return {
    rows: lines.length,
    cols,
    walls: Uint8Array.from([...cells], (cell) => (cell === '#' ? 1 : 0)),
    targets: where('OS√'),
    boxes: where('X√'),
    player: where('PS')[0]!,
  };
}
const rooms: Room[] = [];
let instruction = '';
for (let i = 0; i < n; i++) {
  const reset = await env.reset(hashSeed(i, 'probe_sokoban'));
  instruction = reset.info.instruction;
  rooms.push(roomOf(reset.observation));
}
const notesOf = (room: Room) => gridNotes(roomText(room), BOARD);
const request = (id: number, promptIds: number[], maxNewTokens: number) => greedyRequest(chat, id, promptIds, maxNewTokens);
const firstTurn = firstTurnPrompt(config.custom_envs.SimpleSokoban!, chat, instruction);
const promptOf = (room: Room) => firstTurn(roomText(room));
const forcedPrompt = (room: Room, notes: string) => withNotes(promptOf(room), notes);
const share = (k: number, of: number) => `${k}/${of} (${((100 * k) / Math.max(1, of)).toFixed(0)}%)`;

// reading: the model's own notes on the first state against the env's
const own = await generate(
  model,
  rooms.map((room, i) => request(i, promptOf(room), 40)),
);
const parts = { whole: 0, box: 0, target: 0, walls: 0 };
own.forEach((result, i) => {
  const said = (/<think>(.*?)<\/think>/.exec(tokenizer.decode(result.tokens, { skipSpecialTokens: true }))?.[1] ?? '').split('; ');
  const truth = notesOf(rooms[i]!).split('; ');
  if (said.join('; ') === truth.join('; ')) parts.whole++;
  (['box', 'target', 'walls'] as const).forEach((part, k) => {
    if (said[k] === truth[k]) parts[part]++;
  });
});

// deciding: the player on every free cell, the true notes forced, then the move
const states = rooms.flatMap((room) =>
  [...room.walls.keys()]
    .flatMap((cell) => (room.walls[cell] || room.boxes.includes(cell) ? [] : [{ ...copyRoom(room), player: cell }]))
    .filter((state) => boxesOnTargets(state) === 0),
);
const decided = await generate(
  model,
  states.map((state, i) => request(i, forcedPrompt(state, notesOf(state)), 4)),
);
let optimal = 0;
let randomShare = 0;
const pushStates: Array<{ state: Room; push: Action }> = [];
let pushed = 0;
decided.forEach((result, i) => {
  const state = states[i]!;
  const best = solutionMoves(state);
  const chosen = moveOf(result) as Action;
  if (best.has(chosen)) optimal++;
  randomShare += best.size / ACTIONS.length;
  const push = closingPush(state);
  if (push) {
    pushStates.push({ state, push });
    if (chosen === push) pushed++;
  }
});
// does the move read the notes? the push states with the target's offset from the box mirrored
const MIRROR: Record<string, string> = { below: 'above', above: 'below', east: 'west', west: 'east' };
const mirrored = await generate(
  model,
  pushStates.map(({ state }, i) =>
    request(
      i,
      forcedPrompt(
        state,
        notesOf(state).replace(/(target from box [^;]*)/, (part) => part.replace(/below|above|east|west/g, (word) => MIRROR[word]!)),
      ),
      4,
    ),
  ),
);
const pushedMirrored = mirrored.filter((result, i) => moveOf(result) === pushStates[i]!.push).length;
model.dispose();

console.log(`${folder}: ${n} held-out rooms`);
console.log(
  `  reading   notes exact ${share(parts.whole, n)}; box ${share(parts.box, n)}, target from box ${share(parts.target, n)}, walls ${share(parts.walls, n)}`,
);
console.log(
  `  deciding  ${states.length} states (the player on every free cell), true notes forced: a move of a shortest solution ${share(optimal, states.length)} ` +
    `(a random move: ${((100 * randomShare) / states.length).toFixed(0)}%); on the ${pushStates.length} states behind the box with a push towards the target, that push ${share(pushed, pushStates.length)}`,
);
console.log(
  `  notes     the same push states with the target's offset from the box mirrored in the notes: that push ${share(pushedMirrored, pushStates.length)}`,
);

// playing: whole held-out episodes as validation plays them, each failure sorted by where it left the box
const { batch } = await orExit(evaluate(config, host));
const replayer = new sokoban.env(envConfig, host.envContext()) as Env & WarmStartHooks;
const failures = { stuck: 0, outOfTurns: 0, looped: 0 };
/** The failures' first cycle, by its length in moves: 2 is a move and its undoing. */
const cycles = new Map<number, number>();
let turns = 0;
let exactTurns = 0;
/** Episodes and successes by the length of the room's shortest solution: are the failures the long rooms? */
const byLength = new Map<number, { episodes: number; won: number }>();
for (const episode of batch.episodes) {
  const first = (await replayer.reset(episode.seed, undefined, episode.suiteEpisode ? { episode: episode.suiteEpisode } : undefined)).observation;
  // each room state's turn of first visit: a state met again closes a cycle of (now - then) moves
  const seen = new Map([[first, 0]]);
  const length = shortestSolution(roomOf(first))?.length ?? -1;
  const row = byLength.get(length) ?? { episodes: 0, won: 0 };
  row.episodes++;
  if (episode.metrics.success) row.won++;
  byLength.set(length, row);
  let cycle: number | null = null;
  for (const [index, turn] of episode.turns.entries()) {
    turns++;
    if (/<think>(.*?)<\/think>/.exec(turn.responseText)?.[1] === replayer.stateNotes!()) exactTurns++;
    const { observation } = await replayer.step(turn.responseText);
    // greedy decoding on a state seen before makes the same move again: the episode cycles
    const then = seen.get(observation);
    if (then !== undefined) cycle ??= index + 1 - then;
    else seen.set(observation, index + 1);
  }
  if (episode.metrics.success) continue;
  if (boxStuck(roomOf(episode.finalObservation))) failures.stuck++;
  else failures.outOfTurns++;
  if (cycle !== null) {
    failures.looped++;
    cycles.set(cycle, (cycles.get(cycle) ?? 0) + 1);
  }
}
const won = batch.episodes.filter((e) => e.metrics.success).length;
console.log(
  `  playing   ${batch.episodes.length} held-out episodes${playTemperature > 0 ? ` sampled at temperature ${playTemperature}` : ''}: success ${share(won, batch.episodes.length)}; failed with the box stuck in a corner ${failures.stuck}, ` +
    `out of turns with the box movable ${failures.outOfTurns}; ${failures.looped} failures came back to a room state they had left ` +
    `(greedy decoding then repeats itself); notes exact at ${share(exactTurns, turns)} turns`,
);
console.log(
  `  cycles    ${[...cycles.entries()]
    .sort(([a], [b]) => a - b)
    .map(([moves, count]) => `${moves} moves ${count}`)
    .join(', ')} (the failures' first cycle, by its length: 2 is a move and its undoing)`,
);
console.log(
  `  by length ${[...byLength.entries()]
    .sort(([a], [b]) => a - b)
    .map(([length, { episodes, won }]) => `${length} moves ${won}/${episodes}`)
    .join(', ')} (the shortest solution of the first room, and the episodes won of those)`,
);
