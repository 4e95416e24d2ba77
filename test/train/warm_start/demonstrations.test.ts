/**
 * warm_start.demonstrations: a `none` recipe never reaches the env's solver. The test env is
 * FrozenLake whose solutionAction() counts its calls and throws; a run with `none` warm-starts and
 * trains through it without one call, and the same env under `solver` with worked examples does
 * call it (so the count could have caught a leak).
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runTraining } from '../../../src/cli/training_run';
import { loadConfig } from '../../../src/config/load';
import { AgenticError, ConfigError } from '../../../src/errors';
import { PluginHost } from '../../../src/host/plugin_host';
import { checkDefinition } from '../../../src/host/registry';
import { defineEnv } from '../../../src/sdk/define';
import type { EnvClass } from '../../../src/sdk/types';
import { scratch } from '../../helpers';
import { microPolicyFolder } from '../helpers';

setDefaultTimeout(120_000);

let solverCalls = 0;

/** The host with `lake_without_solver`: the built-in FrozenLake, but its solver counts and throws (the training lakes play it). */
async function hostWithoutSolver(): Promise<PluginHost> {
  const host = new PluginHost();
  const lake = await host.resolveEnv('frozen_lake');
  const Lake = lake.env as EnvClass<unknown>;
  class LakeWithoutSolver extends Lake {
    solutionAction(): string {
      solverCalls += 1;
      throw new Error('the solver was called');
    }
  }
  const definition = defineEnv({ name: 'lake_without_solver', description: 'FrozenLake whose solver throws.', config: lake.config, env: LakeWithoutSolver });
  host.registry.register(checkDefinition(definition, 'test'), 'test');
  return host;
}

let pretrain = '';
beforeAll(async () => {
  pretrain = await microPolicyFolder();
});

/** configs/agentic.yaml on `lake_without_solver`, shortened to a small warm start and one RL step. */
async function lakeRun(host: PluginHost, overrides: string[]) {
  const out = scratch();
  const request = {
    configName: 'agentic',
    overrides: [
      `pretrain=${pretrain}`,
      `output_dir=${out}`,
      `warm_start.output_dir=${out}/base`,
      'custom_envs.FrozenLakeTrain.env_type=lake_without_solver',
      'warm_start.episodes=16',
      'warm_start.epochs=1',
      'max_steps=1',
      'eval_steps=0',
      'rollout_batch_size=8',
      'train_env_manager.num_env_groups=2',
      'train_env_manager.group_size=4',
      'track_with=[jsonl]',
      ...overrides,
    ],
  };
  return { out, loaded: await loadConfig(request, host) };
}

const quiet = { info: () => {}, warn: () => {} };

describe('warm_start.demonstrations', () => {
  test('none: the base and RL never call the solver, and the run trains', async () => {
    const host = await hostWithoutSolver();
    const { out, loaded } = await lakeRun(host, ['warm_start.demonstrations=none', 'warm_start.worked_examples=0', 'warm_start.random_actions=true']);
    solverCalls = 0;
    await runTraining(loaded, host, quiet);
    expect(solverCalls).toBe(0);
    expect(existsSync(join(out, 'base', 'model.safetensors'))).toBe(true);
    const steps = readFileSync(join(out, 'logs', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(JSON.parse(steps.at(-1)!).metrics['actor/optimizer_steps']).toBeGreaterThan(0);
  });

  test('solver: the same env is asked for its worked solutions (and here every one fails)', async () => {
    const host = await hostWithoutSolver();
    const { loaded } = await lakeRun(host, ['warm_start.demonstrations=solver', 'warm_start.worked_examples=4']);
    solverCalls = 0;
    const error = await runTraining(loaded, host, quiet).catch((e: unknown) => e);
    expect(solverCalls).toBeGreaterThan(0);
    expect(error).toBeInstanceOf(AgenticError);
    expect((error as Error).message).toContain("none of the 4 episodes played with the envs' worked solutions ended solved");
  });

  test('none with worked examples or solution labels: one line naming the key and what to set', async () => {
    const host = new PluginHost();
    const worked = await loadConfig({ configName: 'agentic', overrides: ['warm_start.demonstrations=none'] }, host).catch((e: unknown) => e);
    expect(worked).toBeInstanceOf(ConfigError);
    expect((worked as Error).message).toBe(
      "warm_start.worked_examples=1000 shows the env's solver's moves, but warm_start.demonstrations is none; set warm_start.demonstrations=solver to feed the base solutions, or drop it for a base that learns from reward alone",
    );
    const labels = await loadConfig(
      { configName: 'agentic', overrides: ['warm_start.demonstrations=none', 'warm_start.worked_examples=0', 'warm_start.solution_labels=true'] },
      host,
    ).catch((e: unknown) => e);
    expect((labels as Error).message).toStartWith("warm_start.solution_labels=true shows the env's solver's moves");
    const typo = await loadConfig({ configName: 'agentic', overrides: ['warm_start.demonstrations=expert'] }, host).catch((e: unknown) => e);
    expect(typo).toBeInstanceOf(ConfigError);
    expect((typo as Error).message).toContain('warm_start.demonstrations');
  });

  test('the shipped configs say what they are fed', async () => {
    const host = new PluginHost();
    const fed = async (name: string) => (await loadConfig({ configName: name, overrides: [] }, host)).config.warm_start.demonstrations;
    expect(await fed('agentic')).toBe('solver');
    expect(await fed('sokoban_compact')).toBe('solver');
    expect(await fed('calculator')).toBe('solver');
  });
});
