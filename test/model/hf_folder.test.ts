import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelError } from '../../src/errors';
import { modelConfig, type ModelConfig } from '../../src/model/config';
import { defaultTokenizer } from '../../src/model/default_tokenizer';
import { expectedWeightShapes, loadHfFolder, saveHfFolder } from '../../src/model/hf_folder';
import { elementCount, readSafetensors, writeSafetensors, type Weights } from '../../src/model/safetensors';
import { scratch } from '../helpers';

const tokenizer = defaultTokenizer();

function tinyConfig(overrides: Record<string, unknown> = {}): ModelConfig {
  return modelConfig({
    vocab_size: tokenizer.vocabSize,
    hidden_size: 8,
    intermediate_size: 12,
    num_hidden_layers: 2,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    eos_token_id: tokenizer.eosTokenId,
    ...overrides,
  });
}

/** Weights with distinct, deterministic values (not random: the test needs none). */
function weightsFor(config: ModelConfig): Weights {
  const weights: Weights = new Map();
  let k = 0;
  for (const [name, shape] of expectedWeightShapes(config)) {
    const data = new Float32Array(elementCount(shape));
    for (let i = 0; i < data.length; i++) data[i] = Math.sin(++k) * 0.5;
    weights.set(name, { shape, data });
  }
  return weights;
}

async function savedFolder(config = tinyConfig(), dtype = 'fp32'): Promise<string> {
  const dir = join(scratch(), 'model');
  await saveHfFolder(dir, { config, weights: weightsFor(config), tokenizer, dtype });
  return dir;
}

async function errorOf(fn: () => unknown): Promise<string> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ModelError);
    expect((error as Error).message).not.toContain('\n');
    return (error as Error).message;
  }
  throw new Error('expected a ModelError');
}

describe('the Qwen2 tensor layout', () => {
  test('names and [out, in] shapes, with grouped key/value heads', () => {
    const shapes = expectedWeightShapes(tinyConfig());
    expect(shapes.get('model.embed_tokens.weight')).toEqual([tokenizer.vocabSize, 8]);
    expect(shapes.get('model.layers.1.self_attn.q_proj.weight')).toEqual([8, 8]);
    expect(shapes.get('model.layers.1.self_attn.k_proj.weight')).toEqual([4, 8]);
    expect(shapes.get('model.layers.1.self_attn.v_proj.bias')).toEqual([4]);
    expect(shapes.get('model.layers.0.self_attn.o_proj.weight')).toEqual([8, 8]);
    expect(shapes.get('model.layers.0.mlp.down_proj.weight')).toEqual([8, 12]);
    expect(shapes.get('model.layers.0.mlp.gate_proj.weight')).toEqual([12, 8]);
    expect(shapes.get('lm_head.weight')).toEqual([tokenizer.vocabSize, 8]);
    expect(shapes.size).toBe(1 + 2 * 12 + 1 + 1);
  });

  test('tied embeddings drop lm_head; no attention bias drops the q/k/v biases', () => {
    const shapes = expectedWeightShapes(tinyConfig({ tie_word_embeddings: true, attention_bias: false }));
    expect(shapes.has('lm_head.weight')).toBe(false);
    expect([...shapes.keys()].some((n) => n.endsWith('.bias'))).toBe(false);
    expect(shapes.size).toBe(1 + 2 * 9 + 1);
  });
});

describe('save and load', () => {
  test('fp32 round trip is exact, with config, tokenizer and generation config', async () => {
    const config = tinyConfig();
    const dir = await savedFolder(config);
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
    const loaded = loadHfFolder(dir);
    expect(loaded.config).toMatchObject(config);
    const original = weightsFor(config);
    expect([...loaded.weights.keys()]).toEqual([...expectedWeightShapes(config).keys()]);
    for (const [name, tensor] of original) expect(Array.from(loaded.weights.get(name)!.data)).toEqual(Array.from(tensor.data));
    expect(loaded.generationConfig).toEqual({ eos_token_id: tokenizer.eosTokenId, pad_token_id: tokenizer.padTokenId });
    expect(loaded.tokenizer.encode('<|im_start|>user\nhi')).toEqual(tokenizer.encode('<|im_start|>user\nhi'));
    expect(loaded.tokenizer.chatTemplate).toBe(tokenizer.chatTemplate);
    const json = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(json).toMatchObject({ architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', torch_dtype: 'float32', hidden_size: 8 });
  });

  test('bf16 saves half the bytes and loads within bfloat16 precision', async () => {
    const config = tinyConfig({ tie_word_embeddings: true });
    const dir = await savedFolder(config, 'bf16');
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).torch_dtype).toBe('bfloat16');
    const loaded = loadHfFolder(dir);
    expect(loaded.weights.has('lm_head.weight')).toBe(false);
    for (const [name, tensor] of weightsFor(config)) {
      const got = loaded.weights.get(name)!.data;
      tensor.data.forEach((v, i) => expect(Math.abs(got[i]! - v)).toBeLessThanOrEqual(Math.abs(v) / 256));
    }
  });

  test('saving over a folder replaces it whole; a failed save leaves the old folder and no temporary files', async () => {
    const config = tinyConfig();
    const dir = await savedFolder(config);
    const before = readFileSync(join(dir, 'model.safetensors'));
    const broken = weightsFor(config);
    broken.set('model.norm.weight', { shape: [8], data: new Float32Array(3) });
    expect(await errorOf(() => saveHfFolder(dir, { config, weights: broken, tokenizer }))).toContain(
      "tensor 'model.norm.weight': 3 values do not fill shape [8]",
    );
    expect(readFileSync(join(dir, 'model.safetensors')).equals(before)).toBe(true);
    expect(readdirSync(join(dir, '..'))).toEqual(['model']);
    await saveHfFolder(dir, { config, weights: weightsFor(config), tokenizer, dtype: 'fp16' });
    expect(readdirSync(join(dir, '..'))).toEqual(['model']);
    expect(readSafetensors(join(dir, 'model.safetensors')).tensors.size).toBe(expectedWeightShapes(config).size);
  });

  test('a sharded checkpoint loads like a single file', async () => {
    const config = tinyConfig();
    const dir = await savedFolder(config);
    const weights = readSafetensors(join(dir, 'model.safetensors')).tensors;
    const names = [...weights.keys()];
    const half = Math.floor(names.length / 2);
    const shards = [names.slice(0, half), names.slice(half)];
    const weight_map: Record<string, string> = {};
    shards.forEach((shard, i) => {
      const file = `model-0000${i + 1}-of-00002.safetensors`;
      writeSafetensors(join(dir, file), new Map(shard.map((n) => [n, weights.get(n)!])));
      for (const n of shard) weight_map[n] = file;
    });
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map }));
    rmSync(join(dir, 'model.safetensors'));
    const loaded = loadHfFolder(dir);
    for (const [name, tensor] of weightsFor(config)) expect(Array.from(loaded.weights.get(name)!.data)).toEqual(Array.from(tensor.data));
  });
});

describe('validation errors name the file and the tensor or key', () => {
  test('a scaled RoPE, in either spelling, is refused in one line', async () => {
    const dir = await savedFolder(tinyConfig());
    const path = join(dir, 'config.json');
    const json = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...json, rope_parameters: { rope_type: 'default', rope_theta: 10000 }, rope_scaling: { type: 'linear', factor: 2 } }));
    expect(await errorOf(() => loadHfFolder(dir))).toBe(`${path}: rope_scaling: rope type 'linear' is not supported (the default RoPE and llama3 are)`);
  });

  test('missing tensor, wrong shape, unexpected tensor', async () => {
    const config = tinyConfig();
    const dir = await savedFolder(config);
    const file = join(dir, 'model.safetensors');
    const weights = weightsFor(config);

    weights.delete('model.layers.1.mlp.up_proj.weight');
    writeSafetensors(file, weights);
    expect(await errorOf(() => loadHfFolder(dir))).toBe(
      `${file}: tensor 'model.layers.1.mlp.up_proj.weight' is missing (expected shape [12, 8] for this config)`,
    );

    weights.set('model.layers.1.mlp.up_proj.weight', { shape: [8, 12], data: new Float32Array(96) });
    writeSafetensors(file, weights);
    expect(await errorOf(() => loadHfFolder(dir))).toBe(
      `${file}: tensor 'model.layers.1.mlp.up_proj.weight' has shape [8, 12], expected [12, 8] for this config`,
    );

    weights.set('model.layers.1.mlp.up_proj.weight', { shape: [12, 8], data: new Float32Array(96) });
    weights.set('model.layers.0.self_attn.q_norm.weight', { shape: [4], data: new Float32Array(4) });
    writeSafetensors(file, weights);
    expect(await errorOf(() => loadHfFolder(dir))).toBe(
      `${file}: unexpected tensor 'model.layers.0.self_attn.q_norm.weight' (not part of a qwen2 model with this config)`,
    );

    weights.delete('model.layers.0.self_attn.q_norm.weight');
    weights.set('model.layers.0.self_attn.rotary_emb.inv_freq', { shape: [2], data: new Float32Array(2) });
    writeSafetensors(file, weights);
    expect(loadHfFolder(dir).weights.has('model.layers.0.self_attn.rotary_emb.inv_freq')).toBe(false);
  });

  test('weights that hold NaN or an infinity are refused, naming the first such tensor and index', async () => {
    const config = tinyConfig();
    const dir = await savedFolder(config);
    const file = join(dir, 'model.safetensors');
    for (const [bad, shown] of [
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      [Number.NEGATIVE_INFINITY, '-Infinity'],
    ] as const) {
      const weights = weightsFor(config);
      weights.get('model.layers.1.mlp.down_proj.weight')!.data[5] = bad;
      weights.get('model.norm.weight')!.data[0] = bad;
      writeSafetensors(file, weights);
      expect(await errorOf(() => loadHfFolder(dir))).toBe(
        `${file}: tensor 'model.layers.1.mlp.down_proj.weight' holds ${shown} at index 5: the weights are damaged or come from a diverged run`,
      );
    }
    // bf16 keeps NaN: a model saved in half precision is checked the same way
    const weights = weightsFor(config);
    weights.get('model.embed_tokens.weight')!.data[3] = Number.NaN;
    writeSafetensors(file, weights, { dtype: 'BF16' });
    expect(await errorOf(() => loadHfFolder(dir))).toBe(
      `${file}: tensor 'model.embed_tokens.weight' holds NaN at index 3: the weights are damaged or come from a diverged run`,
    );
  });

  test('config.json problems', async () => {
    const dir = await savedFolder();
    const path = join(dir, 'config.json');
    const json = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...json, hidden_size: undefined }));
    expect(await errorOf(() => loadHfFolder(dir))).toStartWith(`${path}: hidden_size: `);
    writeFileSync(path, JSON.stringify({ ...json, num_key_value_heads: 3, num_attention_heads: 2 }));
    expect(await errorOf(() => loadHfFolder(dir))).toBe(`${path}: num_key_value_heads: num_attention_heads must be a multiple of num_key_value_heads`);
    writeFileSync(path, '{"hidden_size": 8,');
    expect(await errorOf(() => loadHfFolder(dir))).toStartWith(`${path}: not valid JSON: `);
    rmSync(path);
    expect(await errorOf(() => loadHfFolder(dir))).toBe(`${dir}: no config.json (not a Hugging Face model folder)`);
    expect(await errorOf(() => loadHfFolder(join(dir, 'nope')))).toBe(`${join(dir, 'nope')}: no such model folder`);
  });

  test('a folder without a tokenizer, and saving weights that do not fit the config', async () => {
    const dir = await savedFolder();
    rmSync(join(dir, 'tokenizer.json'));
    expect(await errorOf(() => loadHfFolder(dir))).toBe(`${dir}: no tokenizer.json (a fast tokenizer file is required)`);
    const other = join(scratch(), 'out');
    const message = await errorOf(() => saveHfFolder(other, { config: tinyConfig({ hidden_size: 16 }), weights: weightsFor(tinyConfig()), tokenizer }));
    expect(message).toBe(
      `${join(other, 'model.safetensors')} (saving): tensor 'model.embed_tokens.weight' has shape [${tokenizer.vocabSize}, 8], expected [${tokenizer.vocabSize}, 16] for this config`,
    );
    expect(existsSync(other)).toBe(false);
  });
});
