/**
 * A learning run with its target: `bun scripts/experiments/learn.ts <config-name> [overrides...] [--seed N] [--record]`
 * (`bun run learn:frozen_lake` trains configs/agentic.yaml, `learn:frozen_lake_lora` the same with
 * LoRA adapters and the embedding trained whole (docs/models.md); `learn:sokoban` and `learn:sokoban_grpo`
 * train configs/sokoban_compact.yaml with GiGPO and with GRPO; `learn:calculator` trains
 * configs/calculator.yaml; `learn:calculator_hermes` the same task with function calling, and
 * `learn:calculator_agent` the openai-client agent of examples/agents from that run's base;
 * `learn:webshop` trains configs/webshop_compact.yaml, the simulated store; `learn:guess_the_number` and
 * `learn:mastermind` train GEM's games, configs/gem_*.yaml).
 *
 * Trains the shipped config end to end (warm start included) exactly as `agentic train` does,
 * then prints the validation curve against wall time and whether the task's target was met
 * (validation success, reached within the time budget), then evaluates the last checkpoint on the
 * held-out episodes (the config's val_suite, every episode; else val_batch_size drawn by seed) and
 * prints success with its 95% Wilson interval, and the same for the model RL started from (the
 * base: the warm start's, else pretrain) on the same episodes. The run writes its curves to
 * <logging_dir>/curves.html; a summary goes to <output_dir>/learn_summary.json. `--seed N` runs it
 * with seed N (and exp_name <exp_name>_seed<N>, so runs of several seeds keep their folders).
 * `--record` also appends the run (its base and final held-out success, what its warm start was
 * fed: demonstrationsOf, and Kuhn Poker's exact payoff against Nash) to results/learning.jsonl and rewrites the results table of README.md
 * and docs/learning.md (scripts/results_table.ts).
 *
 * `--all [--seeds N] [--record] [--dry-run]` (`bun run learn:all`) runs the four targets (learn:frozen_lake,
 * learn:sokoban, learn:webshop, learn:calculator) one after another with seeds 1 .. N (default 1);
 * `--dry-run` prints the commands instead.
 *
 * `--compare a,b` instead draws the curves of finished runs (their output folders) on one page.
 */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import type { AgenticConfig } from '../../src/config/schema';
import { loadConfig } from '../../src/config/load';
import { blasInUse } from '../../src/engine/kernels/matmul';
import { PluginHost } from '../../src/host/plugin_host';
import { curvesPage, withTagMeans, type ChartSpec, type CurveRun } from '../../src/tracking/curves';
import { report } from '../../src/cli/main';
import { runTraining } from '../../src/cli/training_run';
import { kuhnExactPayoff } from './kuhn_exact';
import type { StepReport } from '../../src/train/types';
import { writeFileAtomic } from '../../src/util/atomic';
import { checkpointActorConfig } from '../../src/cli/checkpoints';
import { evaluate } from '../../src/rollout/evaluate';
import { heldOutLine, type HeldOut } from '../../src/rollout/held_out';
import { notLostAgainst, type SeatResults, seatResultLines } from '../../src/rollout/seat_results';
import { appendResult, type Result, RESULT_PAGES, RESULTS_FILE, ROOT, shellWord, signed, writeResultPages } from '../results_table';

/**
 * The tuned configs' targets: validation success and the wall-time budget it must be reached in; with
 * `lift`, RL must also add that much to its base's held-out success (a base that already meets the
 * success target leaves the run nothing to prove by it alone); with `opponents`, the final model's
 * held-out games must not be lost at each rate against that opponent (its label in the seat results).
 */
const TARGETS: Record<string, { success: number; seconds: number; lift?: number; opponents?: Record<string, number> }> = {
  // issue #66: RL lifts the worked-example base rather than holding it
  agentic: { success: 0.95, seconds: 600, lift: 0.02 },
  sokoban_compact: { success: 0.8, seconds: 3600 },
  // held-out goals over products no training goal asks for
  webshop_compact: { success: 0.5, seconds: 3600 },
  // held-out arithmetic/val accuracy (tool_use/v1), within 30 minutes
  calculator: { success: 0.95, seconds: 1800 },
  // from reward alone (warm_start.demonstrations: none), issue #66's targets
  frozen_lake_reward_only: { success: 0.9, seconds: 1800 },
  // above GiGPO's 81.0% at 3B
  sokoban_reward_only: { success: 0.82, seconds: 5400 },
  // above SPA's 70.9% where the optimum allows (it is below 1 on slippery ice; learn.ts prints the fraction of it)
  frozen_lake_slippery: { success: 0.709, seconds: 1800 },
  // issue #69: not losing on 95% against random and 90% against minimax (a draw: minimax never
  // loses); validation pools them (half its games against each), so `success` is their mean
  tic_tac_toe: { success: 0.925, seconds: 1800, opponents: { 'vs random': 0.95, 'vs minimax': 0.9 } },
};

/** What `--all` runs: the four targets' scripts. */
const ALL = ['learn:frozen_lake', 'learn:sokoban', 'learn:webshop', 'learn:calculator'];

/** How the results table names the tuned configs' tasks; other configs by their validation tags. */
const TASKS: Record<string, string> = {
  agentic: 'FrozenLake 4x4',
  frozen_lake_reward_only: 'FrozenLake 4x4',
  frozen_lake_slippery: 'FrozenLake 4x4, slippery',
  sokoban_reward_only: 'Sokoban 6x6, one box',
  sokoban_compact: 'Sokoban 6x6, one box',
  calculator: 'Arithmetic with a calculator',
  webshop_compact: 'WebShop, simulated store',
  webshop: 'WebShop, simulated store (text pages)',
  gem_guess_the_number: "GEM's Guess The Number, 1-20 in 5 guesses",
  gem_mastermind: "GEM's Mastermind, 2 digits of 6 in 5 guesses",
  tic_tac_toe: 'TicTacToe by self-play (success: not losing, against random and minimax)',
  kuhn_poker: 'Kuhn Poker by self-play (success: not losing a hand, against Nash)',
};

function readReports(outputDir: string): StepReport[] {
  const file = join(outputDir, 'logs', 'metrics.jsonl');
  if (!existsSync(file)) {
    console.error(`error: ${file}: no metrics (run the config with jsonl in track_with first)`);
    process.exit(2);
  }
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => withTagMeans(JSON.parse(line) as StepReport));
}

async function compare(outputDirs: string[]): Promise<void> {
  const runs: CurveRun[] = outputDirs.map((dir) => ({ label: dir.split('/').filter(Boolean).at(-1)!, reports: readReports(resolve(dir)) }));
  const charts: ChartSpec[] = [
    { title: 'validation success vs wall time (s)', keys: ['val/success'], x: 'time' },
    { title: 'validation success vs step', keys: ['val/success'], x: 'step' },
    { title: 'training score', keys: ['rollout/score/mean'], x: 'step' },
    { title: 'actor entropy', keys: ['actor/entropy'], x: 'step' },
  ];
  const out = resolve('output', `compare_${runs.map((r) => r.label).join('_vs_')}.html`);
  writeFileAtomic(out, curvesPage(runs.map((r) => r.label).join(' vs '), runs, charts));
  for (const run of runs) {
    const vals = run.reports.filter((r) => r.metrics['val/success'] !== undefined);
    console.log(
      `${run.label}: ${vals.map((r) => `${r.step}@${Math.round(r.metrics['time/elapsed'] ?? 0)}s=${r.metrics['val/success']!.toFixed(2)}`).join(' ')}`,
    );
  }
  console.log(`curves: ${out}`);
}

async function learn(name: string, overrides: string[], seed: number | null, record: boolean): Promise<void> {
  const host = new PluginHost();
  const seeded = seed === null ? [] : [`seed=${seed}`, `exp_name=${(await loadConfig({ configName: name, overrides }, host)).config.exp_name}_seed${seed}`];
  const loaded = await loadConfig({ configName: name, overrides: [...overrides, ...seeded, 'track_with=[console,jsonl,html]'] }, host);
  // the code measured is the code the run starts from: a commit made while it trains is not it
  const measuredCommit = commit();
  const result = await runTraining(loaded, host, { info: (line) => console.error(line), warn: (line) => console.error(`warning: ${line}`) });
  const c = loaded.config;
  const vals = readReports(resolve(c.output_dir)).filter((r) => r.metrics['val/success'] !== undefined || r.metrics['val/score/mean'] !== undefined);
  const value = (r: StepReport) => r.metrics['val/success'] ?? r.metrics['val/score/mean']!;
  // tool-use envs report used_tool: the share of held-out episodes that called a tool
  const toolShare = (r: StepReport) => {
    const shares = Object.entries(r.metrics).filter(([key]) => key.startsWith('val/env/') && key.endsWith('/used_tool'));
    return shares.length ? shares.reduce((sum, [, v]) => sum + v, 0) / shares.length : undefined;
  };
  const tools = vals.some((r) => toolShare(r) !== undefined);
  printCurve(c, vals, value, tools ? toolShare : null);
  const target = TARGETS[name];
  const base = vals[0] ? value(vals[0]) : null;
  const final = vals.at(-1) ? value(vals.at(-1)!) : null;
  const best = vals.length ? Math.max(...vals.map(value)) : null;
  const reached = target ? vals.find((r) => value(r) >= target.success && (r.metrics['time/elapsed'] ?? Infinity) <= target.seconds) : undefined;
  const summary = {
    config: name,
    overrides,
    seed: c.seed,
    steps: result.steps,
    wall_seconds: vals.at(-1)?.metrics['time/elapsed'] ?? null,
    base,
    final,
    best,
    ...(tools ? { used_tool: { base: toolShare(vals[0]!) ?? null, final: toolShare(vals.at(-1)!) ?? null } } : {}),
    target: target ?? null,
    reached: reached ? { step: reached.step, seconds: reached.metrics['time/elapsed'], success: value(reached) } : null,
    curves: result.curvesFile,
  };
  writeFileAtomic(join(resolve(c.output_dir), 'learn_summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`base ${base?.toFixed(3)}  final ${final?.toFixed(3)}  best ${best?.toFixed(3)}`);
  if (target) {
    console.log(
      reached
        ? `target met: val success ${value(reached).toFixed(3)} >= ${target.success} at step ${reached.step}, ${Math.round(reached.metrics['time/elapsed']!)} s (budget ${target.seconds} s)`
        : `target NOT met: val success ${target.success} within ${target.seconds} s`,
    );
  }
  console.log(`curves: ${result.curvesFile}`);
  const held = await heldOutOfLastCheckpoint(name, [...overrides, ...seeded], host);
  console.log(heldOutLine(`held out, step ${held.step}`, held.result));
  for (const line of seatResultLines(held.seats)) console.log(`  ${line}`);
  if (target?.opponents) console.log(opponentTargetLine(target.opponents, held.seats));
  const heldBase = await heldOutOfBase(c, host);
  console.log(heldOutLine('held out, base (step 0)', heldBase.result));
  for (const line of seatResultLines(heldBase.seats)) console.log(`  ${line}`);
  if (target?.lift !== undefined && held.result.success && heldBase.result.success) {
    const [from, to] = [heldBase.result.success.rate, held.result.success.rate];
    const met = to - from >= target.lift && to >= target.success;
    console.log(
      `lift target ${met ? 'met' : 'NOT met'}: held out ${from.toFixed(3)} -> ${to.toFixed(3)} (${signed(to - from)}; wanted +${target.lift} and >= ${target.success})`,
    );
  }
  // Kuhn Poker's target is the exact payoff against Nash, finer than a validation's few hundred hands can tell
  const exact = name === 'kuhn_poker' ? await kuhnExactPayoff(result.modelDir, 512, overrides, host) : null;
  if (exact) console.log(`\nexact payoff of the final model against Nash (probe_kuhn_poker.ts):\n${exact.lines.slice(1).join('\n')}`);
  const exactPayoff = exact ? { exact_payoff: { as_first: exact.asFirst, as_second: exact.asSecond, met: exact.met } } : {};
  const heldResults = { held_out: { step: held.step, ...held.result }, base_held_out: heldBase.result, seats: held.seats, base_seats: heldBase.seats };
  writeFileAtomic(join(resolve(c.output_dir), 'learn_summary.json'), `${JSON.stringify({ ...summary, ...heldResults, ...exactPayoff }, null, 2)}\n`);
  if (record) {
    const run = measured(name, overrides, c, result.steps, vals.at(-1)?.metrics['time/elapsed'] ?? 0, measuredCommit);
    await recordRun({ ...run, ...exactPayoff }, c, held, heldBase.result);
  }
}

/** Whether the held-out games met each opponent's not-losing rate, over every tag that played that opponent. */
function opponentTargetLine(wanted: Record<string, number>, seats: SeatResults): string {
  const parts = Object.entries(wanted).map(([label, least]) => {
    const notLost = notLostAgainst(seats, label);
    const reading = notLost ? `${notLost.rate.toFixed(3)} [${notLost.low.toFixed(3)}, ${notLost.high.toFixed(3)}]` : 'in no game';
    return { met: notLost !== null && notLost.rate >= least, text: `${label} not lost ${reading} (wanted >= ${least})` };
  });
  return `opponent targets ${parts.every((p) => p.met) ? 'met' : 'NOT met'}: ${parts.map((p) => p.text).join('; ')}`;
}

/** The validation curve as a table: step, wall time, success (and the share of episodes that used a tool, where the env says). */
function printCurve(c: AgenticConfig, vals: StepReport[], value: (r: StepReport) => number, toolShare: ((r: StepReport) => number | undefined) | null): void {
  console.log(`\nvalidation curve of ${c.exp_name} (seed ${c.seed}; ${c.val_batch_size} held-out episodes each):`);
  console.log(`  step  wall(s)  val_success${toolShare ? '  used_tool' : ''}`);
  for (const r of vals) {
    const share = toolShare ? `  ${(toolShare(r) ?? 0).toFixed(3).padStart(9)}` : '';
    console.log(
      `  ${String(r.step).padStart(4)}  ${String(Math.round(r.metrics['time/elapsed'] ?? 0)).padStart(7)}  ${value(r).toFixed(3).padStart(11)}${share}`,
    );
  }
}

/** --record: the run with its final and base held-out success appended to results/learning.jsonl, and the results table rewritten. */
async function recordRun(run: Omit<Result, 'held_out' | 'base'>, c: AgenticConfig, held: { step: number; result: HeldOut }, heldBase: HeldOut): Promise<void> {
  const success = held.result.success;
  const baseSuccess = heldBase.success;
  if (!success || !baseSuccess) {
    console.error(`error: --record: ${c.val_env_manager.tags.join(', ')} report no success metric, so there is no success to record`);
    process.exit(2);
  }
  const heldOut: Result['held_out'] = {
    suite: c.val_suite,
    success: success.rate,
    interval: { low: success.low, high: success.high },
    episodes: held.result.episodes,
    step: held.step,
    score: held.result.score,
  };
  const base: Result['base'] = { success: baseSuccess.rate, interval: { low: baseSuccess.low, high: baseSuccess.high }, episodes: heldBase.episodes };
  appendResult({ ...run, held_out: heldOut, base });
  const pages = await writeResultPages();
  console.log(`recorded in results/learning.jsonl${pages.length ? `; the results table rewritten in ${pages.join(', ')}` : ''}`);
}

/**
 * The run's last checkpoint played on the held-out episodes (its config's val_suite, every
 * episode); seated envs' results per opponent too. The checkpoint's saved config already holds the
 * run's overrides, so a key the run added (`+key=value`) is set again (`++key=value`), not refused
 * as added twice.
 */
async function heldOutOfLastCheckpoint(name: string, overrides: string[], host: PluginHost): Promise<{ step: number; result: HeldOut; seats: SeatResults }> {
  const again = overrides.map((override) => (override.startsWith('+') && !override.startsWith('++') ? `+${override}` : override));
  const { checkpoint, config } = await checkpointActorConfig('auto', { 'config-name': name }, again, host);
  const evaluated = await evaluate(config, host, (line) => console.error(line));
  return { step: checkpoint.step, result: evaluated.json.held_out, seats: evaluated.json.seats ?? {} };
}

/**
 * The model RL started from, played on the held-out episodes the last checkpoint was: the warm
 * start's base (warm_start.output_dir, which the run built or reused) where the run warm-starts,
 * else pretrain (null: the preset from seeded random weights), as the run's plan makes step 0's
 * model (src/cli/run_plan.ts). Played greedily where validation is (val_env_manager's generating_args).
 */
async function heldOutOfBase(c: AgenticConfig, host: PluginHost): Promise<{ result: HeldOut; seats: SeatResults }> {
  const base = c.warm_start.enabled ? { ...c, pretrain: resolve(c.warm_start.output_dir) } : c;
  const { json } = await evaluate(base, host, (line) => console.error(line));
  return { result: json.held_out, seats: json.seats ?? {} };
}

/** What the run's warm start was fed of the env's solutions (warm_start.demonstrations); a run without one is fed nothing. */
function demonstrationsOf(c: AgenticConfig): Result['demonstrations'] {
  return c.warm_start.enabled ? c.warm_start.demonstrations : 'none';
}

/** The results-table row of a finished run (scripts/results_table.ts), less its held-out results. */
function measured(
  name: string,
  overrides: string[],
  c: AgenticConfig,
  steps: number,
  seconds: number,
  measuredCommit: string | null,
): Omit<Result, 'held_out' | 'base'> {
  const model = c.actor_train.model_args;
  const adapters = model.lora_target ? `, LoRA r${model.lora_rank}${model.additional_target ? ` + ${model.additional_target} whole` : ''}` : '';
  return {
    task: TASKS[name] ?? c.val_env_manager.tags.join(', '),
    config: name,
    seed: c.seed,
    steps,
    model: `${c.pretrain ?? 'agentic:tiny'}${adapters}${c.warm_start.enabled ? ', warm-started' : ''}`,
    estimator: c.adv_estimator,
    demonstrations: demonstrationsOf(c),
    wall_seconds: Math.round(seconds),
    hardware: `${availableParallelism()} CPU cores, ${c.backend}`,
    matmul: c.backend === 'wasm' ? matmuls() : null,
    command: reproducing(name, overrides),
    commit: measuredCommit,
    date: new Date().toISOString().slice(0, 10),
  };
}

const BLAS_NAMES: Record<string, string> = { openblas: 'OpenBLAS', blis: 'BLIS', mkl: 'MKL', accelerate: 'Accelerate' };

/** Who computed the wasm backend's matmuls in this run: the system BLAS, or XNNPACK. */
function matmuls(): string {
  const library = blasInUse();
  return library ? (BLAS_NAMES[library.name] ?? library.name) : 'XNNPACK';
}

/** The shortest command that runs this again: the `learn:*` script it extends, if any. */
function reproducing(name: string, overrides: string[]): string {
  const words = [name, ...overrides];
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const prefix = 'bun scripts/experiments/learn.ts ';
  const extended = Object.entries(scripts)
    .filter(([script, line]) => script.startsWith('learn:') && line.startsWith(prefix))
    .map(([script, line]) => ({ script, words: line.slice(prefix.length).split(' ') }))
    .filter((s) => s.words.every((word, i) => words[i] === word))
    .sort((a, b) => b.words.length - a.words.length)[0];
  const command = extended ? ['bun', 'run', extended.script, ...words.slice(extended.words.length)] : ['bun', 'scripts/experiments/learn.ts', ...words];
  const blas = process.env.AGENTIC_BLAS;
  return `${blas ? `AGENTIC_BLAS=${blas} ` : ''}${command.map(shellWord).join(' ')}`;
}

/**
 * The commit measured, `-dirty` when tracked files differ from it. The files `--record` writes
 * (the results file and the pages showing its table) do not count: an earlier seed's record
 * changes them without changing what is measured.
 */
function commit(): string | null {
  const head = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: ROOT });
  if (head.exitCode !== 0) return null;
  const recorded = [RESULTS_FILE, ...RESULT_PAGES].map((file) => `:(exclude)${file}`);
  const status = Bun.spawnSync(['git', 'status', '--porcelain', '--untracked-files=no', '--', '.', ...recorded], { cwd: ROOT });
  return `${head.stdout.toString().trim()}${status.stdout.toString().trim() ? '-dirty' : ''}`;
}

/** The commands `--all` runs: each target's script once per seed 1 .. seeds. */
function allCommands(seeds: number, record: boolean): string[] {
  return Array.from({ length: seeds }, (_, k) => k + 1).flatMap((seed) => ALL.map((script) => `bun run ${script} --seed ${seed}${record ? ' --record' : ''}`));
}

function fail(line: string): never {
  console.error(`error: ${line}`);
  process.exit(2);
}

/** `--name N`'s whole number (N >= 1), removed from `args`; null when absent. */
function takeCount(args: string[], name: string): number | null {
  const at = args.indexOf(name);
  if (at === -1) return null;
  const value = args[at + 1];
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < 1) fail(`${name}: expected a whole number, 1 or more, got '${value ?? ''}'`);
  args.splice(at, 2);
  return n;
}

const USAGE =
  'usage: bun scripts/experiments/learn.ts <config-name> [overrides...] [--seed N] [--record] | --all [--seeds N] [--record] [--dry-run] | --compare <output-dir>,<output-dir>';
async function main(args: string[]): Promise<void> {
  const record = args.includes('--record');
  const dryRun = args.includes('--dry-run');
  const words = args.filter((arg) => arg !== '--record' && arg !== '--dry-run');
  if (words[0] === '--compare') await compare(words.slice(1).join(',').split(',').filter(Boolean));
  else if (words[0] === '--all') {
    const seeds = takeCount(words, '--seeds') ?? 1;
    if (words.length > 1) fail(`--all takes only --seeds, --record and --dry-run, not '${words[1]}'`);
    for (const command of allCommands(seeds, record)) {
      console.log(command);
      if (dryRun) continue;
      const run = Bun.spawnSync(['sh', '-c', command], { cwd: ROOT, stdio: ['inherit', 'inherit', 'inherit'] });
      if (run.exitCode !== 0) fail(`${command}: exit ${run.exitCode}`);
    }
  } else {
    const seed = takeCount(words, '--seed');
    if (dryRun) fail('--dry-run goes with --all');
    if (!words[0] || words[0].startsWith('-')) {
      console.error(USAGE);
      process.exit(2);
    }
    await learn(words[0], words.slice(1), seed, record);
  }
}

// A mistake the run refuses (an earlier run in the output folder, a bad key) is one line and exit 2, as
// `agentic train` prints it; --debug adds the stack.
const args = process.argv.slice(2);
const debug = args.includes('--debug');
try {
  await main(args.filter((arg) => arg !== '--debug'));
} catch (error) {
  process.exit(report(error, debug));
}
