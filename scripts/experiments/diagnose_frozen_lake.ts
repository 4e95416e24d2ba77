/**
 * A diagnostic, never a training recipe: can the policy compute a good move from the true notes?
 * `bun scripts/experiments/diagnose_frozen_lake.ts <base-folder> <out-folder> [boards] [epochs]`
 *
 * 1. A simple rule over what the notes say (towards the goal, on the longer axis first, never into
 *    a hole; else any move onto the lake) is played greedily on 20000 random maps: what a policy
 *    that decides from the notes alone could win.
 * 2. The base is trained supervised on that rule's moves: every frozen cell of `boards` boards
 *    (their own seed stream), the env's notes forced into the response, the loss on the answer only.
 *    The result is saved to <out-folder>; `bun run probe:frozen_lake <out-folder>` then shows how it
 *    decides (its own notes are not trained and come apart).
 *
 * Issue #7 forbids solver-derived moves in a warm start, so nothing here feeds `agentic train`;
 * docs/learning_history.md (eighth round) compares what RL learns with what this learns.
 */
import { startBackend } from '../../src/engine/backend';
import { hashSeed, Rng } from '../../src/engine/rng';
import { loadModel, saveModel } from '../../src/model/load';
import { AdamW } from '../../src/model/optim';
import { ChatFormat } from '../../src/rollout/chat';
import { updateSupervised } from '../../src/train/update';
import { BOARD } from '../../plugins/envs/frozen_lake';
import { gridNotes } from '../../plugins/envs/_grid/questions';
import { ACTIONS, generateLake, neighbour, type Action, type Lake } from '../../plugins/envs/frozen_lake/lake';
import { lakeText } from '../../plugins/envs/frozen_lake/render';

const SIZE = 4;
const P_FROZEN = 0.8;
const TURNS = 10;

function ruleMove(lake: Lake, cell: number): Action {
  const [row, col] = [Math.floor(cell / SIZE), cell % SIZE];
  const [dr, dc] = [Math.floor(lake.goal / SIZE) - row, (lake.goal % SIZE) - col];
  const vertical: Action | null = dr > 0 ? 'Down' : dr < 0 ? 'Up' : null;
  const horizontal: Action | null = dc > 0 ? 'Right' : dc < 0 ? 'Left' : null;
  const safe = (move: Action) => neighbour(SIZE, cell, move) !== cell && lake.tiles[neighbour(SIZE, cell, move)] !== 'hole';
  const towards = Math.abs(dc) > Math.abs(dr) ? [horizontal, vertical] : [vertical, horizontal];
  return towards.find((move): move is Action => move !== null && safe(move)) ?? ACTIONS.find(safe) ?? 'Left';
}

function ruleWins(lake: Lake): boolean {
  let cell = lake.start;
  for (let turn = 0; turn < TURNS; turn++) {
    cell = neighbour(SIZE, cell, ruleMove(lake, cell));
    if (lake.tiles[cell] !== 'frozen') return lake.tiles[cell] === 'goal';
  }
  return false;
}

const drawLake = (seed: number) => generateLake(SIZE, P_FROZEN, Rng.fromSeed(seed, 'frozen_lake', 'map'));

const [base, out, boards = '512', epochs = '4'] = process.argv.slice(2);
if (!base || !out) {
  console.error('usage: bun scripts/experiments/diagnose_frozen_lake.ts <base-folder> <out-folder> [boards] [epochs]');
  process.exit(2);
}

const MAPS = 20000;
let wins = 0;
for (let seed = 0; seed < MAPS; seed++) if (ruleWins(drawLake(seed))) wins++;
console.log(`the rule, greedy, on ${MAPS} random maps: ${(wins / MAPS).toFixed(3)}`);

await startBackend('wasm');
const { model, tokenizer } = await loadModel(base, { seed: 0, trainable: true });
const chat = new ChatFormat(tokenizer);
const ids: Int32Array[] = [];
const masks: Uint8Array[] = [];
for (let i = 0; i < Number(boards); i++) {
  const lake = drawLake(hashSeed(i, 'diagnose_frozen_lake'));
  lake.tiles.forEach((tile, cell) => {
    if (tile !== 'frozen') return;
    const board = lakeText(lake, cell);
    const prompt = [...chat.firstTurn('Reach G.', board), ...tokenizer.encode(`<think>${gridNotes(board, BOARD)}</think><answer`, { addSpecialTokens: false })];
    const answer = [...tokenizer.encode(`>${ruleMove(lake, cell)}</answer>`, { addSpecialTokens: false }), chat.stopTokenIds[0]!];
    const mask = new Uint8Array(prompt.length + answer.length);
    mask.fill(1, prompt.length);
    ids.push(Int32Array.from([...prompt, ...answer]));
    masks.push(mask);
  });
}
const optimizer = new AdamW(model.variables, { beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0 });
for (let epoch = 0; epoch < Number(epochs); epoch++) {
  const { metrics } = await updateSupervised(
    model,
    optimizer,
    { ids, masks },
    {
      epochs: 1,
      miniBatchRows: 64,
      microBatchRows: 64,
      gradientAccumulationSteps: 1,
      sequenceLength: 96,
      learningRate: 1e-3,
      maxGradNorm: 1,
      shuffleSeed: [0, 'diagnose_frozen_lake', epoch],
      recompute: false,
    },
  );
  console.log(`${ids.length} rows, epoch ${epoch + 1}/${epochs}: loss ${metrics['sft/loss']!.toFixed(4)}`);
}
await saveModel(out, model, tokenizer);
optimizer.dispose();
model.dispose();
console.log(`saved to ${out}; see how it decides: bun run probe:frozen_lake ${out}`);
