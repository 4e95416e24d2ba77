/**
 * Which checkpoint a run resumes from, and what it refuses: `auto` skips a corrupt or partial
 * newest checkpoint with a warning and still ends identical to the uninterrupted run; a checkpoint
 * named explicitly must be intact (one line naming the folder and the problem); max_ckpt_to_keep
 * prunes; a run clears what cannot belong to it (half-written folders of dead writers, checkpoints
 * of another history).
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { removeAbandonedTemporaries } from '../../src/checkpoint/folders';
import { newestCheckpoint, openCheckpoint } from '../../src/checkpoint/load';
import { MANIFEST_FILE, seal } from '../../src/checkpoint/manifest';
import { CheckpointError, ConfigError, ModelError } from '../../src/errors';
import { readCheckpoint, writeSafetensors } from '../../src/model/safetensors';
import { scratch } from '../helpers';
import { configOf, hostWithVowels, microPolicyFolder, vowelsYaml } from '../train/helpers';
import { runIn, type TrainedRun } from './helpers';

setDefaultTimeout(60_000);

const host = hostWithVowels();
let pretrain = '';
/** Three steps with a checkpoint after each: checkpoint-1, -2, -3. */
let straight: TrainedRun;
const SETTINGS = ['max_steps=3', 'save_steps=1'];

beforeAll(async () => {
  pretrain = await microPolicyFolder();
  straight = await runIn(scratch(), host, pretrain, SETTINGS);
});

/** A copy of the straight run's output folder, to damage. */
function copyOfRun(): string {
  const out = scratch();
  cpSync(straight.out, out, { recursive: true });
  return out;
}

function flipByte(path: string): void {
  const bytes = readFileSync(path);
  bytes[bytes.length - 3]! ^= 0x01;
  writeFileSync(path, bytes);
}

const checkpoints = (out: string) =>
  readdirSync(join(out, 'checkpoints'))
    .filter((n) => !n.startsWith('.'))
    .sort();

describe('auto', () => {
  test('skips a corrupted newest checkpoint with a warning, resumes from the one before, and still ends identical', async () => {
    const out = copyOfRun();
    flipByte(join(out, 'checkpoints', 'checkpoint-3', 'actor', 'model.safetensors'));
    rmSync(join(out, 'model'), { recursive: true });
    const resumed = await runIn(out, host, pretrain, [...SETTINGS, 'resume_from_checkpoint=auto']);
    expect(resumed.result.resumedFrom).toBe(join(out, 'checkpoints', 'checkpoint-2'));
    expect(resumed.warnings[0]).toBe(
      `skipping ${join(out, 'checkpoints', 'checkpoint-3')}: actor/model.safetensors does not match its checksum in manifest.json`,
    );
    expect(readFileSync(join(out, 'model', 'model.safetensors')).equals(readFileSync(join(straight.out, 'model', 'model.safetensors')))).toBe(true);
    expect(checkpoints(out)).toEqual(['checkpoint-1', 'checkpoint-2', 'checkpoint-3']);
  });

  test('skips partial and damaged checkpoints, newest first, saying why for each', () => {
    const root = join(copyOfRun(), 'checkpoints');
    rmSync(join(root, 'checkpoint-3', 'manifest.json'));
    truncateSync(join(root, 'checkpoint-2', 'optimizer.safetensors'), 100);
    const warnings: string[] = [];
    expect(newestCheckpoint(root, (line) => warnings.push(line))?.step).toBe(1);
    expect(warnings).toEqual([
      `skipping ${join(root, 'checkpoint-3')}: incomplete checkpoint (no manifest.json)`,
      expect.stringMatching(/checkpoint-2: optimizer\.safetensors has 100 bytes, the manifest says \d+$/),
    ]);
    rmSync(join(root, 'checkpoint-1', 'critic'), { recursive: true, force: true });
    rmSync(join(root, 'checkpoint-1', 'trainer_state.json'));
    expect(newestCheckpoint(root, () => {})).toBeNull();
  });

  test('(or true) with no checkpoint at all starts at step 0', async () => {
    const run = await runIn(scratch(), host, pretrain, ['max_steps=1', 'resume_from_checkpoint=true']);
    expect(run.result.resumedFrom).toBeNull();
    expect(run.result.steps).toBe(1);
    expect(checkpoints(run.out)).toEqual(['checkpoint-1']);
  });
});

describe('a checkpoint named explicitly', () => {
  const damage: Array<[string, (folder: string) => void, RegExp]> = [
    ['a flipped byte', (f) => flipByte(join(f, 'actor', 'model.safetensors')), /: actor\/model\.safetensors does not match its checksum in manifest\.json$/],
    ['no manifest', (f) => rmSync(join(f, 'manifest.json')), /: incomplete checkpoint \(no manifest\.json\)$/],
    ['a missing file', (f) => rmSync(join(f, 'trainer_state.json')), /: trainer_state\.json is missing$/],
    ['a manifest that is not JSON', (f) => writeFileSync(join(f, 'manifest.json'), '{"format": '), /: unreadable manifest\.json \(.+\)$/],
    ['no folder at all', (f) => rmSync(f, { recursive: true }), /: no such checkpoint folder$/],
  ];
  for (const [name, spoil, message] of damage) {
    test(`is refused with one line: ${name}`, () => {
      const folder = join(copyOfRun(), 'checkpoints', 'checkpoint-2');
      spoil(folder);
      let error: unknown;
      try {
        openCheckpoint(folder);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(CheckpointError);
      const text = (error as Error).message;
      expect(text.startsWith(folder)).toBe(true);
      expect(text).toMatch(message);
      expect(text).not.toContain('\n');
    });
  }

  test('is a checkpoint, not the folder that holds them', () => {
    const root = join(straight.out, 'checkpoints');
    expect(() => openCheckpoint(root)).toThrow(
      new CheckpointError(`${root}: a folder of checkpoints, not one; name one of them (checkpoint-3) or resume with auto`),
    );
  });

  test('by resume_from_checkpoint, is refused before anything runs, naming the key', async () => {
    const out = copyOfRun();
    const folder = join(out, 'checkpoints', 'checkpoint-2');
    flipByte(join(folder, 'optimizer.safetensors'));
    await expect(runIn(out, host, pretrain, [...SETTINGS, `resume_from_checkpoint=${folder}`])).rejects.toThrow(
      new CheckpointError(`resume_from_checkpoint: ${folder}: optimizer.safetensors does not match its checksum in manifest.json`),
    );
    expect(checkpoints(out)).toEqual(['checkpoint-1', 'checkpoint-2', 'checkpoint-3']);
  });

  test('that is beyond max_steps, or lacks a role the config needs, is one line naming the key', async () => {
    const folder = join(straight.out, 'checkpoints', 'checkpoint-3');
    await expect(runIn(scratch(), host, pretrain, ['max_steps=2', `resume_from_checkpoint=${folder}`])).rejects.toThrow(
      new ConfigError(`max_steps: 2 is below the step of ${folder} (3); raise it to continue that run`),
    );
    await expect(runIn(scratch(), host, pretrain, [...SETTINGS, 'adv_estimator=gae', `resume_from_checkpoint=${folder}`])).rejects.toThrow(
      /^adv_estimator: gae needs a critic, and .*checkpoint-3 has none \(its run did not train one\); resume with the run's adv_estimator$/,
    );
  });

  test('resume_from_checkpoint takes false, auto, true or a path; a word like latest is refused', async () => {
    for (const word of ['latest', 'Auto', 'none']) {
      await expect(configOf(vowelsYaml(pretrain), host, [`resume_from_checkpoint=${word}`])).rejects.toThrow(
        'resume_from_checkpoint: expected false, auto (the newest complete checkpoint) or the path of a checkpoint folder',
      );
    }
    expect((await configOf(vowelsYaml(pretrain), host, ['resume_from_checkpoint=runs/a/checkpoint-5'])).resume_from_checkpoint).toBe('runs/a/checkpoint-5');
  });
});

describe('the checkpoint folder', () => {
  test('max_ckpt_to_keep keeps only the newest; null keeps all', async () => {
    const kept = await runIn(scratch(), host, pretrain, [...SETTINGS, 'checkpoint_config.max_ckpt_to_keep=2']);
    expect(checkpoints(kept.out)).toEqual(['checkpoint-2', 'checkpoint-3']);
    expect(checkpoints(straight.out)).toEqual(['checkpoint-1', 'checkpoint-2', 'checkpoint-3']);
  });

  test("a fresh run over an earlier run's checkpoints is refused; overwrite_output_dir=true replaces them, and says so", async () => {
    const out = copyOfRun();
    const refused = runIn(out, host, pretrain, ['max_steps=1', 'save_steps=0']);
    await expect(refused).rejects.toThrow(
      new ConfigError(
        `checkpoint_config.output_dir: ${join(out, 'checkpoints')} holds an earlier run (3 checkpoints, the newest checkpoint-3); continue it with \`agentic resume\` or resume_from_checkpoint=auto, replace it with overwrite_output_dir=true, or choose another exp_name`,
      ),
    );
    expect(checkpoints(out)).toEqual(['checkpoint-1', 'checkpoint-2', 'checkpoint-3']);
    const fresh = await runIn(out, host, pretrain, ['max_steps=1', 'save_steps=0', 'overwrite_output_dir=true']);
    expect(fresh.warnings).toContain(
      `overwrite_output_dir: removed the earlier run's checkpoint-1, checkpoint-2, checkpoint-3 from ${join(out, 'checkpoints')}`,
    );
    expect(checkpoints(out)).toEqual(['checkpoint-1']);
  });

  test('half-written folders of writers that are gone are removed; those of live ones stay', () => {
    const root = scratch();
    const dead = `.checkpoint-4.tmp-${2 ** 22 + 17}-abc-1`;
    const live = `.checkpoint-5.tmp-${process.pid}-abc-2`;
    for (const name of [dead, live, 'checkpoint-3']) mkdirSync(join(root, name));
    expect(removeAbandonedTemporaries(root)).toBe(1);
    expect(readdirSync(root).sort()).toEqual([live, 'checkpoint-3']);
    expect(existsSync(join(root, dead))).toBe(false);
  });
});

/** Every file under a folder with its bytes, to show that a failed start changed none of them. */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      files.set(path, createHash('sha256').update(readFileSync(path)).digest('hex'));
    }
  }
  return files;
}

describe('a start that fails leaves the earlier run as it was', () => {
  test('a truncated pretrain, even with overwrite_output_dir=true: checkpoints, logs, model and config record untouched', async () => {
    const out = copyOfRun();
    const before = snapshot(out);
    const broken = scratch();
    cpSync(pretrain, broken, { recursive: true });
    truncateSync(join(broken, 'model.safetensors'), 1000);
    await expect(runIn(out, host, broken, ['max_steps=1', 'overwrite_output_dir=true'])).rejects.toThrow(ModelError);
    expect(snapshot(out)).toEqual(before);
  });

  test('a failed fresh start writes nothing: no output folder appears', async () => {
    const out = join(scratch(), 'new_run');
    await expect(runIn(out, host, join(scratch(), 'no_model_here'), ['max_steps=1'])).rejects.toThrow(ModelError);
    expect(existsSync(out)).toBe(false);
  });

  test('a resume whose checkpoint holds NaN weights (sealed, so its checksums match) is refused before the run record is touched', async () => {
    const out = copyOfRun();
    const folder = join(out, 'checkpoints', 'checkpoint-2');
    const weights = join(folder, 'actor', 'model.safetensors');
    const { tensors } = readCheckpoint(join(folder, 'actor'));
    const poisoned = new Map(
      [...tensors].map(([name, t]) => [name, { shape: t.shape, data: name === 'model.norm.weight' ? t.data.map(() => Number.NaN) : t.data }]),
    );
    writeSafetensors(weights, poisoned);
    rmSync(join(folder, MANIFEST_FILE));
    seal(folder, 2);
    const before = snapshot(out);
    await expect(runIn(out, host, pretrain, [...SETTINGS, `resume_from_checkpoint=${folder}`])).rejects.toThrow(
      new ModelError(`${weights}: tensor 'model.norm.weight' holds NaN at index 0: the weights are damaged or come from a diverged run`),
    );
    expect(snapshot(out)).toEqual(before);
  });

  test('an output folder that is a file, or cannot be created, is one line naming the key; nothing is written', async () => {
    const dir = scratch({ taken: 'a file' });
    await expect(runIn(join(dir, 'taken'), host, pretrain, ['max_steps=1'])).rejects.toThrow(
      new ConfigError(`output_dir: cannot write to ${join(dir, 'taken')}: ${join(dir, 'taken')} is a file, not a folder`),
    );
    await expect(runIn(join(dir, 'taken', 'run'), host, pretrain, ['max_steps=1'])).rejects.toThrow(
      new ConfigError(`output_dir: cannot write to ${join(dir, 'taken', 'run')}: ${join(dir, 'taken')} is a file, not a folder`),
    );
    await expect(runIn('/proc/agentic_nope/run', host, pretrain, ['max_steps=1'])).rejects.toThrow(
      new ConfigError('output_dir: cannot write to /proc/agentic_nope/run: /proc is not writable (ENOENT)'),
    );
    await expect(runIn(join(dir, 'run'), host, pretrain, ['max_steps=1', `logging_dir=${join(dir, 'taken')}`])).rejects.toThrow(
      new ConfigError(`logging_dir: cannot write to ${join(dir, 'taken')}: ${join(dir, 'taken')} is a file, not a folder`),
    );
    expect(readdirSync(dir)).toEqual(['taken']);
  });
});
