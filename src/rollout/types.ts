/**
 * The data a rollout produces. An Episode is what happened (turns, texts, rewards, why it ended);
 * a Sample is one training row built from it; a RolloutBatch is what the trainer receives.
 *
 * Token alignment, so that nobody has to guess (verl's token-shift pitfall): in a Sample,
 * `logProbs[t]` is the sampling log-probability of `inputIds[t]` given `inputIds[0..t-1]`, so a
 * trainer that computes logits at position t-1 compares them with `logProbs[t]` under
 * `responseMask[t]`.
 */
import type { EnvManagerKind } from '../config/schema';
import type { EpisodeDraw, MetricAgg, MetricValue, SeatOutcome, SuiteEpisode } from '../sdk/types';

export type RolloutMode = 'train' | 'val';

/**
 * Why an episode ended: the env reached a terminal state, or truncated it itself; the policy used
 * all max_steps actions; the next prompt did not fit in sequence_length; the episode ran out of
 * its time budget (episode_timeout_s); the env plugin failed (threw, hung, malformed result); or
 * the inference server gave no response after its retries.
 */
export type EndReason = 'terminated' | 'truncated' | 'max_actions' | 'context_full' | 'timeout' | 'env_failure' | 'infer_failure';

export interface Turn {
  /** The observation the policy answered. */
  observation: string;
  /** Ids placed before the response: traj-wise the new ids of this turn, step-wise the whole prompt. */
  promptIds: number[];
  /** The response exactly as sampled. */
  responseIds: number[];
  /** Sampling log-probability of each response id (0 for the random policy). */
  logProbs: number[];
  /** The response as text, as the env received it. */
  responseText: string;
  reward: number;
  /** The action the env parsed, null if none, undefined if the env does not say. */
  action?: string | null;
  actionDesc?: string;
  metrics: Record<string, MetricValue>;
  metricsAgg: Record<string, MetricAgg>;
  /** sha256 of the observation: the anchor state GiGPO groups steps by. */
  stateHash: string;
  /** The env's reward function could not score this turn (info.reward_error): one line naming it; the reward is the env's fallback. */
  rewardError?: string;
  /**
   * Trajectory-wise: this turn starts a new row, its promptIds a whole prompt (an outside agent's
   * session split where a call's prompt did not extend the last, agent_episode.ts).
   */
  opensRow?: true;
}

/**
 * A seated env's game as one seat's record holds it (seated_episode.ts): every seat a player trains
 * in gets a record of its own turns, and the records of one game share everything here but `index`.
 */
export interface EpisodeSeat {
  /** This record's seat, and every seat's name (SeatSpec.names). */
  index: number;
  names: readonly string[];
  /** Who played each seat, by seat: 'policy', or the env's opponent ('random', 'minimax', ...). */
  players: readonly string[];
  /** Every move of the game in play order, each seat's, as the env received it: what replays the game. */
  moves: readonly { seat: number; responseText: string }[];
  /** Each seat's return (the sum of its rewards over the game). */
  returns: readonly number[];
  /** Each seat's result, or null when the game did not finish (a failure, the turn limit, the context). */
  outcome: readonly SeatOutcome[] | null;
}

export interface Episode {
  mode: RolloutMode;
  kind: EnvManagerKind;
  tag: string;
  envId: number;
  groupId: number;
  episodeId: number;
  /** The seed the env was reset with; every env of the group used the same one. */
  seed: number;
  /** The episode's place in its tag's stream, reset's second argument (absent: reset by the seed alone). */
  draw?: EpisodeDraw;
  /** The suite episode it replayed (validation with val_suite), reset's options.episode: a replay needs it. */
  suiteEpisode?: SuiteEpisode;
  /** Same for all episodes of a group that started from the same state: `tag_group_episode_seed`. */
  trajGroupId: string;
  /** `trajGroupId_envId`. */
  trajId: string;
  instruction: string;
  turns: Turn[];
  /** The observation after the last turn (never answered). */
  finalObservation: string;
  endReason: EndReason;
  /** Sum of the turn rewards (a seat's record: its return, which a seat that never moved has too). */
  score: number;
  /** One line about an env or inference failure or a timeout, else null. */
  failure: string | null;
  /**
   * Why the episode's group must not train, in one line (an outside agent's session split under
   * gateway.on_mismatch: drop); absent: it trains. train/failed_groups.ts drops such groups.
   */
  untrained?: string;
  /** Per-episode metrics (env metrics aggregated over turns, plus num_actions, timed_out, ...). */
  metrics: Record<string, number>;
  /**
   * The best policy's success probability from the episode's start within its max_steps
   * (EvaluationHooks.optimalSuccess), set by an evaluation for envs that compute it (optima.ts).
   */
  optimum?: number;
  /** Tokens the policy generated in this episode. */
  responseTokens: number;
  seconds: number;
  /** A seated env's game (self-play, opponents): which seat this record is, and the whole game. */
  seat?: EpisodeSeat;
}

export interface TurnBounds {
  /** Offset of the turn's first prompt id in the row. */
  prompt: number;
  /** Offset of its first response id. */
  response: number;
  /** Offset after its last response id. */
  end: number;
}

export interface Sample {
  trajGroupId: string;
  trajId: string;
  tag: string;
  envId: number;
  groupId: number;
  episodeId: number;
  /** A seated env's row: the name of the seat that played it (credit never mixes seats); else null. */
  seat: string | null;
  /** Step-wise rows: the turn index (0-based); trajectory rows: null. */
  step: number | null;
  inputIds: Int32Array;
  /** 1 exactly on the tokens the policy sampled. */
  responseMask: Uint8Array;
  /** See the header: the sampling log-prob of inputIds[t], 0 where responseMask is 0. */
  logProbs: Float32Array;
  /** `score` on the last response token, 0 elsewhere (all 0 if the row has no response). */
  rewards: Float32Array;
  /** Ids before the first response id. */
  promptLength: number;
  turns: TurnBounds[];
  /** What sits on the last response token: the episode score (traj), the step reward (step). */
  score: number;
  episodeScore: number;
  /** Step-wise rows: this step's reward; trajectory rows: null. */
  stepReward: number | null;
  /** Rewards of every turn of the episode, in order. */
  stepScores: number[];
  /** Step-wise rows: hash of the observation answered (the GiGPO anchor); trajectory rows: null. */
  stateHash: string | null;
  endReason: EndReason;
  /** The episode did not reach a terminal state (any end reason but `terminated`). */
  truncated: boolean;
  /**
   * The policy version that generated the row: the number of training steps actor_train had
   * taken when actor_infer received the weights it sampled with (async training lags it).
   */
  policyVersion: number;
}

export interface RolloutBatch {
  mode: RolloutMode;
  episodes: Episode[];
  /** Trajectory-wise: one per episode, in episode order; step-wise: one per turn. */
  samples: Sample[];
  /** `env/<tag>/...`, `env/response_length`, `rollout/...`, `time/rollout` (val: prefixed `val/`). */
  metrics: Record<string, number>;
}
