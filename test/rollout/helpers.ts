/** Shared set-up of the rollout tests: configs from YAML, a small model on the built-in tokenizer. */
import { expect } from 'bun:test';
import { join } from 'node:path';
import { tf } from '../../src/engine/tf';
import { loadConfig } from '../../src/config/load';
import type { AgenticConfig } from '../../src/config/schema';
import { startBackend } from '../../src/engine/backend';
import { defaultTokenizer } from '../../src/model/default_tokenizer';
import { Qwen2Model } from '../../src/model/qwen2';
import { checkDefinition } from '../../src/host/registry';
import { PluginHost } from '../../src/host/plugin_host';
import type { PluginDefinition } from '../../src/sdk/types';
import { ChatFormat } from '../../src/rollout/chat';
import type { Sample } from '../../src/rollout/types';
import { scratch } from '../helpers';
import { microPolicyConfig } from '../model/tiny';

await startBackend('wasm');

export const tokenizer = defaultTokenizer();
export const chat = new ChatFormat(tokenizer);

/** A small random Qwen2 on the built-in tokenizer: fast enough for many rollouts. */
export const model = Qwen2Model.random(microPolicyConfig(tokenizer.vocabSize), { seed: 3 });

/** log p(inputIds[t] | inputIds[<t]) under the model, by one full forward pass of the row. */
async function modelLogProbs(sample: Sample): Promise<Float32Array> {
  const n = sample.inputIds.length;
  return tf.tidy(() => {
    const ids = tf.tensor2d(sample.inputIds, [1, n], 'int32');
    const { hidden } = model.forward(ids);
    const targets = new Int32Array(n);
    targets.set(sample.inputIds.subarray(1), 0);
    const { logProbs } = model.tokenStats(hidden, targets);
    const shifted = new Float32Array(n);
    shifted.set((logProbs.dataSync() as Float32Array).subarray(0, n - 1), 1);
    return shifted;
  });
}

/**
 * The largest gap between a row's recorded sampling log-probs and the model's own, over its
 * sampled ids; every other id must carry log-prob 0.
 */
export async function worstLogProbGap(sample: Sample): Promise<number> {
  const recomputed = await modelLogProbs(sample);
  let worst = 0;
  for (let t = 0; t < sample.inputIds.length; t++) {
    if (sample.responseMask[t]) worst = Math.max(worst, Math.abs(recomputed[t]! - sample.logProbs[t]!));
    else expect(sample.logProbs[t]).toBe(0);
  }
  return worst;
}

/** A host with the built-ins and `extra` plugins registered. */
export function hostWith(...extra: PluginDefinition[]): PluginHost {
  const host = new PluginHost();
  for (const definition of extra) host.registry.register(checkDefinition(definition, 'test'), 'test');
  return host;
}

export async function configFrom(yaml: string, host: PluginHost = hostWith(), overrides: string[] = []): Promise<AgenticConfig> {
  const dir = scratch({ 'config.yaml': yaml });
  return (await loadConfig({ configFile: join(dir, 'config.yaml'), overrides }, host)).config;
}

/** FrozenLake in `groups` groups of `size`, both managers alike. */
export function lakeYaml(options: {
  groups: number;
  size: number;
  kind?: 'traj' | 'step';
  sequenceLength?: number;
  maxSteps?: number;
  tokens?: number;
  greedy?: boolean;
}): string {
  const gen = options.greedy ? '{max_new_tokens: 64, temperature: 0, do_sample: false}' : '{max_new_tokens: 64, temperature: 1, top_p: 1, top_k: 0}';
  return `
seed: 7
sequence_length: ${options.sequenceLength ?? 1024}
rollout_batch_size: ${options.groups * options.size}
val_batch_size: ${options.groups * options.size}
custom_envs:
  Lake:
    env_type: frozen_lake
    env_manager_cls: ${options.kind ?? 'traj'}
    max_steps: ${options.maxSteps ?? 3}
    max_tokens_per_step: ${options.tokens ?? 12}
    env_config: {size: 4, is_slippery: false, format_penalty: -0.01}
train_env_manager: {num_env_groups: ${options.groups}, group_size: ${options.size}, tags: [Lake], generating_args: ${gen}}
val_env_manager: {num_env_groups: ${options.groups}, group_size: ${options.size}, tags: [Lake], generating_args: ${gen}}
`;
}
