/**
 * The measured learning runs: results/learning.jsonl holds them, one run a line, and this module
 * renders them as the one results table that README.md and docs/learning.md show between
 * RESULTS_START and RESULTS_END (the README's without the variants run with overrides, and with
 * the overrides a config has since shipped read as its plain command). `bun scripts/experiments/learn.ts <config> --record` appends its
 * run and rewrites both pages; `bun run docs` rewrites the pages from the file;
 * test/readme.test.ts fails when a page and the file disagree. So a measured number lives in one
 * place: the file.
 *
 * The table has a row per task, command and hardware (the same run on the same machine, any
 * seed): what the run was fed besides its own play (demonstrations), the held-out success of the
 * model RL started from (base) and of the last checkpoint (final), and what RL added (lift); the
 * mean over its runs, their range, and the 95% interval of a single run, so runs of several
 * training seeds read as one line. Under it, published RL results on the same tasks
 * (PUBLISHED), which learned from no demonstrations.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { loadConfig } from '../src/config/load';
import { PluginHost } from '../src/host/plugin_host';
import { writeFileAtomic } from '../src/util/atomic';

export const ROOT = resolve(import.meta.dir, '..');
export const RESULTS_FILE = 'results/learning.jsonl';
/** The pages that show the table, relative to the repository root. */
export const RESULT_PAGES = ['README.md', 'docs/learning.md'] as const;
/** Which runs each page shows: the README the recipes as shipped, docs/learning.md every variant too. */
const PAGE_RUNS: Record<(typeof RESULT_PAGES)[number], 'recipes' | 'all'> = { 'README.md': 'recipes', 'docs/learning.md': 'all' };
export const RESULTS_START = '<!-- results: generated from results/learning.jsonl by `bun run docs`; do not edit by hand -->';
export const RESULTS_END = '<!-- results: end -->';

const interval = z.strictObject({ low: z.number().min(0).max(1), high: z.number().min(0).max(1) });

/** How the table names what a run was fed: the env's solver's moves, or nothing but its own play. */
const DEMONSTRATIONS = { none: 'none', solver: 'env solver' } as const;

const result = z
  .strictObject({
    /** What was learned, e.g. "FrozenLake 4x4". */
    task: z.string().min(1),
    /** The config name (configs/<config>.yaml). */
    config: z.string().min(1),
    /** The run's seed. */
    seed: z.int(),
    /** Training steps run. */
    steps: z.int().nonnegative(),
    /** The policy: preset or folder, adapters, warm start. */
    model: z.string().min(1),
    /** adv_estimator. */
    estimator: z.string().min(1),
    /**
     * What the warm start was fed of the env's solutions: `solver`, the env's worked solutions
     * (worked examples, solution labels), or `none` (random moves, or no warm start): warm_start.demonstrations.
     */
    demonstrations: z.enum(['none', 'solver']),
    /**
     * The model RL started from (the warm start's base, else pretrain) on the same held-out episodes
     * as held_out; absent in runs recorded before it was measured.
     */
    base: z.strictObject({ success: z.number().min(0).max(1), interval, episodes: z.int().positive() }).optional(),
    /**
     * Success on held-out episodes at `step`, with its 95% Wilson interval: the suite's episodes
     * (`suite`), or, where suite is null, episodes drawn by seeds no training episode uses.
     */
    held_out: z.strictObject({
      suite: z.string().min(1).nullable(),
      success: z.number().min(0).max(1),
      interval,
      episodes: z.int().positive(),
      step: z.int().nonnegative(),
      /** The mean score (the episodes' summed rewards) with its 95% bootstrap interval; absent in runs recorded before it was kept. */
      score: z.strictObject({ mean: z.number(), low: z.number(), high: z.number() }).optional(),
    }),
    /**
     * Kuhn Poker's target measure (issue #69): the final policy's exact expected chips against the
     * equilibrium as the first to act (P1) and as the second (P0), from its greedy answers at each
     * information set (scripts/experiments/kuhn_exact.ts); met when both are within 0.02 of the
     * game's value. Absent for other tasks and for runs recorded before it was kept.
     */
    exact_payoff: z.strictObject({ as_first: z.number(), as_second: z.number(), met: z.boolean() }).optional(),
    /** Seconds from the start of the run (warm start included) to the end of training. */
    wall_seconds: z.number().positive(),
    /** Cores and backend, e.g. "2 CPU cores, wasm". */
    hardware: z.string().min(1),
    /** Who computed the matmuls (OpenBLAS, XNNPACK, ...), null for backends without a choice. */
    matmul: z.string().min(1).nullable(),
    /** The command that reproduces the run, from the repository root. */
    command: z.string().min(1),
    /** The commit measured, when known. */
    commit: z
      .string()
      .regex(/^[0-9a-f]{7,40}(-dirty)?$/)
      .nullable(),
    /** When it was measured, YYYY-MM-DD. */
    date: z.iso.date(),
  })
  .refine((r) => r.base === undefined || r.base.episodes === r.held_out.episodes, {
    path: ['base', 'episodes'],
    message: 'the base is scored on the same held-out episodes as held_out',
  });
export type Result = z.infer<typeof result>;

/** The runs in `file`; a line that is not a valid run is named with its problem in one line. */
export function readResults(file = join(ROOT, RESULTS_FILE)): Result[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line, i) => ({ line, number: i + 1 }))
    .filter(({ line }) => line.trim() !== '')
    .map(({ line, number }) => {
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        throw new Error(`${file}:${number}: not valid JSON`);
      }
      const parsed = result.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new Error(`${file}:${number}: ${issue.path.join('.')}: ${issue.message}`);
      }
      return parsed.data;
    });
}

/** Appends a run to the file (checked first, so a bad row never lands). */
export function appendResult(run: Result, file = join(ROOT, RESULTS_FILE)): void {
  appendFileSync(file, `${JSON.stringify(result.parse(run))}\n`);
}

export function writeResults(results: readonly Result[], file = join(ROOT, RESULTS_FILE)): void {
  writeFileAtomic(file, results.map((r) => `${JSON.stringify(r)}\n`).join(''));
}

const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
const f3 = (x: number) => x.toFixed(3);

/**
 * The runs of one table row: the same task, command, hardware and held-out episodes (a suite, or
 * episodes drawn by seed, score different episodes), one run per seed: a later run of a seed
 * stands in for the earlier, so "over k seeds" counts k different seeds. The latest run is last.
 */
export function groupedRuns(results: readonly Result[]): Result[][] {
  const groups = new Map<string, Map<number, Result>>();
  for (const r of results) {
    const key = JSON.stringify([r.task, r.command, r.hardware, r.matmul, r.held_out.suite]);
    const bySeed = groups.get(key) ?? new Map<number, Result>();
    bySeed.delete(r.seed);
    bySeed.set(r.seed, r);
    groups.set(key, bySeed);
  }
  return [...groups.values()].map((bySeed) => [...bySeed.values()]);
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** A difference with its sign, to three places: +0.020, -0.005. */
export const signed = (x: number) => `${x >= 0 ? '+' : ''}${f3(x)}`;

/** Kuhn Poker's exact payoffs against the equilibrium, where every run of the row kept them: each seed's P1 / P0, and how many met the target. */
function exactPayoffText(runs: readonly Result[]): string {
  const payoffs = runs.flatMap((r) => (r.exact_payoff ? [r.exact_payoff] : []));
  if (payoffs.length === 0 || payoffs.length !== runs.length) return '';
  const each = payoffs.map((p) => `${signed(p.as_first)} / ${signed(p.as_second)}`).join(', ');
  return `; exact payoff against Nash, P1 / P0 (values -0.056 / +0.056): ${each}, target met on ${payoffs.filter((p) => p.met).length} of ${payoffs.length}`;
}

/** The final cell of a row: the last checkpoint's success and interval, or the mean and range of several runs. */
function finalCell(runs: readonly Result[]): string {
  const last = runs.at(-1)!;
  const on = `${last.held_out.episodes} ${last.held_out.suite ? `episodes of ${last.held_out.suite}` : 'episodes by seed'}, step ${last.held_out.step}`;
  const score = last.held_out.score;
  const exact = exactPayoffText(runs);
  if (runs.length === 1) {
    const scored = score ? `; mean score ${f3(score.mean)} [${f3(score.low)}, ${f3(score.high)}]` : '';
    return `${f3(last.held_out.success)} [${f3(last.held_out.interval.low)}, ${f3(last.held_out.interval.high)}] (${on})${scored}${exact}`;
  }
  const successes = runs.map((r) => r.held_out.success);
  const scores = runs.flatMap((r) => (r.held_out.score ? [r.held_out.score.mean] : []));
  const scored = scores.length === runs.length ? `; mean score ${f3(mean(scores))}` : '';
  return `${f3(mean(successes))} mean, ${f3(Math.min(...successes))}-${f3(Math.max(...successes))} over ${runs.length} seeds (${on})${scored}${exact}`;
}

/** The runs' bases, or null when a run was recorded without one (a mean over part of the seeds would not be the row's). */
function basesOf(runs: readonly Result[]): NonNullable<Result['base']>[] | null {
  const bases = runs.flatMap((r) => (r.base ? [r.base] : []));
  return bases.length === runs.length ? bases : null;
}

/** The base cell: one run's success and interval, or the mean and range of several; `-` for runs recorded before the base was measured. */
function baseCell(runs: readonly Result[]): string {
  const bases = basesOf(runs);
  if (!bases) return '-';
  if (bases.length === 1) return `${f3(bases[0]!.success)} [${f3(bases[0]!.interval.low)}, ${f3(bases[0]!.interval.high)}]`;
  const successes = bases.map((b) => b.success);
  return `${f3(mean(successes))} mean, ${f3(Math.min(...successes))}-${f3(Math.max(...successes))}`;
}

/** What RL added: final - base, or over several seeds the mean of each seed's own lift. */
function liftCell(runs: readonly Result[]): string {
  const bases = basesOf(runs);
  if (!bases) return '-';
  const lifts = runs.map((r, i) => r.held_out.success - bases[i]!.success);
  return lifts.length === 1 ? signed(lifts[0]!) : `${signed(mean(lifts))} mean`;
}

/**
 * A word as a recorded command writes it: bare where the shell reads it as written, else in single
 * quotes (an override holding a space or Hydra's quotes: `'key="a b"'`), so a command copied from
 * the table runs as recorded. Hand-written rather than shell-quote's `quote`, which escapes `=`
 * and would change every recorded `key=value` (`max_steps\=600`).
 */
export const shellWord = (word: string) => (/^[\w./:=,@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

/** A recorded command's words as the shell splits them (shellWord's quoting kept, so they join back as they were). */
export function commandWords(command: string): string[] {
  return command.match(/(?:\\.|'[^']*'|[^\s'\\]+)+/g) ?? [];
}

/** A word of a recorded command as the program receives it: quotes and backslashes taken off. */
export const unquoted = (word: string) => word.replace(/'([^']*)'|\\(.)/g, (_, quoted?: string, escaped?: string) => quoted ?? escaped ?? '');

/** Whether a word of a command is one of its `key=value` overrides: a word with `=` after the `learn:` word. */
const isOverride = (word: string, i: number, words: readonly string[]) => word.includes('=') && words.slice(0, i).some((before) => before.startsWith('learn:'));

/** A command's `key=value` overrides removed: the recipe it runs (`bun run learn:agentic`, with any environment prefix). */
const recipeOf = (command: string) =>
  commandWords(command)
    .filter((word, i, words) => !isOverride(word, i, words))
    .join(' ');

/** A config as its name and overrides load it today (any form that compares by JSON), or null where it no longer loads. */
export type LoadConfig = (name: string, overrides: readonly string[]) => Promise<unknown | null>;

/** LoadConfig for this checkout's configs/ (a config that fails to load is null). */
export function checkoutConfigs(root = ROOT): LoadConfig {
  const host = new PluginHost();
  return async (name, overrides) => {
    try {
      return (await loadConfig({ configName: name, overrides, cwd: root }, host)).config;
    } catch {
      return null;
    }
  };
}

/**
 * The runs with each command as it reads today: where loading the run's config with its
 * overrides gives the config that loads without them (the config has since taken them on, or
 * they only restate it), the command is the plain one. A recipe measured with overrides before
 * its config shipped them then shares a row with the plain command's runs, and the README shows
 * what the command a user types gives; overrides that change anything, or that no longer load,
 * keep their command.
 */
export async function commandsToday(results: readonly Result[], load: LoadConfig): Promise<Result[]> {
  const today = new Map<string, string>();
  const plains = new Map<string, string | null>();
  for (const { command, config } of results) {
    const overrides = commandWords(command).filter(isOverride).map(unquoted);
    if (overrides.length === 0 || today.has(command)) continue;
    // each config loads once without overrides, however many of its commands have some
    if (!plains.has(config)) {
      const plain = await load(config, []);
      plains.set(config, plain === null ? null : JSON.stringify(plain));
    }
    const plain = plains.get(config)!;
    const overridden = await load(config, overrides);
    const ships = plain !== null && overridden !== null && plain === JSON.stringify(overridden);
    today.set(command, ships ? recipeOf(command) : command);
  }
  return results.map((r) => ({ ...r, command: today.get(r.command) ?? r.command }));
}

/**
 * The runs that show a recipe as shipped: a command with overrides is a variant of its recipe (a
 * mechanism switched on, another rate), left to docs/learning.md where the recipe has rows of its
 * own, so the README's table grows by recipes and not by experiments.
 */
export function recipeRuns(results: readonly Result[]): Result[] {
  const plain = new Set(results.filter((r) => recipeOf(r.command) === r.command).map((r) => r.command));
  return results.filter((r) => recipeOf(r.command) === r.command || !plain.has(recipeOf(r.command)));
}

/** The markdown table, one row per task, command, hardware and held-out episodes, in the order first measured. */
export function renderResultsTable(results: readonly Result[]): string {
  const rows = groupedRuns(results).map((runs) => {
    const last = runs.at(-1)!;
    const wall = runs.length === 1 ? `${thousands(last.wall_seconds)} s` : `${thousands(mean(runs.map((r) => r.wall_seconds)))} s mean`;
    return [
      last.task,
      last.model,
      DEMONSTRATIONS[last.demonstrations],
      `\`${last.estimator}\``,
      baseCell(runs),
      finalCell(runs),
      liftCell(runs),
      wall,
      `${last.hardware}${last.matmul ? ` (${last.matmul})` : ''}`,
      `\`${last.command}\``,
      last.commit ? `${last.date} (${last.commit})` : last.date,
    ].join(' | ');
  });
  return [
    '| task | model | demonstrations | estimator | base [95%] | final [95%] | lift | wall time | hardware | command | date |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

/**
 * Published RL results on the same tasks, from policies fed no demonstrations, as each paper
 * states them (its units, its words; "not stated" where it says nothing). Hand-copied: a paper's
 * number is not ours to recompute.
 */
export const PUBLISHED: readonly {
  work: string;
  model: string;
  hardware: string;
  variant: string;
  /** How its held-out success was played (decoding, turns), where its code or paper says. */
  evaluation: string;
  frozenLake: string;
  sokoban: string;
}[] = [
  {
    work: 'ROLL tech report',
    model: 'Qwen2.5-0.5B',
    hardware: 'not stated',
    variant: 'not stated',
    evaluation: 'not stated',
    frozenLake: '12.9 -> 23.8%',
    sokoban: '13.3 -> 35.2%',
  },
  {
    work: 'RAGEN (StarPO-S)',
    model: 'Qwen2.5-0.5B',
    hardware: 'not stated',
    variant: 'slippery',
    evaluation: "sampled at temperature 0.5, 5 turns of up to 5 moves (its repository's config/base.yaml today)",
    frozenLake: 'final 21.8%',
    sokoban: 'final 20.3%',
  },
  {
    work: 'SPA (world-model fine-tuning on self-play states, then PPO)',
    model: 'Qwen2.5-1.5B',
    hardware: 'one H100, ~12 h (1000 steps)',
    variant: 'slippery',
    evaluation: 'not stated',
    frozenLake: '17.2 -> 70.9%',
    sokoban: '16.3 -> 59.8%',
  },
  {
    work: 'VAGEN (world-model reward, bi-level GAE)',
    model: 'Qwen2.5-VL-3B',
    hardware: 'not stated',
    variant: 'not slippery',
    evaluation: 'not stated',
    frozenLake: '0.14 -> 0.74',
    sokoban: '0.14 -> 0.79',
  },
  {
    work: 'GiGPO',
    model: 'Qwen2.5-VL-3B',
    hardware: 'not stated',
    variant: '-',
    evaluation: "sampled at temperature 0.4, 15 turns (verl-agent's examples/gigpo_trainer/run_sokoban.sh)",
    frozenLake: '-',
    sokoban: '11.7 -> 81.0% (GRPO 67.1%)',
  },
];

/** What the published rows are beside ours, said once under both tables. */
const PUBLISHED_NOTE =
  'Published RL results on the same tasks, from policies fed no demonstrations, as each paper states them. Our `env solver` rows start from what those papers report as a baseline, supervised fine-tuning on solver data (RAGEN: 74.6% on Sokoban after SFT on BFS-solver data, against 20.3% for its RL), so their final success is not an RL result; their lift is what RL added. Ours are played greedily, within the 10 turns of each suite env (frozen_lake/v2 and sokoban/v2 alike).';

/** The published rows as a markdown table. */
export function renderPublishedTable(): string {
  return [
    '| work | model (size) | hardware, wall time | FrozenLake variant | evaluation | FrozenLake 4x4 base -> final | Sokoban 6x6, one box, base -> final |',
    '|---|---|---|---|---|---|---|',
    ...PUBLISHED.map((p) => `| ${[p.work, p.model, p.hardware, p.variant, p.evaluation, p.frozenLake, p.sokoban].join(' | ')} |`),
  ].join('\n');
}

/** What the pages show between the markers: our table, then the published rows under it. */
export function renderResultsSection(results: readonly Result[]): string {
  return `${renderResultsTable(results)}\n\n${PUBLISHED_NOTE}\n\n${renderPublishedTable()}`;
}

/** `page` with the text between its markers replaced by `table`. */
export function withResultsTable(page: string, table: string, name = 'the page'): string {
  const start = page.indexOf(RESULTS_START);
  const end = page.indexOf(RESULTS_END);
  if (start === -1 || end < start) throw new Error(`${name}: no results markers (${RESULTS_START} ... ${RESULTS_END})`);
  return `${page.slice(0, start + RESULTS_START.length)}\n${table}\n${page.slice(end)}`;
}

/**
 * What `page` shows between its markers: docs/learning.md every run under the command it was
 * recorded with, the README the recipes under their commands today (commandsToday, with `load`).
 */
export async function pageSection(page: (typeof RESULT_PAGES)[number], results: readonly Result[], load: LoadConfig): Promise<string> {
  return renderResultsSection(PAGE_RUNS[page] === 'recipes' ? recipeRuns(await commandsToday(results, load)) : results);
}

/** Rewrites the table on every page that shows it; returns the pages changed. */
export async function writeResultPages(results = readResults(), root = ROOT): Promise<string[]> {
  const changed: string[] = [];
  const load = checkoutConfigs(root);
  for (const page of RESULT_PAGES) {
    const file = join(root, page);
    const before = readFileSync(file, 'utf8');
    const after = withResultsTable(before, await pageSection(page, results, load), page);
    if (after !== before) {
      writeFileAtomic(file, after);
      changed.push(page);
    }
  }
  return changed;
}
