/**
 * How a FrozenLake policy reads and decides: `bun scripts/experiments/probe_frozen_lake.ts <model-folder> [boards] [key=value ...]`.
 * The overrides apply to the default config the probe plays with (e.g. `custom_envs.FrozenLake.env_config.p=0.7`
 * for boards with more holes).
 *
 * On the first state of held-out boards (seeds no run trains or validates on), with the default
 * run's prompt (the first turn as the config's FrozenLake entry makes it, through the rollout's
 * TurnPrompts: system "Reach G.", the bare board) and greedy decoding (PROBE_TEMP=T samples the
 * reading and deciding lines at temperature T instead, as training rollouts do at 1):
 *   - reading: how often the model's own think notes equal the env's
 *     (`WarmStartHooks.stateNotes`), whole and by part (the goal's row offset, its column offset,
 *     the adjacent holes);
 *   - deciding: with the env's true notes forced into the response, how often the move that follows
 *     is a shortest-path move (breadth-first search around the holes); then, with the player put on
 *     every frozen cell of the same boards, what kind of move it makes: towards the goal, away from
 *     it, into the edge or into a hole, split by whether the cell has a move towards the goal that
 *     is no hole (where it has none, a detour is needed);
 *   - forks: on the states where one move towards the goal is a hole and another is safe, 8 moves
 *     sampled at temperature 1 each, as a training group samples them: how often into the hole and
 *     how often the safe move, and how many states always, never or sometimes go into the hole
 *     (only these give a group a choice);
 *   - notes: the same forks with the notes edited to disagree with the board (no holes named, the
 *     safe move named as the hole, the goal's offset mirrored): whether the move reads the notes
 *     or the board;
 *   - playing: as many whole validation episodes (the default config's held-out seeds, greedy):
 *     success, failures by kind (into a hole, and how many of those on wrong notes; out of turns),
 *     and how often the notes are exact over every turn played. PROBE_SHOW=N prints the first N
 *     failed episodes turn by turn: the board, the true notes and the response.
 * docs/learning_history.md quotes both for the warm-started bases and the trained policies.
 */
import { hashSeed, Rng } from '../../src/engine/rng';
import { generate, type GenerationRequest } from '../../src/model/generate';
import { loadConfig } from '../../src/config/load';
import { evaluate } from '../../src/rollout/evaluate';
import { firstTurnPrompt, orExit, probeSetup } from './probe_setup';
import frozenLake, { BOARD } from '../../plugins/envs/frozen_lake';
import { gridNotes } from '../../plugins/envs/_grid/questions';
import type { Env, WarmStartHooks } from '../../src/sdk/types';

const MOVES: Record<string, readonly [number, number]> = { Up: [-1, 0], Down: [1, 0], Left: [0, -1], Right: [0, 1] };

const cellsOf = (board: string) => board.split('\n').map((line) => [...line]);

/** Row and column of the first `symbol` on the grid. */
function locate(grid: readonly string[][], symbol: string): [number, number] {
  const row = grid.findIndex((cells) => cells.includes(symbol));
  return [row, grid[row]!.indexOf(symbol)];
}

/** The moves that shorten the path to the goal around the holes. */
function shortestMoves(board: string): Set<string> {
  const grid = cellsOf(board);
  const [goal, player] = [locate(grid, 'G'), locate(grid, 'P')];
  const key = ([r, c]: readonly [number, number]) => `${r},${c}`;
  const open = ([r, c]: readonly [number, number]) => grid[r]?.[c] !== undefined && grid[r]![c] !== 'O';
  const distance = new Map([[key(goal), 0]]);
  const queue = [goal];
  while (queue.length) {
    const cell = queue.shift()!;
    for (const [dr, dc] of Object.values(MOVES)) {
      const next: [number, number] = [cell[0] + dr, cell[1] + dc];
      if (!open(next) || distance.has(key(next))) continue;
      distance.set(key(next), distance.get(key(cell))! + 1);
      queue.push(next);
    }
  }
  const here = distance.get(key(player)) ?? Infinity;
  return new Set(Object.keys(MOVES).filter((move) => (distance.get(key([player[0] + MOVES[move]![0], player[1] + MOVES[move]![1]])) ?? Infinity) < here));
}

/** What a move does on a board: into the edge, into a hole, or a step towards or away from the goal. */
function moveKind(board: string, move: string): 'edge' | 'hole' | 'towards' | 'away' {
  const grid = cellsOf(board);
  const [[pr, pc], [gr, gc]] = [locate(grid, 'P'), locate(grid, 'G')];
  const [dr, dc] = MOVES[move]!;
  const cell = grid[pr + dr]?.[pc + dc];
  if (cell === undefined) return 'edge';
  if (cell === 'O') return 'hole';
  return Math.abs(gr - pr - dr) + Math.abs(gc - pc - dc) < Math.abs(gr - pr) + Math.abs(gc - pc) ? 'towards' : 'away';
}

/** Whether `move` would bring the player closer to the goal were its cell not a hole. */
function towardsOnOpenIce(board: string, move: string): boolean {
  return moveKind(board.replace(/O/g, '_'), move) === 'towards';
}

const { folder, n, overrides, model, tokenizer, chat, host, withNotes, moveOf } = await probeSetup('probe_frozen_lake.ts', 'boards', 200);
const { config } = await orExit(
  loadConfig(
    {
      configName: 'agentic',
      overrides: [`pretrain=${folder}`, 'warm_start.enabled=false', `val_batch_size=${n}`, `val_env_manager.num_env_groups=${n}`, ...overrides],
    },
    host,
  ),
);
const envConfig = frozenLake.config.parse(config.custom_envs.FrozenLake!.env_config);
const env = new frozenLake.env(envConfig, host.envContext()) as Env & WarmStartHooks;
const boards: Array<{ observation: string; notes: string; shortest: Set<string> }> = [];
let instruction = '';
for (let i = 0; i < n; i++) {
  const { observation, info } = await env.reset(hashSeed(i, 'probe_frozen_lake'));
  instruction = info.instruction;
  boards.push({ observation, notes: env.stateNotes!(), shortest: shortestMoves(observation) });
}
const temperature = Number(process.env.PROBE_TEMP ?? 0);
const request = (id: number, promptIds: number[], maxNewTokens: number): GenerationRequest => ({
  id,
  promptIds,
  sampling: { temperature, topP: 1, topK: 0, doSample: temperature > 0 },
  maxNewTokens,
  rng: Rng.fromSeed(id),
  stopTokenIds: chat.stopTokenIds,
});
const promptOf = firstTurnPrompt(config.custom_envs.FrozenLake!, chat, instruction);
const forcedPrompt = (board: string, notes: string) => withNotes(promptOf(board), notes);

// reading: the model's own notes against the env's
const own = await generate(
  model,
  boards.map((b, i) => request(i, promptOf(b.observation), 32)),
);
const parts = { whole: 0, rows: 0, columns: 0, holes: 0 };
own.forEach((result, i) => {
  const text = tokenizer.decode(result.tokens, { skipSpecialTokens: true });
  const notes = /<think>(.*?)<\/think>/.exec(text)?.[1] ?? '';
  const [goal = '', holes = ''] = notes.split('; ');
  const [trueGoal, trueHoles] = boards[i]!.notes.split('; ') as [string, string];
  const words = goal.split(' ');
  const trueWords = trueGoal.split(' ');
  // "goal 2 below 1 east" / "goal same row 2 west": words 1-2 the row, 3-4 the column
  if (notes === boards[i]!.notes) parts.whole++;
  if (words.slice(1, 3).join(' ') === trueWords.slice(1, 3).join(' ')) parts.rows++;
  if (words.slice(3).join(' ') === trueWords.slice(3).join(' ')) parts.columns++;
  if (holes === trueHoles) parts.holes++;
});

// deciding: the true notes forced, then the move
const forced = await generate(
  model,
  boards.map((b, i) => request(i, forcedPrompt(b.observation, b.notes), 4)),
);
let good = 0;
const moves: Record<string, number> = {};
forced.forEach((result, i) => {
  const move = moveOf(result);
  moves[move] = (moves[move] ?? 0) + 1;
  if (boards[i]!.shortest.has(move)) good++;
});

// deciding on every state: the player on each frozen cell of the same boards, the true notes forced
const everyState = boards.flatMap(({ observation }) => {
  const cells = observation.replace('P', '_');
  return [...cells].flatMap((cell, at) => (cell === '_' ? [cells.slice(0, at) + 'P' + cells.slice(at + 1)] : []));
});
const stateMoves = await generate(
  model,
  everyState.map((board, i) => request(i, forcedPrompt(board, gridNotes(board, BOARD)), 4)),
);
// what each move does from each state
const moveKinds = everyState.map((board) => Object.fromEntries(Object.keys(MOVES).map((move) => [move, moveKind(board, move)])));
const kinds: Record<string, Record<string, number>> = { 'a safe move towards the goal exists': {}, 'a detour is needed': {} };
stateMoves.forEach((result, i) => {
  const byMove = moveKinds[i]!;
  const situation = Object.values(byMove).includes('towards') ? 'a safe move towards the goal exists' : 'a detour is needed';
  const kind = byMove[moveOf(result)] ?? 'no move';
  kinds[situation]![kind] = (kinds[situation]![kind] ?? 0) + 1;
});

// the choice a group would see: on the states where one move towards the goal is a hole and
// another is safe, 8 moves sampled at temperature 1 each (as a training group of 8 samples them)
const forks = everyState.flatMap((board, i) => {
  const byMove = moveKinds[i]!;
  const hole = Object.keys(MOVES).find((move) => byMove[move] === 'hole' && towardsOnOpenIce(board, move));
  const safe = Object.keys(MOVES).find((move) => byMove[move] === 'towards');
  return hole && safe ? [{ board, hole, safe }] : [];
});
const GROUP = 8;
type Fork = (typeof forks)[number];
/** Each fork's 8 sampled moves after `notes` (the true ones, or edited to see whether the move reads them). */
async function sampleForks(notes: (fork: Fork) => string) {
  const results = await generate(
    model,
    forks.flatMap((fork, i) =>
      Array.from({ length: GROUP }, (_, k) => ({
        ...request(i * GROUP + k, forcedPrompt(fork.board, notes(fork)), 4),
        sampling: { temperature: 1, topP: 1, topK: 0, doSample: true },
      })),
    ),
  );
  const groups = { always: 0, never: 0, mixed: 0 };
  let intoHole = 0;
  let safe = 0;
  forks.forEach((fork, i) => {
    const moves = results.slice(i * GROUP, (i + 1) * GROUP).map(moveOf);
    const holes = moves.filter((move) => move === fork.hole).length;
    intoHole += holes;
    safe += moves.filter((move) => move === fork.safe).length;
    groups[holes === GROUP ? 'always' : holes === 0 ? 'never' : 'mixed']++;
  });
  const pct = (k: number) => `${((100 * k) / (GROUP * forks.length)).toFixed(0)}%`;
  return { groups, intoHole: pct(intoHole), safe: pct(safe) };
}
const trueNotes = (fork: Fork) => gridNotes(fork.board, BOARD);
const forkMoves = await sampleForks(trueNotes);
// does the move read the notes? The same forks with notes that say otherwise than the board: a
// move computed from the notes follows them, one computed from the board does not
const MIRROR: Record<string, string> = { below: 'above', above: 'below', east: 'west', west: 'east' };
const edited = {
  'holes none': await sampleForks((fork) => trueNotes(fork).replace(/holes .*$/, 'holes none')),
  'the safe move named as the hole': await sampleForks((fork) => trueNotes(fork).replace(/holes .*$/, `holes ${fork.safe}`)),
  'the goal mirrored': await sampleForks((fork) => trueNotes(fork).replace(/below|above|east|west/g, (word) => MIRROR[word]!)),
};
const share = (k: number) => `${k}/${n} (${((100 * k) / n).toFixed(0)}%)`;
console.log(`${folder}: ${n} held-out first states${temperature > 0 ? `, sampled at temperature ${temperature}` : ''}`);
console.log(`  reading   notes exact ${share(parts.whole)}; goal row ${share(parts.rows)}, goal column ${share(parts.columns)}, holes ${share(parts.holes)}`);
console.log(`  deciding  with the true notes, a shortest-path move ${share(good)}; moves ${JSON.stringify(moves)}`);
for (const [situation, counts] of Object.entries(kinds)) {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  console.log(
    `  every state, ${situation} (${total}): ${Object.entries(counts)
      .map(([kind, k]) => `${kind} ${k} (${((100 * k) / total).toFixed(0)}%)`)
      .join(', ')}`,
  );
}
console.log(
  `  forks     ${forks.length} states with a hole and a safe cell both towards the goal, ${GROUP} moves sampled at temperature 1 on each: ` +
    `into the hole ${forkMoves.intoHole}, the safe move ${forkMoves.safe}; always ${forkMoves.groups.always}, never ${forkMoves.groups.never}, mixed ${forkMoves.groups.mixed}`,
);
console.log(
  `  notes     the forks with notes edited: ${Object.entries(edited)
    .map(([edit, moves]) => `${edit}: into the hole ${moves.intoHole}, the safe move ${moves.safe}`)
    .join('; ')}`,
);
model.dispose();

// playing: whole held-out episodes as validation plays them (the default config's val_suite,
// greedy), each failure sorted by kind, and the notes checked at every turn against the env's
const { batch } = await orExit(evaluate(config, host));
const replayer = new frozenLake.env(envConfig, host.envContext()) as Env & WarmStartHooks;
let turns = 0;
let exactTurns = 0;
const failures = { hole: 0, holeWithWrongNotes: 0, outOfTurns: 0 };
// PROBE_SHOW=N prints the first N failed episodes turn by turn (board, notes said and true, response)
let show = Number(process.env.PROBE_SHOW ?? 0);
for (const episode of batch.episodes) {
  // a suite's episode replays its own map (reset's options.episode), not the one its seed draws
  const reset = await replayer.reset(episode.seed, undefined, episode.suiteEpisode ? { episode: episode.suiteEpisode } : undefined);
  const lines: string[] = [];
  let board = reset.observation;
  for (const turn of episode.turns) {
    const truth = replayer.stateNotes!();
    const said = /<think>(.*?)<\/think>/.exec(turn.responseText)?.[1];
    turns++;
    if (said === truth) exactTurns++;
    lines.push(`${board}\n  true: ${truth}\n  said: ${turn.responseText}`);
    const result = await replayer.step(turn.responseText);
    board = result.observation;
    if (result.terminated && result.reward <= 0) {
      failures.hole++;
      if (said !== truth) failures.holeWithWrongNotes++;
    }
  }
  if (episode.score < 1 && episode.endReason !== 'terminated') failures.outOfTurns++;
  if (episode.score < 1 && show-- > 0) console.log(`--- seed ${episode.seed}, ${episode.endReason}\n${lines.join('\n')}\n${board}`);
}
const won = batch.episodes.filter((e) => e.score >= 1).length;
console.log(
  `  playing   ${batch.episodes.length} held-out episodes: success ${share(won)}; into a hole ${failures.hole} (${failures.holeWithWrongNotes} of them on wrong notes), out of turns ${failures.outOfTurns}; notes exact at ${exactTurns}/${turns} turns (${((100 * exactTurns) / turns).toFixed(0)}%)`,
);
