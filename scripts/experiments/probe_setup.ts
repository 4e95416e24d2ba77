/** What the probes start from: the wasm backend and the model (all three), and the grid probes' command line. */
import { startBackend } from '../../src/engine/backend';
import { AgenticError } from '../../src/errors';
import { Rng } from '../../src/engine/rng';
import type { GenerationRequest } from '../../src/model/generate';
import { loadModel } from '../../src/model/load';
import { PluginHost } from '../../src/host/plugin_host';
import type { CustomEnvConfig } from '../../src/config/schema';
import { ChatFormat } from '../../src/rollout/chat';
import { TurnPrompts } from '../../src/rollout/turn_prompt';

/** `<model-folder> [count] [key=value ...]`; a usage line and exit 2 when the folder is missing or the count is not a positive integer. */
export async function probeSetup(script: string, counted: string, defaultCount: number) {
  const [folder, count = String(defaultCount), ...overrides] = process.argv.slice(2);
  const n = Number(count);
  if (!folder || !Number.isInteger(n) || n < 1) {
    console.error(`usage: bun scripts/experiments/${script} <model-folder> [${counted}, a positive integer] [key=value ...]`);
    process.exit(2);
  }
  const { model, tokenizer } = await probeModel(folder);
  return {
    folder,
    n,
    overrides,
    model,
    tokenizer,
    chat: new ChatFormat(tokenizer),
    host: new PluginHost(),
    /** `promptIds` with `notes` forced into the response, up to the move (`>Right` is one token of the built-in tokenizer). */
    withNotes: (promptIds: number[], notes: string) => [...promptIds, ...tokenizer.encode(`<think>${notes}</think><answer`, { addSpecialTokens: false })],
    /** The move a generation continuing `withNotes` made. */
    moveOf: (result: { tokens: number[] }) => /^>?\s*(\w+)/.exec(tokenizer.decode(result.tokens, { skipSpecialTokens: true }))?.[1] ?? '(none)',
  };
}

/** The wasm backend and the model of `folder`, for reading only; a folder that is not a model is one line and exit 2. */
export async function probeModel(folder: string) {
  await startBackend('wasm');
  try {
    return await loadModel(folder, { seed: 0, trainable: false });
  } catch (error) {
    console.error(`error: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    process.exit(2);
  }
}

/** A greedy generation of `maxNewTokens` at most from `promptIds`, stopping where `chat` ends a turn. */
export const greedyRequest = (chat: ChatFormat, id: number, promptIds: number[], maxNewTokens: number): GenerationRequest => ({
  id,
  promptIds,
  sampling: { temperature: 0, topP: 1, topK: 0, doSample: false },
  maxNewTokens,
  rng: Rng.fromSeed(id),
  stopTokenIds: chat.stopTokenIds,
});

/** `work`'s result; a bad input it meets (a model folder, a config override) is one line and its exit code, never a stack trace. */
export async function orExit<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!(error instanceof AgenticError)) throw error;
    console.error(`error: ${error.message.split('\n')[0]}`);
    process.exit(error.exitCode);
  }
}

/**
 * The ids of a first turn showing `observation`, made as the rollout makes them (TurnPrompts) from
 * the probed config's env entry: its system prompt and its turn template, whatever they hold (a
 * `{last_action_desc}` line reads `(none yet)` there, as in an episode's first turn).
 */
export function firstTurnPrompt(custom: CustomEnvConfig, chat: ChatFormat, instruction: string): (observation: string) => number[] {
  const prompts = new TurnPrompts(custom, chat);
  return (observation) => prompts.turnIds({ step: 0, instruction, observation, suffix: '', observations: [observation], turns: [], toolResults: null });
}
