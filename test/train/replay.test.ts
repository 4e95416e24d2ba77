/**
 * The same seed gives the same run, bit for bit, across refactors of the step: short runs recorded
 * earlier (test/fixtures/replay, see ./replay_runs.ts) are played again and compared exactly, and a
 * checkpoint written by the recording code resumes into the recorded run's last steps.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { metricsOf, playReplay, REPLAY_FIXTURES, REPLAY_RUNS } from './replay_runs';

setDefaultTimeout(240_000);

const recording = process.env.AGENTIC_RECORD_REPLAY === '1';

describe('recorded runs replay exactly', () => {
  for (const run of REPLAY_RUNS) {
    test(run.resumes ? `${run.name}: a checkpoint from before resumes into the same steps` : run.name, async () => {
      const out = await playReplay(run);
      const fixture = join(REPLAY_FIXTURES, `${run.name}.jsonl`);
      if (recording) {
        writeFileSync(fixture, `${metricsOf(out).join('\n')}\n`);
        for (const other of REPLAY_RUNS.filter((r) => r.resumes?.from === run.name)) {
          const checkpoint = join(out, 'checkpoints', `checkpoint-${other.resumes!.step}`);
          expect(existsSync(checkpoint)).toBe(true);
          cpSync(checkpoint, join(REPLAY_FIXTURES, `${run.name}-checkpoint-${other.resumes!.step}`), { recursive: true });
        }
        return;
      }
      const recorded = readFileSync(fixture, 'utf8')
        .split('\n')
        .filter((line) => line !== '');
      expect(metricsOf(out)).toEqual(recorded);
    });
  }

  test('the resumed run is the uninterrupted one (its log carries the steps before the checkpoint)', () => {
    for (const run of REPLAY_RUNS.filter((r) => r.resumes)) {
      const resumed = readFileSync(join(REPLAY_FIXTURES, `${run.name}.jsonl`), 'utf8');
      expect(resumed).toBe(readFileSync(join(REPLAY_FIXTURES, `${run.resumes!.from}.jsonl`), 'utf8'));
    }
  });
});
