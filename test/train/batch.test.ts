/** The step's batch: the rollout's columns built once, row-aligned, and any subset of rows taken with every column. */
import { describe, expect, test } from 'bun:test';
import { defaultTokenizer } from '../../src/model/default_tokenizer';
import { ChatFormat } from '../../src/rollout/chat';
import type { RolloutBatch, Sample } from '../../src/rollout/types';
import { fromRollout, rewardRows, rowCount, selectRows } from '../../src/train/batch';
import { shippedConfig } from './helpers';

function sample(i: number, o: Partial<Sample> = {}): Sample {
  return {
    trajGroupId: `Tag_0_${i >> 1}_7`,
    trajId: `Tag_0_${i >> 1}_7_${i}`,
    tag: 'Tag',
    envId: i,
    groupId: i >> 1,
    episodeId: 0,
    seat: null,
    step: null,
    inputIds: Int32Array.of(1, 2, 3 + i),
    responseMask: Uint8Array.of(0, 1, 1),
    logProbs: Float32Array.of(0, -0.5, -0.25 * i),
    rewards: Float32Array.of(0, 0, i),
    promptLength: 1,
    turns: [],
    score: i,
    episodeScore: 10 + i,
    stepReward: null,
    stepScores: [i],
    stateHash: null,
    endReason: 'terminated',
    truncated: false,
    policyVersion: 4,
    ...o,
  };
}

const rollout = (samples: Sample[]): RolloutBatch => ({ mode: 'train', episodes: [], samples, metrics: {} });

describe('fromRollout', () => {
  test('one entry per row in every column, in the rollout order', async () => {
    const config = await shippedConfig('frozen_lake', []);
    const samples = [0, 1, 2, 3].map((i) => sample(i, i === 2 ? { step: 1, stateHash: 'abc' } : {}));
    const batch = fromRollout(rollout(samples), config, new ChatFormat(defaultTokenizer()), {
      baselines: new Map([
        ['Tag_0_0_7', 0.5],
        ['Tag_0_1_7', -1],
      ]),
      sourceRefLogProbs: null,
    });
    expect(rowCount(batch)).toBe(4);
    expect(batch.ids).toEqual(samples.map((s) => s.inputIds));
    expect(batch.masks).toEqual(samples.map((s) => s.responseMask));
    expect(batch.samplingLogProbs).toEqual(samples.map((s) => s.logProbs));
    expect(batch.scores).toEqual([0, 1, 2, 3]);
    expect(batch.episodeScores).toEqual([10, 11, 12, 13]);
    expect(batch.steps).toEqual([null, null, 1, null]);
    expect(batch.stateHashes).toEqual([null, null, 'abc', null]);
    expect(batch.versions).toEqual([4, 4, 4, 4]);
    expect(batch.baselines).toEqual([0.5, 0.5, -1, -1]);
    // frozen_lake samples at one temperature, which every log-prob divides by
    expect(batch.temperature).toBe(config.train_env_manager.generating_args!.temperature);
    expect(rewardRows(batch)[2]).toEqual({
      trajGroupId: 'Tag_0_1_7',
      trajId: 'Tag_0_1_7_2',
      tag: 'Tag',
      groupId: 1,
      step: 1,
      score: 2,
      episodeScore: 12,
      stateHash: 'abc',
      seat: null,
    });
    // one agent facing an env: no seat on any row
    expect(batch.seats).toEqual([null, null, null, null]);
  });
});

describe('selectRows', () => {
  test('takes the rows at the indices from every per-row column, and keeps the rest', async () => {
    const config = await shippedConfig('frozen_lake', []);
    const batch = fromRollout(rollout([0, 1, 2].map((i) => sample(i))), config, new ChatFormat(defaultTokenizer()), {
      baselines: null,
      sourceRefLogProbs: [0, 1, 2].map((i) => Float32Array.of(i)),
    });
    const withColumns = {
      ...batch,
      advantages: [0, 1, 2].map((i) => Float32Array.of(-i)),
      values: null,
      temperature: [0, 1, 2].map((i) => Float32Array.of(1 + i)),
    };
    const picked = selectRows(withColumns, [2, 0]);
    expect(rowCount(picked)).toBe(2);
    expect(picked.ids).toEqual([batch.ids[2]!, batch.ids[0]!]);
    expect(picked.trajIds).toEqual([batch.trajIds[2]!, batch.trajIds[0]!]);
    expect(picked.advantages).toEqual([Float32Array.of(-2), Float32Array.of(-0)]);
    expect(picked.sourceRefLogProbs).toEqual([Float32Array.of(2), Float32Array.of(0)]);
    expect(picked.temperature).toEqual([Float32Array.of(3), Float32Array.of(1)]);
    expect(picked.values).toBeNull();
    expect(picked.baselines).toBeNull();
    expect(selectRows(batch, []).ids).toEqual([]);
    expect(selectRows(batch, [1]).temperature).toBe(batch.temperature);
  });
});
