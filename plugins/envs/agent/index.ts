/**
 * agent: an agent you already wrote, as an env. Each episode is one dataset row; the agent gets
 * the question, an OpenAI-compatible base URL and key for this episode (the gateway, whose every
 * call the policy answers and the rollout records as the episode's turns), its tools and a
 * deadline, and ends with its final answer (and, if it likes, its own reward). The answer is
 * scored by the reward function the config names, or the agent's reward is taken as it is.
 *
 * The agent is a module exporting `run(ctx)` (TypeScript or JavaScript, loaded like a plugin,
 * also by the compiled binary) or any command line, run as a child process with OPENAI_BASE_URL,
 * OPENAI_API_KEY, AGENTIC_MODEL, AGENTIC_TASK (JSON), AGENTIC_TOOLS (JSON), AGENTIC_DEADLINE_MS
 * and AGENTIC_SEED in its environment, printing `{"answer": ..., "reward": ...}` as its last line.
 * docs/agents.md has both.
 */
import { resolve } from 'node:path';
import {
  checkPackagesInstalled,
  defineEnv,
  loadAgentFunction,
  openAiTool,
  RewardReference,
  Rng,
  rowAt,
  scoreSafely,
  toolEntries,
  runAgentCommand,
  toolsFromConfig,
  z,
  type AgentEpisodes,
  type AgentOutput,
  type AgentSession,
  type Env,
  type EnvContext,
  type EpisodeDraw,
  type MetricValue,
  type OpenAiTool,
  type ResetResult,
  type RewardPlugin,
  type StepResult,
} from 'agentic';
import { runCalls } from '../tool_use/calls';
import { loadRows, type Row } from '../tool_use/dataset';
import type { ToolSpec } from '../tool_use/tools';

/** What a module agent's run() is given (docs/agents.md). */
export interface AgentContext {
  /** OpenAI's base URL for this episode (what OPENAI_BASE_URL would hold). */
  baseUrl: string;
  /** The key that identifies this episode (what OPENAI_API_KEY would hold). */
  apiKey: string;
  model: string;
  question: string;
  /** The dataset row without its hidden fields (the answer). */
  task: Record<string, unknown>;
  /** The tools the env offers, as OpenAI function definitions. */
  tools: OpenAiTool[];
  /** Calls one of `tools`; errors come back as text, as a tool message would show them. */
  callTool(name: string, args: unknown): Promise<string>;
  /** Date.now() by which the agent must be done. */
  deadline: number;
  /** Aborted when the episode's time is up. */
  signal: AbortSignal;
}

const Config = z
  .strictObject({
    agent: z.string().min(1).nullable().default(null).describe('A TypeScript or JavaScript module exporting run(ctx), path relative to the run folder.'),
    command: z
      .array(z.string().min(1))
      .min(1)
      .nullable()
      .default(null)
      .describe('A command line run once per episode (e.g. [python3, my_agent.py]); it prints {"answer", "reward"?} as JSON on its last line.'),
    dataset: z
      .string()
      .min(1)
      .default('arithmetic/train')
      .describe('The rows of the episodes, as tool_use reads them: a built-in <name>/<split> or a .json/.jsonl file.'),
    hidden_fields: z
      .array(z.string().min(1))
      .default(['answer', 'expression'])
      .describe('Row fields the agent is not shown (the answer and any worked solution); the reward function sees the whole row.'),
    tools: toolEntries([]).describe(
      'Tools offered to the agent as OpenAI function definitions: tool plugins by name, or MCP servers ({mcp: {command, args} | {url}}, docs/mcp_tools.md). A module gets them as ctx.tools and calls them with ctx.callTool (a server that dies costs the episode); a command gets them as AGENTIC_TOOLS (JSON) and runs them itself.',
    ),
    reward: RewardReference.nullable()
      .default(null)
      .describe(
        "The reward function that scores the agent's answer against the row: a name, or {name, ...settings} (e.g. llm_judge, docs/judge.md); null takes the reward the agent returns.",
      ),
    tool_timeout_ms: z.int().positive().default(10_000).describe('Time limit of one ctx.callTool call; a call that runs over returns an error text.'),
    max_observation_chars: z.int().positive().default(2048).describe('Each tool output is cut to this many characters.'),
  })
  .refine((c) => (c.agent === null) !== (c.command === null), { message: 'name the agent program: give exactly one of agent (a module) and command' });
type AgentConfig = z.output<typeof Config>;

class OutsideAgent implements Env, AgentEpisodes {
  private readonly rows: readonly Row[];
  private readonly tools: ReadonlyMap<string, ToolSpec>;
  private readonly reward: RewardPlugin | null;
  /** The module agent's file, or null for a command. */
  private row: Row | null = null;
  private seed = 0;

  constructor(
    private readonly config: AgentConfig,
    private readonly context: EnvContext,
  ) {
    this.rows = loadRows(config.dataset, context.cwd);
    this.tools = new Map(toolsFromConfig(config.tools, context).map((spec) => [spec.name, spec]));
    this.reward = config.reward === null ? null : context.reward(config.reward);
    // a package the agent imports that is not installed is a start-up error, as for a plugin; a
    // module that is missing (`agentic config` composes a config in any folder), does not load or
    // has no run() fails each episode with the line that says so
    if (config.agent !== null) checkPackagesInstalled(resolve(context.cwd, config.agent), context.cwd);
  }

  reset(seed: number, draw?: EpisodeDraw): ResetResult {
    const index = draw === undefined ? Rng.fromSeed(seed, 'agent').int(this.rows.length) : rowAt(draw, this.rows.length).index;
    this.row = this.rows[index]!;
    this.seed = seed;
    return { observation: this.row.question, info: { instruction: '', row_index: index } };
  }

  async runAgent(session: AgentSession): Promise<AgentOutput> {
    const row = this.row!;
    const task = Object.fromEntries(Object.entries(row).filter(([field]) => !this.config.hidden_fields.includes(field)));
    const tools = [...this.tools.values()].map((spec) => openAiTool(spec.name, spec.description, spec.schema));
    if (this.config.command) {
      // a command runs in its own process: it gets the definitions, and runs the tools itself
      const env = {
        OPENAI_BASE_URL: session.baseUrl,
        OPENAI_API_KEY: session.apiKey,
        AGENTIC_MODEL: session.model,
        AGENTIC_TASK: JSON.stringify(task),
        AGENTIC_DEADLINE_MS: String(session.deadline),
        AGENTIC_SEED: String(this.seed),
        AGENTIC_TOOLS: JSON.stringify(tools),
      };
      // the host checks what it printed (AgentOutput), and says what it was when it is not one
      return (await runAgentCommand(this.config.command, env, this.context.cwd, session.signal)) as AgentOutput;
    }
    const run = await loadAgentFunction<AgentContext>('agent', this.config.agent!, this.context.cwd, 'run');
    const ctx: AgentContext = {
      baseUrl: session.baseUrl,
      apiKey: session.apiKey,
      model: session.model,
      question: row.question,
      task,
      tools,
      callTool: (name, args) => this.callTool(name, args),
      deadline: session.deadline,
      signal: session.signal,
    };
    return (await run(ctx)) as AgentOutput;
  }

  private async callTool(name: string, args: unknown): Promise<string> {
    const limits = { timeoutMs: this.config.tool_timeout_ms, maxObservationChars: this.config.max_observation_chars };
    const [outcome] = await runCalls([{ kind: 'call', name, args }], this.tools, limits);
    return outcome!.output;
  }

  /** Scores the agent's final output (runAgent's result; any other text is taken as the answer); the episode ends here. */
  async step(response: string): Promise<StepResult> {
    const output = finalOutput(response);
    const scored = this.reward
      ? await scoreSafely(this.reward, { response: output.answer, trajectory: [], row: this.row! })
      : output.reward === undefined
        ? { reward: 0, metrics: {}, notes: {}, error: 'the agent returned no reward, and the env names no reward function' }
        : { reward: output.reward, metrics: {}, notes: {} };
    const { success, ...metrics } = scored.metrics;
    const shown: Record<string, MetricValue> = {
      ...metrics,
      success: success === undefined ? scored.reward >= 1 : Boolean(success),
      reward_error: scored.error !== undefined,
    };
    return {
      observation: '',
      reward: scored.reward,
      terminated: true,
      truncated: false,
      info: {
        action: output.answer,
        actionDesc: scored.error ? `Answered; ${scored.error}` : `Answered ${JSON.stringify(output.answer)}; reward ${scored.reward}.`,
        answer: output.answer,
        ...(scored.error ? { reward_error: scored.error } : {}),
        ...(Object.keys(scored.notes).length > 0 ? { reward_info: scored.notes } : {}),
        metrics: shown,
        metricsAgg: Object.fromEntries(Object.keys(shown).map((name) => [name, 'last' as const])),
      },
    };
  }

  render(mode: 'text' | 'rgb'): string | null {
    return mode === 'text' && this.row ? this.row.question : null;
  }

  close(): void {}

  /** An outside agent writes its own replies; a random one is a random answer. */
  sampleRandomAction(): string {
    return JSON.stringify({ answer: String(Rng.fromSeed(this.seed, 'agent', 'random').intBetween(0, 100)) });
  }
}

/** The agent's output as the host passes it (`{"answer", "reward"?}`); any other text is the answer itself (a replay's). */
function finalOutput(response: string): { answer: string; reward?: number } {
  let output: unknown;
  try {
    output = JSON.parse(response);
  } catch {
    return { answer: response };
  }
  const { answer, reward } = (typeof output === 'object' && output !== null ? output : {}) as { answer?: unknown; reward?: unknown };
  if (typeof answer !== 'string') return { answer: response };
  return typeof reward === 'number' ? { answer, reward } : { answer };
}

export default defineEnv({
  name: 'agent',
  description: 'An agent you already wrote (a module with run(ctx), or a command), calling the policy through an OpenAI-compatible gateway.',
  config: Config,
  env: OutsideAgent,
  epochRows: (config, context) => loadRows(config.dataset, context.cwd).length,
});
