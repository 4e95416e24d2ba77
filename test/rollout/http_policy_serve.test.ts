/**
 * The HTTP policy against a real `agentic serve`: the request ids of workers in containers, which
 * share a process id, and a server that refuses every request.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { ProxyConfig } from '../../src/config/schema';
import { Rng } from '../../src/engine/rng';
import { InferenceError } from '../../src/errors';
import { defaultTokenizer } from '../../src/model/default_tokenizer';
import { HttpPolicy } from '../../src/rollout/http_policy';
import { InferenceServers } from '../../src/rollout/servers';
import { ROOT } from '../helpers';
import { call, type ServeProcess, startServe, waitForInfo } from '../serve/helpers';

setDefaultTimeout(60_000);

/** Whether this machine lets an unprivileged process start one in a pid namespace of its own (where it is pid 1). */
const pidNamespaces = Bun.spawnSync(['unshare', '--user', '--map-root-user', '--pid', '--fork', 'true'], { stderr: 'ignore' }).exitCode === 0;

const SAMPLING = { temperature: 0, top_p: 1, top_k: -1, stop: [], stop_token_ids: [] };

let server: ServeProcess;

beforeAll(async () => {
  server = await startServe(['pretrain=agentic:nano']);
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

describe('the HTTP policy on agentic serve', () => {
  test.skipIf(!pidNamespaces)('two workers that are both pid 1 ask for the same episode at once: both are answered (their request ids differ)', async () => {
    const { url } = server;
    // held in the server's queue, both requests are in flight together
    await call(url, '/pause_generation', {});
    const workers = [0, 1].map(() =>
      Bun.spawn(['unshare', '--user', '--map-root-user', '--pid', '--fork', process.execPath, join(ROOT, 'test/fixtures/one_turn.ts'), url], {
        cwd: ROOT,
        stdout: 'pipe',
        stderr: 'pipe',
      }),
    );
    let exited = false;
    const outputs = Promise.all(
      workers.map(async (worker) => {
        const text = await new Response(worker.stdout).text();
        exited = true;
        await worker.exited;
        return text;
      }),
    );
    await waitForInfo(url, (info) => info.queued === 2 || exited, 30_000);
    await call(url, '/continue_generation', {});
    const replies = (await outputs).map((text) => JSON.parse(text));
    expect(replies).toEqual([
      { pid: 1, failure: null },
      { pid: 1, failure: null },
    ]);
  });

  test('a server that refuses every request (an adapter it lost) stops the run after unavailable_timeout_s, as one that is down does', async () => {
    const servers = new InferenceServers('sglang', ProxyConfig.parse({ base_url: server.url, unavailable_timeout_s: 0.2 }), 'train_env_manager');
    await servers.connect(defaultTokenizer());
    servers.adapter = 'weights-3';
    const policy = new HttpPolicy(servers, { sampling: SAMPLING });
    const turn = (id: string) => policy.respond({ id, promptIds: [1, 2, 3], maxNewTokens: 4, rng: Rng.fromSeed(1), env: undefined as never, session: id });
    try {
      const refused = await turn('a');
      expect(refused.failure).toEqual({
        kind: 'infer',
        reason: `train_env_manager: ${server.url}/generate: HTTP 400: lora_path: no LoRA adapter named 'weights-3' is loaded`,
      });
      await Bun.sleep(300);
      const error = await turn('b').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InferenceError);
      expect((error as Error).message).toMatch(
        /^train_env_manager: no inference server has answered for 0\.\d s \(unavailable_timeout_s 0\.2\); last: http:\/\/127\.0\.0\.1:\d+\/generate: HTTP 400: lora_path: no LoRA adapter named 'weights-3' is loaded$/,
      );
    } finally {
      await policy.close();
    }
  });
});
