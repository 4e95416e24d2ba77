/**
 * GEM's ToolEnvWrapper as ROLL configures it (`tool_wrapper: {wrapper_args, tool_configs}` on a
 * custom env), over our tools. Each reply is offered to the tools in order: the first that finds
 * its call in the reply and runs it without error answers (else the last tool tried does, as in
 * GEM); a found call uses up one of max_tool_uses and earns tool_reward, plus tool_success_reward
 * when it ran without error (or tool_execute_error_reward, <= 0, instead when it failed); its
 * output is the next observation. A reply with no call, or any reply once max_tool_uses are used,
 * goes to the env, which grades it.
 *
 * The tools, by ROLL's tool_id, with the call syntax ROLL's tools parse:
 * - python_code: the code of `<code>...</code>` or a ```python block (ROLL's PythonCodeTool, so
 *   ROLL's stop_strings ["</code>"] end a call), run in agentic's Python sandbox with
 *   tool_args.timeout; seen as "Code execution result: <stdout>\n<stderr>".
 * - search: `<search>query</search>`, BM25 over the built-in corpus (plugins/datasets/corpus),
 *   topk passages as GEM prints them ("Doc 1(Title: ...) ...").
 * - mcp: `<tool_call>{"tool_name": ..., "tool_params": {...}}</tool_call>`, a tool of the MCP
 *   server at tool_args.server_url (streamable HTTP, on loopback), seen as
 *   <information>...</information> or [Execution Error: ...].
 */
import {
  createSearchTool,
  McpServerShape,
  parseJsonlCorpus,
  runPython,
  ToolServerLost,
  toolsFromConfig,
  z,
  type AgentTool,
  type EnvContext,
  type PythonSandboxMode,
  type SearchTool,
} from 'agentic';
import { BUILTIN_DATASETS } from '../../datasets/_index';

const PythonCodeArgs = z.strictObject({
  timeout: z.number().positive().default(5).describe('Seconds one run may take.'),
  sandbox_type: z
    .enum(['none', 'bwrap'])
    .default('none')
    .describe("GEM's choice of sandbox. Has no effect here: code always runs in agentic's sandbox (python_sandbox decides bwrap or unconfined)."),
  keep_error_last_line: z.boolean().default(false).describe("Show only the last line of a failing run's stderr."),
  tool_instruction: z.string().min(1).nullable().default(null).describe("Replaces the tool's instruction (ROLL's tool_instruction)."),
  patterns: z
    .array(z.string().min(1).refine(isRegExp, 'not a valid regular expression'))
    .min(1)
    .nullable()
    .default(null)
    .describe("Regular expressions whose first group is the code (ROLL's patterns; default <code>(.*?)</code> and ```python blocks)."),
});

const SearchArgs = z.strictObject({
  search_url: z
    .string()
    .nullable()
    .default(null)
    .refine((url) => url === null, {
      message:
        "GEM's retrieval server (msgpack over HTTP) is not supported here; leave search_url out to search the built-in BM25 corpus (plugins/datasets/corpus)",
    }),
  topk: z.int().positive().default(3).describe('Passages per search.'),
});

const McpArgs = z.strictObject({
  server_url: z.string().min(1).describe('A streamable HTTP MCP endpoint on loopback, e.g. http://127.0.0.1:8000/mcp.'),
  tool_names_subset: z.array(z.string().min(1)).min(1).nullable().default(null).describe("The server's tools to offer (default: all it lists)."),
  custom_prompt: z.string().min(1).nullable().default(null).describe("Replaces the tool's instruction."),
});

const ToolConfig = z.discriminatedUnion('tool_id', [
  z.strictObject({ tool_id: z.literal('python_code'), tool_args: PythonCodeArgs.default(PythonCodeArgs.parse({})) }),
  z.strictObject({ tool_id: z.literal('search'), tool_args: SearchArgs.default(SearchArgs.parse({})) }),
  z
    .strictObject({ tool_id: z.literal('mcp'), tool_args: McpArgs })
    .superRefine(({ tool_args }, context) => {
      const url = McpServerShape.safeParse({ url: tool_args.server_url });
      if (!url.success) context.addIssue({ code: 'custom', path: ['tool_args', 'server_url'], message: url.error.issues[0]!.message });
    })
    // the server as an MCP tool entry, so the host connects it before the env is built
    .transform((config) => ({
      ...config,
      server: { mcp: { url: config.tool_args.server_url }, ...(config.tool_args.tool_names_subset ? { include: config.tool_args.tool_names_subset } : {}) },
    })),
]);

const WrapperArgs = z
  .strictObject({
    tool_reward: z.number().default(0).describe('Reward of each reply that calls a tool.'),
    tool_success_reward: z.number().default(0).describe('Added when the call ran without error.'),
    tool_execute_error_reward: z.number().max(0).default(0).describe('Reward of a call that failed (<= 0; only with the other two at 0).'),
    max_tool_uses: z.int().nonnegative().nullable().default(10).describe('Tool calls per episode; later replies are graded as answers. null: no limit.'),
  })
  .refine((w) => w.tool_execute_error_reward === 0 || (w.tool_reward === 0 && w.tool_success_reward === 0), {
    message: 'tool_execute_error_reward needs tool_reward and tool_success_reward at 0 (as in GEM)',
  });

export const ToolWrapperShape = z
  .strictObject({
    wrapper_args: WrapperArgs.default(WrapperArgs.parse({})),
    tool_configs: z.array(ToolConfig).min(1),
  })
  .nullable()
  .default(null)
  .describe(
    "GEM's tool wrapper (custom_envs.<tag>.tool_wrapper): {wrapper_args: {tool_reward, tool_success_reward, max_tool_uses}, tool_configs: [{tool_id: python_code | search | mcp, tool_args}]}.",
  );

export type ToolWrapperConfig = NonNullable<z.output<typeof ToolWrapperShape>>;
type ToolConfigOf<Id> = Extract<ToolWrapperConfig['tool_configs'][number], { tool_id: Id }>;

/** What a tool made of a reply: whether it found its call, whether running it failed, what the policy sees. */
export interface ToolOutcome {
  parsed: boolean;
  error: boolean;
  observation: string;
}

export interface GemTool {
  readonly id: string;
  readonly instruction: string;
  execute(action: string): Promise<ToolOutcome>;
}

/** The tools of a wrapper config; MCP servers must be connected (the run's start-up does it, in context.mcp). */
export function makeTools(config: ToolWrapperConfig, context: EnvContext): GemTool[] {
  return config.tool_configs.map((tool) => {
    switch (tool.tool_id) {
      case 'python_code':
        return pythonCodeTool(tool.tool_args, context.pythonSandbox);
      case 'search':
        return searchTool(tool.tool_args);
      case 'mcp':
        return mcpTool(tool, toolsFromConfig([tool.server], context));
    }
  });
}

const PYTHON_INSTRUCTION =
  'You may write Python code to compute parts of your reasoning. Wrap each snippet in <code>...</code> (or a ```python block); ' +
  'it runs in a sandbox and its output comes back after "Code execution result: ". Snippets must be complete scripts with their ' +
  'imports, and must print() what you want to see. Give your final answer within \\boxed{}.';
const PYTHON_PATTERNS = ['<code>(.*?)</code>', '```\\n?python(.*?)```'];
const PYTHON_MEMORY_MB = 1024;

function pythonCodeTool(args: ToolConfigOf<'python_code'>['tool_args'], sandbox: PythonSandboxMode): GemTool {
  const patterns = (args.patterns ?? PYTHON_PATTERNS).map((p) => new RegExp(p, 's'));
  return {
    id: 'python_code',
    instruction: args.tool_instruction ?? PYTHON_INSTRUCTION,
    async execute(action) {
      // the block that ends first wins, as ROLL's parser picks it
      const found = patterns.map((p) => p.exec(action)).filter((m): m is RegExpExecArray => m !== null);
      if (found.length === 0) return { parsed: false, error: true, observation: '' };
      const first = found.reduce((a, b) => (b.index + b[0].length < a.index + a[0].length ? b : a));
      const run = await runPython((first[1] ?? '').trim(), { timeoutMs: args.timeout * 1000, memoryMb: PYTHON_MEMORY_MB, sandbox });
      let stderr = run.reason === 'timeout' ? `${run.stderr}Execution timed out after ${args.timeout} s.` : run.stderr;
      if (stderr !== '' && args.keep_error_last_line) stderr = stderr.trimEnd().split('\n').at(-1)!;
      const result = (stderr !== '' ? `${run.stdout}\n${stderr}` : run.stdout).replace(/^[ \n]+/, '');
      return { parsed: true, error: run.reason !== 'ok' || result === '', observation: `Code execution result: ${result}\n` };
    },
  };
}

const CORPUS = 'corpus/passages';
const SEARCH_INSTRUCTION =
  'You have access to a search engine to help answer questions.\n\n' +
  'Additional instructions:\n' +
  '- If your reasoning in <think> shows you lack some knowledge, say what you need to find next in a new <think> block.\n' +
  '- Then search with:\n  <search> your query here </search>\n' +
  '- The search results come back as passages.\n' +
  '- You may think and search as many times as needed.\n' +
  '- When you are ready, give your final answer in:\n  <answer> your answer here </answer>';

/** Searchers over the built-in corpus, one per topk (each builds its BM25 index at its first search). */
const searchers = new Map<number, SearchTool>();

function searchTool(args: ToolConfigOf<'search'>['tool_args']): GemTool {
  let searcher = searchers.get(args.topk);
  if (!searcher) {
    const passages = () => parseJsonlCorpus(BUILTIN_DATASETS[CORPUS]!, `plugins/datasets/${CORPUS}`);
    searcher = createSearchTool({ name: 'search', passages, topK: args.topk });
    searchers.set(args.topk, searcher);
  }
  const { search } = searcher;
  return {
    id: 'search',
    instruction: SEARCH_INSTRUCTION,
    async execute(action) {
      const match = /<search>(.*?)<\/search>/s.exec(action);
      if (!match) return { parsed: false, error: true, observation: '' };
      const docs = search(match[1]!.trim()).map((hit, i) => `Doc ${i + 1}(Title: ${hit.title ?? ''}) ${hit.text}\n`);
      return { parsed: true, error: false, observation: docs.join('') };
    },
  };
}

function mcpTool(config: ToolConfigOf<'mcp'>, tools: AgentTool[]): GemTool {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const listed = JSON.stringify(
    tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.schema })),
    null,
    2,
  );
  const instruction =
    config.tool_args.custom_prompt ??
    `You can use these tools to solve the problem:\n${listed}\nTo call one, reply with one JSON object inside <tool_call></tool_call> with two keys: ` +
      `"tool_name" (one of the names above) and "tool_params" (its arguments, as its inputSchema says), e.g.\n` +
      `<tool_call>{"tool_name": "${tools[0]?.name ?? 'name'}", "tool_params": {}}</tool_call>`;
  return {
    id: 'mcp',
    instruction,
    async execute(action) {
      const match = /<tool_call>(.*?)<\/tool_call>/s.exec(action);
      if (!match) return { parsed: false, error: true, observation: '' };
      const invalid = (why: string) => ({ parsed: true, error: true, observation: `[Validation Error: The tool call format is incorrect. Reason: ${why}]` });
      let call: unknown;
      try {
        call = JSON.parse(match[1]!.trim());
      } catch (error) {
        return invalid(`not JSON (${(error as Error).message})`);
      }
      const { tool_name: name, tool_params: params = {} } = (typeof call === 'object' && call !== null ? call : {}) as Record<string, unknown>;
      if (typeof name !== 'string' || typeof params !== 'object' || params === null || Array.isArray(params))
        return invalid("the JSON must have a 'tool_name' (string) and 'tool_params' (object)");
      const tool = byName.get(name);
      if (!tool) return invalid(`unknown tool_name '${name}'; the tools are ${[...byName.keys()].join(', ')}`);
      const checked = tool.check(params);
      if (!checked.ok) return invalid(checked.problems.join('; '));
      try {
        const output = await tool.call(checked.args, { signal: AbortSignal.timeout(MCP_CALL_TIMEOUT_MS) });
        const text = (typeof output === 'string' ? output : output.observation).trim();
        return { parsed: true, error: false, observation: `<information>${text || 'Tool executed successfully with no text output.'}</information>` };
      } catch (error) {
        // a server that died ends the episode as an env failure (the next one reconnects), as tool_use does
        if (error instanceof ToolServerLost) throw error;
        return { parsed: true, error: true, observation: `[Execution Error: ${((error as Error).message ?? String(error)).split('\n')[0]}]` };
      }
    },
  };
}

const MCP_CALL_TIMEOUT_MS = 60_000;

function isRegExp(source: string): boolean {
  try {
    new RegExp(source, 's');
    return true;
  } catch {
    return false;
  }
}
