import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelError } from '../../src/errors';
import { modelConfig } from '../../src/model/config';
import { defaultTokenizer } from '../../src/model/default_tokenizer';
import { expectedWeightShapes, loadHfFolder, saveHfFolder } from '../../src/model/hf_folder';
import { hubCacheDir, parseHubId, resolvePretrained } from '../../src/model/hub';
import { elementCount, readSafetensors, writeSafetensors } from '../../src/model/safetensors';
import { scratch } from '../helpers';

const MAIN_COMMIT = 'a'.repeat(40);
const V1_COMMIT = 'b'.repeat(40);

/** Repositories the fake hub serves: id -> folder. */
const repos = new Map<string, string>();
const requests: string[] = [];
let failNext: string | null = null;
let server: ReturnType<typeof Bun.serve>;

async function tinyModelFolder(): Promise<string> {
  const tokenizer = defaultTokenizer();
  const config = modelConfig({ vocab_size: tokenizer.vocabSize, hidden_size: 4, intermediate_size: 8, num_hidden_layers: 1, num_attention_heads: 2 });
  const weights = new Map([...expectedWeightShapes(config)].map(([name, shape]) => [name, { shape, data: new Float32Array(elementCount(shape)).fill(0.5) }]));
  const dir = join(scratch(), 'tiny');
  await saveHfFolder(dir, { config, weights, tokenizer });
  return dir;
}

beforeAll(async () => {
  const tiny = await tinyModelFolder();
  repos.set('org/tiny', tiny);
  repos.set('org/private', tiny);
  const sharded = join(scratch(), 'sharded');
  await saveHfFolder(sharded, loadHfFolder(tiny));
  const tensors = readSafetensors(join(sharded, 'model.safetensors')).tensors;
  const weightMap: Record<string, string> = {};
  [...tensors.keys()].forEach((name, i) => (weightMap[name] = `model-0000${(i % 2) + 1}-of-00002.safetensors`));
  for (const shard of new Set(Object.values(weightMap))) {
    writeSafetensors(join(sharded, shard), new Map([...tensors].filter(([name]) => weightMap[name] === shard)));
  }
  writeFileSync(join(sharded, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map: weightMap }));
  rmSync(join(sharded, 'model.safetensors'));
  repos.set('org/sharded', sharded);

  server = Bun.serve({
    port: 0,
    fetch(request) {
      const url = new URL(request.url);
      requests.push(url.pathname);
      const match = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
      const folder = match ? repos.get(match[1]!) : undefined;
      if (!match || !folder) return new Response('Repository not found', { status: 404 });
      if (match[1] === 'org/private' && request.headers.get('authorization') !== 'Bearer sekrit') return new Response('', { status: 401 });
      const revision = decodeURIComponent(match[2]!);
      const commit = revision === 'v1' || revision === V1_COMMIT ? V1_COMMIT : revision === 'main' || revision === MAIN_COMMIT ? MAIN_COMMIT : null;
      if (!commit) return new Response('Revision not found', { status: 404 });
      if (failNext === match[3]) {
        failNext = null;
        return new Response('busy', { status: 500 });
      }
      const path = join(folder, match[3]!);
      const headers = { 'x-repo-commit': commit };
      if (!existsSync(path)) return new Response('Entry not found', { status: 404, headers });
      const body = readFileSync(path);
      return new Response(body, { headers: { ...headers, etag: `"${createHash('sha256').update(body).digest('hex')}"` } });
    },
  });
});

afterAll(() => {
  server.stop(true);
});

function hubEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { HF_HUB_CACHE: join(scratch(), 'hub'), HF_ENDPOINT: server.url.href, ...extra };
}

async function errorOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ModelError);
    expect((error as Error).message).not.toContain('\n');
    return (error as Error).message;
  }
  throw new Error('expected a ModelError');
}

describe('hub ids and the cache location', () => {
  test('org/name[@revision]', () => {
    expect(parseHubId('Qwen/Qwen2.5-0.5B-Instruct')).toEqual({ id: 'Qwen/Qwen2.5-0.5B-Instruct', revision: 'main' });
    expect(parseHubId('org/name@refs/pr/1')).toEqual({ id: 'org/name', revision: 'refs/pr/1' });
    expect(parseHubId('a/b/c')).toBeNull();
    expect(parseHubId('name')).toBeNull();
  });

  test('HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub', () => {
    expect(hubCacheDir({ HF_HUB_CACHE: '/c', HF_HOME: '/h' })).toBe('/c');
    expect(hubCacheDir({ HF_HOME: '/h' })).toBe('/h/hub');
    expect(hubCacheDir({})).toEndWith('/.cache/huggingface/hub');
  });
});

describe('local folders', () => {
  test('a folder with config.json is used as it is; anything else is one line', async () => {
    const dir = repos.get('org/tiny')!;
    expect(await resolvePretrained(dir)).toBe(dir);
    const empty = scratch();
    expect(await errorOf(resolvePretrained(empty))).toBe(`${empty}: no config.json in this folder (not a Hugging Face model folder)`);
    expect(await errorOf(resolvePretrained(join(dir, 'config.json')))).toStartWith(`${join(dir, 'config.json')}: not a folder`);
    expect(await errorOf(resolvePretrained('./no/such/folder'))).toBe('./no/such/folder: no such model folder');
    expect(await errorOf(resolvePretrained('no-slash'))).toBe('no-slash: no such model folder, and not a hub id (org/name[@revision])');
  });
});

describe('downloading into the Hugging Face cache', () => {
  test('first call downloads into the cache layout; the second uses the cache without the network', async () => {
    const env = hubEnv();
    requests.length = 0;
    const lines: string[] = [];
    const folder = await resolvePretrained('org/tiny', { env, log: (line) => lines.push(line) });
    const repo = join(env.HF_HUB_CACHE!, 'models--org--tiny');
    expect(folder).toBe(join(repo, 'snapshots', MAIN_COMMIT));
    expect(readFileSync(join(repo, 'refs', 'main'), 'utf8')).toBe(MAIN_COMMIT);
    expect(lstatSync(join(folder, 'model.safetensors')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(folder, 'model.safetensors'))).toStartWith('../../blobs/');
    expect(readdirSync(join(repo, '.no_exist', MAIN_COMMIT))).toEqual(['chat_template.jinja']);
    expect(lines).toContain('downloading org/tiny/model.safetensors');
    expect(loadHfFolder(folder).weights.size).toBe(loadHfFolder(repos.get('org/tiny')!).weights.size);
    const downloads = requests.length;
    expect(downloads).toBe(6);

    expect(await resolvePretrained('org/tiny', { env })).toBe(folder);
    expect(await resolvePretrained('org/tiny', { env: { ...env, HF_HUB_OFFLINE: '1' } })).toBe(folder);
    expect(requests.length).toBe(downloads);
  });

  test('a revision gets its own ref and snapshot; a commit hash is looked up directly', async () => {
    const env = hubEnv();
    const folder = await resolvePretrained('org/tiny@v1', { env });
    expect(folder).toEndWith(join('snapshots', V1_COMMIT));
    expect(readFileSync(join(env.HF_HUB_CACHE!, 'models--org--tiny', 'refs', 'v1'), 'utf8')).toBe(V1_COMMIT);
    requests.length = 0;
    expect(await resolvePretrained(`org/tiny@${V1_COMMIT}`, { env })).toBe(folder);
    expect(requests).toEqual([]);
  });

  test('sharded weights: the index, then its shards', async () => {
    const env = hubEnv();
    const folder = await resolvePretrained('org/sharded', { env });
    expect(
      readdirSync(folder)
        .filter((f) => f.startsWith('model'))
        .sort(),
    ).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors', 'model.safetensors.index.json']);
    expect(loadHfFolder(folder).weights.size).toBe(loadHfFolder(repos.get('org/tiny')!).weights.size);
  });

  test('an interrupted download resumes with only the missing files', async () => {
    const env = hubEnv();
    failNext = 'model.safetensors';
    expect(await errorOf(resolvePretrained('org/tiny', { env }))).toBe('org/tiny: cannot download model.safetensors: HTTP 500');
    requests.length = 0;
    await resolvePretrained('org/tiny', { env });
    expect(requests).toEqual(['/org/tiny/resolve/' + MAIN_COMMIT + '/model.safetensors']);
  });

  test('404, 401, offline and network failures are one line naming the id and file', async () => {
    expect(await errorOf(resolvePretrained('org/missing', { env: hubEnv() }))).toBe(
      'org/missing: cannot download config.json: not found (HTTP 404): no such repository, revision or file',
    );
    expect(await errorOf(resolvePretrained('org/tiny@nope', { env: hubEnv() }))).toBe(
      'org/tiny@nope: cannot download config.json: not found (HTTP 404): no such repository, revision or file',
    );
    expect(await errorOf(resolvePretrained('org/private', { env: hubEnv() }))).toBe(
      'org/private: cannot download config.json: not found or needs authentication (HTTP 401); set HF_TOKEN if the repository is private or gated',
    );
    expect(await errorOf(resolvePretrained('org/private', { env: hubEnv({ HF_TOKEN: 'wrong' }) }))).toBe(
      'org/private: cannot download config.json: access denied (HTTP 401); HF_TOKEN cannot read this repository',
    );
    expect(await resolvePretrained('org/private', { env: hubEnv({ HF_TOKEN: 'sekrit' }) })).toEndWith(MAIN_COMMIT);

    const offline = hubEnv({ HF_HUB_OFFLINE: '1' });
    expect(await errorOf(resolvePretrained('org/tiny', { env: offline }))).toBe(
      `org/tiny: not in the Hugging Face cache (${join(offline.HF_HUB_CACHE!, 'models--org--tiny')}) and HF_HUB_OFFLINE forbids downloading it`,
    );

    const closed = Bun.serve({ port: 0, fetch: () => new Response('') });
    const url = closed.url.href;
    closed.stop(true);
    const message = await errorOf(resolvePretrained('org/tiny', { env: { ...hubEnv(), HF_ENDPOINT: url } }));
    expect(message).toStartWith(`org/tiny: cannot download config.json from ${url}org/tiny/resolve/main/config.json: `);
  });

  test('a repository with only .bin weights is refused', async () => {
    const dir = scratch();
    for (const file of ['config.json', 'tokenizer.json']) writeFileSync(join(dir, file), readFileSync(join(repos.get('org/tiny')!, file)));
    repos.set('org/binonly', dir);
    expect(await errorOf(resolvePretrained('org/binonly', { env: hubEnv() }))).toBe(
      'org/binonly: the repository has no model.safetensors or model.safetensors.index.json (only safetensors weights are supported)',
    );
  });
});
