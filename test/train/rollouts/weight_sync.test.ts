/**
 * The weights folders of a run with inference servers: which ones pruning deletes. (The sync
 * itself, folders loaded by a server and its version read back, runs against `agentic serve` in
 * ./server.test.ts.)
 */
import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { stale, weightsFolder } from '../../../src/train/rollouts/weight_sync';
import { scratch } from '../../helpers';

describe('pruning', () => {
  test("keeps the folders named, deletes other weights-N and a killed writer's temporaries, and nothing else", () => {
    const dir = scratch({
      'weights-0/config.json': '{}',
      'weights-2/config.json': '{}',
      'weights-4/config.json': '{}',
      '.weights-6.tmp-123-abc-1/config.json': '{}',
      'notes/weights-9.txt': 'not a weights folder',
      'weights-latest/config.json': '{}',
    });
    expect(stale(dir, [weightsFolder(dir, 2), weightsFolder(dir, 4)]).sort()).toEqual([join(dir, '.weights-6.tmp-123-abc-1'), join(dir, 'weights-0')].sort());
    expect(stale(join(dir, 'missing'), [])).toEqual([]);
  });
});
