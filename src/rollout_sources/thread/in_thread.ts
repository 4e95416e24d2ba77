/**
 * Runs inside the rollout thread of asynchronous training (./trainer_side.ts is the trainer's
 * side of it): a tfjs engine of its own, actor_infer's model, the train and val environments.
 * Requests are served one at a time in the order they arrive. `bun build --compile` embeds this
 * file as an entrypoint of its own (scripts/build.ts).
 */
import { parentPort } from 'node:worker_threads';
import { needsOf } from '../../algo/estimators';
import type { AgenticConfig } from '../../config/schema';
import { startBackend } from '../../engine/backend';
import { tf } from '../../engine/tf';
import { loadModel } from '../../model/load';
import type { Qwen2Model } from '../../model/qwen2';
import { withoutAdapters } from '../../model/lora_adapters';
import { PluginHost } from '../../host/plugin_host';
import { McpPool } from '../../sdk/mcp/pool';
import { loadPolicy, roleNeeds } from '../../train/roles';
import { fromRollout } from '../../train/batch';
import { referenceLogProbs } from '../../train/stages/score';
import { ChatFormat } from '../../rollout/chat';
import { EnvManager } from '../../rollout/env_manager';
import type { RemoteRollout } from '../../train/rollout_source';
import type { ThreadReply, ThreadRequest } from './messages';

interface State {
  config: AgenticConfig;
  model: Qwen2Model;
  /** The frozen reference, when a KL term needs it: the thread scores each batch with it. */
  reference: Qwen2Model | null;
  chat: ChatFormat;
  train: EnvManager;
  val: EnvManager | null;
  /** Training steps behind the weights held; -1 until the first arrive. */
  version: number;
}

const port = parentPort;
if (!port) throw new Error('rollout_sources/thread/in_thread.ts runs as the rollout thread of an asynchronous training run');

let state: State | null = null;

async function init(config: AgenticConfig, cwd: string, threads: number): Promise<State> {
  await startBackend(config.actor_infer.strategy_args.backend ?? config.backend, {
    wasmThreadsExactly: { threads, why: "the rollout worker's own engine in an asynchronous run" },
    blas: config.blas,
  });
  // this thread's own MCP connections; the trainer's thread has checked the sandbox and the envs already
  const host = new PluginHost(cwd, { mcp: new McpPool(), pythonSandbox: config.python_sandbox });
  await host.loadAll(config.plugins);
  // actor_train's policy, adapters and all (its weights arrive before the first rollout)
  const { model, tokenizer } = await loadPolicy(config, false);
  const referenceRef = config.reference.model_args.model_name_or_path;
  const reference = !roleNeeds(config).reference
    ? null
    : model.lora && referenceRef === null
      ? withoutAdapters(model)
      : (await loadModel(referenceRef ?? config.pretrain, { seed: config.seed, trainable: false })).model;
  const train = await EnvManager.build('train', config, host);
  const val = config.eval_steps > 0 && config.val_env_manager.tags.length > 0 ? await EnvManager.build('val', config, host) : null;
  return { config, model, reference, chat: new ChatFormat(tokenizer), train, val, version: -1 };
}

function ready(): State {
  if (!state) throw new Error('a request before init');
  if (state.version < 0) throw new Error('a rollout before the first weights');
  return state;
}

async function handle(request: ThreadRequest): Promise<{ value: unknown; transfer?: ArrayBuffer[] }> {
  switch (request.type) {
    case 'init':
      state = await init(request.config, request.cwd, request.threads);
      return { value: null };
    case 'weights': {
      if (!state) throw new Error('weights before init');
      const variables = state.model.trainedVariables;
      if (request.weights.length !== variables.length) throw new Error(`weight update: ${request.weights.length} arrays for ${variables.length} variables`);
      variables.forEach((variable, i) => {
        const data = request.weights[i]!;
        if (data.length !== variable.size) throw new Error(`weight update: variable ${i} has ${variable.size} values, got ${data.length}`);
        const value = tf.tensor(data, variable.shape);
        variable.assign(value);
        value.dispose();
      });
      state.version = request.version;
      return { value: null };
    }
    case 'rollout': {
      const s = ready();
      const batch = await s.train.play(request.batchSize, s.model, s.chat, s.version);
      const baselines = needsOf(s.config.adv_estimator).greedyBaseline ? [...(await s.train.greedyBaselines(batch.episodes, s.model, s.chat))] : null;
      let refLogProbs: Float32Array[] | null = null;
      if (s.reference) {
        const reference = s.reference;
        const started = performance.now();
        // the same reference stage as the trainer's, on the same batch columns
        refLogProbs = await referenceLogProbs(reference, fromRollout(batch, s.config, s.chat, { baselines: null, sourceRefLogProbs: null }));
        batch.metrics['time/rollout_ref'] = (performance.now() - started) / 1000;
      }
      const value: RemoteRollout = { version: s.version, batch, countersAfter: [...s.train.episodeCounters], baselines, refLogProbs };
      return { value };
    }
    case 'validate': {
      const s = ready();
      if (!s.val) throw new Error('validation asked of a run without val_env_manager tags or eval_steps');
      return { value: await s.val.play(s.config.val_batch_size, s.model, s.chat, s.version) };
    }
    case 'counters':
      if (!state) throw new Error('counters before init');
      state.train.restoreEpisodeCounters(request.counters);
      return { value: null };
    case 'logits': {
      const s = ready();
      const ids = request.ids;
      const logits = tf.tidy(() => {
        const input = tf.tensor2d(ids, [1, ids.length], 'int32');
        return s.model.logits(s.model.forward(input).hidden);
      });
      const values = (await logits.data()) as Float32Array;
      logits.dispose();
      return { value: values, transfer: [values.buffer as ArrayBuffer] };
    }
    case 'exit':
      process.exit(request.code);
  }
}

let queue: Promise<void> = Promise.resolve();

port.on('message', ({ id, request }: { id: number; request: ThreadRequest }) => {
  // the test seam's crash comes at once, in the middle of whatever is running
  if (request.type === 'exit') process.exit(request.code);
  queue = queue.then(async () => {
    let reply: ThreadReply;
    let transfer: ArrayBuffer[] = [];
    try {
      const done = await handle(request);
      reply = { id, ok: true, value: done.value };
      transfer = done.transfer ?? [];
    } catch (error) {
      reply = { id, ok: false, message: error instanceof Error ? error.message.split('\n')[0]! : String(error) };
    }
    port.postMessage(reply, transfer);
  });
});
