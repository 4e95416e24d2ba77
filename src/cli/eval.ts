/**
 * `agentic eval`: plays the val env manager's episodes (every episode of val_suite, else
 * val_batch_size drawn by seed) and reports, per tag, success, score, valid actions, actions and
 * response length (a table on stdout, JSON on disk), then the held-out result: success with its
 * 95% Wilson interval and the mean score with its 95% bootstrap interval.
 *
 * `--seeds N` plays the episodes N times, with seeds seed .. seed+N-1 (each pass's sampling and
 * env randomness; the intervals pool every pass). A model decoding greedily would play every pass
 * the same way, counting each episode N times in the interval, so N > 1 is refused for it.
 *
 * The policy is actor_infer's model (actor_infer.model_args.model_name_or_path, else pretrain:
 * a built-in preset, a Hugging Face folder or a hub id), decoding with val_env_manager's
 * generating_args; or, where val_env_manager.llm_proxy.proxy_type is sglang or openai, the model
 * of those inference servers, checked against pretrain's tokenizer. `--policy random` (or
 * proxy_type=random) needs no model: each env answers itself with random actions.
 *
 * `--checkpoint PATH|auto` evaluates a checkpoint's actor, in this process, with the config it was
 * saved with (overrides on top); `auto` takes the newest complete checkpoint of the run the config
 * names. The JSON then goes next to the checkpoint: checkpoint-N.eval.json. Given several times,
 * each checkpoint is evaluated in turn (its own JSON beside it) and the result pooled over all of
 * them (the runs of several training seeds) is printed and written to --out (default eval.json).
 *
 * `--league A --league B ...` plays a round robin of those checkpoints or model folders in the
 * seated games of the val tags (src/rollout/league.ts): each pair's wins, draws and losses, and an
 * Elo rating of each, in <output_dir>/league.json.
 */
import { basename, dirname, join } from 'node:path';
import type { AgenticConfig } from '../config/schema';
import type { PluginHost } from '../host/plugin_host';
import type { EvaluationResult } from '../rollout/evaluate';
import { UsageError } from '../errors';
import { writeFileAtomic } from '../util/atomic';
import { checkOutputPath, configArgs, configRequest, OVERRIDES_HELP, overridesArg, overridesFrom } from './args';
import { command } from './command';
import { log, out } from './log';

const POLICIES = ['model', 'random'] as const;

/** Every value of a string option given several times (citty keeps only the last). */
export function repeatedOption(rawArgs: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!;
    if (arg === '--') break;
    if (arg === `--${name}`) values.push(rawArgs[++i] ?? '');
    else if (arg.startsWith(`--${name}=`)) values.push(arg.slice(name.length + 3));
  }
  return values;
}

/** --seeds: a whole number of passes, 1 or more. */
export function passesOf(value: string | undefined): number {
  if (value === undefined) return 1;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--seeds: expected a whole number of passes, 1 or more, got '${value}'`);
  return n;
}

export default command(
  {
    meta: { name: 'eval', description: 'Evaluate a policy on the validation environments (table and JSON)' },
    args: {
      ...configArgs,
      policy: {
        type: 'string',
        valueHint: 'model|random',
        description: "model: actor_infer's model, or the inference servers the config names (default); random: each env's random actions, no model",
      },
      checkpoint: {
        type: 'string',
        valueHint: 'path|auto',
        description: "Evaluate a checkpoint's actor with its saved config: a checkpoint folder, or auto for the newest of the run the config names",
      },
      league: {
        type: 'string',
        valueHint: 'folder',
        description:
          "A round robin in the seated games of the val tags: give it two or more times (or comma-separated), each a checkpoint or model folder; prints each pair's wins, draws and losses and an Elo rating, writes --out (default <output_dir>/league.json)",
      },
      seeds: {
        type: 'string',
        valueHint: 'N',
        description: 'Play the episodes N times, with seeds seed .. seed+N-1, the intervals pooling every pass (default 1); N > 1 needs sampled decoding',
      },
      out: {
        type: 'string',
        valueHint: 'file',
        description:
          'Where to write the JSON (default <output_dir>/eval.json; with --checkpoint, checkpoint-N.eval.json beside it; with several, the pooled result, default eval.json)',
      },
      ...overridesArg,
    },
    async run({ args, rawArgs }) {
      const overrides = overridesFrom(args._);
      const passes = passesOf(args.seeds);
      const checkpoints = args.checkpoint === undefined ? [] : repeatedOption(rawArgs, 'checkpoint');
      if (args.policy !== undefined) {
        if (!POLICIES.includes(args.policy as (typeof POLICIES)[number])) {
          throw new UsageError(`--policy: expected one of ${POLICIES.join(', ')}, got '${args.policy}'`);
        }
        if (args.policy === 'random') overrides.push('val_env_manager.llm_proxy.proxy_type=random');
      }
      const { PluginHost } = await import('../host/plugin_host');
      const host = new PluginHost();
      if (args.league !== undefined) {
        if (checkpoints.length > 0 || args.policy !== undefined || args.seeds !== undefined)
          throw new UsageError('--league plays the folders it names, once: leave out --checkpoint, --policy and --seeds');
        await leagueRun(args, overrides, repeatedOption(rawArgs, 'league'), host);
        return 0;
      }
      if (checkpoints.length <= 1) {
        await evaluateOne(args, overrides, checkpoints[0], host, passes, args.out);
        return 0;
      }
      // a pooled result that cannot be written is said before any checkpoint is played
      const path = args.out ?? 'eval.json';
      checkOutputPath(path);
      const { heldOut, heldOutLine } = await import('../rollout/held_out');
      const results: Array<{ checkpoint: string; result: EvaluationResult }> = [];
      for (const given of checkpoints) results.push(await evaluateOne(args, overrides, given, host, passes, undefined));
      const pooled = heldOut(
        results.flatMap((r) => r.result.batch.episodes),
        results[0]!.result.json.seed,
      );
      for (const r of results) out(heldOutLine(r.checkpoint, r.result.json.held_out));
      out(heldOutLine(`pooled over ${results.length} checkpoints`, pooled));
      const json = { checkpoints: results.map((r) => ({ checkpoint: r.checkpoint, held_out: r.result.json.held_out })), pooled };
      writeFileAtomic(path, `${JSON.stringify(json, null, 2)}\n`);
      log.info(`wrote ${path}`);
      return 0;
    },
  },
  `${OVERRIDES_HELP}

EXAMPLES
  agentic eval --config-name frozen_lake --policy random
  agentic eval --config-name frozen_lake pretrain=path/to/hf_folder val_batch_size=64
  agentic eval --checkpoint output/frozen_lake/checkpoints/checkpoint-50 val_batch_size=64
  agentic eval --config-name frozen_lake --checkpoint auto
  agentic eval --checkpoint output/agentic/checkpoints/checkpoint-250 --seeds 3 val_env_manager.generating_args.do_sample=true val_env_manager.generating_args.temperature=1
  agentic eval --checkpoint runs/seed1/checkpoint-250 --checkpoint runs/seed2/checkpoint-250 --out pooled.json
  agentic eval --config-name tic_tac_toe --league output/tic_tac_toe/checkpoints/checkpoint-100 --league output/tic_tac_toe/checkpoints/checkpoint-200
  agentic eval --config-name frozen_lake val_env_manager.llm_proxy.proxy_type=sglang val_env_manager.llm_proxy.proxy_config.base_url=http://127.0.0.1:30000`,
);

/** `--league`: the round robin of the folders named, its lines on stdout and its JSON on disk. */
async function leagueRun(args: Record<string, unknown> & { out?: string }, overrides: string[], given: string[], host: PluginHost): Promise<void> {
  const entries = given.flatMap((value) => value.split(',')).filter((entry) => entry !== '');
  if (entries.length < 2) throw new UsageError('--league: name two or more checkpoint or model folders (--league a --league b, or --league a,b)');
  if (new Set(entries).size !== entries.length) throw new UsageError('--league: a folder is named twice; each plays once');
  const { loadConfig } = await import('../config/load');
  const config = (await loadConfig(configRequest(args, overrides), host)).config;
  const path = args.out ?? join(config.output_dir, 'league.json');
  checkOutputPath(path);
  const { eloLines, leagueOfFolders } = await import('../rollout/league');
  const { withPlugins } = await import('./start_up');
  const result = await withPlugins(config, host, (run) => leagueOfFolders(config, run, entries, (line) => log.info(line)));
  for (const line of eloLines(result)) out(line);
  writeFileAtomic(path, `${JSON.stringify(result, null, 2)}\n`);
  log.info(`wrote ${path}`);
}

/** Evaluates one policy (a checkpoint's actor, or the config's) and writes its JSON. */
async function evaluateOne(
  args: Record<string, unknown> & { policy?: string },
  overrides: string[],
  given: string | undefined,
  host: PluginHost,
  passes: number,
  outArg: string | undefined,
): Promise<{ checkpoint: string; result: EvaluationResult }> {
  const { loadConfig } = await import('../config/load');
  const { isHttpProxy } = await import('../config/schema');
  const { withProxyType } = await import('../rollout/env_manager');
  let config: AgenticConfig;
  let path: string;
  let checkpoint: { checkpoint: string; global_step: number } | null = null;
  if (given !== undefined) {
    const { checkpointActorConfig } = await import('./checkpoints');
    const { checkpoint: found, config: actorConfig } = await checkpointActorConfig(given, args, overrides, host);
    config = actorConfig;
    path = outArg ?? join(dirname(found.path), `${basename(found.path)}.eval.json`);
    checkpoint = { checkpoint: found.path, global_step: found.step };
    log.info(`checkpoint ${found.path} (step ${found.step}), with its saved config`);
    const proxy = config.val_env_manager.llm_proxy.proxy_type;
    if (isHttpProxy(proxy)) {
      // the servers hold their own weights, not the checkpoint's
      config = withProxyType(config, 'val', 'policy');
      log.info(`the checkpoint's actor plays in this process, not on val_env_manager's ${proxy} servers`);
    }
  } else {
    config = (await loadConfig(configRequest(args, overrides), host)).config;
    path = outArg ?? join(config.output_dir, 'eval.json');
  }
  if (args.policy === 'model' && config.val_env_manager.llm_proxy.proxy_type === 'random') config = withProxyType(config, 'val', 'policy');
  checkOutputPath(path);
  const { withPlugins } = await import('./start_up');
  return withPlugins(config, host, (run) => evaluateWith(config, run, { path, passes, checkpoint }));
}

/** evaluateOne, once its config is settled and its plugins started. */
async function evaluateWith(
  config: AgenticConfig,
  host: PluginHost,
  { path, passes, checkpoint }: { path: string; passes: number; checkpoint: { checkpoint: string; global_step: number } | null },
): Promise<{ checkpoint: string; result: EvaluationResult }> {
  const { generatingArgs } = await import('../rollout/env_manager');
  const { checkPythonSandbox } = await import('./sandbox_check');
  await checkPythonSandbox(config, host, { tags: config.val_env_manager.tags, warn: (line) => log.warn(line) });
  const gen = generatingArgs(config, 'val');
  if (passes > 1 && config.val_env_manager.llm_proxy.proxy_type !== 'random' && (!gen.do_sample || gen.temperature === 0))
    throw new UsageError(
      `--seeds ${passes}: val_env_manager decodes greedily, so the passes would replay the same episodes the same way and the interval would count each ${passes} times; sample (val_env_manager.generating_args.do_sample=true, temperature > 0) or play one pass`,
    );
  const { evaluate, evaluationEpisodes } = await import('../rollout/evaluate');
  const { heldOutLine } = await import('../rollout/held_out');
  const result = await evaluate(config, host, (line) => log.info(line), evaluationEpisodes(config), passes);
  out(result.table);
  out(heldOutLine(config.val_suite ?? `${config.val_batch_size} episodes drawn by seed`, result.json.held_out));
  if (result.json.seats) {
    const { seatResultLines } = await import('../rollout/seat_results');
    for (const line of seatResultLines(result.json.seats)) out(line);
  }
  writeFileAtomic(path, `${JSON.stringify(checkpoint ? { ...checkpoint, ...result.json } : result.json, null, 2)}\n`);
  log.info(`wrote ${path}`);
  return { checkpoint: checkpoint?.checkpoint ?? config.exp_name, result };
}
