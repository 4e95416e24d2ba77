/**
 * llm_judge: another model grades the final answer. It asks any OpenAI-compatible server
 * (`agentic serve`, vLLM, SGLang, a hosted API) with a rubric filled from the sample, and reads a
 * score in [0, 1] from the reply (./parse.ts). Replies are cached by (model, filled rubric), in
 * memory and optionally in a file (./cache.ts); requests to one judge are bounded across the
 * process (./limit.ts) and retried with backoff (./server.ts). docs/judge.md tells the whole story.
 *
 * A judge that is down, runs out of time after its retries, or replies without a score costs
 * that sample its reward, never the run: the reward is 0, judge/failed is 1 and a `reward_error`
 * note says why (the env logs it as it logs a reward that throws).
 */
import { defineReward, z, type RewardInput } from 'agentic';
import { cacheKey, ReplyCache } from './cache';
import { judgeGate } from './limit';
import { PARSERS, parseScore } from './parse';
import { DEFAULT_RUBRICS, fillRubric } from './rubric';
import { apiRoot, chatCompletion, firstModel, type ServerOptions } from './server';

const Config = z
  .strictObject({
    base_url: z
      .url({ protocol: /^https?$/ })
      .describe(
        'The OpenAI-compatible server: its API root as the openai client takes it (http://host:8000/v1, https://api.openai.com/v1), or a bare host, which gets /v1; /chat/completions is called under it.',
      ),
    model: z.string().min(1).nullable().default(null).describe('The judge model as the server names it; null: the first model the server lists at /models.'),
    api_key_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
      .nullable()
      .default(null)
      .describe('Name of the environment variable that holds the API key (sent as a Bearer token); the key never goes in a config. null: no key.'),
    rubric: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe(
        "The judge's prompt: {question}, {answer} (the policy's final answer), {reference} (the row's answer) and any other row field as {field}. null: a built-in rubric that asks for what the parser reads.",
      ),
    parser: z
      .enum(PARSERS)
      .default('number')
      .describe(
        'How the reply is read: number (the last number in it, which must lie in [0, 1]) or pass_fail (the last of PASS, FAIL, YES, NO in it, any case: 1 or 0).',
      ),
    max_tokens: z.int().positive().default(256).describe('Most tokens the judge may reply with.'),
    temperature: z
      .number()
      .min(0)
      .default(0)
      .describe('Sampling temperature of the judge (0: the same answer for the same sample, which the cache relies on).'),
    timeout_s: z.number().positive().default(60).describe('Time limit of one request, in seconds.'),
    max_retries: z.int().min(0).default(3).describe('Retries of a request that got no answer, timed out, or got 408, 409, 429 or 5xx.'),
    retry_backoff_s: z.number().min(0).default(1).describe('Wait before the first retry, in seconds; it doubles for each later one.'),
    concurrency: z
      .int()
      .positive()
      .default(8)
      .describe('Most requests in flight to this judge (base_url and model) across the whole process; where configs differ, the smallest holds.'),
    cache_file: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe(
        'A JSON-lines file (relative to the working folder) that keeps every reply, so a resumed or repeated run pays nothing; null: the cache is in memory only.',
      ),
  })
  .superRefine((settings, ctx) => {
    const variable = settings.api_key_env;
    if (variable !== null && !process.env[variable])
      ctx.addIssue({ code: 'custom', path: ['api_key_env'], message: `environment variable ${variable} is not set` });
  });
type JudgeSettings = z.output<typeof Config>;

/** The model a server lists first, asked once per API root (again after a failure). */
const listedModels = new Map<string, Promise<string>>();

function modelOf(settings: JudgeSettings, server: ServerOptions): Promise<string> {
  if (settings.model !== null) return Promise.resolve(settings.model);
  const root = apiRoot(server.baseUrl);
  let listed = listedModels.get(root);
  if (!listed) {
    listed = firstModel(server);
    listed.catch(() => listedModels.delete(root));
    listedModels.set(root, listed);
  }
  return listed;
}

interface Verdict {
  score: number;
  cached: boolean;
  failed: boolean;
  unparseable: boolean;
  latencyS: number;
  error: string | null;
}

async function judge(input: RewardInput, settings: JudgeSettings): Promise<Verdict> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const failure = (why: string, unparseable = false, cached = false): Verdict => ({
    score: 0,
    cached,
    failed: true,
    unparseable,
    latencyS: seconds(),
    error: why,
  });
  const server: ServerOptions = {
    baseUrl: settings.base_url,
    apiKey: settings.api_key_env === null ? null : (process.env[settings.api_key_env] ?? null),
    timeoutMs: settings.timeout_s * 1000,
    maxRetries: settings.max_retries,
    backoffMs: settings.retry_backoff_s * 1000,
  };
  let prompt: string;
  let model: string;
  try {
    prompt = fillRubric(settings.rubric ?? DEFAULT_RUBRICS[settings.parser], input);
    model = await modelOf(settings, server);
  } catch (error) {
    return failure(firstLine(error));
  }
  const cache = new ReplyCache(settings.cache_file);
  const key = cacheKey(model, prompt);
  let reply = cache.get(key);
  const cached = reply !== undefined;
  if (reply === undefined) {
    try {
      const gate = judgeGate(`${apiRoot(server.baseUrl)} ${model}`, settings.concurrency);
      reply = await gate.run(() => chatCompletion(server, { model, prompt, maxTokens: settings.max_tokens, temperature: settings.temperature }));
    } catch (error) {
      return failure(firstLine(error));
    }
    cache.set(key, reply);
  }
  const score = parseScore(reply, settings.parser);
  if (score === null)
    return failure(
      `the judge's reply gives no ${settings.parser === 'number' ? 'number in [0, 1]' : 'PASS/FAIL or YES/NO'}: ${JSON.stringify(reply.slice(-120))}`,
      true,
      cached,
    );
  return { score, cached, failed: false, unparseable: false, latencyS: cached ? 0 : seconds(), error: null };
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim();
}

export default defineReward({
  name: 'llm_judge',
  description: 'A model on any OpenAI-compatible server grades the answer with a rubric (a number in [0, 1] or PASS/FAIL).',
  config: Config,
  async score(input, settings) {
    const verdict = await judge(input, settings);
    return {
      reward: verdict.score,
      'judge/score': verdict.score,
      'judge/cached': Number(verdict.cached),
      'judge/failed': Number(verdict.failed),
      'judge/unparseable': Number(verdict.unparseable),
      'judge/latency_s': verdict.latencyS,
      ...(verdict.error === null ? {} : { reward_error: `judge failed: ${verdict.error}` }),
    };
  },
});
