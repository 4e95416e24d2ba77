import { describe, expect, test } from 'bun:test';
import { bindReward, defineReward, RewardReference, rewardName, rewardSettings, z } from '../../src/sdk';
import { scoreSafely } from '../../src/sdk/score';

const input = { response: 'abcd', trajectory: [], row: {} };
const scaled = defineReward({
  name: 'scaled',
  description: 'The response length times a factor.',
  config: z.strictObject({ factor: z.number().positive().default(1), label: z.string().optional() }),
  score: ({ response }, { factor }) => response.length * factor,
});
const plain = defineReward({ name: 'plain', description: 'Always 1.', score: () => 1 });

describe('reward references', () => {
  test('a name, or a mapping of the name and settings', () => {
    expect(RewardReference.parse('exact_match')).toBe('exact_match');
    expect(RewardReference.parse({ name: 'scaled', factor: 2 })).toEqual({ name: 'scaled', factor: 2 });
    expect(RewardReference.safeParse({ factor: 2 }).success).toBe(false);
    expect(RewardReference.safeParse('').success).toBe(false);
    expect([rewardName('plain'), rewardName({ name: 'scaled', factor: 2 })]).toEqual(['plain', 'scaled']);
    expect(rewardSettings({ name: 'scaled', factor: 2 })).toEqual({ factor: 2 });
    expect(rewardSettings('plain')).toEqual({});
  });

  test('a bound reward scores with its settings, defaults filled; unbound, it gets the defaults', async () => {
    expect(await bindReward(scaled, { name: 'scaled', factor: 3 }).score(input)).toBe(12);
    expect(await bindReward(scaled, 'scaled').score(input)).toBe(4);
    expect(await scaled.score(input)).toBe(4);
    expect(bindReward(plain, 'plain').score(input)).toBe(1);
  });

  test('bad settings are one line naming the key', () => {
    expect(() => bindReward(scaled, { name: 'scaled', factor: 0 })).toThrow(/^reward 'scaled': factor: /);
    expect(() => bindReward(scaled, { name: 'scaled', factr: 2 })).toThrow("reward 'scaled': factr: unknown setting");
    expect(() => bindReward(plain, { name: 'plain', factor: 2 })).toThrow("reward 'plain': factor: unknown setting");
  });

  test("a reward_error note marks the sample failed and keeps the reward's metrics", async () => {
    const judge = defineReward({
      name: 'judge',
      description: 'A judge that is down.',
      score: () => ({ reward: 0, 'judge/failed': 1, reward_error: 'server down\nmore' }),
    });
    expect(await scoreSafely(judge, input)).toEqual({ reward: 0, metrics: { 'judge/failed': 1 }, notes: {}, error: "reward 'judge': server down" });
  });
});
