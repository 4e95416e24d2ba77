/**
 * The warm start's cache: its base is a Hugging Face folder (warm_start.output_dir) with a
 * fingerprint of the settings that built it and a digest of the rows it was trained on, so a
 * later run with the same settings reuses it and other settings rebuild it.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { AgenticConfig } from '../../config/schema';
import { presetOf } from '../../model/load';
import { MODEL_PRESETS } from '../../model/presets';

export const FINGERPRINT_FILE = 'warm_start.json';

/** The settings a base depends on: everything that shapes its data or its training. */
export function warmStartFingerprint(config: AgenticConfig): string {
  const manager = config.train_env_manager;
  // rehearsal acts during RL, not on the base;
  // demonstrations only permits worked_examples and solution_labels, which are in the fingerprint themselves
  const { output_dir: _, enabled: __, rehearsal_coef: ___, rehearsal_episodes: ____, demonstrations: _____, ...rest } = config.warm_start;
  // bases built before the schedule and the labels were settings had a constant rate and no labels: they stay valid
  const { lr_scheduler_type: schedule, solution_labels: labels, ...settled } = rest;
  const settings = { ...settled, ...(schedule === 'constant' ? {} : { lr_scheduler_type: schedule }), ...(labels ? { solution_labels: true } : {}) };
  const relevant = {
    settings,
    pretrain: config.pretrain,
    // a preset's shape can change under the same name; a base of the old shape must not be reused
    preset: presetShape(config.pretrain),
    seed: config.seed,
    sequence_length: config.sequence_length,
    manager: { tags: manager.tags, num_env_groups: manager.num_env_groups, group_size: manager.group_size, partition: manager.num_groups_partition },
    envs: manager.tags.map((tag) => config.custom_envs[tag]),
  };
  return createHash('sha256').update(JSON.stringify(relevant)).digest('hex').slice(0, 16);
}

function presetShape(pretrain: string | null): object | null {
  try {
    const name = presetOf(pretrain);
    return name === null ? null : MODEL_PRESETS[name];
  } catch {
    return null; // an unknown preset fails where the model is loaded, with its own message
  }
}

/**
 * The folder of a base built from these settings, or null. With `data` (rowsDigest of the rows
 * these settings generate now), the base must also have been trained on exactly those rows: an
 * env whose prompts or notes changed between versions makes other rows under the same settings.
 */
export function existingBase(config: AgenticConfig, data?: string): string | null {
  const folder = resolve(config.warm_start.output_dir);
  const marker = join(folder, FINGERPRINT_FILE);
  if (!existsSync(marker)) return null;
  try {
    const recorded = JSON.parse(readFileSync(marker, 'utf8')) as { fingerprint?: unknown; data?: unknown };
    if (recorded.fingerprint !== warmStartFingerprint(config)) return null;
    return data === undefined || recorded.data === data ? folder : null;
  } catch {
    return null;
  }
}

/** A digest of training rows (token ids and masks), to tell whether a base was trained on them. */
export function rowsDigest(rows: { ids: readonly Int32Array[]; masks: readonly Uint8Array[] }): string {
  const hash = createHash('sha256');
  rows.ids.forEach((ids, i) => {
    hash.update(new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength));
    hash.update(rows.masks[i]!);
  });
  return hash.digest('hex').slice(0, 16);
}
