/**
 * The env behind GEM's dataset envs (math, qa, logic), as ROLL runs them: each episode is one
 * row; the first observation is its question (followed by the tools' instructions when a
 * tool_wrapper is set). A reply that calls a tool is answered by the tool (tool_wrapper.ts);
 * any other reply is the final answer: the task extracts and grades it, 1 if right, else 0, and
 * the episode ends. An env manager's episodes read the rows in epochs (every row once per epoch,
 * in a seeded order); an episode reset by its seed alone picks a row by the seed. Each env is
 * its GemTask (how the question is put, how a reply is graded) made a plugin by defineGemDatasetEnv.
 */
import {
  defineEnv,
  Rng,
  rowAt,
  z,
  type Env,
  type EnvContext,
  type EnvPlugin,
  type EpisodeDraw,
  type MetricAgg,
  type ResetResult,
  type StepResult,
} from 'agentic';
import { dataShape, loadQaRows, type QaRow } from './data';
import { makeTools, ToolWrapperShape, type GemTool, type ToolWrapperConfig } from './tool_wrapper';

/** What differs between GEM's dataset envs: how the question is put and how a reply is graded. */
export interface GemTask {
  /** Seeds the env's random streams. */
  name: string;
  observation(question: string): string;
  /** The extracted answer (null: none found, an invalid action) and whether it is right. */
  grade(reply: string, answer: unknown): { answer: string | null; correct: boolean };
  /** A well-formed final answer made of `pick` (a word or number the question shows). */
  answerText(pick: string): string;
}

/** env_config keys of every GEM dataset env; `defaults` are the question/answer fields GEM's registration names. */
export function gemShape(defaults: { question_key: string; answer_key: string }) {
  return {
    ...dataShape(defaults),
    max_steps: z
      .int()
      .positive()
      .nullable()
      .default(null)
      .describe('Replies per episode, after which it is truncated with reward 0 (null: custom_envs.<tag>.max_steps alone limits it).'),
    tool_wrapper: ToolWrapperShape,
  };
}

export interface GemEnvConfig {
  dataset_name: string;
  split: string | null;
  question_key: string;
  answer_key: string;
  max_steps: number | null;
  tool_wrapper: ToolWrapperConfig | null;
}

const METRICS_AGG: Record<string, MetricAgg> = {
  action_is_valid: 'mean',
  success: 'last',
  raw_reward: 'last',
  tool_use_counter: 'last',
  tool_success_counter: 'last',
};

class GemDatasetEnv implements Env {
  private readonly rows: readonly QaRow[];
  private readonly tools: readonly GemTool[];
  private row: QaRow | null = null;
  private transcript: string[] = [];
  private steps = 0;
  private toolUses = 0;
  private toolSuccesses = 0;
  private randomActions: Rng;

  constructor(
    private readonly config: GemEnvConfig,
    context: EnvContext,
    private readonly task: GemTask,
  ) {
    this.rows = loadQaRows(config, context.cwd);
    this.tools = config.tool_wrapper ? makeTools(config.tool_wrapper, context) : [];
    this.randomActions = Rng.fromSeed(0, task.name, 'random-action');
  }

  reset(seed: number, draw?: EpisodeDraw): ResetResult {
    const { index, epoch } =
      draw === undefined ? { index: Rng.fromSeed(seed, this.task.name).int(this.rows.length), epoch: null } : rowAt(draw, this.rows.length);
    this.row = this.rows[index]!;
    this.steps = 0;
    this.toolUses = 0;
    this.toolSuccesses = 0;
    this.randomActions = Rng.fromSeed(seed, this.task.name, 'random-action');
    const instructions = this.tools.map((tool) => tool.instruction).join('\n');
    const question = this.task.observation(this.row.question);
    const observation = this.tools.length === 0 ? question : `${question}\n${this.tools.length > 1 ? `Available tools:\n${instructions}` : instructions}`;
    this.transcript = [observation];
    return { observation, info: { instruction: '', row_index: index, ...(epoch === null ? {} : { epoch }) } };
  }

  async step(reply: string): Promise<StepResult> {
    this.steps++;
    this.transcript.push(reply);
    const wrapper = this.config.tool_wrapper;
    const maxUses = wrapper?.wrapper_args.max_tool_uses ?? Infinity;
    let outcome = null;
    let tool: GemTool | null = null;
    if (this.toolUses < maxUses) {
      for (tool of this.tools) {
        outcome = await tool.execute(reply);
        if (outcome.parsed && !outcome.error) break;
      }
    }
    if (wrapper && tool && outcome?.parsed) {
      this.toolUses++;
      if (!outcome.error) this.toolSuccesses++;
      const args = wrapper.wrapper_args;
      const reward =
        outcome.error && args.tool_execute_error_reward !== 0
          ? args.tool_execute_error_reward
          : args.tool_reward + (outcome.error ? 0 : args.tool_success_reward);
      const observation =
        this.toolUses === maxUses
          ? `${outcome.observation}\n\nReached the maximum number of tool use. Please output final answer directly.`
          : outcome.observation;
      this.transcript.push(observation);
      const truncated = this.config.max_steps !== null && this.steps >= this.config.max_steps;
      return {
        observation,
        reward,
        terminated: false,
        truncated,
        info: {
          action: `${tool.id} call`,
          actionDesc: `Called ${tool.id}${outcome.error ? '; it failed' : ''}.${truncated ? ' Out of steps.' : ''}`,
          metrics: { action_is_valid: true, success: false, raw_reward: 0, ...this.counters() },
          metricsAgg: METRICS_AGG,
        },
      };
    }
    const { answer, correct } = this.task.grade(reply, this.row!.answer);
    const reward = correct ? 1 : 0;
    return {
      observation: '',
      reward,
      terminated: true,
      truncated: false,
      info: {
        action: answer,
        actionDesc: answer === null ? 'No answer could be read from the reply.' : `Answered ${JSON.stringify(answer)}: ${correct ? 'right' : 'wrong'}.`,
        metrics: { action_is_valid: answer !== null, success: correct, raw_reward: reward, ...this.counters() },
        metricsAgg: METRICS_AGG,
      },
    };
  }

  private counters() {
    return { tool_use_counter: this.toolUses, tool_success_counter: this.toolSuccesses };
  }

  render(mode: 'text' | 'rgb'): string | null {
    return mode === 'text' ? this.transcript.join('\n\n') : null;
  }

  close(): void {}

  /**
   * A random well-formed reply: a final answer with a word or number of the question; with tools
   * and uses left, half the time a call instead (code printing a number, a search for words of
   * the question; an MCP tool's arguments cannot be guessed, so none).
   */
  sampleRandomAction(): string {
    const rng = this.randomActions;
    const words = (this.row?.question ?? '').match(/[\p{L}\p{N}]+/gu) ?? ['0'];
    const maxUses = this.config.tool_wrapper?.wrapper_args.max_tool_uses ?? Infinity;
    const callable = this.tools.filter((t) => t.id !== 'mcp');
    if (callable.length > 0 && this.toolUses < maxUses && rng.bernoulli(0.5)) {
      const tool = rng.choice(callable);
      if (tool.id === 'python_code') return `<code>print(${rng.intBetween(0, 100)})</code>`;
      return `<search>${rng
        .shuffle([...words])
        .slice(0, 3)
        .join(' ')}</search>`;
    }
    return this.task.answerText(rng.choice(words));
  }
}

/** A GEM dataset env as a plugin: `task` makes its GemTask from the validated env_config; an epoch is every row once. */
export function defineGemDatasetEnv<S extends z.ZodType<GemEnvConfig>>(definition: {
  name: string;
  description: string;
  config: S;
  task: (config: z.output<S>) => GemTask;
}): EnvPlugin<S> {
  const { task, ...plugin } = definition;
  return defineEnv({
    ...plugin,
    env: class extends GemDatasetEnv {
      constructor(config: z.output<S>, context: EnvContext) {
        super(config, context, task(config));
      }
    },
    epochRows: (config, context) => loadQaRows(config, context.cwd).length,
  });
}
