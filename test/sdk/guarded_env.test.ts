import { describe, expect, test } from 'bun:test';
import { defineEnv } from '../../src/sdk/define';
import { ENV_FAILURE_METRIC, EnvStateError, GuardedEnv, type EnvFailure, type GuardOptions } from '../../src/sdk/guarded_env';
import { PluginHost } from '../../src/host/plugin_host';
import type { Env, EnvPlugin, ResetResult, StateQuestion, StepResult, WarmStartHooks } from '../../src/sdk/types';

const context = new PluginHost().envContext();

/** The seed on which the broken envs below misbehave; every other seed plays normally. */
const BAD_SEED = 13;
const GOOD_SEED = 1;

interface Faults {
  construct?: () => void;
  reset?: () => unknown;
  step?: () => unknown;
  render?: () => unknown;
  close?: () => unknown;
}

/** Counts to two: two steps of reward 1, then terminated. `faults` replace its behaviour on BAD_SEED. */
function countingEnv(faults: Faults = {}): { plugin: EnvPlugin; instances: Array<{ closed: boolean }> } {
  const instances: Array<{ closed: boolean }> = [];
  class Counter implements Env {
    seed = 0;
    count = 0;
    closed = false;
    constructor() {
      faults.construct?.();
      instances.push(this);
    }
    reset(seed: number): ResetResult {
      this.seed = seed;
      this.count = 0;
      if (seed === BAD_SEED && faults.reset) return faults.reset() as ResetResult;
      return { observation: 'count 0', info: { instruction: 'count to two' } };
    }
    step(): StepResult {
      if (this.seed === BAD_SEED && faults.step) return faults.step() as StepResult;
      this.count++;
      return { observation: `count ${this.count}`, reward: 1, terminated: this.count >= 2, truncated: false, info: { metrics: { success: this.count >= 2 } } };
    }
    render(mode: 'text' | 'rgb'): string | null {
      if (this.seed === BAD_SEED && faults.render) return faults.render() as string;
      return mode === 'text' ? `count ${this.count}` : null;
    }
    close(): void {
      this.closed = true;
      if (faults.close) faults.close();
    }
    sampleRandomAction(): string {
      return '<answer>count</answer>';
    }
  }
  return { plugin: defineEnv({ name: 'counter', description: 'Counts to two.', env: Counter }), instances };
}

/** Plays one episode to its end; returns the rewards, or the failure that ended it. */
async function play(guard: GuardedEnv, seed: number): Promise<{ rewards: number[]; failure: EnvFailure | null }> {
  const rewards: number[] = [];
  const reset = await guard.reset(seed);
  if (reset.failure) return { rewards, failure: reset.failure };
  for (;;) {
    const step = await guard.step('<answer>count</answer>');
    if (step.failure) return { rewards, failure: step.failure };
    rewards.push(step.reward);
    if (step.terminated || step.truncated) return { rewards, failure: null };
  }
}

/** The broken episode fails with `reason`; the next one, on the same guard, plays normally. */
async function expectOneEpisodeLost(faults: Faults, method: string, kind: EnvFailure['kind'], reason: RegExp, options: GuardOptions = {}) {
  const { plugin } = countingEnv(faults);
  const guard = new GuardedEnv(plugin, {}, context, options);
  const broken = await play(guard, BAD_SEED);
  expect(broken.failure).toMatchObject({ method, kind });
  expect(broken.failure!.reason).toMatch(reason);
  expect(broken.failure!.reason).not.toContain('\n');
  expect(guard.phase).toBe('failed');
  expect(await play(guard, GOOD_SEED)).toEqual({ rewards: [1, 1], failure: null });
  expect(await guard.close()).toBeNull();
}

describe('a broken env costs one episode', () => {
  test('step() throws', () =>
    expectOneEpisodeLost(
      {
        step: () => {
          throw new Error('boom\nsecond line');
        },
      },
      'step',
      'threw',
      /^env 'counter': step\(\) threw: boom$/,
    ));

  test('step() rejects', () =>
    expectOneEpisodeLost({ step: () => Promise.reject(new TypeError('async boom')) }, 'step', 'threw', /step\(\) threw: async boom$/));

  test('step() never settles: a timeout ends the episode', () =>
    expectOneEpisodeLost({ step: () => new Promise(() => {}) }, 'step', 'timeout', /^env 'counter': step\(\) did not finish within 30 ms$/, {
      stepTimeoutMs: 30,
    }));

  test('reset() never settles', () =>
    expectOneEpisodeLost({ reset: () => new Promise(() => {}) }, 'reset', 'timeout', /reset\(\) did not finish within 20 ms/, { resetTimeoutMs: 20 }));

  test('step() returns a NaN reward', () =>
    expectOneEpisodeLost(
      { step: () => ({ observation: 'x', reward: Number.NaN, terminated: false, truncated: false, info: { metrics: {} } }) },
      'step',
      'malformed',
      /^env 'counter': step\(\) returned a malformed result: reward is NaN, expected a finite number$/,
    ));

  test('step() says why its reward could not score with something other than a line of text', () =>
    expectOneEpisodeLost(
      { step: () => ({ observation: 'x', reward: 0, terminated: true, truncated: false, info: { metrics: {}, reward_error: true } }) },
      'step',
      'malformed',
      /^env 'counter': step\(\) returned a malformed result: info\.reward_error is a boolean, expected a string \(why the reward could not score the step\)$/,
    ));

  test('step() returns an observation that is not a string', () =>
    expectOneEpisodeLost(
      { step: () => ({ observation: 42, reward: 0, terminated: false, truncated: false, info: { metrics: {} } }) },
      'step',
      'malformed',
      /observation is 42, expected a string/,
    ));

  test('step() returns terminated as a string, or metrics that are not numbers', async () => {
    await expectOneEpisodeLost(
      { step: () => ({ observation: '', reward: 0, terminated: 'yes', truncated: false, info: { metrics: {} } }) },
      'step',
      'malformed',
      /terminated is the string "yes", expected true or false/,
    );
    await expectOneEpisodeLost(
      { step: () => ({ observation: '', reward: 0, terminated: false, truncated: false, info: { metrics: { score: 'high' } } }) },
      'step',
      'malformed',
      /info\.metrics\.score is the string "high", expected a finite number or a boolean/,
    );
    await expectOneEpisodeLost(
      { step: () => ({ observation: '', reward: 0, terminated: false, truncated: false, info: { metrics: {}, metricsAgg: { score: 'median' } } }) },
      'step',
      'malformed',
      /info\.metricsAgg\.score is the string "median", expected one of sum, mean, min, max, last, first/,
    );
  });

  test('reset() without info.instruction', () =>
    expectOneEpisodeLost(
      { reset: () => ({ observation: 'count 0', info: {} }) },
      'reset',
      'malformed',
      /reset\(\) returned a malformed result: info\.instruction is missing/,
    ));

  test('the constructor throws: the next reset builds a fresh instance', async () => {
    let constructions = 0;
    const { plugin, instances } = countingEnv({
      construct: () => {
        if (constructions++ === 0) throw new Error('no data file');
      },
    });
    const guard = new GuardedEnv(plugin, {}, context);
    const first = await play(guard, GOOD_SEED);
    expect(first.failure).toEqual({ method: 'constructor', kind: 'threw', reason: "env 'counter': the constructor threw: no data file" });
    expect(await play(guard, GOOD_SEED)).toEqual({ rewards: [1, 1], failure: null });
    expect(instances).toHaveLength(1);
  });
});

describe("an outside agent's final output (AgentEpisodes.runAgent)", () => {
  /** An env whose outside agent ends with `output`. */
  function agentEnv(output: unknown): GuardedEnv {
    class Outside implements Env {
      reset(): ResetResult {
        return { observation: 'q', info: { instruction: '' } };
      }
      step(): StepResult {
        return { observation: '', reward: 0, terminated: true, truncated: false, info: { metrics: {} } };
      }
      render(): string | null {
        return null;
      }
      close(): void {}
      sampleRandomAction(): string {
        return '';
      }
      async runAgent(): Promise<unknown> {
        return output;
      }
    }
    return new GuardedEnv(defineEnv({ name: 'outside', description: 'An outside agent.', env: Outside }), {}, context);
  }

  const session = {
    baseUrl: 'http://127.0.0.1:1/v1',
    apiKey: 'k',
    model: 'agentic-policy',
    deadline: Date.now() + 60_000,
    signal: new AbortController().signal,
  };

  async function ran(output: unknown) {
    const env = agentEnv(output);
    await env.reset(0);
    return env.runAgent(session);
  }

  test('a string or {answer, reward?} reaches step() as JSON text {"answer", "reward"?}', async () => {
    expect(await ran('42')).toEqual({ value: '{"answer":"42"}', failure: null });
    expect(await ran({ answer: '42' })).toEqual({ value: '{"answer":"42"}', failure: null });
    expect(await ran({ answer: '42', reward: 0.5, notes: 'kept out' })).toEqual({ value: '{"answer":"42","reward":0.5}', failure: null });
  });

  test('anything else fails the episode with what it returned and what is taken, not as a throw', async () => {
    const taken = 'return a string (the answer) or {answer: string, reward?: number}';
    expect((await ran({ answer: 5 })).failure).toEqual({
      method: 'runAgent',
      kind: 'malformed',
      reason: `env 'outside': runAgent() returned {"answer":5}; ${taken}`,
    });
    expect((await ran(5)).failure!.reason).toBe(`env 'outside': runAgent() returned 5; ${taken}`);
    expect((await ran(undefined)).failure!.reason).toBe(`env 'outside': runAgent() returned nothing; ${taken}`);
    expect((await ran({ answer: '42', reward: Number.NaN })).failure!.reason).toBe(
      `env 'outside': runAgent() returned {"answer":"42","reward":null}: its reward is NaN, expected a finite number`,
    );
  });
});

describe('what the caller sees', () => {
  test('a normal step carries env_failure false; the failed step is a typed, truncated last step', async () => {
    const { plugin, instances } = countingEnv({
      step: () => {
        throw new Error('boom');
      },
    });
    const guard = new GuardedEnv(plugin, {}, context, { label: 'env Counter (counter)' });
    await guard.reset(GOOD_SEED);
    const good = await guard.step('go');
    expect(good.failure).toBeNull();
    expect(good.info.metrics).toEqual({ success: false, [ENV_FAILURE_METRIC]: false });
    expect(good.info.metricsAgg).toEqual({ [ENV_FAILURE_METRIC]: 'max' });

    await guard.reset(BAD_SEED);
    const failed = await guard.step('go');
    expect(failed).toEqual({
      observation: 'count 0',
      reward: 0,
      terminated: false,
      truncated: true,
      info: { metrics: { [ENV_FAILURE_METRIC]: true }, metricsAgg: { [ENV_FAILURE_METRIC]: 'max' }, failure: 'env Counter (counter): step() threw: boom' },
      failure: { method: 'step', kind: 'threw', reason: 'env Counter (counter): step() threw: boom' },
    });
    // the broken instance was retired (closed) and the next episode gets a new one
    expect(instances.map((i) => i.closed)).toEqual([true]);
    await guard.reset(GOOD_SEED);
    expect(instances).toHaveLength(2);
  });

  test('stepping before reset, after the end, or after a failure is a clear error', async () => {
    const { plugin } = countingEnv({
      step: () => {
        throw new Error('boom');
      },
    });
    const guard = new GuardedEnv(plugin, {}, context);
    await expect(guard.step('go')).rejects.toThrow(new EnvStateError("env 'counter': step() called before reset()"));
    await play(guard, GOOD_SEED);
    expect(guard.phase).toBe('ended');
    await expect(guard.step('go')).rejects.toThrow("env 'counter': step() called after the episode ended; call reset() first");
    await play(guard, BAD_SEED);
    await expect(guard.step('go')).rejects.toThrow("env 'counter': step() called after the episode failed; call reset() first");
    await guard.close();
    await expect(guard.reset(GOOD_SEED)).rejects.toThrow("env 'counter': reset() called after close()");
  });

  test('a rejection that arrives after the timeout is swallowed, not an unhandled rejection', async () => {
    const { plugin } = countingEnv({ step: () => new Promise((_, reject) => setTimeout(() => reject(new Error('too late')), 40)) });
    const guard = new GuardedEnv(plugin, {}, context, { stepTimeoutMs: 10 });
    expect((await play(guard, BAD_SEED)).failure?.kind).toBe('timeout');
    await Bun.sleep(60);
    expect(await play(guard, GOOD_SEED)).toEqual({ rewards: [1, 1], failure: null });
  });

  test('render() that throws or returns a promise ends the episode', async () => {
    for (const [render, reason] of [
      [
        () => {
          throw new Error('no font');
        },
        "env 'counter': render() threw: no font",
      ],
      [() => Promise.reject(new Error('async render')), "env 'counter': render() returned a malformed result: render('text') is a Promise, expected a string"],
    ] as const) {
      const { plugin } = countingEnv({ render });
      const guard = new GuardedEnv(plugin, {}, context);
      await guard.reset(BAD_SEED);
      expect(await guard.render('text')).toEqual({ value: null, failure: { method: 'render', kind: expect.any(String), reason } });
      expect(guard.phase).toBe('failed');
      expect(await play(guard, GOOD_SEED)).toEqual({ rewards: [1, 1], failure: null });
      expect(await guard.render('text')).toEqual({ value: 'count 2', failure: null });
    }
  });

  test('render(rgb) must be null or width*height*3 bytes', async () => {
    const frame = { width: 2, height: 2, data: new Uint8Array(11) };
    const { plugin } = countingEnv({ render: () => frame });
    const guard = new GuardedEnv(plugin, {}, context);
    await guard.reset(BAD_SEED);
    const rendered = await guard.render('rgb');
    expect(rendered.failure?.reason).toBe("env 'counter': render() returned a malformed result: render('rgb').data has 11 bytes, expected width*height*3 = 12");
  });

  test('close() that throws is reported, not thrown', async () => {
    const { plugin } = countingEnv({
      close: () => {
        throw new Error('socket busy');
      },
    });
    const guard = new GuardedEnv(plugin, {}, context);
    await play(guard, GOOD_SEED);
    expect(await guard.close()).toEqual({ method: 'close', kind: 'threw', reason: "env 'counter': close() threw: socket busy" });
    expect(guard.phase).toBe('closed');
  });
});

describe('warm-start hooks (WarmStartHooks) go through the guard too', () => {
  /** The counter with notes and questions on its count; on its first step its questions come back malformed. */
  function notedEnv(): EnvPlugin {
    const Counter = countingEnv().plugin.env as unknown as new () => Env & { count: number };
    class Noted extends Counter implements WarmStartHooks {
      stateNotes(): string {
        return `at ${this.count}`;
      }
      stateQuestions(): readonly StateQuestion[] {
        return this.count === 1 ? ([{ question: 'Count?' }] as StateQuestion[]) : [{ question: 'Count?', answer: String(this.count) }];
      }
    }
    return defineEnv({ name: 'noted', description: 'Counts to two, with notes.', env: Noted });
  }

  test('a hook is called only during an episode; one that is missing or malformed ends it', async () => {
    const guard = new GuardedEnv(notedEnv(), {}, context);
    await expect(guard.stateNotes()).rejects.toThrow(new EnvStateError("env 'noted': stateNotes() called before reset()"));
    await guard.reset(GOOD_SEED);
    expect(await guard.stateNotes()).toEqual({ value: 'at 0', failure: null });
    expect(await guard.stateQuestions()).toEqual({ value: [{ question: 'Count?', answer: '0' }], failure: null });
    expect(await guard.solutionAction()).toEqual({
      response: null,
      failure: {
        method: 'solutionAction',
        kind: 'malformed',
        reason: "env 'noted': solutionAction() returned a malformed result: nothing (the env has no solutionAction())",
      },
    });
    expect(guard.phase).toBe('failed');
    await guard.reset(GOOD_SEED);
    await guard.step('<answer>count</answer>');
    expect(await guard.stateQuestions()).toEqual({
      value: null,
      failure: {
        method: 'stateQuestions',
        kind: 'malformed',
        reason: "env 'noted': stateQuestions() returned a malformed result: a list with an item that is not { question, answer } strings",
      },
    });
    expect(await play(guard, GOOD_SEED)).toEqual({ rewards: [1, 1], failure: null });
    await expect(guard.stateNotes()).rejects.toThrow(new EnvStateError("env 'noted': stateNotes() called after the episode ended; call reset() first"));
  });
});
