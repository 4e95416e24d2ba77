/**
 * The line a training run ends with: base (the validation before the first step) -> final (the
 * validation after the last), named by what validation plays. `agentic train` printing it is
 * checked end to end in test/cli/train.test.ts, a resumed run's in test/cli/checkpoints.test.ts.
 */
import { describe, expect, test } from 'bun:test';
import { heldOutChangeLine } from '../../src/tracking/held_out_change';
import type { StepReport } from '../../src/train/types';
import { shippedConfig } from '../train/helpers';

const validated = (step: number, success: number): StepReport => ({
  step,
  metrics: { 'val/env/FrozenLake/success': success, 'val/score/mean': success, 'actor/pg_loss': 0.1 },
});
const trained = (step: number): StepReport => ({ step, metrics: { 'actor/pg_loss': 0.1 } });

describe('heldOutChangeLine', () => {
  test("the default run's: the suite's first episodes, greedy, base -> final and the change", async () => {
    const c = await shippedConfig('agentic', ['max_steps=3']);
    const reports = [validated(0, 0.09375), trained(1), trained(2), validated(3, 0.875)];
    expect(heldOutChangeLine(c, reports, false)).toBe('held-out success (frozen_lake/v2, first 64 episodes, greedy): base 0.094 -> final 0.875 (+0.781)');
    expect(heldOutChangeLine(c, [validated(0, 0.5), validated(3, 0.25)], false)).toEndWith('base 0.500 -> final 0.250 (-0.250)');
  });

  test('episodes drawn by seed, groups of several plays, sampling: each said as it is', async () => {
    const c = await shippedConfig('agentic', [
      'max_steps=1',
      'val_suite=null',
      'val_batch_size=16',
      'val_env_manager.generating_args.do_sample=true',
      'val_env_manager.generating_args.temperature=0.7',
    ]);
    expect(heldOutChangeLine(c, [validated(0, 0), validated(1, 1)], false)).toStartWith(
      'held-out success (16 episodes drawn by seed, sampled at temperature 0.7): base',
    );
    const groups = await shippedConfig('agentic', ['max_steps=1', 'val_batch_size=16', 'val_env_manager.group_size=4', 'val_env_manager.num_env_groups=4']);
    expect(heldOutChangeLine(groups, [validated(0, 0), validated(1, 1)], false)).toStartWith(
      'held-out success (frozen_lake/v2, first 4 episodes, 4 plays each, greedy)',
    );
  });

  test('without a step-0 validation it says why there is no base; without a final validation there is no line', async () => {
    const c = await shippedConfig('agentic', ['max_steps=2']);
    const noBase = [trained(0), validated(1, 0.5), validated(2, 0.75)];
    expect(heldOutChangeLine(c, noBase, true)).toBe("held-out success (frozen_lake/v2, first 64 episodes, greedy): base not in this run's log; final 0.750");
    expect(heldOutChangeLine(c, noBase, false)).toEndWith(': base not validated (val_before_train: false); final 0.750');
    expect(heldOutChangeLine(c, [validated(0, 0.5), trained(1)], false)).toBeNull();
  });

  test('an env without a success metric is read by its mean score', async () => {
    const c = await shippedConfig('agentic', ['max_steps=1']);
    const scored = (step: number, score: number): StepReport => ({ step, metrics: { 'val/score/mean': score } });
    expect(heldOutChangeLine(c, [scored(0, -0.5), scored(1, 0.25)], false)).toEndWith(
      'held-out score (frozen_lake/v2, first 64 episodes, greedy): base -0.500 -> final 0.250 (+0.750)',
    );
  });
});
