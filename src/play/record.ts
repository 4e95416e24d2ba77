/**
 * The trajectory `agentic play` saves: a saved-episodes file (src/render/episodes_file.ts) holding
 * one episode, so `agentic render --trajectories FILE` replays it into a GIF and a transcript.
 * Besides the fields render reads, each turn keeps what play showed (the env's description, the
 * metrics, tool calls, the response's token ids and log-probs); render ignores them.
 *
 * An episode that stopped early (its responses ran out) is saved with the turns played, no
 * `endReason`, and `stopped` saying why.
 */
import type { EndReason, Episode, Turn } from '../rollout/types';
import { episodesFileText, type SavedEpisode } from '../render/episodes_file';
import { writeFileAtomic } from '../util/atomic';

export interface PlayedTurn {
  turn: Turn;
  /** The env's `info.tool_calls` (tool_use reports them), else null. */
  toolCalls: unknown[] | null;
}

export interface PlayRecordInput {
  tag: string;
  seed: number;
  instruction: string;
  turns: readonly PlayedTurn[];
  /** The observation after the last turn. */
  finalObservation: string;
  /** null when the episode stopped before it ended. */
  endReason: EndReason | null;
  failure: string | null;
  /** The episode's metrics (null when it stopped early). */
  metrics: Record<string, number> | null;
  /** Who answered: "you", "script FILE", "random", "model SOURCE". */
  policy: string;
  /** Where the log-probs come from: sampled by the model, the model scoring given responses, or none. */
  logProbs: 'sampled' | 'scored' | null;
  stopped: string | null;
  /** An env with seats: the game as the seat played saw it (Episode.seat), which a replay steps through. */
  seat?: Episode['seat'];
}

type SavedPlayTurn = SavedEpisode['turns'][number] & {
  actionDesc?: string;
  metrics: Turn['metrics'];
  toolCalls?: unknown[];
  responseIds: number[];
  logProbs: number[] | null;
};

export type SavedPlay = Omit<SavedEpisode, 'turns'> & {
  turns: SavedPlayTurn[];
  policy: string;
  logProbSource: 'sampled' | 'scored' | null;
  failure: string | null;
  metrics: Record<string, number> | null;
  stopped: string | null;
};

export function playRecord(input: PlayRecordInput): SavedPlay {
  const turns = input.turns.map(
    ({ turn, toolCalls }): SavedPlayTurn => ({
      observation: turn.observation,
      responseText: turn.responseText,
      // an env that does not say which action it parsed gets no action field, not null ("none parsed")
      ...(turn.action === undefined ? {} : { action: turn.action }),
      reward: turn.reward,
      ...(turn.actionDesc === undefined ? {} : { actionDesc: turn.actionDesc }),
      metrics: turn.metrics,
      ...(toolCalls ? { toolCalls } : {}),
      responseIds: turn.responseIds,
      logProbs: input.logProbs ? turn.logProbs : null,
    }),
  );
  return {
    tag: input.tag,
    seed: input.seed,
    instruction: input.instruction,
    turns,
    finalObservation: input.finalObservation,
    ...(input.endReason ? { endReason: input.endReason } : {}),
    // a seat's score is its return, which a seat with no turn of its own has too
    score: input.seat ? input.seat.returns[input.seat.index]! : input.turns.reduce((sum, { turn }) => sum + turn.reward, 0),
    responseTokens: input.turns.reduce((sum, { turn }) => sum + turn.responseIds.length, 0),
    policy: input.policy,
    logProbSource: input.logProbs,
    failure: input.failure,
    metrics: input.metrics,
    stopped: input.stopped,
    ...(input.seat ? { seat: { index: input.seat.index, names: [...input.seat.names], players: [...input.seat.players], moves: [...input.seat.moves] } } : {}),
  };
}

/** Writes the record as a one-episode saved-episodes file, atomically (never half-written). */
export function writePlayRecord(path: string, record: SavedPlay): void {
  writeFileAtomic(path, episodesFileText([record]));
}
