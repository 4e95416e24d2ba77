import { beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBackend } from '../../src/engine/backend';
import { tf } from '../../src/engine/tf';
import { modelConfig } from '../../src/model/config';
import { defaultTokenizer } from '../../src/model/default_tokenizer';
import { checkWeights, loadHfFolder, readModelConfig, saveHfFolder } from '../../src/model/hf_folder';
import { readAdapterFolder } from '../../src/model/lora';
import { addAdapters, withAdapters, withoutAdapters, adaptersFrom } from '../../src/model/lora_adapters';
import { Qwen2Model } from '../../src/model/qwen2';
import { readCheckpoint } from '../../src/model/safetensors';
import { scratch, restoreBackendAfterFile } from '../helpers';
import { recordedLogits } from './tiny';

restoreBackendAfterFile();

beforeAll(async () => {
  await startBackend('cpu');
});

const fixtures = join(import.meta.dir, '../fixtures');

async function logitsOf(model: Qwen2Model, ids: number[][]): Promise<Float32Array> {
  const t = tf.tensor2d(Int32Array.from(ids.flat()), [ids.length, ids[0]!.length], 'int32');
  const { hidden, present } = model.forward(t);
  const logits = model.logits(hidden);
  const data = (await logits.data()) as Float32Array;
  tf.dispose([t, hidden, logits, ...present.flatMap((p) => [p.k, p.v])]);
  return data;
}

function worstGap(expected: number[][][], ours: Float32Array): number {
  let worst = 0;
  expected.flat(2).forEach((v, i) => (worst = Math.max(worst, Math.abs(v - ours[i]!))));
  return worst;
}

function fixtureModel(name: string): { model: Qwen2Model; folder: string } {
  const folder = join(fixtures, name);
  const config = readModelConfig(folder);
  const model = Qwen2Model.fromWeights(config, checkWeights(readCheckpoint(folder).tensors, config, name));
  return { model, folder };
}

describe('Qwen3 and Llama agree with transformers', () => {
  for (const [name, type, architecture] of [
    ['qwen3_tiny', 'qwen3', 'Qwen3ForCausalLM'],
    ['llama_tiny', 'llama', 'LlamaForCausalLM'],
  ] as const) {
    test(`${name}: the logits of a tiny random model saved by transformers (1e-4); our save reads back the same`, async () => {
      const { model, folder } = fixtureModel(name);
      expect(model.config.model_type).toBe(type);
      const fixture = recordedLogits(folder);
      expect(worstGap(fixture.logits, await logitsOf(model, fixture.ids))).toBeLessThan(1e-4);

      const saved = join(scratch(), name);
      await saveHfFolder(saved, { config: model.config, weights: await model.toWeights(), tokenizer: defaultTokenizer() });
      const json = JSON.parse(readFileSync(join(saved, 'config.json'), 'utf8'));
      expect([json.model_type, json.architectures]).toEqual([type, [architecture]]);
      const again = loadHfFolder(saved);
      const reloaded = Qwen2Model.fromWeights(again.config, again.weights);
      expect(Array.from(await logitsOf(reloaded, fixture.ids))).toEqual(Array.from(await logitsOf(model, fixture.ids)));
      [model, reloaded].forEach((m) => m.dispose());
    });
  }

  test("Qwen3's per-head q/k norms and Llama 3's RoPE scaling are what make the logits agree", async () => {
    // Without them the same weights miss the 1e-4 agreement: the fixtures check both features.
    const qwen3 = fixtureModel('qwen3_tiny');
    const noNorm = withoutAdapters(qwen3.model);
    for (const block of noNorm.blocks) block.qkNorm = null;
    const fixture = recordedLogits(qwen3.folder);
    expect(worstGap(fixture.logits, await logitsOf(noNorm, fixture.ids))).toBeGreaterThan(1e-4);
    qwen3.model.dispose();

    const folder = join(fixtures, 'llama_tiny');
    const config = readModelConfig(folder);
    const plain = modelConfig({ ...config, rope_parameters: { rope_type: 'default', rope_theta: 10000 } });
    const model = Qwen2Model.fromWeights(plain, readCheckpoint(folder).tensors);
    expect(worstGap(recordedLogits(folder).logits, await logitsOf(model, recordedLogits(folder).ids))).toBeGreaterThan(1e-4);
    model.dispose();
  });

  test('a LoRA adapter saved by PEFT gives the logits PEFT computed (1e-4)', async () => {
    const { model } = fixtureModel('llama_tiny');
    const folder = join(fixtures, 'llama_tiny_lora');
    const adapter = readAdapterFolder(folder, model.config.num_hidden_layers, model);
    expect(adapter.spec).toEqual({ rank: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'down_proj'], modulesToSave: [] });
    addAdapters(model, adapter.spec, adaptersFrom(adapter));
    const fixture = recordedLogits(folder);
    expect(worstGap(fixture.logits, await logitsOf(model, fixture.ids))).toBeLessThan(1e-4);
    model.dispose();
  });

  // modules_to_save (ROLL's additional_target): a tied embedding trained once, and an untied
  // embedding and head trained apart; the base without the adapter keeps its own values
  for (const [base, name, modules] of [
    ['llama_tiny', 'llama_tiny_lora_embed', ['embed_tokens']],
    ['qwen3_tiny', 'qwen3_tiny_lora_modules', ['embed_tokens', 'lm_head']],
  ] as const) {
    test(`an adapter PEFT saved with modules_to_save gives PEFT's logits (${name}, 1e-4)`, async () => {
      const { model } = fixtureModel(base);
      const folder = join(fixtures, name);
      const adapter = readAdapterFolder(folder, model.config.num_hidden_layers, model);
      expect(adapter.spec.modulesToSave).toEqual([...modules]);
      addAdapters(model, adapter.spec, adaptersFrom(adapter), adapter.modules);
      const fixture = recordedLogits(folder);
      expect(worstGap(fixture.logits, await logitsOf(model, fixture.ids))).toBeLessThan(1e-4);
      // without the modules the adapter's logits are missed: the fixture checks them
      const adaptersAlone = withAdapters(model, { ...adapter.spec, modulesToSave: [] }, adaptersFrom(adapter));
      expect(worstGap(fixture.logits, await logitsOf(adaptersAlone, fixture.ids))).toBeGreaterThan(1e-2);
      const plain = withoutAdapters(model);
      expect(worstGap(recordedLogits(join(fixtures, base)).logits, await logitsOf(plain, fixture.ids))).toBeLessThan(1e-4);
      adaptersAlone.dispose();
      model.dispose();
    });
  }
});

describe('which architecture a config.json describes', () => {
  const base = { vocab_size: 8, hidden_size: 8, intermediate_size: 8, num_hidden_layers: 1, num_attention_heads: 2 };
  test('model_type, else the architecture, else qwen2; each family has its bias default', () => {
    expect(modelConfig({ ...base, model_type: 'llama' })).toMatchObject({ model_type: 'llama', attention_bias: false });
    expect(modelConfig({ ...base, architectures: ['Qwen3ForCausalLM'] })).toMatchObject({ model_type: 'qwen3', attention_bias: false });
    expect(modelConfig({ ...base, architectures: ['LlamaForTokenClassification'] })).toMatchObject({ model_type: 'llama' });
    expect(modelConfig(base)).toMatchObject({ model_type: 'qwen2', attention_bias: true });
  });

  test('what the forward pass does not compute is refused in one line', () => {
    expect(() => modelConfig({ ...base, model_type: 'mistral' })).toThrow("model_type 'mistral' is not supported (agentic reads qwen2, qwen3, llama)");
    expect(() => modelConfig({ ...base, architectures: ['GPT2LMHeadModel'] })).toThrow("architectures 'GPT2LMHeadModel' is not supported");
    expect(() => modelConfig({ ...base, model_type: 'llama', attention_bias: true })).toThrow('attention_bias: llama with projection biases is not supported');
    expect(() => modelConfig({ ...base, model_type: 'llama', mlp_bias: true })).toThrow('biases on the MLP projections are not supported');
    expect(() => modelConfig({ ...base, rope_scaling: { rope_type: 'llama3', factor: 8 } })).toThrow('rope_scaling.low_freq_factor');
  });
});
