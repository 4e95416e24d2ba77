/**
 * `agentic serve` as a door: its keys, the one folder it loads weights from, the addresses it
 * refuses to open without a key, and how long it waits for a client that sends nothing. Real
 * servers over real HTTP, and the trainer's client on both sides of the key.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { ProxyConfig } from '../../src/config/schema';
import { startBackend } from '../../src/engine/backend';
import { InferenceError } from '../../src/errors';
import { loadModel, saveModel } from '../../src/model/load';
import { InferenceServers } from '../../src/rollout/servers';
import { agentic, lines, scratch } from '../helpers';
import { call, type ServeProcess, startServe } from './helpers';

const API = 'serve-key-1';
const ADMIN = 'admin-key-2';

await startBackend('wasm');
const nano = await loadModel('agentic:nano', { seed: 5, trainable: false });
const root = scratch();
await saveModel(join(root, 'weights-1'), nano.model, nano.tokenizer);
mkdirSync(join(root, 'broken'));
writeFileSync(join(root, 'broken', 'config.json'), '{"model_type": "qwen2"');
/** A link inside the root to a model folder outside it. */
const outside = scratch();
await saveModel(join(outside, 'model'), nano.model, nano.tokenizer);
symlinkSync(join(outside, 'model'), join(root, 'escape'));

let server: ServeProcess;
let url: string;

beforeAll(async () => {
  server = await startServe(['pretrain=agentic:nano', 'seed=5', 'sequence_length=2048', '--admin-key', ADMIN, '--weights-root', root, '--idle-timeout', '1'], {
    env: { AGENTIC_SERVE_API_KEY: API },
  });
  url = server.url;
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
  nano.model.dispose();
});

const as = (key: string | null): RequestInit => ({
  headers: { 'content-type': 'application/json', ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
});
const GENERATE = { input_ids: [1, 2, 3], sampling_params: { max_new_tokens: 2, temperature: 0 } };

describe('agentic serve: keys', () => {
  test('with an API key every endpoint but the health checks needs it; a missing or wrong one is a 401', async () => {
    for (const [path, body] of [
      ['/generate', GENERATE],
      ['/v1/completions', { prompt: [1, 2], max_tokens: 2 }],
      ['/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }],
      ['/tokenize', { prompt: 'hi' }],
      ['/get_model_info', undefined],
      ['/get_server_info', undefined],
      ['/v1/models', undefined],
    ] as const) {
      for (const key of [null, 'wrong']) {
        const refused = await call(url, path, body, as(key));
        expect([path, refused.status, refused.headers.get('www-authenticate')]).toEqual([path, 401, 'Bearer']);
        expect(refused.body.error.message).toBe(key === null ? 'this server needs an API key: send Authorization: Bearer <key>' : 'wrong API key');
      }
      expect([path, (await call(url, path, body, as(API))).status]).toEqual([path, 200]);
      expect([path, (await call(url, path, body, as(ADMIN))).status]).toEqual([path, 200]);
    }
    expect((await call(url, '/health', undefined, as(null))).status).toBe(200);
    expect((await call(url, '/health_generate', undefined, as(null))).status).toBe(200);
  });

  test('weight updates, adapters, pause, continue, abort and flush_cache need the admin key: the API key is a 403', async () => {
    for (const [path, body] of [
      ['/update_weights_from_disk', { model_path: 'weights-1' }],
      ['/load_lora_adapter', { lora_name: 'a', lora_path: 'weights-1' }],
      ['/unload_lora_adapter', { lora_name: 'a' }],
      ['/pause_generation', {}],
      ['/continue_generation', {}],
      ['/abort_request', { rid: 'x' }],
      ['/flush_cache', {}],
    ] as const) {
      expect([path, (await call(url, path, body, as(null))).status]).toEqual([path, 401]);
      const serving = await call(url, path, body, as(API));
      expect([path, serving.status, serving.body.error.message]).toEqual([
        path,
        403,
        'this endpoint needs the admin key (--admin-key); the API key serves generation only',
      ]);
    }
    expect((await call(url, '/pause_generation', {}, as(ADMIN))).body).toEqual({ success: true });
    expect((await call(url, '/continue_generation', {}, as(ADMIN))).body).toEqual({ success: true });
    const flushed = await fetch(`${url}/flush_cache`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    expect([flushed.status, await flushed.text()]).toEqual([200, 'Cache flushed.']);
  });

  test("the trainer's client sends proxy_config.api_key; a server that refuses it stops the start-up with one line", async () => {
    const servers = (key: string | null) => new InferenceServers('sglang', ProxyConfig.parse({ base_url: url, api_key: key }), 'val_env_manager');
    await servers(ADMIN).connect(nano.tokenizer);
    await servers(API).connect(nano.tokenizer);
    for (const [key, why] of [
      [null, 'no API key was sent'],
      ['wrong', 'it refused the API key sent'],
    ] as const) {
      const error = await servers(key)
        .connect(nano.tokenizer)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InferenceError);
      expect((error as Error).message).toBe(
        `${url}/get_model_info: HTTP 401: ${key === null ? 'this server needs an API key: send Authorization: Bearer <key>' : 'wrong API key'} (${why}: set val_env_manager.llm_proxy.proxy_config.api_key to the server's key)`,
      );
    }
    // the weight calls of training go through with the admin key
    const admin = servers(ADMIN);
    await admin.connect(nano.tokenizer);
    await admin.updateWeights(0, join(root, 'weights-1'), '1');
    expect(await admin.heldVersion(0)).toBe('1');
  });
});

describe('agentic serve: the weights root', () => {
  const update = (model_path: string) => call(url, '/update_weights_from_disk', { model_path }, as(ADMIN));

  test('a folder outside it is refused before anything is read, a link out of it too; nothing names the server’s paths', async () => {
    for (const given of ['/etc', '../../etc', join(outside, 'model'), 'escape']) {
      const reply = await update(given);
      expect([given, reply.status, reply.body]).toEqual([given, 403, { success: false, message: `model_path: '${given}' is outside the weights root` }]);
    }
    const adapter = await call(url, '/load_lora_adapter', { lora_name: 'x', lora_path: '/etc' }, as(ADMIN));
    expect([adapter.status, adapter.body.error]).toEqual([403, { message: "lora_path: '/etc' is outside the weights root", field: 'lora_path' }]);
    const missing = await update('nothing-here');
    expect([missing.status, missing.body.message]).toEqual([400, "model_path: no folder 'nothing-here' under the weights root"]);
    const broken = await update('broken');
    expect(broken.status).toBe(400);
    expect(broken.body.message).toStartWith('broken');
    expect(broken.body.message).not.toContain(root);
    const notAdapter = await call(url, '/load_lora_adapter', { lora_name: 'x', lora_path: 'weights-1' }, as(ADMIN));
    expect(notAdapter.body.error_message).toMatch(/^lora_path: weights-1.*not a PEFT adapter folder/);
    expect(notAdapter.body.error_message).not.toContain(root);
    expect(server.stderr()).toContain(`weight and adapter folders load from under ${root}`);
  });

  test('a folder under it loads, named absolute or relative to it', async () => {
    for (const [given, version] of [
      ['weights-1', 'a'],
      [join(root, 'weights-1'), 'b'],
    ]) {
      const reply = await call(url, '/update_weights_from_disk', { model_path: given, weight_version: version }, as(ADMIN));
      expect(reply.body).toEqual({ success: true, message: `loaded ${given} (weight_version ${version})` });
    }
  });
});

describe('agentic serve: time limits', () => {
  test('a client that stops sending is cut off after the idle timeout; a generation that runs longer is not', async () => {
    const long = call(url, '/generate', { input_ids: [1, 2, 3, 4], sampling_params: { max_new_tokens: 2000, temperature: 0 } }, as(API));
    const started = performance.now();
    const closed = await new Promise<number>((resolve, reject) => {
      const socket = connect(new URL(url).port as unknown as number, '127.0.0.1');
      socket.on('error', reject);
      socket.on('close', () => resolve(performance.now() - started));
      socket.write(`POST /tokenize HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API}\r\nContent-Length: 100\r\n\r\n{"prompt": "`);
    });
    // Bun checks idle sockets every few seconds
    expect(closed).toBeLessThan(9_000);
    const reply = await long;
    expect(reply.status).toBe(200);
    expect(reply.body.meta_info.completion_tokens).toBe(2000);
    expect(performance.now() - started).toBeGreaterThan(closed);
  }, 60_000);
});

describe('agentic serve: addresses', () => {
  test('an address other than loopback without an API key refuses to start, in one line; --insecure says so and starts', async () => {
    const { code, stderr } = await agentic(['serve', 'pretrain=agentic:nano', '--host', '0.0.0.0', '--port', '0']);
    expect(code).toBe(2);
    expect(lines(stderr)).toEqual([
      'error: --host 0.0.0.0 opens the server to the network: give it --api-key (or AGENTIC_SERVE_API_KEY), or --insecure to let anyone who reaches it generate and change its weights',
    ]);
    const open = await startServe(['pretrain=agentic:nano', '--host', '0.0.0.0', '--insecure']);
    try {
      await Bun.sleep(200);
      expect(open.stderr()).toMatch(/warning: --insecure: anyone who reaches http:\/\/0\.0\.0\.0:\d+ may generate and change its weights/);
      expect(await open.stop()).toBe(0);
    } finally {
      open.child.kill('SIGKILL');
    }
    const keyed = await startServe(['pretrain=agentic:nano', '--host', '0.0.0.0', '--api-key', API]);
    try {
      expect((await call(keyed.url.replace('0.0.0.0', '127.0.0.1'), '/get_weight_version', undefined, as(API))).body).toEqual({ weight_version: 'default' });
      expect(await keyed.stop()).toBe(0);
    } finally {
      keyed.child.kill('SIGKILL');
    }
  }, 60_000);
});
