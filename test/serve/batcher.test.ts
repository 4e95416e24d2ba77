/** The served model in this process: what the HTTP tests cannot provoke. */
import { beforeAll, describe, expect, test } from 'bun:test';
import { startBackend } from '../../src/engine/backend';
import { join } from 'node:path';
import { defaultTokenizer } from '../../src/model/default_tokenizer';
import { saveModel } from '../../src/model/load';
import { Qwen2Model } from '../../src/model/qwen2';
import { ChatFormat } from '../../src/rollout/chat';
import { ServingEngine } from '../../src/serve/batcher';
import type { BoundedSpec } from '../../src/serve/request';
import { RequestError } from '../../src/util/request_body';
import { scratch, restoreBackendAfterFile } from '../helpers';
import { microPolicyConfig } from '../model/tiny';

restoreBackendAfterFile();

const chat = new ChatFormat(defaultTokenizer());
let model: Qwen2Model;

beforeAll(async () => {
  await startBackend('cpu');
  model = Qwen2Model.random(microPolicyConfig(chat.tokenizer.vocabSize), { seed: 2 });
});

const spec = (promptIds: number[]): BoundedSpec => ({
  rid: null,
  promptIds,
  maxNewTokens: 6,
  temperature: 0,
  topP: 1,
  topK: 0,
  seed: null,
  stopTokenIds: [],
  stopStrings: [],
  topLogProbs: 0,
  adapter: null,
  adapterField: 'lora_path',
});

const options = { maxRunning: 8, maxQueue: 8, maxContext: 64, weightVersion: '0', seed: 1, modelPath: 'test', tokenizerPath: 'test' };

describe('ServingEngine', () => {
  test('a model failure fails the requests of its batch, and the next requests get a fresh batch', async () => {
    const healthy = new ServingEngine(model, chat, options);
    const expected = await healthy.generate(spec([3, 4, 5]));
    await healthy.drain();

    const forward = model.forward.bind(model);
    let failures = 1;
    model.forward = (...args) => {
      if (failures-- > 0) throw new Error('out of memory\nat somewhere');
      return forward(...args);
    };
    try {
      const engine = new ServingEngine(model, chat, options);
      const failed = await Promise.allSettled([engine.generate(spec([3, 4, 5])), engine.generate(spec([6, 7]))]);
      for (const result of failed) {
        expect(result.status).toBe('rejected');
        expect((result as PromiseRejectedResult).reason.message).toBe('generation failed: out of memory');
      }
      const again = await engine.generate(spec([3, 4, 5]));
      expect(again.tokens).toEqual(expected.tokens);
      expect(engine.stats()).toMatchObject({ running: 0, queued: 0 });
      await engine.drain();
    } finally {
      model.forward = forward;
    }
  });

  test('a queue of 0 admits a request a row is free for and refuses one that would wait', async () => {
    const engine = new ServingEngine(model, chat, { ...options, maxRunning: 1, maxQueue: 0 });
    const first = engine.generate(spec([3, 4, 5]));
    const refused = await engine.generate(spec([6, 7])).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RequestError);
    expect(refused).toMatchObject({ status: 503, retryAfter: 1 });
    expect((await first).tokens).toHaveLength(6);
    expect((await engine.generate(spec([6, 7]))).tokens).toHaveLength(6);
    await engine.drain();
  });

  test('a weight copy that fails midway puts every old value back and lets the queued requests go on', async () => {
    const served = Qwen2Model.random(microPolicyConfig(chat.tokenizer.vocabSize), { seed: 3 });
    const other = Qwen2Model.random(microPolicyConfig(chat.tokenizer.vocabSize), { seed: 4 });
    const folder = join(scratch(), 'other');
    await saveModel(folder, other, chat.tokenizer);
    other.dispose();
    const engine = new ServingEngine(served, chat, { ...options, maxRunning: 1 });
    const before = await engine.generate(spec([3, 4, 5]));
    const values = served.variables.map((v) => v.dataSync().slice());
    // the backend fails on the sixth tensor (a lost device, say), once
    const victim = served.trainedVariables[5]!;
    const assign = victim.assign.bind(victim);
    let failures = 1;
    victim.assign = (value) => {
      if (failures-- > 0) throw new Error('device lost\nat somewhere');
      assign(value);
    };
    const running = engine.generate({ ...spec([6, 7]), maxNewTokens: 40 });
    const update = engine.updateWeights(folder, 'v1');
    await Bun.sleep(0);
    const queued = engine.generate(spec([3, 4, 5]));
    expect(await update).toEqual({ success: false, message: `${folder}: device lost; the old weights serve on` });
    await running;
    const after = await queued;
    expect(after.weightVersion).toBe('0');
    expect(after.tokens).toEqual(before.tokens);
    expect(after.logProbs).toEqual(before.logProbs);
    served.variables.forEach((v, i) => expect(v.dataSync()).toEqual(values[i]!));
    expect(engine.stats()).toMatchObject({ weightVersion: '0', weightUpdates: 0, updating: false, running: 0, queued: 0 });
    await engine.drain();
    served.dispose();
  });
});
