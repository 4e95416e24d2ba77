/**
 * Who plays each seat of a seated env's game (custom_envs.<tag>.seats, rotate_seats): the policy
 * being trained, whose turns become that seat's rows; an outside agent (seat_agent,
 * ./seat_agent.ts) whose model calls the policy answers, which become that seat's rows; a snapshot
 * of an earlier policy from the opponent pool (past, ./opponent_pool.ts), which answers from its
 * prompts and trains nothing; or one of the env's own opponents (random, minimax, ...), which
 * answers without a prompt.
 */
import { AGENT_PLAYER, type CustomEnvConfig, PAST_PLAYER, POLICY_PLAYER } from '../config/schema';
import { AgenticError } from '../errors';
import type { SeatSpec } from '../sdk/types';
import type { ChatFormat } from './chat';
import type { Policy } from './policy';
import type { SeatAgentModule } from './seat_agent';

/** The player `custom.seats` gives a seat: 'policy', 'past', or the name of an env opponent ('random' included). */
export type SeatPlayer = string;

export interface SeatPlay {
  seat: number;
  /** 'policy', the env opponent's name, or who else answers (agentic play: 'you'). */
  player: SeatPlayer;
  /** The seat gets an Episode record: its turns train (a rollout's policy seats), or are the ones shown and saved (agentic play's). */
  recorded: boolean;
  /** Answers this seat from its prompts instead of the rollout's policy (a past self; agentic play: the person, or the model they play against). */
  policy?: Policy;
  /** The outside agent that plays this seat, asking the rollout's policy through the gateway (seat_agent). */
  agent?: SeatAgentModule;
}

/** Which snapshot of the opponent pool plays a group's past seats in its game `episodeId` (./opponent_pool.ts). */
export interface PastOpponents {
  policyFor(group: { groupId: number; episodeId: number }): Policy;
}

/** Where a rollout's PastOpponents come from: the opponent pool, opened for one rollout and closed after it. */
export interface PastOpponentSource {
  open(chat: ChatFormat): PastOpponents & { close(): Promise<void> };
}

/** The players of the seats as the config names them, before rotation: seats left out are the policy's. */
export function configuredPlayers(custom: CustomEnvConfig, spec: SeatSpec): SeatPlayer[] {
  return spec.names.map((name) => custom.seats?.[name] ?? POLICY_PLAYER);
}

/**
 * Who plays each seat of a group's game `episodeId`: with rotate_seats, seat s gets the player
 * configured for seat (s + groupId + episodeId) mod n, so neighbouring groups (and a validation,
 * which plays every group's episode 0) give the policy every seat, and so does a group's next
 * game. Every env of a group plays the same assignment, so a group's games differ only in the
 * policy's moves.
 */
export function rotatedPlayers(custom: CustomEnvConfig, spec: SeatSpec, group: { groupId: number; episodeId: number }): SeatPlayer[] {
  const players = configuredPlayers(custom, spec);
  const n = players.length;
  const shift = custom.rotate_seats ? (group.groupId + group.episodeId) % n : 0;
  return players.map((_, seat) => players[(seat + shift) % n]!);
}

/** The seats of a group's game `episodeId`, each with its player (rotatedPlayers) and how that player answers. */
export function seatPlays(
  custom: CustomEnvConfig,
  spec: SeatSpec,
  group: { groupId: number; episodeId: number },
  past: PastOpponents | null = null,
  agent: SeatAgentModule | null = null,
): SeatPlay[] {
  return rotatedPlayers(custom, spec, group).map((player, seat) => {
    if (player === AGENT_PLAYER) {
      if (!agent) throw new AgenticError(`a seat of ${custom.env_type} is agent, and this rollout has no seat_agent loaded`);
      return { seat, player, recorded: true, agent };
    }
    if (player !== PAST_PLAYER) return { seat, player, recorded: player === POLICY_PLAYER };
    if (!past) throw new AgenticError(`a seat of ${custom.env_type} is past, and this rollout has no opponent pool`);
    return { seat, player, recorded: false, policy: past.policyFor(group) };
  });
}
