/**
 * Throughput of `agentic serve` against in-process generation of the same requests: for 1, 8 and
 * 64 concurrent clients, each client sends the next request as soon as its last is answered.
 * Every request samples with a seed of its own, so both sides generate the very same tokens (the
 * script checks it) and the difference is the server's cost: HTTP, JSON and a second process.
 * Prints JSON (generated tokens per second) and writes it to --out.
 *
 *   bun scripts/bench/serve_throughput.ts [--model agentic:tiny] [--requests 64] [--tokens 32] [--clients 1,8,64] [--out output/bench/serve_throughput.json]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { startBackend } from '../../src/engine/backend';
import { Rng } from '../../src/engine/rng';
import { loadModel } from '../../src/model/load';
import { ChatFormat } from '../../src/rollout/chat';
import { ModelPolicy } from '../../src/rollout/policy';

const root = resolve(import.meta.dir, '../..');
const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
};
const model = arg('model', 'agentic:tiny');
const requests = Number(arg('requests', '64'));
const tokens = Number(arg('tokens', '32'));
const clientCounts = arg('clients', '1,8,64').split(',').map(Number);
const out = resolve(root, arg('out', 'output/bench/serve_throughput.json'));
const SEED = 42;
const CONTEXT = 1024;

interface Run {
  seconds: number;
  tokens: number;
  tokens_per_second: number;
}

/** Sends every prompt through `answer`, `clients` at a time; returns the tokens of each, in order. */
async function play(
  clients: number,
  prompts: number[][],
  answer: (prompt: number[], i: number) => Promise<number[]>,
): Promise<{ run: Run; outputs: number[][] }> {
  const outputs: number[][] = new Array(prompts.length);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < prompts.length) {
        const i = next++;
        outputs[i] = await answer(prompts[i]!, i);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const generated = outputs.reduce((n, o) => n + o.length, 0);
  return { run: { seconds, tokens: generated, tokens_per_second: generated / seconds }, outputs };
}

async function startServer(maxRunning: number): Promise<{ url: string; child: ReturnType<typeof Bun.spawn> }> {
  const child = Bun.spawn(
    [
      process.execPath,
      join(root, 'src/cli/main.ts'),
      'serve',
      '--port',
      '0',
      '--max-running',
      String(maxRunning),
      `pretrain=${model}`,
      `seed=${SEED}`,
      `sequence_length=${CONTEXT}`,
    ],
    { cwd: root, stdout: 'ignore', stderr: 'pipe', env: { ...process.env, NO_COLOR: '1' } },
  );
  const reader = child.stderr.getReader();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`agentic serve did not start: ${text}`);
    text += new TextDecoder().decode(value);
    const match = / on (http:\/\/[^ ]+) \(/.exec(text);
    if (match) {
      reader.releaseLock();
      return { url: match[1]!, child };
    }
  }
}

await startBackend('wasm');
const loaded = await loadModel(model, { seed: SEED, trainable: false });
const chat = new ChatFormat(loaded.tokenizer);
const prompts = Array.from({ length: requests }, (_, i) =>
  chat.firstTurn('You are a helpful assistant.', `Request ${i}: ${'tell me more '.repeat(1 + (i % 5))}`),
);
const sampling = { temperature: 1, topP: 1, topK: 0, doSample: true };

const results = [];
for (const clients of clientCounts) {
  const policy = new ModelPolicy(loaded.model, chat, { sampling, stopStrings: null, maxRunning: Math.max(...clientCounts), maxLength: CONTEXT });
  const inProcess = await play(clients, prompts, async (promptIds, i) => {
    const reply = await policy.respond({ id: `${i}`, promptIds, maxNewTokens: tokens, rng: Rng.fromSeed(i), env: undefined as never, session: `${i}` });
    if (reply.failure) throw new Error(`request ${i} failed`);
    return reply.tokens;
  });
  await policy.close();

  const server = await startServer(Math.max(...clientCounts));
  const served = await play(clients, prompts, async (input_ids, i) => {
    const response = await fetch(`${server.url}/generate`, {
      method: 'POST',
      body: JSON.stringify({ input_ids, sampling_params: { max_new_tokens: tokens, temperature: 1, sampling_seed: i } }),
    });
    if (!response.ok) throw new Error(`request ${i}: HTTP ${response.status} ${await response.text()}`);
    return ((await response.json()) as { output_ids: number[] }).output_ids;
  });
  server.child.kill('SIGTERM');
  await server.child.exited;
  if (JSON.stringify(served.outputs) !== JSON.stringify(inProcess.outputs))
    throw new Error(`${clients} clients: the server generated other tokens than in-process generation`);
  results.push({ clients, serve: served.run, in_process: inProcess.run, ratio: served.run.tokens_per_second / inProcess.run.tokens_per_second });
}
loaded.model.dispose();

const report = { model, requests, max_new_tokens: tokens, results };
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
console.log(JSON.stringify(report, null, 2));
