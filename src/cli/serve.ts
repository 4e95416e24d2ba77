/**
 * `agentic serve [config] [overrides]`: the policy as an inference server (docs/serve.md), speaking
 * SGLang's native API and OpenAI's completions with token ids in and out, so a trainer, eval or
 * play on another process or machine generates with it as it would with SGLang or vLLM, and
 * OpenAI's chat completions for agents and apps written against OpenAI's API.
 *
 * The model is the one `agentic eval` plays: actor_infer.model_args.model_name_or_path, else
 * pretrain (a built-in preset, a Hugging Face folder or a hub id), or a checkpoint's actor with
 * --checkpoint. Its context is sequence_length (at most the model's positions). The server runs
 * until SIGTERM, which drains it: new requests get 503, those in flight finish, then it exits 0.
 *
 * A server is a door: keys (--api-key, --admin-key) say who may generate and who may change what
 * is served, weight and adapter folders load only from under --weights-root (model_update_dir by
 * default, where a trainer of the same config writes them), and an address other than loopback
 * needs a key or --insecure.
 */
import { resolve } from 'node:path';
import type { AgenticConfig } from '../config/schema';
import { firstLine, UsageError } from '../errors';
import { configArgs, configRequest, OVERRIDES_HELP, overridesArg, overridesFrom } from './args';
import { command } from './command';
import { log } from './log';

/** SGLang's default port. */
const DEFAULT_PORT = 30000;
const DEFAULT_MAX_QUEUE = 1024;
/**
 * SGLang's default weight_version. Not a whole number, so never a trainer's version: a server
 * restarted mid-run answers with it and the trainer sends its weights again.
 */
const START_VERSION = 'default';
const DEFAULT_IDLE_TIMEOUT_S = 30;
/** Bun's most. */
const MAX_IDLE_TIMEOUT_S = 255;

/** A key from its flag, else its environment variable; null when neither is given. */
function keyOf(flag: string, value: string | undefined, variable: string): string | null {
  const key = value ?? process.env[variable];
  if (key === undefined) return null;
  if (key.trim() === '') throw new UsageError(value === undefined ? `${variable} is empty` : `option '--${flag}' needs a value`);
  return key;
}

function intFlag(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min) throw new UsageError(`--${name}: expected an integer of at least ${min}, got '${value}'`);
  return n;
}

/** --weight-version: any name but a whole number, which would pass for a trainer's step. */
function weightVersionFlag(given: string | undefined): string {
  const weightVersion = given ?? START_VERSION;
  if (weightVersion === '') throw new UsageError("option '--weight-version' needs a value");
  if (/^\d+$/.test(weightVersion)) {
    throw new UsageError(
      `--weight-version: '${weightVersion}' is a whole number, a trainer's version: a server that starts with it would pass for one holding that step's weights; name it otherwise (step-${weightVersion})`,
    );
  }
  return weightVersion;
}

/** The config to serve: a checkpoint's saved one, or the one the flags name; checked as every command's start-up checks it. */
async function servedConfig(args: Parameters<typeof configRequest>[0] & { checkpoint?: string }, overrides: string[]): Promise<AgenticConfig> {
  const { loadConfig } = await import('../config/load');
  const { PluginHost } = await import('../host/plugin_host');
  const pluginHost = new PluginHost();
  let config: AgenticConfig;
  if (args.checkpoint !== undefined) {
    const { checkpointActorConfig } = await import('./checkpoints');
    const found = await checkpointActorConfig(args.checkpoint, args, overrides, pluginHost);
    config = found.config;
    log.info(`checkpoint ${found.checkpoint.path} (step ${found.checkpoint.step}), with its saved config`);
  } else {
    config = (await loadConfig(configRequest(args, overrides), pluginHost)).config;
  }
  const { checkPlugins } = await import('./start_up');
  await checkPlugins(config, pluginHost);
  return config;
}

export default command(
  {
    meta: {
      name: 'serve',
      description: "Serve the policy over HTTP: SGLang's native API and OpenAI completions (token ids in and out), and OpenAI chat completions",
    },
    args: {
      ...configArgs,
      host: { type: 'string', valueHint: 'address', description: 'Address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)' },
      port: { type: 'string', valueHint: 'n', description: `Port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)` },
      'max-running': { type: 'string', valueHint: 'n', description: 'Most requests decoded together in the batch (default max_running_requests)' },
      'max-queue': {
        type: 'string',
        valueHint: 'n',
        description: `Most requests waiting for a row; more are refused with 503 and Retry-After (default ${DEFAULT_MAX_QUEUE})`,
      },
      'weight-version': {
        type: 'string',
        valueHint: 'name',
        description: `weight_version of the weights loaded at start (default '${START_VERSION}', SGLang's; never a whole number, which is a trainer's)`,
      },
      'api-key': {
        type: 'string',
        valueHint: 'key',
        description: 'Requests must send Authorization: Bearer <key> (or set AGENTIC_SERVE_API_KEY); admin endpoints too unless --admin-key',
      },
      'admin-key': {
        type: 'string',
        valueHint: 'key',
        description: 'The key of weight updates, adapters, pause/continue/abort (or set AGENTIC_SERVE_ADMIN_KEY); it opens every endpoint',
      },
      'weights-root': {
        type: 'string',
        valueHint: 'dir',
        description: 'Weight and adapter folders load only from under it (default model_update_dir, where a trainer writes them)',
      },
      insecure: { type: 'boolean', description: 'Listen on an address other than loopback without --api-key: anyone who reaches it may use it' },
      'idle-timeout': {
        type: 'string',
        valueHint: 's',
        description: `Seconds a request that does not wait on generation may take, its upload included (default ${DEFAULT_IDLE_TIMEOUT_S})`,
      },
      checkpoint: {
        type: 'string',
        valueHint: 'path|auto',
        description: "Serve a checkpoint's actor with its saved config: a checkpoint folder, or auto for the newest of the run the config names",
      },
      ...overridesArg,
    },
    async run({ args }) {
      const overrides = overridesFrom(args._);
      const port = intFlag('port', args.port, DEFAULT_PORT, 0);
      if (port > 65535) throw new UsageError(`--port: expected a port up to 65535, got ${port}`);
      const maxQueue = intFlag('max-queue', args['max-queue'], DEFAULT_MAX_QUEUE, 0);
      const host = args.host ?? '127.0.0.1';
      if (host === '') throw new UsageError("option '--host' needs a value");
      const weightVersion = weightVersionFlag(args['weight-version']);
      const idleTimeoutS = intFlag('idle-timeout', args['idle-timeout'], DEFAULT_IDLE_TIMEOUT_S, 1);
      if (idleTimeoutS > MAX_IDLE_TIMEOUT_S) throw new UsageError(`--idle-timeout: expected at most ${MAX_IDLE_TIMEOUT_S} seconds, got ${idleTimeoutS}`);
      const keys = { api: keyOf('api-key', args['api-key'], 'AGENTIC_SERVE_API_KEY'), admin: keyOf('admin-key', args['admin-key'], 'AGENTIC_SERVE_ADMIN_KEY') };
      const { isLoopback } = await import('../util/loopback');
      if (!isLoopback(host) && keys.api === null && !args.insecure) {
        throw new UsageError(
          `--host ${host} opens the server to the network: give it --api-key (or AGENTIC_SERVE_API_KEY), or --insecure to let anyone who reaches it generate and change its weights`,
        );
      }
      if (args['weights-root'] === '') throw new UsageError("option '--weights-root' needs a value");

      const config = await servedConfig(args, overrides);
      const maxRunning = intFlag('max-running', args['max-running'], config.max_running_requests, 1);

      const { policyAdapter, runBackend } = await import('../config/validate');
      const { describeBackend, startBackend } = await import('../engine/backend');
      const { DEFAULT_PRESET, loadModel, presetOf } = await import('../model/load');
      const { PRESET_PREFIX } = await import('../model/presets');
      const { ChatFormat } = await import('../rollout/chat');
      const { ServingEngine } = await import('../serve/batcher');
      const { InferenceServer } = await import('../serve/server');
      const { WeightsRoot } = await import('../serve/weights_root');

      const backend = describeBackend(await startBackend(runBackend(config), { webgpuAdapter: config.webgpu_adapter, blas: config.blas }));
      const reference = config.actor_infer.model_args.model_name_or_path ?? config.pretrain;
      const { model, tokenizer, source } = await loadModel(reference, { seed: config.seed, trainable: false, adapter: policyAdapter(config) });
      const chat = new ChatFormat(tokenizer);
      const maxContext = Math.min(config.sequence_length, model.config.max_position_embeddings);
      const engine = new ServingEngine(model, chat, {
        maxRunning,
        maxQueue,
        maxContext,
        weightVersion,
        seed: config.seed,
        modelPath: source,
        tokenizerPath: presetOf(reference) === null ? source : tokenizer.source,
      });
      const servedModel = reference ?? `${PRESET_PREFIX}${DEFAULT_PRESET}`;
      const weightsRoot = resolve(args['weights-root'] ?? config.model_update_dir);
      const server = new InferenceServer(engine, {
        host,
        port,
        servedModel,
        log: (line) => log.info(line),
        keys,
        weightsRoot: new WeightsRoot(weightsRoot),
        idleTimeoutS,
      });
      let url: string;
      try {
        url = server.start();
      } catch (error) {
        model.dispose();
        throw new UsageError(`cannot listen on ${host}:${port}: ${firstLine(error)}`);
      }
      log.info(
        `serving ${source} on ${url} (${backend}; context ${maxContext}, max running ${maxRunning}, max queue ${maxQueue}, weight_version ${weightVersion})`,
      );
      const access = keys.api === null ? 'no API key' : keys.admin === null ? 'an API key' : 'an API key and an admin key';
      log.info(`${access}; weight and adapter folders load from under ${weightsRoot}`);
      if (keys.api === null && !isLoopback(host))
        log.warn(`--insecure: anyone who reaches ${url} may generate${keys.admin === null ? ' and change its weights' : ''}`);

      await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
      const { running, queued } = engine.stats();
      log.info(`SIGTERM: finishing ${running + queued} request(s) in flight, refusing new ones`);
      await server.drain();
      model.dispose();
      log.success(`stopped; ${engine.stats().served} request(s) served`);
      return 0;
    },
  },
  `ENDPOINTS (docs/serve.md)
  POST /generate                  SGLang: input_ids, sampling_params, return_logprob, rid
  POST /v1/completions            OpenAI with a prompt of token ids; vLLM's return_token_ids
  POST /v1/chat/completions       OpenAI chat: messages, tools (the chat template's function calling), stream
  POST /update_weights_from_disk  load a Hugging Face folder between batches: model_path, weight_version
  GET  /get_weight_version   POST /pause_generation   POST /continue_generation   POST /abort_request
  GET  /health   GET /health_generate   GET /get_model_info   GET /get_server_info   POST /tokenize   GET /v1/models
  POST /load_lora_adapter   POST /unload_lora_adapter   POST /flush_cache

ACCESS
  --api-key KEY (or AGENTIC_SERVE_API_KEY): every endpoint but /health and /health_generate needs
  Authorization: Bearer KEY. --admin-key KEY: weight updates, adapters, pause, continue, abort and
  flush_cache need it instead (it opens the rest too). --host other than loopback needs --api-key
  or --insecure. Folders load only from under --weights-root (default model_update_dir).

SIGTERM drains: new requests get 503, those in flight finish, then the server exits 0.

${OVERRIDES_HELP}

EXAMPLES
  agentic serve --port 30000
  agentic serve --config-name frozen_lake pretrain=path/to/hf_folder --max-running 64
  AGENTIC_SERVE_API_KEY=secret agentic serve --checkpoint output/frozen_lake/checkpoints/checkpoint-50 --host 0.0.0.0`,
);
