/**
 * Secrets never land on disk in clear: a Redis password (with `/` and `@` in it) and API keys,
 * given through the environment (AGENTIC_REDIS_URL, proxy_config.api_key_env) or on the command
 * line, are masked in everything a real distributed run writes and prints; the saved config runs
 * again where the environment gives them back.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { maskOverride, maskUrl } from '../../src/config/secrets';
import { agentic, lines, scratch } from '../helpers';
import { missing } from '../system_tools';
import { RedisServer, WAITS_PLUGIN, WorkerProcess } from '../rollout_sources/distributed/helpers';

const PASSWORD = 'p/a@ss-7Qz';
const API_KEY = 'sk-from-env-4Kd9';
const LITERAL_KEY = 'sk-on-command-line-8Wm2';
const SECRETS = [PASSWORD, encodeURIComponent(PASSWORD), API_KEY, LITERAL_KEY];

const CONFIG = `
pretrain: agentic:nano
plugins: [${WAITS_PLUGIN}]
output_dir: out
eval_steps: 0
max_steps: 2
save_steps: 1
sequence_length: 256
custom_envs:
  W: {env_type: waits, max_steps: 2, max_tokens_per_step: 8, env_config: {turns: 2, latency_ms: 0}}
train_env_manager:
  num_env_groups: 2
  group_size: 2
  tags: [W]
  max_env_num_per_worker: 2
  llm_proxy: {proxy_type: random, proxy_config: {api_key_env: AGENTIC_TEST_KEY}}
val_env_manager: {tags: [W]}
rollout_batch_size: 4
distributed: {queue: secrets, lock_duration_s: 5}
`;

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile());
}

/** The secrets `text` holds, by which. */
const found = (text: string) => SECRETS.filter((secret) => text.includes(secret));

const started: Array<{ stop(): unknown }> = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
});

describe('masking', () => {
  test('a URL keeps its user and host and loses its password, percent-encoded or not', () => {
    expect(maskUrl('redis://user:p%2Fa%40ss@10.0.0.5:6379/2')).toBe('redis://user:***@10.0.0.5:6379/2');
    expect(maskUrl('redis://:p/a@ss@10.0.0.5:6379')).toBe('redis://:***@10.0.0.5:6379');
    expect(maskUrl('rediss://onlysecret@host')).toBe('rediss://***@host');
    expect(maskUrl('redis://10.0.0.5:6379')).toBe('redis://10.0.0.5:6379');
    expect(maskUrl('see http://x y@z')).toBe('see http://x y@z');
    expect(maskOverride('val_env_manager.llm_proxy.proxy_config.api_key=sk-1')).toBe('val_env_manager.llm_proxy.proxy_config.api_key=***');
    expect(maskOverride('++distributed.redis_url=redis://:p%2Fa%40ss@h:1')).toBe('++distributed.redis_url=redis://:***@h:1');
  });
});

describe.skipIf(missing('redis'))('secrets of a real distributed run', () => {
  test('a password with / and @ and two API keys reach no file of the run and no line it prints; resume takes them from the environment again', async () => {
    const redis = await RedisServer.start(PASSWORD);
    started.push(redis);
    const dir = scratch({ 'exp.yaml': CONFIG });
    const env = { AGENTIC_REDIS_URL: redis.url, AGENTIC_TEST_KEY: API_KEY };
    const worker = WorkerProcess.start('w1', ['-c', 'exp.yaml'], { cwd: dir, env });
    started.push({ stop: () => (worker.kill(9), worker.done) });
    await worker.ready();
    const literal = `val_env_manager.llm_proxy.proxy_config.api_key=${LITERAL_KEY}`;
    const run = await agentic(['train', '-c', 'exp.yaml', literal], { cwd: dir, env });
    console.log(`train: exit ${run.code}; ${lines(run.stderr).find((l) => l.includes('Redis'))}`);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`through Redis redis://:***@127.0.0.1:${redis.port}`);
    expect(found(run.stdout + run.stderr + worker.stderr)).toEqual([]);

    const files = filesUnder(join(dir, 'out'));
    expect(files.some((f) => f.endsWith('.agentic/config.yaml'))).toBe(true);
    expect(files.some((f) => /checkpoint-2\/config\.yaml$/.test(f))).toBe(true);
    for (const file of files) expect({ file, secrets: found(readFileSync(file, 'latin1')) }).toEqual({ file, secrets: [] });
    const saved = readFileSync(join(dir, 'out/.agentic/config.yaml'), 'utf8');
    expect(saved).toContain(`redis_url: redis://:***@127.0.0.1:${redis.port}`);
    expect(saved).toContain('api_key: "***"');

    // the checkpoint's config runs again where the environment gives the secrets back, and not elsewhere
    const more = ['max_steps=3', `val_env_manager.llm_proxy.proxy_config.api_key=${LITERAL_KEY}`];
    const refused = await agentic(['resume', 'out/checkpoints/checkpoint-2', ...more], { cwd: dir, env: { AGENTIC_TEST_KEY: API_KEY } });
    expect(refused.code).toBe(2);
    expect(lines(refused.stderr)).toEqual([
      `error: distributed.redis_url: the password of redis://:***@127.0.0.1:${redis.port} was masked when this config was saved; give the URL with it in AGENTIC_REDIS_URL`,
    ]);
    const resumed = await agentic(['resume', 'out/checkpoints/checkpoint-2', ...more], { cwd: dir, env });
    expect(resumed.code).toBe(0);
    expect(found(resumed.stdout + resumed.stderr)).toEqual([]);
    for (const file of filesUnder(join(dir, 'out'))) expect({ file, secrets: found(readFileSync(file, 'latin1')) }).toEqual({ file, secrets: [] });
  }, 180_000);
});
