/**
 * tool_use: question answering with tools over several turns, in the style of AgentFly. Each
 * episode is one dataset row; the first observation is its question. An env manager's episodes
 * read the rows in epochs (reset's draw: every row once per epoch, in a seeded order); an episode
 * reset by its seed alone (agentic play, env checks) picks a row by the seed. In each reply the policy
 * calls tools (in the chosen agent format) and sees their outputs, until it gives a final answer,
 * which the reward function scores against the row. Tools and rewards are plugins named in the
 * config, so any registered tool (calculator, a code runner, search, an `answer` tool that ends
 * the episode) and any reward can be combined with any dataset of {question, answer} rows.
 *
 * A row with an `expression` also has a worked solution (solutionAction: call the calculator with
 * it, answer with its output), which the warm start plays to make worked examples.
 *
 * Rewards: 0 for a turn of tool calls, format_penalty for a turn with a malformed or failing call
 * (which the policy sees as an error observation), the reward function's score for the final
 * answer, and 0 when max_turns runs out first (truncated; nothing is scored).
 */
import {
  defineEnv,
  openAiTool,
  RewardReference,
  Rng,
  rowAt,
  z,
  type ChatMessage,
  type Env,
  type EnvContext,
  type EpisodeDraw,
  type ResetOptions,
  type MetricAgg,
  type MetricValue,
  type ResetResult,
  type RewardPlugin,
  type StateQuestion,
  type StepResult,
  type WarmStartHooks,
  toolEntries,
  toolsFromConfig,
} from 'agentic';
import { runCalls, type CallOutcome, type CallRequest } from './calls';
import { checkRow, loadRows, type Row } from './dataset';
import { AGENT_FORMATS, agentFormat, type AgentFormat, type CodeTool } from './formats';
import { sampleArguments, toolCatalogue, type ToolSpec } from './tools';

const Config = z.strictObject({
  dataset: z
    .string()
    .min(1)
    .default('arithmetic/train')
    .describe(
      'A built-in dataset as <name>/<split> (arithmetic/train, arithmetic/val), or the path of a .jsonl or .json file of {question, answer, ...} rows.',
    ),
  tools: toolEntries(['calculator']),
  reward: RewardReference.default('exact_match').describe(
    'The reward function that scores the final answer against the row: its name, or {name, ...settings} for one that takes settings (llm_judge).',
  ),
  agent_format: z
    .enum(AGENT_FORMATS)
    .default('json')
    .describe(
      'How the policy calls tools: json (<tool_call>{"name", "arguments"}</tool_call>), hermes (function calling through the chat template: it lists the tools, calls are its <tool_call> blocks, outputs come back as tool messages; the tokens an outside agent gets through the gateway), react (Thought/Action/Input), code (```python blocks) or compact (the whole reply is name(input), e.g. calculator(6*4+2); the output comes back bare).',
    ),
  code_tool: z
    .string()
    .min(1)
    .nullable()
    .default(null)
    .describe("The tool that runs the code format's ```python blocks; null picks the first of tools with a 'code' parameter."),
  max_turns: z.int().positive().default(5).describe('Most replies per episode; after the last one the episode is truncated with reward 0.'),
  tool_timeout_ms: z.int().positive().default(10_000).describe('Time limit of one tool call; a call that runs over is an error observation.'),
  max_observation_chars: z.int().positive().default(2048).describe('Each tool output is cut to this many characters.'),
  system_prompt: z
    .string()
    .min(1)
    .nullable()
    .default(null)
    .describe(
      "Replaces the format's instructions; the tool list follows it, or goes where it says {tools}. With agent_format hermes the template lists the tools, and this (default: none) is the whole instruction.",
    ),
  format_penalty: z.number().max(0).default(0).describe('Reward of a reply with a malformed or failing tool call (<= 0).'),
});
type ToolUseConfig = z.output<typeof Config>;

/** Metrics this env reports itself; a reward's metric of the same name is logged as reward_<name>. */
const OWN_METRICS = ['action_is_valid', 'num_tool_calls', 'used_tool', 'tool_errors', 'turns', 'format_penalty', 'reward_error'];
/** Over an episode: used_tool says whether any turn called a tool (its mean: the share of episodes that did). */
const STEP_AGG: Record<string, MetricAgg> = {
  success: 'last',
  num_tool_calls: 'sum',
  used_tool: 'max',
  tool_errors: 'sum',
  turns: 'sum',
  reward_error: 'last',
};

interface Score {
  reward: number;
  success: boolean;
  metrics: Record<string, MetricValue>;
  notes: Record<string, string>;
  error: string | null;
}

class ToolUse implements Env, WarmStartHooks {
  private readonly tools: ReadonlyMap<string, ToolSpec>;
  private readonly reward: RewardPlugin;
  private readonly format: AgentFormat;
  private readonly instruction: string;
  private readonly rows: readonly Row[];
  private row: Row | null = null;
  private messages: ChatMessage[] = [];
  private turns = 0;
  /** The outcomes of the last turn's calls (what a worked solution answers from). */
  private lastOutcomes: readonly CallOutcome[] = [];
  /** What the policy sees now: the question, then the last turn's tool outputs. */
  private observation = '';
  private randomActions: Rng = Rng.fromSeed(0, 'tool_use', 'random-action');

  constructor(
    private readonly config: ToolUseConfig,
    context: EnvContext,
  ) {
    const specs = toolsFromConfig(config.tools, context);
    this.tools = new Map(specs.map((spec) => [spec.name, spec]));
    this.reward = context.reward(config.reward);
    const codeTool = config.agent_format === 'code' ? pickCodeTool(specs, config.code_tool) : null;
    this.format = agentFormat(config.agent_format, { tools: specs, codeTool, maxTurns: config.max_turns });
    this.instruction = instructionText(config.system_prompt, this.format, specs);
    this.rows = loadRows(config.dataset, context.cwd);
  }

  reset(seed: number, draw?: EpisodeDraw, options?: ResetOptions): ResetResult {
    // a suite's episode is a dataset row of its own, played whatever `dataset` says
    const { index, epoch } =
      options?.episode !== undefined
        ? { index: null, epoch: null }
        : draw === undefined
          ? { index: Rng.fromSeed(seed, 'tool_use').int(this.rows.length), epoch: null }
          : rowAt(draw, this.rows.length);
    this.row = index === null ? checkRow(options!.episode, 'tool_use: the suite episode') : this.rows[index]!;
    this.messages = [
      { role: 'system', content: this.instruction },
      { role: 'user', content: this.row.question },
    ];
    this.turns = 0;
    this.lastOutcomes = [];
    this.observation = this.row.question;
    this.randomActions = Rng.fromSeed(seed, 'tool_use', 'random-action');
    const tools = this.format.templateTools ? { tools: [...this.tools.values()].map((spec) => openAiTool(spec.name, spec.description, spec.schema)) } : {};
    return {
      observation: this.row.question,
      info: {
        instruction: this.instruction,
        ...tools,
        ...(index === null ? {} : { row_index: index }),
        ...(epoch === null ? {} : { epoch }),
        episode: this.row,
      },
    };
  }

  async step(response: string): Promise<StepResult> {
    this.turns++;
    this.messages.push({ role: 'assistant', content: response });
    const parsed = this.format.parse(response);
    if (parsed.kind === 'answer') return this.finish(parsed.answer, [], '', `answer: ${parsed.answer}`);

    const outcomes = await runCalls(parsed.calls, this.tools, {
      timeoutMs: this.config.tool_timeout_ms,
      maxObservationChars: this.config.max_observation_chars,
    });
    this.lastOutcomes = outcomes;
    // a call that reached its tool is a tool message; feedback on a call that did not is the user's
    for (const outcome of outcomes) this.messages.push({ role: outcome.ran ? 'tool' : 'user', content: outcome.output });
    const observation = this.format.observation(outcomes);
    this.observation = observation;
    const action = describeCalls(parsed.calls);
    const ended = outcomes.find((o) => o.ok && o.terminal);
    if (ended) return this.finish(ended.output, outcomes, observation, action);

    const valid = outcomes.every((o) => o.ok);
    const penalty = valid ? 0 : this.config.format_penalty;
    const truncated = this.turns >= this.config.max_turns;
    const failures = outcomes.filter((o) => !o.ok).length;
    return {
      observation,
      reward: penalty,
      terminated: false,
      truncated,
      info: {
        action,
        actionDesc:
          `Called ${outcomes.map((o) => o.name ?? '(unreadable)').join(', ')}` +
          `${failures > 0 ? `; ${failures} of ${outcomes.length} failed` : ''}.${truncated ? ' Out of turns.' : ''}`,
        tool_calls: outcomes.map(summary),
        ...(this.format.templateTools ? { tool_results: outcomes.map((o) => o.output) } : {}),
        metrics: { success: false, ...this.callMetrics(outcomes) },
        metricsAgg: STEP_AGG,
      },
    };
  }

  /** Ends the episode: the reward function scores `answer`. */
  private async finish(answer: string, outcomes: readonly CallOutcome[], observation: string, action: string | null): Promise<StepResult> {
    const score = await this.score(answer);
    const calls = this.callMetrics(outcomes);
    const extras = Object.fromEntries(Object.keys(score.metrics).map((name): [string, MetricAgg] => [name, 'last']));
    return {
      observation,
      reward: score.reward + (calls.format_penalty as number),
      terminated: true,
      truncated: false,
      info: {
        action,
        actionDesc: score.error ? `Answered; the reward function failed: ${score.error}` : `Answered ${JSON.stringify(answer)}; reward ${score.reward}.`,
        answer,
        tool_calls: outcomes.map(summary),
        ...(score.error ? { reward_error: score.error } : {}),
        ...(Object.keys(score.notes).length > 0 ? { reward_info: score.notes } : {}),
        metrics: { ...score.metrics, success: score.success, ...calls, reward_error: score.error !== null },
        metricsAgg: { ...extras, ...STEP_AGG },
      },
    };
  }

  private callMetrics(outcomes: readonly CallOutcome[]): Record<string, MetricValue> {
    const valid = outcomes.every((o) => o.ok);
    return {
      action_is_valid: valid,
      num_tool_calls: outcomes.length,
      used_tool: outcomes.length > 0,
      tool_errors: outcomes.filter((o) => !o.ok).length,
      turns: 1,
      format_penalty: valid ? 0 : this.config.format_penalty,
    };
  }

  /** The reward function's verdict; one that throws or returns no number scores 0 and says why. */
  private async score(answer: string): Promise<Score> {
    try {
      const output = await this.reward.score({ response: answer, trajectory: [...this.messages], row: this.row! });
      const { reward, ...rest } = typeof output === 'number' ? { reward: output } : output;
      if (typeof reward !== 'number' || !Number.isFinite(reward)) throw new Error(`returned ${JSON.stringify(reward) ?? 'no reward'} instead of a number`);
      const metrics: Record<string, MetricValue> = {};
      const notes: Record<string, string> = {};
      for (const [name, value] of Object.entries(rest)) {
        if (typeof value === 'string') notes[name] = value;
        else if (typeof value === 'number' || typeof value === 'boolean') metrics[OWN_METRICS.includes(name) ? `reward_${name}` : name] = value;
      }
      const reported = metrics.success;
      delete metrics.success;
      // a reward that could not judge (its judge server is down) says so and keeps its metrics
      const failure = notes.reward_error;
      delete notes.reward_error;
      if (failure !== undefined) return { reward, success: false, metrics, notes, error: `${this.reward.name}: ${failure.split('\n')[0]}` };
      return { reward, success: reported === undefined ? reward >= 1 : Boolean(reported), metrics, notes, error: null };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { reward: 0, success: false, metrics: {}, notes: {}, error: `${this.reward.name}: ${message.split('\n')[0]}` };
    }
  }

  render(mode: 'text' | 'rgb'): string | null {
    if (mode !== 'text') return null;
    return this.messages.map((m) => `[${m.role}]\n${m.content}`).join('\n\n');
  }

  close(): void {}

  /**
   * A random well-formed reply. With a tool that takes an expression (the calculator) and numbers
   * in sight, it is made of what the policy sees: on the question, mostly a call on a random
   * expression of two to four of its numbers (in reading order or shuffled, a random tree of
   * random operators); after a call, mostly an answer with a number the output shows. Such
   * replies teach the mechanics (calling, copying numbers, answering with the output) and never
   * which expression solves the question. Otherwise a random tool with arguments drawn from its
   * schema, or a random number as the answer.
   */
  sampleRandomAction(): string {
    const tools = [...this.tools.values()];
    const numbers = numbersIn(this.observation);
    const calculator = tools.find((spec) => spec.textParameter === 'expression' && !spec.terminal);
    if (calculator && numbers.length > 0) return this.shownAction(calculator, numbers);
    const pick = this.randomActions.int(tools.length + 1);
    if (pick < tools.length) {
      const args = sampleArguments(tools[pick]!, this.randomActions);
      if (args) return this.format.callText(tools[pick]!, args);
    }
    return this.format.answerText(String(this.randomActions.intBetween(0, 100)));
  }

  private shownAction(tool: ToolSpec, numbers: readonly string[]): string {
    const rng = this.randomActions;
    if (!rng.bernoulli(this.turns === 0 ? 0.8 : 0.2)) return this.format.answerText(rng.choice(numbers));
    const count = rng.intBetween(2, Math.max(2, Math.min(4, numbers.length)));
    // a subset in reading order half the time (copying runs left to right), else shuffled
    const places = rng.shuffle(numbers.map((_, i) => i)).slice(0, count);
    if (rng.bernoulli(0.5)) places.sort((a, b) => a - b);
    const picked = places.map((i) => numbers[i]!);
    while (picked.length < count) picked.push(rng.choice(numbers));
    const expression = randomExpression(picked, rng);
    return this.format.callText(tool, { expression: rng.bernoulli(0.1) ? `ceil(${expression})` : expression });
  }

  /**
   * Questions about what the policy sees now (warm_start.state_questions), answered from its text:
   * the numbers it gives, in order, and each number by its place ("Number 2?"). They teach reading
   * the numbers of a question or a tool output; none says which to combine, or how.
   */
  stateQuestions(): StateQuestion[] {
    const numbers = numbersIn(this.observation);
    if (numbers.length === 0) return [];
    return [{ question: 'Numbers?', answer: numbers.join(' ') }, ...numbers.map((n, i) => ({ question: `Number ${i + 1}?`, answer: n }))];
  }

  /**
   * The row's worked solution, one reply at a time (warm_start.worked_examples): a row with an
   * `expression` (arithmetic/train has one per question) is solved by calling the first of the
   * tools that takes plain text (the calculator) with it, then answering with the output as the
   * tool printed it. Null for a row without an expression and after a failed call.
   */
  solutionAction(): string | null {
    const expression = this.row?.expression;
    const tool = [...this.tools.values()].find((spec) => spec.textParameter !== null && !spec.terminal);
    if (typeof expression !== 'string' || !tool) return null;
    if (this.turns === 0) return this.format.callText(tool, { [tool.textParameter!]: expression });
    const [outcome, ...others] = this.lastOutcomes;
    return this.turns === 1 && outcome?.ok && others.length === 0 ? this.format.answerText(outcome.output.trim()) : null;
  }
}

/**
 * A random expression over `operands` in their order: a random binary tree of random operators,
 * with the parentheses they need (a sum inside a product, anything compound after `/`, a sum
 * after `-`) and now and then a needless pair. Any shape an answer could take (a*b+c*d, (a-b)/c,
 * a*(b-c)), none chosen for the question at hand.
 */
function randomExpression(operands: readonly string[], rng: Rng): string {
  const build = (from: number, to: number): { text: string; op: string | null } => {
    if (to - from === 1) return { text: operands[from]!, op: null };
    const split = rng.intBetween(from + 1, to - 1);
    const op = rng.choice(['+', '-', '*', '/']);
    const [left, right] = [build(from, split), build(split, to)];
    const product = op === '*' || op === '/';
    const wrap = (side: { text: string; op: string | null }, isRight: boolean) => {
      const sum = side.op === '+' || side.op === '-';
      const needs = (product && sum) || (isRight && ((op === '-' && sum) || (op === '/' && side.op !== null)));
      return needs || (side.op !== null && rng.bernoulli(0.1)) ? `(${side.text})` : side.text;
    };
    return { text: `${wrap(left, false)}${op}${wrap(right, true)}`, op };
  };
  return build(0, operands.length).text;
}

/** The numbers a text shows, in order, signs and fractions kept (thousands commas dropped): "$1,200.50 or -2/3" -> 1200.50, -2/3. */
function numbersIn(text: string): string[] {
  return text.replace(/(\d),(?=\d{3}\b)/g, '$1').match(/-?\d+(?:\.\d+)?(?:\/\d+)?/g) ?? [];
}

function pickCodeTool(specs: readonly ToolSpec[], named: string | null): CodeTool {
  const codeParameter = (spec: ToolSpec) =>
    (spec.schema.properties as Record<string, { type?: unknown }> | undefined)?.code?.type === 'string' ? 'code' : null;
  if (named === null) {
    const spec = specs.find((s) => codeParameter(s) !== null);
    if (!spec)
      throw new Error(
        "agent_format 'code' needs a tool that runs code: list one with a 'code' parameter in tools (e.g. python_executor), or name it with code_tool",
      );
    return { tool: spec, parameter: 'code' };
  }
  const spec = specs.find((s) => s.name === named);
  if (!spec) throw new Error(`code_tool '${named}' is not one of tools (${specs.map((s) => s.name).join(', ') || 'none'})`);
  const parameter = codeParameter(spec) ?? spec.textParameter;
  if (!parameter) throw new Error(`code_tool '${named}' has neither a 'code' parameter nor a single text parameter to take the code`);
  return { tool: spec, parameter };
}

function instructionText(systemPrompt: string | null, format: AgentFormat, specs: readonly ToolSpec[]): string {
  if (format.templateTools) return systemPrompt ?? '';
  const catalogue = specs.length > 0 ? toolCatalogue(specs) : '(none)';
  if (systemPrompt !== null && systemPrompt.includes('{tools}')) return systemPrompt.replaceAll('{tools}', catalogue);
  const intro = systemPrompt ?? `Answer the question in the next message.\n${format.guide}`;
  return `${intro}\n\nTools (one JSON object each):\n${catalogue}`;
}

function describeCalls(calls: readonly CallRequest[]): string | null {
  const read = calls.flatMap((c) => (c.kind === 'call' ? [`${c.name}(${JSON.stringify(c.args)})`] : []));
  return read.length > 0 ? read.join('; ') : null;
}

function summary(outcome: CallOutcome): Record<string, unknown> {
  return { name: outcome.name, ok: outcome.ok, output: outcome.output, ...(outcome.info ? { info: outcome.info } : {}) };
}

export default defineEnv({
  name: 'tool_use',
  description: 'Questions from a dataset answered over several turns with tools (json, react or code calls); a reward scores the answer.',
  config: Config,
  env: ToolUse,
  epochRows: (config, context) => loadRows(config.dataset, context.cwd).length,
});
