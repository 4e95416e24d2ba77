/**
 * applyLora, the one way a model gets its LoRA adapters: new ones seeded by (seed, layer,
 * projection) so that every user (the trainer's roles, the bench) draws the same bytes, and a PEFT
 * folder's adapters trained on, folded into the weights or served as a view, each giving the
 * logits PEFT computed.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { startBackend } from '../../src/engine/backend';
import { Rng } from '../../src/engine/rng';
import { tf } from '../../src/engine/tf';
import { checkWeights, readModelConfig } from '../../src/model/hf_folder';
import { parseTarget, type LoraSpec } from '../../src/model/lora';
import { adaptersMatch, applyLora } from '../../src/model/lora_adapters';
import { Qwen2Model } from '../../src/model/qwen2';
import { readCheckpoint } from '../../src/model/safetensors';
import { restoreBackendAfterFile } from '../helpers';
import { recordedLogits, type RecordedLogits, tinyConfig } from './tiny';

restoreBackendAfterFile();

beforeAll(async () => {
  await startBackend('cpu');
});

const fixtures = join(import.meta.dir, '../fixtures');

function fixtureModel(name: string): Qwen2Model {
  const folder = join(fixtures, name);
  const config = readModelConfig(folder);
  return Qwen2Model.fromWeights(config, checkWeights(readCheckpoint(folder).tensors, config, name));
}

async function worstGap(model: Qwen2Model, expected: RecordedLogits): Promise<number> {
  const ids = expected.ids;
  const t = tf.tensor2d(Int32Array.from(ids.flat()), [ids.length, ids[0]!.length], 'int32');
  const { hidden, present } = model.forward(t);
  const logits = model.logits(hidden);
  const ours = (await logits.data()) as Float32Array;
  tf.dispose([t, hidden, logits, ...present.flatMap((p) => [p.k, p.v])]);
  let worst = 0;
  expected.logits.flat(2).forEach((v, i) => (worst = Math.max(worst, Math.abs(v - ours[i]!))));
  return worst;
}

describe('applyLora', () => {
  const spec: LoraSpec = { rank: 3, alpha: 6, targets: parseTarget('q_proj,down_proj'), modulesToSave: [] };

  test('new adapters: A drawn from the stream (seed, lora-init, layer, projection), B zero; only they train', async () => {
    const config = tinyConfig();
    const model = applyLora(Qwen2Model.random(config, { seed: 1 }), { use: 'train', spec, folder: null, seed: 7 });
    expect(model.adapters.map((layer) => Object.keys(layer))).toEqual([
      ['q', 'down'],
      ['q', 'down'],
    ]);
    for (const [layer, p, inputs] of [
      [0, 'q', config.hidden_size],
      [1, 'down', config.intermediate_size],
    ] as const) {
      const rng = Rng.fromSeed(7, 'lora-init', layer, p);
      const expected = Float32Array.from({ length: inputs * spec.rank }, () => (2 * rng.float() - 1) / Math.sqrt(inputs));
      const adapter = model.adapters[layer]![p]!;
      expect(Array.from(await adapter.a.data())).toEqual(Array.from(expected));
      expect(Array.from(await adapter.b.data()).every((v) => v === 0)).toBe(true);
    }
    expect(model.trainedVariables).toHaveLength(8);
    expect(model.variables.filter((v) => v.trainable)).toHaveLength(8);
    expect(adaptersMatch(model, spec)).toBe(true);
    expect(adaptersMatch(model, { ...spec, rank: 4 })).toBe(false);
    expect(adaptersMatch(model, { ...spec, targets: parseTarget('q_proj') })).toBe(false);
    model.dispose();
  });

  test('targets that name no linear layer are one line; no spec and no folder leaves the model as it is', () => {
    const model = Qwen2Model.random(tinyConfig(), { seed: 1 });
    expect(() => applyLora(model, { use: 'train', spec: { ...spec, targets: parseTarget('k_proj$') }, folder: null, seed: 0 })).toThrow(
      "lora_target: 'k_proj$' matches no linear layer of this model",
    );
    expect(applyLora(model, { use: 'train', spec: null, folder: null, seed: 0 }).lora).toBeNull();
    expect(applyLora(model, { use: 'fold', folder: null, trainable: true }).lora).toBeNull();
    model.dispose();
  });

  test("a PEFT folder's adapters give PEFT's logits trained on, folded in, or as a view that leaves the model and the tensor count as they were", async () => {
    const folder = join(fixtures, 'qwen3_tiny_lora_modules');
    const peft = recordedLogits(folder);
    const base = recordedLogits(join(fixtures, 'qwen3_tiny'));

    const trained = applyLora(fixtureModel('qwen3_tiny'), { use: 'train', spec: null, folder, seed: 0 });
    expect(trained.lora?.modulesToSave).toEqual(['embed_tokens', 'lm_head']);
    expect(await worstGap(trained, peft)).toBeLessThan(1e-4);
    trained.dispose();

    const folded = applyLora(fixtureModel('qwen3_tiny'), { use: 'fold', folder, trainable: false });
    expect(folded.lora).toBeNull();
    expect(folded.variables.some((v) => v.trainable)).toBe(false);
    expect(await worstGap(folded, peft)).toBeLessThan(1e-4);
    folded.dispose();

    const served = fixtureModel('qwen3_tiny');
    const before = tf.memory().numTensors;
    const view = applyLora(served, { use: 'view', folder });
    expect(await worstGap(view, peft)).toBeLessThan(1e-4);
    expect(served.lora).toBeNull();
    expect(await worstGap(served, base)).toBeLessThan(1e-4);
    view.dispose();
    expect(tf.memory().numTensors).toBe(before);
    served.dispose();
  });
});
