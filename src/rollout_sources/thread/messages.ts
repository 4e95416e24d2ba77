/**
 * What the trainer's side (./trainer_side.ts) and the rollout thread (./in_thread.ts) say to each
 * other: requests one way, replies the other, matched by id.
 */
import type { AgenticConfig } from '../../config/schema';

export type ThreadRequest =
  | { type: 'init'; config: AgenticConfig; cwd: string; threads: number }
  | { type: 'weights'; version: number; weights: Float32Array[] }
  | { type: 'rollout'; batchSize: number }
  | { type: 'validate' }
  | { type: 'counters'; counters: number[] }
  | { type: 'logits'; ids: Int32Array }
  /** Test seam: the thread exits at once with this code, as a crash would. */
  | { type: 'exit'; code: number };

export type ThreadReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };
