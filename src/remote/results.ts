/**
 * What the trainer checks of a job's result before it is trained on (src/rollout_sources/distributed/): it comes
 * from another process, perhaps another build or a broken plugin, so nothing in it is assumed. A
 * result is the job's group (one episode per env, in order), played by weights of the job's
 * history at a version no newer than the job's, every token id inside the vocabulary, every row
 * within sequence_length and every log-prob a finite number.
 */
import { episodeSamples } from '../rollout/samples';
import type { Episode } from '../rollout/types';
import type { GroupJobData, GroupJobResult } from './jobs';

export interface ResultLimits {
  /** The model's vocabulary: token ids are below it. */
  vocab: number;
  sequenceLength: number;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Why a token id list is not one, or null. */
function idsProblem(ids: unknown, vocab: number): string | null {
  if (!Array.isArray(ids)) return 'is not a list';
  const bad = ids.find((id) => !Number.isInteger(id) || id < 0 || id >= vocab);
  return bad === undefined ? null : `holds ${JSON.stringify(bad)}, not a token id below the vocabulary (${vocab})`;
}

/** Why episode `i` of a result cannot be trained on, or null. */
function episodeProblem(episode: unknown, i: number, data: GroupJobData, limits: ResultLimits): string | null {
  if (!isRecord(episode) || !Array.isArray(episode.turns)) return `episode ${i} has no turns list`;
  if (episode.envId !== data.group.envIds[i]) return `episode ${i} is of env ${String(episode.envId)}, not the group's ${data.group.envIds[i]}`;
  for (const [t, turn] of episode.turns.entries()) {
    if (!isRecord(turn)) return `episode ${i} turn ${t} is not a turn`;
    for (const key of ['promptIds', 'responseIds'] as const) {
      const problem = idsProblem(turn[key], limits.vocab);
      if (problem) return `episode ${i} turn ${t}: ${key} ${problem}`;
    }
    const logProbs = turn.logProbs;
    if (!Array.isArray(logProbs) || logProbs.length !== (turn.responseIds as unknown[]).length)
      return `episode ${i} turn ${t}: logProbs is not one number per response id`;
    const bad = logProbs.findIndex((lp) => typeof lp !== 'number' || !Number.isFinite(lp));
    if (bad >= 0) return `episode ${i} turn ${t}: logProbs[${bad}] is ${JSON.stringify(logProbs[bad])}, not a finite number`;
  }
  const longest = Math.max(0, ...episodeSamples(episode as unknown as Episode).map((s) => s.inputIds.length));
  if (longest > limits.sequenceLength) return `episode ${i} has a row of ${longest} tokens, beyond sequence_length ${limits.sequenceLength}`;
  return null;
}

/** Why `result` cannot be the result of the job `data`, as a phrase after "the result", or null. */
export function resultProblem(result: unknown, data: GroupJobData, limits: ResultLimits): string | null {
  if (!isRecord(result) || !Array.isArray(result.episodes)) return 'has no episodes list';
  const expected = data.group.envIds.length;
  if (result.episodes.length !== expected) return `has ${result.episodes.length} episode(s) for a group of ${expected}`;
  if (!Number.isInteger(result.version) || (result.version as number) < 0) return `has no policy version (${JSON.stringify(result.version)})`;
  if ((result.version as number) > data.version) return `was played by version ${result.version}, above the version ${data.version} the job asked for`;
  if (result.history !== data.history) return `was played by weights of history ${JSON.stringify(result.history)}, not the job's ${data.history}`;
  for (const [i, episode] of result.episodes.entries()) {
    const problem = episodeProblem(episode, i, data, limits);
    if (problem) return problem;
  }
  return null;
}

/** The worker a result names, for messages. */
export function workerOf(result: GroupJobResult | undefined, processedBy: string | undefined): string {
  return processedBy ?? (typeof result?.worker === 'string' ? result.worker : 'an unnamed worker');
}
