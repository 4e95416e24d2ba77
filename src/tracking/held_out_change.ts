/**
 * The line a training run ends with: the held-out success of the model it started from (the
 * validation before the first step) and of the trained one (the final validation), and what RL
 * added, so a run says it without anyone reading the log:
 *
 *   held-out success (frozen_lake/v1, first 64 episodes, greedy): base 0.094 -> final 0.875 (+0.781)
 *
 * Both are validations of the run (val_env_manager, val_batch_size episodes), not `agentic eval`
 * of the whole suite. Envs without a success metric are read by their mean score instead.
 */
import type { AgenticConfig } from '../config/schema';
import { generatingArgs } from '../rollout/env_manager';
import type { StepReport } from '../train/types';
import { tagMean } from './console';

/** What validation plays: the suite's first episodes (each by a whole group) or episodes drawn by seed, greedily or sampled. */
function validationEpisodes(c: AgenticConfig): string {
  const groupSize = c.val_env_manager.group_size;
  const episodes =
    c.val_suite === null
      ? `${c.val_batch_size} episodes drawn by seed`
      : `${c.val_suite}, first ${c.val_batch_size / groupSize} episodes${groupSize > 1 ? `, ${groupSize} plays each` : ''}`;
  const gen = generatingArgs(c, 'val');
  const play = !gen.do_sample || gen.temperature === 0 ? 'greedy' : `sampled at temperature ${gen.temperature}`;
  return `${episodes}, ${play}`;
}

/**
 * `reports`: every step the run has logged, a resumed run's earlier steps (its checkpoint's log)
 * first. Null when the run did not validate after its last step.
 */
export function heldOutChangeLine(c: AgenticConfig, reports: readonly StepReport[], resumed: boolean): string | null {
  const final = reports.findLast((r) => r.step === c.max_steps && r.metrics['val/score/mean'] !== undefined);
  if (!final) return null;
  const bySuccess = tagMean(final.metrics, 'val/', 'success') !== undefined;
  const value = (r: StepReport) => (bySuccess ? tagMean(r.metrics, 'val/', 'success') : r.metrics['val/score/mean']);
  const finalValue = value(final)!;
  const start = reports.find((r) => r !== final && r.step === 0 && value(r) !== undefined);
  const label = `held-out ${bySuccess ? 'success' : 'score'} (${validationEpisodes(c)})`;
  if (!start) {
    const missing = resumed ? "base not in this run's log" : 'base not validated (val_before_train: false)';
    return `${label}: ${missing}; final ${finalValue.toFixed(3)}`;
  }
  const base = value(start)!;
  const lift = finalValue - base;
  return `${label}: base ${base.toFixed(3)} -> final ${finalValue.toFixed(3)} (${lift >= 0 ? '+' : ''}${lift.toFixed(3)})`;
}
