/**
 * An outside agent in a seat (custom_envs.<tag>.seats: {O: agent}, seat_agent: a module or a
 * command): the policy being trained plays that seat through a program written elsewhere, as the
 * agent env plays a whole episode (./agent_episode.ts). At each of the seat's turns the module's
 * `act(ctx)` (or the command, given the same in environment variables) gets the seat's instruction
 * and observation and a gateway session of its own (an OpenAI base URL and key, one per game and
 * seat); the policy answers its model calls and the gateway records them, and what act() returns
 * (a command: the JSON of its last line) is the seat's move. When the game ends the recorded calls
 * are the seat's turns (one row while each call extends the last, as for the agent env) with the
 * seat's return on the last: the agent builds its own prompts, so its calls do not line up with
 * moves one to one.
 *
 * What the agent gets wrong costs its game (env_failure, with the reason): act() that throws or
 * returns no move (a command that exits non-zero or prints no JSON), a model call the gateway
 * refuses, or more calls than max_steps. One still running at the game's deadline ends it as
 * timeout (a command is killed, its process group and all); a conversation past sequence_length
 * ends it as context_full.
 */
import { firstLine } from '../errors';
import { runAgentCommand } from '../sdk/agent_command';
import { loadAgentFunction } from '../sdk/agent_module';
import { answerCall, type CallNotes, GATEWAY_MODEL, recordedCallTurns, sharedGateway, stoppedSessionEnding } from './agent_episode';
import { EXPIRED } from './deadline';
import type { Play } from './episode';
import type { EpisodeEnding } from './episode_record';
import type { GatewaySession } from './gateway/gateway';
import type { Turn } from './types';

/** What act() is given at each of its seat's turns (docs/multi_agent.md#an-outside-agent-in-a-seat). */
export interface SeatAgentContext {
  /** This game's OpenAI base URL for the seat (what OPENAI_BASE_URL would hold). */
  baseUrl: string;
  /** The key that identifies the game and seat (what OPENAI_API_KEY would hold). */
  apiKey: string;
  model: string;
  /** The seat's name (X, O; Player 0, ...). */
  seat: string;
  /** The env's instruction for this seat: the rules and how to answer. */
  instruction: string;
  /** What the seat sees now: the board, the cards, the moves so far. */
  observation: string;
  /** This seat's turn, from 0. */
  turn: number;
  /** Date.now() by which the game must be done. */
  deadline: number;
  /** Aborted when the game's time is up: pass it to your client. */
  signal: AbortSignal;
}

export type SeatAgentModule = { act: (ctx: SeatAgentContext) => unknown };

/** The agent custom_envs.<tag>.seat_agent names: a module's act(), or a command run at each turn. */
export function loadSeatAgent(agent: string | { command: string[] }, cwd: string): Promise<SeatAgentModule> {
  if (typeof agent === 'string') return loadAgentFunction<SeatAgentContext>('seat_agent', agent, cwd, 'act').then((act) => ({ act }));
  return Promise.resolve({ act: (ctx: SeatAgentContext) => runAgentCommand(agent.command, commandEnv(ctx), cwd, ctx.signal) });
}

/** What a command agent is given at each turn (docs/multi_agent.md#an-outside-agent-in-a-seat): act()'s context, as environment variables. */
function commandEnv(ctx: SeatAgentContext): Record<string, string> {
  return {
    OPENAI_BASE_URL: ctx.baseUrl,
    OPENAI_API_KEY: ctx.apiKey,
    AGENTIC_MODEL: ctx.model,
    AGENTIC_SEAT: ctx.seat,
    AGENTIC_INSTRUCTION: ctx.instruction,
    AGENTIC_OBSERVATION: ctx.observation,
    AGENTIC_TURN: String(ctx.turn),
    AGENTIC_DEADLINE_MS: String(ctx.deadline),
  };
}

/** One game's outside agent in one seat: its gateway session, its moves, and at the end its turns. */
export class SeatAgent {
  private session: GatewaySession | null = null;
  private readonly notes: CallNotes = { overridden: 0, contextFull: false, inferFailed: false };
  private readonly controller = new AbortController();
  private moves = 0;
  private firstObservation = '';

  constructor(
    private readonly play: Play,
    private readonly module: SeatAgentModule,
    private readonly seat: number,
    private readonly seatName: string,
  ) {}

  /** The seat's next move from act(), or what ended the game. */
  async move(instruction: string, observation: string): Promise<{ text: string } | EpisodeEnding> {
    const session = this.open();
    if (this.moves === 0) this.firstObservation = observation;
    const ctx: SeatAgentContext = {
      baseUrl: session.baseUrl,
      apiKey: session.key,
      model: GATEWAY_MODEL,
      seat: this.seatName,
      instruction,
      observation,
      turn: this.moves++,
      deadline: session.options.deadline,
      signal: this.controller.signal,
    };
    const acted = await this.play.deadline.race(
      Promise.resolve()
        .then(() => this.module.act(ctx))
        .then(moveText, (error: unknown) => ({ error })),
    );
    if (acted === EXPIRED) {
      this.controller.abort();
      return {
        endReason: 'timeout',
        failure: `seat ${this.seatName}'s agent did not move within the episode budget of ${this.play.custom.episode_timeout_s} s`,
      };
    }
    if (session.problem) {
      return { endReason: stoppedSessionEnding(this.notes), failure: `seat ${this.seatName}'s agent: ${session.problem}` };
    }
    if ('error' in acted) {
      return { endReason: 'env_failure', failure: `seat ${this.seatName}'s agent: ${firstLine(acted.error)}` };
    }
    return acted;
  }

  /**
   * The session's calls as the seat's turns, its return on the last (recordedCallTurns), and why
   * the record leaves the update when gateway.on_mismatch is drop and the session split.
   */
  turns(seatReturn: number): { turns: Turn[]; metrics: Record<string, number>; untrained: string | null } {
    const calls = this.session?.calls ?? [];
    const { turns, mismatches } = recordedCallTurns(this.play, calls, this.firstObservation);
    const last = turns.at(-1);
    if (last) last.reward = seatReturn;
    const metrics = {
      gateway_calls: calls.length,
      gateway_refused: this.session?.refused ?? 0,
      prefix_mismatch: mismatches,
      gateway_sampling_overridden: this.notes.overridden,
    };
    const drop = mismatches > 0 && this.play.limits.onMismatch === 'drop';
    return { turns, metrics, untrained: drop ? `seat ${this.seatName}'s agent split its session ${mismatches} time(s) (gateway.on_mismatch: drop)` : null };
  }

  close(): void {
    this.controller.abort();
    if (this.session) sharedGateway().close(this.session);
  }

  private open(): GatewaySession {
    if (this.session) return this.session;
    const { custom, chat } = this.play;
    const session: GatewaySession = sharedGateway().open({
      model: GATEWAY_MODEL,
      tokenizer: chat.tokenizer,
      piece: chat.responsePiece,
      deadline: Date.now() + custom.episode_timeout_s * 1000,
      maxCalls: custom.max_steps,
      generate: (turn, index) => answerCall(this.play, session, this.notes, turn, index, this.seat),
    });
    this.session = session;
    return session;
  }
}

/** act()'s result as a move: a string, or an object with a string `action`. */
function moveText(value: unknown): { text: string } | { error: Error } {
  if (typeof value === 'string') return { text: value };
  const action = (value as { action?: unknown } | null)?.action;
  if (typeof action === 'string') return { text: action };
  return { error: new Error(`act() returned ${JSON.stringify(value)?.slice(0, 120)}, not a move (a string, or { action: string })`) };
}
