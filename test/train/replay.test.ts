/**
 * The same seed gives the same run, bit for bit, across refactors of the step: short runs recorded
 * earlier (test/fixtures/replay, see ./replay_runs.ts) are played again and compared exactly, and a
 * checkpoint written by the recording code resumes into the recorded run's last steps.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableCores } from '../../src/engine/cores';
import { findBlas } from '../../src/engine/blas';
import { missing } from '../system_tools';
import { metricsOf, playReplay, REPLAY_FIXTURES, REPLAY_RUNS, type ReplayRun } from './replay_runs';

setDefaultTimeout(240_000);

const recording = process.env.AGENTIC_RECORD_REPLAY === '1';
// the BLAS runs pin OpenBLAS
const noOpenBlas = missing('openblas');

/**
 * What a BLAS run's bits depend on: the library's build (OpenBLAS's config names the CPU kernel
 * it picked) and the threads; '' for a run without one.
 */
function blasKey(run: ReplayRun): string {
  if (!run.blas) return '';
  // a library asked for by name is found, or refused with a ConfigError
  const library = findBlas(run.blas)!;
  return `${library.detail ?? library.file}; ${availableCores().count} cores`;
}

describe('recorded runs replay exactly', () => {
  for (const run of REPLAY_RUNS) {
    const skip = run.blas !== undefined && noOpenBlas;
    test.skipIf(skip)(run.resumes ? `${run.name}: a checkpoint from before resumes into the same steps` : run.name, async () => {
      const key = blasKey(run);
      const out = await playReplay(run);
      const fixture = join(REPLAY_FIXTURES, `${run.name}.jsonl`);
      const keyFile = join(REPLAY_FIXTURES, `${run.name}.blas`);
      if (recording) {
        writeFileSync(fixture, `${metricsOf(out).join('\n')}\n`);
        if (key) writeFileSync(keyFile, `${key}\n`);
        for (const other of REPLAY_RUNS.filter((r) => r.resumes?.from === run.name)) {
          const checkpoint = join(out, 'checkpoints', `checkpoint-${other.resumes!.step}`);
          expect(existsSync(checkpoint)).toBe(true);
          cpSync(checkpoint, join(REPLAY_FIXTURES, `${run.name}-checkpoint-${other.resumes!.step}`), { recursive: true });
        }
        return;
      }
      if (key && readFileSync(keyFile, 'utf8').trim() !== key) {
        // another build or CPU kernel: its bits are its own, so the run must at least repeat itself
        console.log(`replay ${run.name}: recorded on ${readFileSync(keyFile, 'utf8').trim()}, here ${key}: checking it repeats instead`);
        expect(metricsOf(await playReplay(run))).toEqual(metricsOf(out));
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
