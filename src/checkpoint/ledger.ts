/**
 * distributed_ledger.json: the BullMQ jobs whose rows a distributed run's checkpoint counts
 * (src/rollout_sources/distributed/ledger.ts), one entry per job id: the steps trained since the previous
 * checkpoint and the batches the checkpoint carries. A resumed run never ingests them again, and
 * deletes any still in Redis. The jobs of earlier checkpoints were deleted from Redis once those
 * were on disk: final_jobs counts them (absent in ledgers that still list every job).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { CheckpointError, firstLine } from '../errors';
import type { LedgerState } from '../train/rollout_source';
import { displayPath } from '../util/paths';

export const LEDGER_FILE = 'distributed_ledger.json';

const Entry = z.strictObject({
  id: z.string().min(1),
  step: z.int().min(0),
  worker: z.string(),
  version: z.int().min(0),
  history: z.string().optional(),
  attempts_started: z.int().min(0),
  attempts_made: z.int().min(0),
  stalled_counter: z.int().min(0),
  trained: z.boolean(),
});

const LedgerFile = z.strictObject({ final_jobs: z.int().min(0).optional(), jobs: z.array(Entry) });

export function ledgerJson(ledger: LedgerState): string {
  return `${JSON.stringify({ final_jobs: ledger.finalJobs, jobs: ledger.jobs }, null, 1)}\n`;
}

export function readLedger(path: string): LedgerState {
  let parsed: z.output<typeof LedgerFile>;
  try {
    parsed = LedgerFile.parse(JSON.parse(readFileSync(path, 'utf8')));
  } catch (error) {
    throw new CheckpointError(
      `${displayPath(path)}: ${error instanceof z.ZodError ? `${error.issues[0]!.path.join('.')}: ${error.issues[0]!.message}` : firstLine(error)}`,
    );
  }
  const seen = new Set<string>();
  for (const { id } of parsed.jobs) {
    if (seen.has(id)) throw new CheckpointError(`${displayPath(path)}: job ${id} is counted twice`);
    seen.add(id);
  }
  return { jobs: parsed.jobs, finalJobs: parsed.final_jobs ?? 0 };
}
