/**
 * What the gateway costs: the calculator's held-out questions played greedily by the same policy
 * two ways, by the built-in tool_use env with function calling (configs/calculator_hermes.yaml)
 * and by the agent written with the `openai` client calling the gateway
 * (configs/calculator_openai_agent.yaml), in alternating rounds. Both see the same tokens, so the
 * difference is the gateway's: HTTP, JSON, the client, the template rendering the whole
 * conversation at every call. Checks that both sides played the same token ids, prints JSON
 * (episodes/s, model calls/s, the extra milliseconds per call) and writes it to --out.
 *
 *   bun scripts/bench/gateway.ts [--model ./output/bases/calculator_hermes] [--episodes 100] [--rounds 3] [--out output/bench/gateway.json]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { loadConfig } from '../../src/config/load';
import { startBackend } from '../../src/engine/backend';
import { PluginHost } from '../../src/host/plugin_host';
import { loadModel } from '../../src/model/load';
import { ChatFormat } from '../../src/rollout/chat';
import { EnvManager, makePolicy } from '../../src/rollout/env_manager';
import type { RolloutBatch } from '../../src/rollout/types';

const root = resolve(import.meta.dir, '../..');
const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
};
const modelRef = arg('model', './output/bases/calculator_hermes');
const episodes = Number(arg('episodes', '100'));
const rounds = Number(arg('rounds', '3'));
const out = resolve(root, arg('out', 'output/bench/gateway.json'));

await startBackend('wasm');
const host = new PluginHost(root);
const { model, tokenizer } = await loadModel(modelRef, { cwd: root, seed: 42 });
const chat = new ChatFormat(tokenizer);

async function side(configName: string) {
  const overrides = [`val_batch_size=${episodes}`, `val_env_manager.num_env_groups=${episodes}`, `pretrain=${modelRef}`];
  const { config } = await loadConfig({ configName, overrides, cwd: root }, host);
  const manager = await EnvManager.build('val', config, host);
  return {
    async play(): Promise<{ batch: RolloutBatch; seconds: number }> {
      const policy = makePolicy(config, 'val', model, chat);
      const started = performance.now();
      try {
        const batch = await manager.collect(episodes, policy, chat);
        return { batch, seconds: (performance.now() - started) / 1000 };
      } finally {
        await policy.close();
      }
    },
    close: () => manager.close(),
  };
}

const builtin = await side('calculator_hermes');
const agent = await side('calculator_openai_agent');
const times = { builtin: [] as number[], agent: [] as number[] };
let calls = 0;
let success = { builtin: 0, agent: 0 };
for (let round = 0; round < rounds; round++) {
  const a = await builtin.play();
  const b = await agent.play();
  const ids = (batch: RolloutBatch) => JSON.stringify(batch.samples.map((s) => [...s.inputIds]));
  if (ids(a.batch) !== ids(b.batch)) throw new Error(`round ${round}: the agent and the built-in env played different tokens`);
  times.builtin.push(a.seconds);
  times.agent.push(b.seconds);
  calls = b.batch.episodes.reduce((n, e) => n + e.turns.length, 0);
  const solved = (batch: RolloutBatch) => batch.episodes.filter((e) => e.score >= 1).length / batch.episodes.length;
  success = { builtin: solved(a.batch), agent: solved(b.batch) };
}
await builtin.close();
await agent.close();

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
const result = {
  model: modelRef,
  episodes,
  rounds,
  model_calls_per_round: calls,
  same_tokens: true,
  success,
  builtin: { seconds: times.builtin, episodes_per_second: episodes / median(times.builtin) },
  agent: { seconds: times.agent, episodes_per_second: episodes / median(times.agent) },
  agent_over_builtin: median(times.agent) / median(times.builtin),
  extra_ms_per_call: ((median(times.agent) - median(times.builtin)) * 1000) / calls,
};
console.log(JSON.stringify(result, null, 2));
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
process.exit(0);
