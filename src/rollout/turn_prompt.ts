/**
 * The prompt of one turn of an env episode, made in one place for the two that show it: the
 * rollout (episode.ts), and the warm start's state rows (train/warm_start/state_rows.ts), which
 * promise the very prompts RL will use: the same ids, the same context (traj: the chat so far),
 * the same tools and step history (test/train/warm_start/prompts.test.ts holds them to it).
 *
 * A custom_envs entry gives the words: its system prompt and its turn template (config/templates.ts),
 * filled per env manager kind. Trajectory-wise (traj) the first turn has the instruction above the
 * template and later turns are appended after the previous response as sampled (chat.ts);
 * step-wise (step) every turn is a fresh prompt of the instruction, the last `history_length`
 * steps and the current observation; step_concat's fresh prompt shows the earlier observations.
 */
import type { CustomEnvConfig, EnvManagerKind } from '../config/schema';
import { DEFAULT_SYSTEM_TEMPLATE, defaultTemplate, fillTemplate } from '../config/templates';
import type { GuardedStep } from '../sdk/guarded_env';
import type { ChatFormat } from './chat';
import type { Turn } from './types';

/** What a turn's prompt is made of: the episode so far, as the env showed it. */
export interface TurnState {
  /** 0-based. */
  step: number;
  instruction: string;
  observation: string;
  /** GEM's text after the observation ({suffix}); step_concat's prompt shows it with the current observation. */
  suffix: string;
  /** Every observation so far, the current one last (step_concat's history: ROLL's StepConcatEnvManager shows the earlier ones). */
  observations: readonly string[];
  /** The turns played so far: step's history, traj's previous response. */
  turns: readonly Turn[];
  /** Function calling: the tools the env gives the chat template (reset's info.tools). */
  tools?: readonly unknown[];
  /** Function calling: the last step's tool results, shown as tool messages in the next traj turn. */
  toolResults: readonly string[] | null;
}

/** A step's `tool_results` (function calling: its observation as tool messages), when it gives them. */
function toolResultsOf(value: unknown): string[] | null {
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string') ? value : null;
}

/** Moves `state` on to what the env showed after a step (the step's turn is already in state.turns). */
export function advanceTurnState(state: TurnState & { observations: string[] }, result: GuardedStep): void {
  state.observation = result.observation;
  state.suffix = result.info.suffix ?? '';
  state.observations.push(result.observation);
  state.toolResults = toolResultsOf(result.info.tool_results);
}

/** Recent steps as a step-wise prompt shows them, oldest first. */
function historyText(turns: readonly Turn[], firstStep: number): string {
  if (turns.length === 0) return '(none yet)';
  return turns
    .map((turn, i) => {
      const invalid = turn.metrics.action_is_valid === false ? ' (not a valid action)' : '';
      return `[step ${firstStep + i + 1}] observation:\n${turn.observation}\nyour response: ${turn.responseText.trim()}${invalid}\nreward: ${turn.reward}`;
    })
    .join('\n');
}

/**
 * {last_action_desc}: what the env said its last step did (info.actionDesc: Sokoban's "Turn 3: you
 * tried to go Up but were blocked."), so a policy that sees only the current state can tell that
 * its last move changed nothing; '(none yet)' before the first step, '' where the env says nothing.
 */
function lastActionDesc(turns: readonly Turn[]): string {
  const last = turns.at(-1);
  return last === undefined ? '(none yet)' : (last.actionDesc ?? '');
}

/**
 * step_concat's {history}: the earlier observations, one per line, as ROLL's StepConcatEnvManager
 * takes them (`history[-history_length:-1]`: the last history_length - 1, and for 0 every one,
 * since Python reads -0 as 0).
 */
export function concatHistory(earlier: readonly string[], historyLength: number): string {
  const kept = historyLength === 0 ? earlier : earlier.slice(Math.max(0, earlier.length - (historyLength - 1)));
  return kept.join('\n');
}

/** The turn prompts of one custom_envs entry: its system prompt and its template, for its kind. */
export class TurnPrompts {
  readonly kind: EnvManagerKind;
  private readonly system: string;
  private readonly template: string;

  constructor(
    private readonly custom: CustomEnvConfig,
    private readonly chat: ChatFormat,
  ) {
    this.kind = custom.env_manager_cls;
    this.system = custom.agent_system_template ?? DEFAULT_SYSTEM_TEMPLATE;
    this.template = custom.agent_template ?? defaultTemplate(this.kind);
  }

  /** The user message the template makes of `state` (traj: without the instruction above the first turn). */
  userMessage(state: TurnState): string {
    const { custom } = this;
    if (this.kind === 'traj') {
      return fillTemplate(this.template, {
        turn_idx: state.step + 1,
        observation: state.observation,
        actions_left: custom.max_steps - state.step,
        max_response_length: custom.max_tokens_per_step,
        suffix: state.suffix,
        last_action_desc: lastActionDesc(state.turns),
      });
    }
    if (this.kind === 'step_concat') {
      return fillTemplate(this.template, {
        history: concatHistory(state.observations.slice(0, -1), custom.history_length),
        current_observation: `${state.observation}\n${state.suffix}`,
      });
    }
    const memory = custom.history_length > 0 ? state.turns.slice(-custom.history_length) : [];
    return fillTemplate(this.template, {
      env_instruction: state.instruction,
      step_count: state.step,
      history_length: memory.length,
      history: historyText(memory, state.step - memory.length),
      current_step: state.step + 1,
      current_observation: state.observation,
      actions_left: custom.max_steps - state.step,
      max_response_length: custom.max_tokens_per_step,
      suffix: state.suffix,
      last_action_desc: lastActionDesc(state.turns),
    });
  }

  /**
   * This turn's new ids, as the rollout gives them: traj's later turns are appended after the
   * previous response, the others are whole prompts. A `question` (the warm start's state
   * questions) goes on a line after the turn's user message, or after its last tool result.
   */
  turnIds(state: TurnState, question: string | null = null): number[] {
    const asked = (text: string) => (question === null ? text : `${text}\n${question}`);
    const user = asked(this.userMessage(state));
    if (this.kind !== 'traj') return this.chat.firstTurn(this.system, user, state.tools);
    if (state.step === 0) return this.chat.firstTurn(this.system, state.instruction ? `${state.instruction}\n${user}` : user, state.tools);
    const results = state.toolResults;
    const next = results ? ({ role: 'tool', results: [...results.slice(0, -1), asked(results[results.length - 1]!)] } as const) : user;
    return this.chat.nextTurn(state.turns[state.step - 1]!.responseIds, next);
  }

  /** Everything the policy's response to this turn continues: traj's whole chat so far (each turn's prompt and response) and then `promptIds`; the others' `promptIds` alone. */
  contextIds(state: TurnState, promptIds: readonly number[]): number[] {
    if (this.kind !== 'traj') return [...promptIds];
    return [...state.turns.flatMap((turn) => [...turn.promptIds, ...turn.responseIds]), ...promptIds];
  }
}
