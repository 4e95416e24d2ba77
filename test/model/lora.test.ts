/**
 * Modules trained whole beside LoRA adapters (ROLL's additional_target, PEFT's modules_to_save):
 * how the key reads, how a tied embedding is one module, and PEFT's folder written and read back,
 * with what such a folder may not hold refused in one line.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBackend } from '../../src/engine/backend';
import { tf } from '../../src/engine/tf';
import { checkWeights, readModelConfig } from '../../src/model/hf_folder';
import { canonicalModules, parseAdditionalTarget, readAdapterFolder, saveAdapterFolder } from '../../src/model/lora';
import { addAdapters, adaptersFrom } from '../../src/model/lora_adapters';
import { Qwen2Model } from '../../src/model/qwen2';
import { readCheckpoint, readSafetensors, writeSafetensors } from '../../src/model/safetensors';
import { scratch, restoreBackendAfterFile } from '../helpers';

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

/** A copy of a fixture adapter folder with its adapter_config.json edited. */
function editedCopy(name: string, edit: (config: Record<string, unknown>) => void): string {
  const folder = join(scratch(), name);
  cpSync(join(fixtures, name), folder, { recursive: true });
  const path = join(folder, 'adapter_config.json');
  const config = JSON.parse(readFileSync(path, 'utf8'));
  edit(config);
  writeFileSync(path, JSON.stringify(config));
  return folder;
}

describe('additional_target', () => {
  test('reads ROLL\u2019s comma-separated names (or a list, or PEFT\u2019s module paths) as the embedding and the head', () => {
    expect(parseAdditionalTarget('lm_head, embed_tokens')).toEqual(['embed_tokens', 'lm_head']);
    expect(parseAdditionalTarget(['model.embed_tokens', 'embed_tokens'])).toEqual(['embed_tokens']);
    expect(() => parseAdditionalTarget('embed_tokens,norm')).toThrow("'norm' cannot be trained whole beside the adapters: embed_tokens and lm_head can");
  });

  test('with tied embeddings either name is the one matrix, called embed_tokens', () => {
    expect(canonicalModules(['lm_head'], true)).toEqual(['embed_tokens']);
    expect(canonicalModules(['embed_tokens', 'lm_head'], true)).toEqual(['embed_tokens']);
    expect(canonicalModules(['lm_head', 'embed_tokens'], false)).toEqual(['embed_tokens', 'lm_head']);
    expect(canonicalModules(undefined, true)).toEqual([]);
  });
});

describe('a PEFT folder with modules_to_save', () => {
  test('written as PEFT writes it (a tied embedding under both names, ensure_weight_tying) and read back the same', async () => {
    const before = tf.memory().numTensors;
    for (const [base, name] of [
      ['llama_tiny', 'llama_tiny_lora_embed'],
      ['qwen3_tiny', 'qwen3_tiny_lora_modules'],
    ] as const) {
      const model = fixtureModel(base);
      const read = readAdapterFolder(join(fixtures, name), model.config.num_hidden_layers, model);
      addAdapters(model, read.spec, adaptersFrom(read), read.modules);
      const out = join(scratch(), name);
      const tied = model.config.tie_word_embeddings;
      await saveAdapterFolder(out, { spec: model.lora!, adapters: model.adapters, modules: model.savedModules(), tied, base: null });
      const config = JSON.parse(readFileSync(join(out, 'adapter_config.json'), 'utf8'));
      expect(config.modules_to_save).toEqual(tied ? ['embed_tokens'] : ['embed_tokens', 'lm_head']);
      expect(config.ensure_weight_tying).toBe(tied ? true : undefined);
      // the same tensors as PEFT's own save, bit for bit
      const theirs = readSafetensors(join(fixtures, name, 'adapter_model.safetensors')).tensors;
      const ours = readSafetensors(join(out, 'adapter_model.safetensors')).tensors;
      expect([...ours.keys()].sort()).toEqual([...theirs.keys()].sort());
      for (const [key, tensor] of theirs) expect(Array.from(ours.get(key)!.data)).toEqual(Array.from(tensor.data));
      const again = readAdapterFolder(out, model.config.num_hidden_layers, model);
      expect(again.spec).toEqual({ ...model.lora!, targets: [...(model.lora!.targets as string[])].sort() });
      model.dispose();
    }
    expect(tf.memory().numTensors).toBe(before);
  });

  test('what a tied model cannot hold, or a folder that does not match its config, is one line', () => {
    const model = fixtureModel('llama_tiny');
    const layers = model.config.num_hidden_layers;
    const read = (folder: string) => () => readAdapterFolder(folder, layers, model);
    // without ensure_weight_tying PEFT unties the head from the trained embedding
    expect(read(editedCopy('llama_tiny_lora_embed', (c) => (c.ensure_weight_tying = false)))).toThrow(
      'modules_to_save: on a model with tied embeddings PEFT unties the head from the embedding unless ensure_weight_tying is true',
    );
    expect(read(editedCopy('llama_tiny_lora_embed', (c) => (c.modules_to_save = ['embed_tokens', 'score'])))).toThrow(
      "modules_to_save: 'score' cannot be trained whole beside the adapters: embed_tokens and lm_head can",
    );
    // the tied matrix under two names that disagree
    const differ = editedCopy('llama_tiny_lora_embed', () => {});
    const file = join(differ, 'adapter_model.safetensors');
    const tensors = readSafetensors(file).tensors;
    tensors.get('base_model.model.lm_head.weight')!.data[5]! += 1;
    writeSafetensors(file, tensors);
    expect(read(differ)).toThrow("'base_model.model.model.embed_tokens.weight' and 'base_model.model.lm_head.weight' differ, but the model ties them");
    // a module's tensor without modules_to_save naming it
    expect(read(editedCopy('llama_tiny_lora_embed', (c) => (c.modules_to_save = null)))).toThrow(
      "unexpected tensor 'base_model.model.lm_head.weight' (not an adapter of this config's target_modules or modules_to_save)",
    );
    model.dispose();
  });
});
