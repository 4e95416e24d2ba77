/**
 * Where `pretrain:` points: a local model folder, or a Hugging Face hub id `org/name[@revision]`.
 * A hub id is looked up in the local Hugging Face cache (the layout huggingface_hub uses, so
 * models downloaded by Python are found and ours are reused by Python), and downloaded into it
 * when missing: models--org--name/{blobs/<etag>, snapshots/<commit>/<file> -> blob, refs/<revision>,
 * .no_exist/<commit>/<file> for files the repository does not have}.
 *
 * Environment: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub; HF_ENDPOINT
 * (default https://huggingface.co); HF_TOKEN (sent as a bearer token); HF_HUB_OFFLINE=1 (no network).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { firstLine, ModelError } from '../errors';
import { temporarySibling, writeFileAtomic } from '../util/atomic';
import { displayPath } from '../util/paths';
import { CONFIG_FILE, GENERATION_CONFIG_FILE } from './hf_folder';
import { INDEX_FILE, shardMap, SINGLE_FILE } from './safetensors';
import { CHAT_TEMPLATE_FILE, TOKENIZER_CONFIG_FILE, TOKENIZER_FILE } from './tokenizer';

type Env = Record<string, string | undefined>;

export interface ResolveOptions {
  /** Environment to read HF_* variables from (default process.env). */
  env?: Env;
  /** Called with a line before each file is downloaded. */
  log?: (message: string) => void;
  /** Folder that relative paths are resolved from (default the working folder). */
  cwd?: string;
}

export interface HubId {
  id: string;
  revision: string;
}

const REQUIRED_FILES = [CONFIG_FILE, TOKENIZER_FILE];
const OPTIONAL_FILES = [GENERATION_CONFIG_FILE, TOKENIZER_CONFIG_FILE, CHAT_TEMPLATE_FILE];
/** Files a repository may lack (recorded under .no_exist/); the weights need one of the two. */
const MAY_BE_ABSENT = [...OPTIONAL_FILES, SINGLE_FILE, INDEX_FILE];
const HUB_ID = /^([A-Za-z0-9][\w.-]*)\/([\w.-]+)(?:@([\w./-]+))?$/;
const COMMIT = /^[0-9a-f]{40}$/;

/** `org/name[@revision]`, or null when `ref` does not have that form. */
export function parseHubId(ref: string): HubId | null {
  const match = HUB_ID.exec(ref);
  if (!match || match[2]!.includes('..')) return null;
  return { id: `${match[1]}/${match[2]}`, revision: match[3] ?? 'main' };
}

export function hubCacheDir(env: Env = process.env): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HF_HOME) return join(env.HF_HOME, 'hub');
  return join(homedir(), '.cache', 'huggingface', 'hub');
}

function isOffline(env: Env): boolean {
  return ['1', 'true', 'yes', 'on'].includes((env.HF_HUB_OFFLINE ?? '').toLowerCase());
}

function looksLikePath(ref: string): boolean {
  return ref.startsWith('/') || ref.startsWith('./') || ref.startsWith('../') || ref.startsWith('~') || ref === '.' || ref === '..';
}

/** The local folder holding the model `ref` names, downloading it first if needed. */
export async function resolvePretrained(ref: string, options: ResolveOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const path = resolve(options.cwd ?? process.cwd(), ref.startsWith('~') ? join(homedir(), ref.slice(1)) : ref);
  const hub = looksLikePath(ref) ? null : parseHubId(ref);
  if (existsSync(path) || !hub) {
    if (!existsSync(path)) throw new ModelError(`${ref}: no such model folder${looksLikePath(ref) ? '' : ', and not a hub id (org/name[@revision])'}`);
    if (!statSync(path).isDirectory()) throw new ModelError(`${ref}: not a folder (a model folder holds config.json, weights and tokenizer files)`);
    if (!existsSync(join(path, CONFIG_FILE))) throw new ModelError(`${ref}: no ${CONFIG_FILE} in this folder (not a Hugging Face model folder)`);
    return path;
  }
  return new HubRepo(hub, env, options.log).resolve();
}

class HubRepo {
  private readonly repoDir: string;
  private readonly label: string;
  private readonly endpoint: string;

  constructor(
    private readonly hub: HubId,
    private readonly env: Env,
    private readonly log: (message: string) => void = () => {},
  ) {
    this.repoDir = join(hubCacheDir(env), `models--${hub.id.replace('/', '--')}`);
    this.label = hub.revision === 'main' ? hub.id : `${hub.id}@${hub.revision}`;
    this.endpoint = (env.HF_ENDPOINT || 'https://huggingface.co').replace(/\/+$/, '');
  }

  async resolve(): Promise<string> {
    let commit = this.cachedCommit();
    if (commit && this.missingFiles(commit).length === 0) return this.snapshot(commit);
    if (isOffline(this.env)) {
      throw new ModelError(`${this.label}: not in the Hugging Face cache (${displayPath(this.repoDir)}) and HF_HUB_OFFLINE forbids downloading it`);
    }
    if (!commit) commit = await this.download(CONFIG_FILE, null, true);
    // Up to three rounds: the named files, then the index if there is no single weights file, then its shards.
    for (let round = 0; round < 3; round++) {
      for (const file of this.missingFiles(commit)) await this.download(file, commit, !MAY_BE_ABSENT.includes(file));
    }
    const missing = this.missingFiles(commit);
    if (missing.length > 0) throw new ModelError(`${this.label}: download incomplete, still missing ${missing.join(', ')}`);
    return this.snapshot(commit);
  }

  private snapshot(commit: string): string {
    return join(this.repoDir, 'snapshots', commit);
  }

  /** The commit the revision points to in the cache, if known. */
  private cachedCommit(): string | null {
    if (COMMIT.test(this.hub.revision)) return this.hub.revision;
    const ref = join(this.repoDir, 'refs', this.hub.revision);
    return existsSync(ref) ? readFileSync(ref, 'utf8').trim() || null : null;
  }

  private known(commit: string, file: string): boolean {
    return existsSync(join(this.snapshot(commit), file)) || existsSync(join(this.repoDir, '.no_exist', commit, file));
  }

  /** Files still to fetch: each wanted file is either in the snapshot or known not to exist. */
  private missingFiles(commit: string): string[] {
    const missing = [...REQUIRED_FILES, ...OPTIONAL_FILES].filter((f) => !this.known(commit, f));
    if (!this.known(commit, SINGLE_FILE)) return [...missing, SINGLE_FILE];
    if (existsSync(join(this.snapshot(commit), SINGLE_FILE))) return missing;
    if (!this.known(commit, INDEX_FILE)) return [...missing, INDEX_FILE];
    const index = join(this.snapshot(commit), INDEX_FILE);
    if (!existsSync(index))
      throw new ModelError(`${this.label}: the repository has no ${SINGLE_FILE} or ${INDEX_FILE} (only safetensors weights are supported)`);
    const shards = [...new Set(Object.values(shardMap(index)))].sort();
    return [...missing, ...shards.filter((s) => !existsSync(join(this.snapshot(commit), s)))];
  }

  /**
   * Fetches one file into blobs/ and links it from the snapshot; returns the commit the server
   * reports. A missing optional file is recorded under .no_exist/ instead.
   */
  private async download(file: string, commit: string | null, required: boolean): Promise<string> {
    const revision = commit ?? this.hub.revision;
    const url = `${this.endpoint}/${this.hub.id}/resolve/${encodeURIComponent(revision)}/${file}`;
    const headers: Record<string, string> = {};
    if (this.env.HF_TOKEN) headers.authorization = `Bearer ${this.env.HF_TOKEN}`;
    this.log(`downloading ${this.hub.id}/${file}`);
    let response: Response;
    try {
      response = await fetch(url, { headers, redirect: 'follow' });
    } catch (error) {
      throw new ModelError(`${this.label}: cannot download ${file} from ${url}: ${firstLine(error)}`);
    }
    const serverCommit = response.headers.get('x-repo-commit') ?? commit ?? this.hub.revision;
    if (response.status === 404 && !required) {
      await response.body?.cancel();
      writeFileAtomic(join(this.repoDir, '.no_exist', serverCommit, file), '');
      return serverCommit;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new ModelError(`${this.label}: cannot download ${file}: ${this.explain(response.status)}`);
    }
    const blobs = join(this.repoDir, 'blobs');
    mkdirSync(blobs, { recursive: true });
    const temporary = temporarySibling(join(blobs, 'download'));
    try {
      const written = await Bun.write(temporary, response);
      const expected = Number(response.headers.get('content-length'));
      if (!response.headers.get('content-encoding') && Number.isFinite(expected) && response.headers.has('content-length') && written !== expected) {
        throw new Error(`got ${written} of ${expected} bytes`);
      }
    } catch (error) {
      rmSync(temporary, { force: true });
      throw new ModelError(`${this.label}: download of ${file} broke off: ${firstLine(error)}`);
    }
    const etag = (response.headers.get('x-linked-etag') ?? response.headers.get('etag') ?? '').replace(/^W\//, '').replace(/"/g, '');
    const blobName = /^[\w.-]+$/.test(etag) ? etag : createHash('sha256').update(readFileSync(temporary)).digest('hex');
    renameSync(temporary, join(blobs, blobName));
    const link = join(this.snapshot(serverCommit), file);
    mkdirSync(this.snapshot(serverCommit), { recursive: true });
    const temporaryLink = temporarySibling(link);
    symlinkSync(join('..', '..', 'blobs', blobName), temporaryLink);
    renameSync(temporaryLink, link);
    if (!COMMIT.test(this.hub.revision)) writeFileAtomic(join(this.repoDir, 'refs', this.hub.revision), serverCommit);
    return serverCommit;
  }

  private explain(status: number): string {
    if (status === 401 || status === 403) {
      return this.env.HF_TOKEN
        ? `access denied (HTTP ${status}); HF_TOKEN cannot read this repository`
        : `not found or needs authentication (HTTP ${status}); set HF_TOKEN if the repository is private or gated`;
    }
    if (status === 404) return `not found (HTTP 404): no such repository, revision or file`;
    return `HTTP ${status}`;
  }
}
