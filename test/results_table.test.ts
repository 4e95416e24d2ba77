import { describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  appendResult,
  checkoutConfigs,
  commandWords,
  commandsToday,
  type LoadConfig,
  PUBLISHED,
  pageSection,
  readResults,
  recipeRuns,
  renderResultsSection,
  renderResultsTable,
  type Result,
  shellWord,
  unquoted,
} from '../scripts/results_table';
import { lines, ROOT, scratch } from './helpers';

/** Every override changes the config: the runs keep the commands they were recorded with. */
const asLoaded: LoadConfig = async (_name, overrides) => overrides;

const run = (seed: number, success: number): Result => ({
  task: 'FrozenLake 4x4',
  config: 'agentic',
  seed,
  steps: 250,
  model: 'agentic:nano, warm-started',
  estimator: 'gigpo',
  demonstrations: 'solver',
  held_out: { suite: 'frozen_lake/v1', success, interval: { low: success - 0.05, high: success + 0.03 }, episodes: 200, step: 250 },
  wall_seconds: 500 + seed,
  hardware: '2 CPU cores, wasm',
  matmul: 'OpenBLAS',
  command: 'bun run learn:frozen_lake',
  commit: 'abcdef1',
  date: '2026-11-28',
});

describe('results/learning.jsonl', () => {
  test('a recorded run is appended, never replacing an earlier one', () => {
    const file = join(scratch(), 'learning.jsonl');
    writeFileSync(file, '');
    appendResult(run(1, 0.9), file);
    appendResult(run(2, 0.96), file);
    expect(readResults(file).map((r) => r.seed)).toEqual([1, 2]);
  });

  test('one table row per task, command and hardware: the mean and range over seeds', () => {
    const rows = renderResultsTable([run(1, 0.9), run(2, 0.96), run(3, 0.93)])
      .split('\n')
      .slice(2);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain(
      '| 0.930 mean, 0.900-0.960 over 3 seeds (200 episodes of frozen_lake/v1, step 250) | - | 502 s mean | 2 CPU cores, wasm (OpenBLAS) |',
    );
    const single = renderResultsTable([run(1, 0.9)]).split('\n')[2]!;
    expect(single).toContain('| 0.900 [0.850, 0.930] (200 episodes of frozen_lake/v1, step 250) | - | 501 s |');
  });

  test('a rerun of a seed stands in for the earlier run; another suite is another row', () => {
    const rerun = { ...run(1, 0.8), date: '2026-11-29' };
    const rows = renderResultsTable([run(1, 0.9), run(2, 0.96), rerun])
      .split('\n')
      .slice(2);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('| 0.880 mean, 0.800-0.960 over 2 seeds (200 episodes of frozen_lake/v1, step 250) |');
    expect(rows[0]).toContain('| 2026-11-29 (abcdef1) |');
    const bySeed = { ...run(3, 0.7), held_out: { ...run(3, 0.7).held_out, suite: null, episodes: 256 } };
    const split = renderResultsTable([run(1, 0.9), bySeed])
      .split('\n')
      .slice(2);
    expect(split).toHaveLength(2);
    expect(split[1]).toContain('| 0.700 [0.650, 0.730] (256 episodes by seed, step 250) |');
  });

  test('a run that kept its mean score shows it after the success, with its interval; several seeds their mean', () => {
    const scored = (seed: number, mean: number): Result => ({
      ...run(seed, 0.5),
      held_out: { ...run(seed, 0.5).held_out, score: { mean, low: mean - 0.1, high: mean + 0.1 } },
    });
    const single = renderResultsTable([scored(1, 0.7)]).split('\n')[2]!;
    expect(single).toContain('| 0.500 [0.450, 0.530] (200 episodes of frozen_lake/v1, step 250); mean score 0.700 [0.600, 0.800] | - | 501 s |');
    const seeds = renderResultsTable([scored(1, 0.7), scored(2, 0.8)]).split('\n')[2]!;
    expect(seeds).toContain('over 2 seeds (200 episodes of frozen_lake/v1, step 250); mean score 0.750 |');
    // a run recorded without it leaves the mean out rather than averaging part of the seeds
    expect(renderResultsTable([scored(1, 0.7), run(2, 0.5)]).split('\n')[2]).toContain('over 2 seeds (200 episodes of frozen_lake/v1, step 250) |');
  });

  test("Kuhn Poker's exact payoffs follow the score: each seed's P1 / P0 and how many met the target, where every run kept them", () => {
    const kuhn = (seed: number, asFirst: number, met: boolean): Result => ({ ...run(seed, 0.55), exact_payoff: { as_first: asFirst, as_second: 0.0556, met } });
    const single = renderResultsTable([kuhn(1, -0.0556, true)]).split('\n')[2]!;
    expect(single).toContain(
      '(200 episodes of frozen_lake/v1, step 250); exact payoff against Nash, P1 / P0 (values -0.056 / +0.056): -0.056 / +0.056, target met on 1 of 1 |',
    );
    const seeds = renderResultsTable([kuhn(1, -0.0556, true), kuhn(2, -0.111, false)]).split('\n')[2]!;
    expect(seeds).toContain('P1 / P0 (values -0.056 / +0.056): -0.056 / +0.056, -0.111 / +0.056, target met on 1 of 2 |');
    // a seed recorded before the payoff was kept leaves it out rather than showing part of the seeds
    expect(renderResultsTable([kuhn(1, -0.0556, true), run(2, 0.5)]).split('\n')[2]).not.toContain('exact payoff');
  });

  test('a row says what the run was fed, its base, final and lift: one run with intervals, several seeds by mean and range', () => {
    const based = (seed: number, base: number, success: number): Result => ({
      ...run(seed, success),
      base: { success: base, interval: { low: base - 0.04, high: base + 0.05 }, episodes: 200 },
    });
    const single = renderResultsTable([based(1, 0.1, 0.9)]).split('\n')[2]!;
    expect(single).toContain(
      '| env solver | `gigpo` | 0.100 [0.060, 0.150] | 0.900 [0.850, 0.930] (200 episodes of frozen_lake/v1, step 250) | +0.800 | 501 s |',
    );
    // the lift of several seeds is the mean of each seed's own lift
    const seeds = renderResultsTable([based(1, 0.1, 0.9), based(2, 0.3, 0.8), based(3, 0.2, 0.95)]).split('\n')[2]!;
    expect(seeds).toContain('| 0.200 mean, 0.100-0.300 | 0.883 mean, 0.800-0.950 over 3 seeds (200 episodes of frozen_lake/v1, step 250) | +0.683 mean |');
    // a run recorded before the base was measured leaves base and lift out rather than averaging part of the seeds
    const partly = renderResultsTable([based(1, 0.1, 0.9), run(2, 0.8)]).split('\n')[2]!;
    expect(partly).toContain('| env solver | `gigpo` | - | 0.850 mean, 0.800-0.900 over 2 seeds (200 episodes of frozen_lake/v1, step 250) | - |');
    expect(renderResultsTable([{ ...run(1, 0.5), demonstrations: 'none' }]).split('\n')[2]).toContain('| agentic:nano, warm-started | none | `gigpo` | - |');
  });

  test('demonstrations are required and named; a base is scored on the same episodes as the final', () => {
    const file = join(scratch(), 'learning.jsonl');
    const { demonstrations: _, ...unfed } = run(1, 0.9);
    writeFileSync(file, `${JSON.stringify(unfed)}\n`);
    expect(() => readResults(file)).toThrow(`${file}:1: demonstrations:`);
    writeFileSync(file, `${JSON.stringify({ ...run(1, 0.9), demonstrations: 'worked examples' })}\n`);
    expect(() => readResults(file)).toThrow(`${file}:1: demonstrations:`);
    const elsewhere = { ...run(1, 0.9), base: { success: 0.1, interval: { low: 0.05, high: 0.2 }, episodes: 64 } };
    writeFileSync(file, `${JSON.stringify(elsewhere)}\n`);
    expect(() => readResults(file)).toThrow(`${file}:1: base.episodes: the base is scored on the same held-out episodes as held_out`);
    writeFileSync(file, `${JSON.stringify({ ...elsewhere, base: { ...elsewhere.base, episodes: 200, extra: 1 } })}\n`);
    expect(() => readResults(file)).toThrow(`${file}:1: base:`);
  });

  test('the published rows sit under ours, with what each paper did not state said so', () => {
    const section = renderResultsSection([run(1, 0.9)]).split('\n\n');
    expect(section[0]).toBe(renderResultsTable([run(1, 0.9)]));
    expect(section[1]).toContain('supervised fine-tuning on solver data');
    const published = section[2]!.split('\n');
    expect(published[0]).toBe(
      '| work | model (size) | hardware, wall time | FrozenLake variant | evaluation | FrozenLake 4x4 base -> final | Sokoban 6x6, one box, base -> final |',
    );
    expect(published.slice(2)).toHaveLength(PUBLISHED.length);
    expect(published).toContain('| ROLL tech report | Qwen2.5-0.5B | not stated | not stated | not stated | 12.9 -> 23.8% | 13.3 -> 35.2% |');
  });

  test('the README shows the recipes as shipped, docs/learning.md their variants too', async () => {
    const variant = { ...run(1, 0.92), command: 'bun run learn:frozen_lake filter_groups.enable=true' };
    const slippery = { ...run(1, 0.3), command: 'bun run learn:frozen_lake_slippery max_steps=250' };
    const xnnpack = { ...run(1, 0.95), command: 'AGENTIC_BLAS=none bun run learn:frozen_lake' };
    const runs = [run(1, 0.9), variant, slippery, xnnpack];
    // a variant of a recipe with a row of its own is left out; one whose recipe has no plain row stays
    expect(recipeRuns(runs)).toEqual([run(1, 0.9), slippery, xnnpack]);
    expect(await pageSection('README.md', runs, asLoaded)).toBe(renderResultsSection([run(1, 0.9), slippery, xnnpack]));
    expect(await pageSection('docs/learning.md', runs, asLoaded)).toBe(renderResultsSection(runs));
  });

  test('overrides a config has since shipped read as its plain command in the README, where a later run of a seed replaces the earlier', async () => {
    // the recipe as it was (seed 1), then three seeds run with the overrides its config ships now
    const shipped = (seed: number, success: number) => ({ ...run(seed, success), command: 'bun run learn:frozen_lake warm_start.epochs=16 max_steps=500' });
    const other = { ...run(4, 0.5), command: 'bun run learn:frozen_lake max_steps=100' };
    const gone = { ...run(5, 0.5), command: 'bun run learn:frozen_lake no_such_key=1' };
    const runs = [run(1, 0.28), shipped(1, 0.76), shipped(2, 0.68), shipped(3, 0.77), other, gone];
    // the config ships 16 epochs and 500 steps; an override that is not a key does not load
    const load: LoadConfig = async (_name, overrides) => {
      const config = { epochs: 16, steps: 500 };
      for (const override of overrides) {
        const [key, value] = override.split('=');
        if (key === 'warm_start.epochs') config.epochs = Number(value);
        else if (key === 'max_steps') config.steps = Number(value);
        else return null;
      }
      return config;
    };
    const today = await commandsToday(runs, load);
    expect(today.map((r) => r.command)).toEqual([
      'bun run learn:frozen_lake',
      'bun run learn:frozen_lake',
      'bun run learn:frozen_lake',
      'bun run learn:frozen_lake',
      'bun run learn:frozen_lake max_steps=100',
      'bun run learn:frozen_lake no_such_key=1',
    ]);
    const readme = await pageSection('README.md', runs, load);
    expect(readme).toContain('| 0.737 mean, 0.680-0.770 over 3 seeds');
    expect(readme).not.toContain('max_steps=100');
    // docs/learning.md keeps every run under the command it was recorded with
    expect(await pageSection('docs/learning.md', runs, load)).toBe(renderResultsSection(runs));
  });

  test('a recorded command quotes the words the shell would split, and reads back as the words it was given', async () => {
    const words = ['bun', 'run', 'learn:sokoban', 'max_steps=600', 'k.agent_template="{a} {b}"', "it's", 'tags=[A,B]'];
    const command = words.map(shellWord).join(' ');
    expect(command).toBe(`bun run learn:sokoban max_steps=600 'k.agent_template="{a} {b}"' 'it'\\''s' 'tags=[A,B]'`);
    expect(commandWords(command).map(unquoted)).toEqual(words);
    // the override with a space reaches the config loader whole, so a shipped one reads as the plain command
    const seen: string[][] = [];
    const load: LoadConfig = async (_name, overrides) => {
      seen.push([...overrides]);
      return overrides.every((o) => o === 'k.agent_template="{a} {b}"') ? 'shipped' : overrides;
    };
    const today = await commandsToday([{ ...run(1, 0.8), command: `bun run learn:frozen_lake 'k.agent_template="{a} {b}"'` }], load);
    expect(today[0]!.command).toBe('bun run learn:frozen_lake');
    expect(seen).toContainEqual(['k.agent_template="{a} {b}"']);
  });

  test("this checkout's configs load with and without overrides, and an unknown key is null", async () => {
    const load = checkoutConfigs();
    const plain = await load('sokoban_reward_only', []);
    expect(JSON.stringify(await load('sokoban_reward_only', ['max_steps=500', 'warm_start.epochs=16']))).toBe(JSON.stringify(plain));
    expect(JSON.stringify(await load('sokoban_reward_only', ['max_steps=300']))).not.toBe(JSON.stringify(plain));
    expect(await load('sokoban_reward_only', ['no_such_key=1'])).toBeNull();
    expect(await load('no_such_config', [])).toBeNull();
  });

  test('a bad line is named by its number', () => {
    const file = join(scratch(), 'learning.jsonl');
    writeFileSync(file, `${JSON.stringify(run(1, 0.9))}\n${JSON.stringify({ ...run(2, 0.9), seed: 'two' })}\n`);
    expect(() => readResults(file)).toThrow(`${file}:2: seed:`);
  });

  test('the shipped file reads, with an interval on every run', () => {
    for (const r of readResults()) expect(r.held_out.interval.low).toBeLessThanOrEqual(r.held_out.success);
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('results/learning.jsonl');
  });
});

describe('learn:all', () => {
  test('--dry-run prints the four targets for each seed, in order', async () => {
    const child = Bun.spawnSync([process.execPath, 'scripts/experiments/learn.ts', '--all', '--seeds', '3', '--record', '--dry-run'], { cwd: ROOT });
    expect(child.exitCode).toBe(0);
    const commands = lines(child.stdout.toString());
    expect(commands).toHaveLength(12);
    expect(commands.slice(0, 5)).toEqual([
      'bun run learn:frozen_lake --seed 1 --record',
      'bun run learn:sokoban --seed 1 --record',
      'bun run learn:webshop --seed 1 --record',
      'bun run learn:calculator --seed 1 --record',
      'bun run learn:frozen_lake --seed 2 --record',
    ]);
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts;
    expect(scripts['learn:all']).toBe('bun scripts/experiments/learn.ts --all');
    expect(scripts['learn:webshop']).toBe('bun scripts/experiments/learn.ts webshop_compact');
  });

  test('bad arguments are one-line errors', () => {
    const bad = (args: string[]) => Bun.spawnSync([process.execPath, 'scripts/experiments/learn.ts', ...args], { cwd: ROOT });
    const zero = bad(['--all', '--seeds', '0']);
    expect(zero.exitCode).toBe(2);
    expect(zero.stderr.toString().trim()).toBe("error: --seeds: expected a whole number, 1 or more, got '0'");
    expect(bad(['--all', 'agentic']).stderr.toString().trim()).toBe("error: --all takes only --seeds, --record and --dry-run, not 'agentic'");
    // a key the config refuses is the CLI's one line, not a stack trace
    const unknownKey = bad(['agentic', 'nosuchkey=1']);
    expect(unknownKey.exitCode).toBe(2);
    expect(unknownKey.stderr.toString().trim()).toBe('error: nosuchkey: unknown key; to add it, write +nosuchkey=1');
  }, 30_000);
});
