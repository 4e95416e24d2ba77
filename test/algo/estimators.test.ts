/** The estimator registry: each name's response reward, advantage function and needs, read in one place. */
import { describe, expect, test } from 'bun:test';
import { returnsToGo } from '../../src/algo/advantage';
import { ESTIMATOR_NAMES, ESTIMATORS, needsOf } from '../../src/algo/estimators';
import { gigpoRewards } from '../../src/algo/gigpo';
import { normalizedScores, normalizedStepReturns, rawScores } from '../../src/algo/rewards';
import { ConfigShape } from '../../src/config/schema';

describe('the estimator registry', () => {
  test('the schema accepts exactly the registered names, in the registry order', () => {
    expect(ESTIMATOR_NAMES).toEqual([
      'gae',
      'grpo',
      'reinforce',
      'reinforce_plus_plus',
      'rloo',
      'remax',
      'gigpo',
      'step_reinforce',
      'agentic_reinforce',
      'rae',
    ]);
    for (const name of ESTIMATOR_NAMES) expect(ConfigShape.shape.adv_estimator.safeParse(name).success).toBe(true);
    expect(ConfigShape.shape.adv_estimator.safeParse('ppo').success).toBe(false);
  });

  test('each entry says what it needs', () => {
    const needing = (need: keyof ReturnType<typeof needsOf>) => ESTIMATOR_NAMES.filter((name) => needsOf(name)[need]);
    expect(needing('critic')).toEqual(['gae']);
    expect(needing('greedyBaseline')).toEqual(['remax']);
    expect(needing('stepRows')).toEqual(['gigpo', 'step_reinforce']);
    expect(needing('rawScores')).toEqual(['reinforce_plus_plus', 'rloo', 'remax', 'rae']);
  });

  test('response rewards: raw scores for estimators with their own baseline, GiGPO its own', () => {
    for (const name of ['reinforce_plus_plus', 'rloo', 'remax'] as const) expect(ESTIMATORS[name].responseRewards).toBe(rawScores);
    for (const name of ['gae', 'grpo', 'reinforce', 'agentic_reinforce'] as const) expect(ESTIMATORS[name].responseRewards).toBe(normalizedScores);
    expect(ESTIMATORS.step_reinforce.responseRewards).toBe(normalizedStepReturns);
    expect(ESTIMATORS.gigpo.responseRewards).toBe(gigpoRewards);
    expect(ESTIMATORS.gigpo.advantages).toBe(returnsToGo);
  });
});
