import { describe, expect, test } from 'bun:test';
import { z } from 'zod';
import bandit from '../../plugins/envs/bandit/index';
import { ConfigError } from '../../src/errors';
import { Rng } from '../../src/engine/rng';
import { parseAnswer } from '../../src/sdk/answer';
import { checkEnv } from '../../src/cli/plugins_check';
import { ENV_CHECKS, type CheckName, type EnvCheckReport } from '../../src/sdk/check_env';
import { defineEnv } from '../../src/sdk/define';
import { PluginHost } from '../../src/host/plugin_host';
import type { Env, EnvPlugin, ResetResult, StepResult } from '../../src/sdk/types';

const context = new PluginHost().envContext();

/** What the Walker below can be made to get wrong, or to do as some envs do. */
interface Defects {
  /** Picks the start with Math.random instead of the seed. */
  unseeded?: boolean;
  /** Moves right even on an unparseable response. */
  invalidMoves?: boolean;
  /** Keeps its position in a variable all instances share. */
  sharedState?: boolean;
  /** Returns reward NaN at the goal. */
  nanReward?: boolean;
  /** Reports a metric named in camelCase. */
  camelMetric?: boolean;
  /** Seeds its random actions once, in the constructor, so a second episode of a seed samples others. */
  actionsSeededOnce?: boolean;
  /** Its step() never settles. */
  hangs?: boolean;
  /** Ends the episode on an unparseable response with reward -0.1 (no defect: GEM's games do that). */
  endsOnFormatError?: boolean;
}

/** A walk on `cells` cells from a seeded start; the goal is the last cell. Correct unless told otherwise. */
function walker(defects: Defects = {}): EnvPlugin {
  const shared = { position: 0 };
  class Walker implements Env {
    private own = { position: 0 };
    private actions = Rng.fromSeed(0, 'walker-actions');
    constructor(private readonly config: { cells: number }) {}
    private get goal() {
      return this.config.cells - 1;
    }
    private get cell() {
      return defects.sharedState ? shared : this.own;
    }
    reset(seed: number): ResetResult {
      if (!defects.actionsSeededOnce) this.actions = Rng.fromSeed(seed, 'walker-actions');
      this.cell.position = defects.unseeded ? Math.floor(Math.random() * this.goal) : Rng.fromSeed(seed, 'walker-start').int(this.goal);
      return { observation: this.text(), info: { instruction: `Walk to cell ${this.goal}: answer <answer>left</answer> or <answer>right</answer>.` } };
    }
    step(response: string): StepResult | Promise<StepResult> {
      if (defects.hangs) return new Promise(() => {});
      const { action } = parseAnswer(response, { actions: ['left', 'right'] });
      if (action === 'right' || (action === null && defects.invalidMoves)) this.cell.position = Math.min(this.goal, this.cell.position + 1);
      if (action === 'left') this.cell.position = Math.max(0, this.cell.position - 1);
      const formatError = action === null && defects.endsOnFormatError === true;
      const done = this.cell.position === this.goal || formatError;
      const metrics = { success: done && !formatError, action_is_valid: action !== null, ...(defects.camelMetric ? { stepCount: 1 } : {}) };
      const reward = formatError ? -0.1 : done ? (defects.nanReward ? Number.NaN : 1) : 0;
      return { observation: this.text(), reward, terminated: done, truncated: false, info: { action, metrics, metricsAgg: { success: 'last' } } };
    }
    private text(): string {
      return `You are at cell ${this.cell.position}.`;
    }
    render(mode: 'text' | 'rgb'): string | null {
      return mode === 'text' ? this.text() : null;
    }
    close(): void {}
    sampleRandomAction(): string {
      return `<answer>${this.actions.choice(['left', 'right'])}</answer>`;
    }
  }
  return defineEnv({
    name: 'walker',
    description: 'Walk to the last cell.',
    config: z.strictObject({ cells: z.number().int().min(2).default(5) }),
    env: Walker,
  });
}

function status(report: EnvCheckReport): Record<CheckName, string> {
  return Object.fromEntries(report.checks.map((c) => [c.name, c.status])) as Record<CheckName, string>;
}

function check(report: EnvCheckReport, name: CheckName) {
  return report.checks.find((c) => c.name === name)!;
}

const allPass = Object.fromEntries(Object.keys(ENV_CHECKS).map((name) => [name, 'pass']));

describe('envs that keep the contract', () => {
  test('bandit passes every check', async () => {
    const report = await checkEnv(bandit, undefined, { context, episodes: 4, seed: 3 });
    expect(status(report)).toEqual(allPass as Record<CheckName, string>);
    expect(report.passed).toBe(true);
    expect(report.config).toMatchObject({ safe_arm: 'phoenix', risky_prob: 0.25 });
    expect(report.stats).toMatchObject({ episodes: 4, steps: 4, endedByEnv: 4, failed: 0 });
    expect(report.stats.successRate).not.toBeNull();
    expect(check(report, 'invalid_action').message).toContain('state unchanged, action_is_valid false');
    // the same seed gives the same report
    expect(await checkEnv(bandit, undefined, { context, episodes: 4, seed: 3 })).toEqual(report);
  });

  test('a correct walker passes every check, and the stats add up', async () => {
    const report = await checkEnv(walker(), { cells: 5 }, { context, episodes: 3, maxSteps: 6 });
    expect(status(report)).toEqual(allPass as Record<CheckName, string>);
    expect(report.stats.episodes).toBe(3);
    expect(report.stats.steps).toBeLessThanOrEqual(18);
    expect(report.stats.endedByEnv + report.stats.failed).toBeLessThanOrEqual(3);
  });

  test("an env that ends the episode on an unparseable response, as GEM's games do, passes invalid_action", async () => {
    const report = await checkEnv(walker({ endsOnFormatError: true }), undefined, { context, episodes: 2 });
    expect(status(report)).toEqual(allPass as Record<CheckName, string>);
    expect(check(report, 'invalid_action').message).toBe(
      'step("gibberish with no answer tag"): ended the episode (a format error), action_is_valid false, reward -0.1',
    );
  });
});

describe('envs that break it', () => {
  test('an env that draws from Math.random fails determinism', async () => {
    // two runs start on the same of 999 cells by chance only once in 999
    const report = await checkEnv(walker({ unseeded: true }), { cells: 1000 }, { context, episodes: 2 });
    expect(check(report, 'determinism').status).toBe('fail');
    expect(check(report, 'determinism').message).toMatch(
      /^seed \d+: reset observations differ: "You are at cell \d+\." vs "You are at cell \d+\." \(when the same instance resets again\)$/,
    );
    expect(report.passed).toBe(false);
  });

  test('random actions that a second run of the seed does not repeat fail determinism', async () => {
    const report = await checkEnv(walker({ actionsSeededOnce: true }), undefined, { context, episodes: 3 });
    expect(check(report, 'determinism').message).toMatch(
      /^seed 0, step \d+: sampleRandomAction\(\) gave "<answer>\w+<\/answer>" then "<answer>\w+<\/answer>"; seed its random actions in reset\(\)/,
    );
  });

  test('an env whose unparseable response changes the state fails invalid_action', async () => {
    const report = await checkEnv(walker({ invalidMoves: true }), undefined, { context, episodes: 2 });
    const invalid = check(report, 'invalid_action');
    expect(invalid.status).toBe('fail');
    expect(invalid.message).toMatch(/^step\("gibberish with no answer tag"\) changed render\('text'\) from "You are at cell \d\." to "You are at cell \d\."$/);
    expect(check(report, 'determinism').status).toBe('pass');
  });

  test('instances that share state fail isolation (and only isolation)', async () => {
    const report = await checkEnv(walker({ sharedState: true }), undefined, { context, episodes: 2 });
    expect(status(report)).toEqual({ ...allPass, isolation: 'fail' } as Record<CheckName, string>);
    expect(check(report, 'isolation').message).toMatch(/instances share state/);
  });

  test('a malformed return fails step with a one-line reason, and the other episodes still run', async () => {
    const report = await checkEnv(walker({ nanReward: true }), undefined, { context, episodes: 6, maxSteps: 30 });
    const step = check(report, 'step');
    expect(step.status).toBe('fail');
    expect(step.message).toMatch(/^env 'walker': step\(\) returned a malformed result: reward is NaN, expected a finite number \(\d of 6 episodes\)$/);
    expect(report.stats.episodes).toBe(6);
    expect(report.stats.failed).toBeGreaterThan(0);
  });

  test('camelCase metric names fail metric_names', async () => {
    const report = await checkEnv(walker({ camelMetric: true }), undefined, { context, episodes: 1 });
    expect(check(report, 'metric_names')).toEqual({
      name: 'metric_names',
      status: 'fail',
      message: 'not snake_case: stepCount (metrics become env/<tag>/<name> in the logs)',
    });
  });

  test('a step that never settles fails on the time limit', async () => {
    const report = await checkEnv(walker({ hangs: true }), undefined, { context, episodes: 1, timeoutMs: 20 });
    expect(check(report, 'step').message).toBe("env 'walker': step() did not finish within 20 ms (1 of 1 episodes)");
    expect(check(report, 'determinism').status).toBe('skip');
  });

  test('a constructor that throws fails construct and skips the rest', async () => {
    const broken = defineEnv({
      name: 'needs_data',
      description: 'Reads a file it cannot find.',
      env: class {
        constructor() {
          throw new Error('data/items.json: not found');
        }
      } as never,
    });
    const report = await checkEnv(broken, undefined, { context, episodes: 2 });
    expect(check(report, 'construct')).toEqual({
      name: 'construct',
      status: 'fail',
      message: "env 'needs_data': the constructor threw: data/items.json: not found",
    });
    expect(report.checks.filter((c) => c.status === 'skip')).toHaveLength(Object.keys(ENV_CHECKS).length - 2);
    expect(report.passed).toBe(false);
  });

  test('a config the schema rejects is a ConfigError naming the key, before anything runs', async () => {
    await expect(checkEnv(walker(), { cels: 5 }, { context })).rejects.toThrow(
      new ConfigError("env 'walker': env_config.cels: unknown key (did you mean cells?)"),
    );
    await expect(checkEnv(walker(), { cells: 1 }, { context })).rejects.toThrow("env 'walker': env_config.cells: must be >= 2, got 1");
  });
});

describe('the built-in environments', () => {
  const host = new PluginHost();
  for (const { definition } of host.registry.list('env')) {
    test(`${definition.name} passes every check`, async () => {
      // the agent env needs its program named; the check plays its reset and scoring, not the program
      // GEM's dataset envs need their data named (nothing is downloaded)
      const gemData = { dataset_name: 'corpus_qa/val', question_key: 'question' };
      const envConfig = definition.name === 'agent' ? { command: ['true'] } : definition.name.startsWith('gem_') ? gemData : {};
      const report = await checkEnv(definition, envConfig, { context: host.envContext(), episodes: 4 });
      const failed = report.checks.filter((c) => c.status === 'fail');
      expect(failed).toEqual([]);
      // Only an env that takes free text as a final answer (tool_use, agent) may skip the invalid-action check.
      const skipped = report.checks.filter((c) => c.status === 'skip').map((c) => c.name);
      const answersAnything = ['tool_use', 'agent'].includes(definition.name);
      expect(skipped).toEqual(answersAnything ? ['invalid_action'] : []);
    });
  }
});
