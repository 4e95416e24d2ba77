/**
 * Saved episodes: what `agentic render --trajectories FILE` replays and what every render writes
 * as `episodes.json`, so a render can be redone (or a GIF drawn again) without the policy.
 *
 * The file is a JSON array of episodes, the rollout's Episode field names in a subset:
 *
 *   [{ "tag": "FrozenLake", "seed": 123,
 *      "turns": [{ "responseText": "<answer>Down</answer>", "observation": "...", "reward": 0, "action": "Down" }],
 *      "instruction": "...", "finalObservation": "...", "endReason": "terminated", "score": 1, "responseTokens": 6 }]
 *
 * Only `tag` (a custom_envs entry), `seed` and each turn's `responseText` are required: that is
 * all a replay needs. Recorded observations, rewards, the final observation and a terminated or
 * truncated ending are checked against the replay; `action`, `instruction` and `score` are
 * informational (the replay recomputes them; an outside agent's answer is its last turn's
 * `action`); `failure`, why the episode failed, lets a failed episode whose replay does not fail
 * the same way be shown as recorded (replay.ts); `responseTokens` feeds the report's token count.
 * A seated env's record (self-play, opponents) adds `seat`: its seat, the seats' names and players,
 * and every seat's moves in play order, which the replay plays instead of the turns.
 * Other fields are ignored, so a rollout's Episode objects (token ids and all) load as they are.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { firstLine, UsageError } from '../errors';
import type { EndReason, Episode } from '../rollout/types';

export const EPISODES_FILE = 'episodes.json';

const END_REASONS = [
  'terminated',
  'truncated',
  'max_actions',
  'context_full',
  'timeout',
  'env_failure',
  'infer_failure',
] as const satisfies readonly EndReason[];

const SavedTurn = z.object({
  responseText: z.string(),
  observation: z.string().optional(),
  reward: z.number().optional(),
  action: z.string().nullable().optional(),
});

const SavedEpisode = z.object({
  tag: z.string().min(1),
  seed: z.int().min(0),
  draw: z.strictObject({ draw: z.int().min(0), streamSeed: z.int().min(0) }).optional(),
  suiteEpisode: z.record(z.string(), z.unknown()).optional(),
  turns: z.array(SavedTurn),
  instruction: z.string().optional(),
  finalObservation: z.string().optional(),
  endReason: z.enum(END_REASONS).optional(),
  failure: z.string().nullable().optional(),
  score: z.number().optional(),
  responseTokens: z.int().min(0).optional(),
  // a seated env's game: every seat's moves in play order, which the replay steps the env with
  seat: z
    .object({
      index: z.int().min(0),
      names: z.array(z.string()).min(2),
      players: z.array(z.string()),
      moves: z.array(z.object({ seat: z.int().min(0), responseText: z.string() })),
    })
    .optional(),
});

export type SavedEpisode = z.output<typeof SavedEpisode>;

function issuePath(path: readonly PropertyKey[]): string {
  return path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
    .join('')
    .replace(/^\./, '');
}

/** Reads and checks a saved-episodes file; every problem is a one-line UsageError naming the file. */
export function readEpisodesFile(path: string): SavedEpisode[] {
  if (!existsSync(path)) throw new UsageError(`${path}: no such file`);
  if (statSync(path).isDirectory()) throw new UsageError(`${path}: is a folder; expected a JSON file of episodes (such as a render's ${EPISODES_FILE})`);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(`${path}: not valid JSON (${firstLine(error)})`);
  }
  if (!Array.isArray(data)) throw new UsageError(`${path}: expected a JSON array of episodes, got ${data === null ? 'null' : typeof data}`);
  if (data.length === 0) throw new UsageError(`${path}: holds no episodes`);
  const parsed = z.array(SavedEpisode).safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const [index, ...rest] = issue.path;
    const where = rest.length ? `, ${issuePath(rest)}` : '';
    throw new UsageError(`${path}: episode ${Number(index) + 1}${where}: ${issue.message}`);
  }
  return parsed.data;
}

/** The JSON text of saved episodes, one episode object per array entry. */
export function episodesFileText(episodes: readonly SavedEpisode[]): string {
  return `${JSON.stringify(episodes, null, 1)}\n`;
}

/** A rollout's episode as saved: the fields above, without the token ids. */
export function savedEpisodeOf(episode: Episode): SavedEpisode {
  return {
    tag: episode.tag,
    seed: episode.seed,
    ...(episode.draw === undefined ? {} : { draw: episode.draw }),
    ...(episode.suiteEpisode === undefined ? {} : { suiteEpisode: episode.suiteEpisode }),
    instruction: episode.instruction,
    turns: episode.turns.map((t) => ({ observation: t.observation, responseText: t.responseText, action: t.action, reward: t.reward })),
    finalObservation: episode.finalObservation,
    endReason: episode.endReason,
    failure: episode.failure,
    score: episode.score,
    responseTokens: episode.responseTokens,
    ...(episode.seat
      ? { seat: { index: episode.seat.index, names: [...episode.seat.names], players: [...episode.seat.players], moves: [...episode.seat.moves] } }
      : {}),
  };
}
