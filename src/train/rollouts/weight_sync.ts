/**
 * actor_infer's model update when inference servers generate (an llm_proxy of type sglang or
 * openai): its weights reach the servers as a Hugging Face folder on disk, SGLang's way.
 *
 * Before each rollout the servers must hold version V = the policy version of the step (actor_infer's
 * weights after V training steps). When V is new (every model_update_frequency steps, and the
 * first step a run or a resume plays) actor_infer is written to model_update_dir/weights-V, written
 * beside it and renamed into place, so a server never reads half a folder; every server is told
 * to load it (/update_weights_from_disk, weight_version V) and asked what it holds
 * (/get_weight_version). On the other steps every server is asked again, and one that lost them
 * (a restart) loads the folder again. The folders of the last two versions stay, in case a server
 * is still reading the older one; the others are deleted.
 *
 * A LoRA run sends its adapters instead (PEFT's folder, a few megabytes where the model has
 * gigabytes): version V is the adapter named weights-V, loaded by SGLang's /load_lora_adapter or
 * vLLM's /v1/load_lora_adapter, and every request names it (/generate's lora_path, completions'
 * model). The adapters apply to the servers' own weights, so an SGLang server (agentic serve
 * included) first gets the run's base once, by /update_weights_from_disk; a vLLM server must have
 * been started on it. Adapters older than the last two are unloaded. A server that lost an adapter
 * (a restart) answers its requests with an error: they fail as infer_failure. Adapters that come
 * with modules trained whole (additional_target) travel as merged weights, the first way: vLLM
 * refuses adapters with modules_to_save, and SGLang documents no support for them.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { InferenceError } from '../../errors';
import { saveModel } from '../../model/load';
import type { Qwen2Model } from '../../model/qwen2';
import type { Tokenizer } from '../../model/tokenizer';
import type { InferenceServers } from '../../rollout/servers';

/** weights-N, base, and what a writer killed mid-write leaves (temporarySibling's hidden names). */
const WEIGHTS_NAME = /^(weights-(\d+)|base|\.(weights-\d+|base)\.tmp-.*)$/;
/** Folders kept by default: the servers' version and the one before. */
const KEPT = 2;

export function weightsFolder(dir: string, version: number): string {
  return join(dir, `weights-${version}`);
}

/** The versions of the weights folders under `dir`, newest first. */
export function weightVersions(dir: string): number[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => WEIGHTS_NAME.exec(name)?.[2])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => b - a);
}

/** The weights folders under `dir` other than `keep` (and abandoned temporaries): what pruning deletes. */
export function stale(dir: string, keep: readonly string[]): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => WEIGHTS_NAME.test(name))
    .map((name) => join(dir, name))
    .filter((path) => !keep.includes(path));
}

/** One server: a pool and its index; a URL named by both managers is one server. */
interface Target {
  pool: InferenceServers;
  server: number;
}

export class WeightSync {
  /** The folders this run wrote, oldest first. */
  private readonly sent: Array<{ version: number; folder: string }> = [];
  private readonly targets: Target[] = [];
  /** LoRA: the base folder the SGLang servers loaded, once. */
  private base: string | null = null;

  constructor(
    /** model_update_dir, absolute: the servers read the folders at the paths the trainer writes. */
    readonly dir: string,
    private readonly pools: readonly InferenceServers[],
    /** actor_infer.model_args.dtype. */
    private readonly dtype: string,
    /** The base model a LoRA run's adapter folders name (Roles.base). */
    private readonly baseName: string,
    /** How many of the newest folders stay: distributed workers may still load older ones. */
    private readonly kept = KEPT,
  ) {
    const seen = new Set<string>();
    for (const pool of pools) {
      pool.urls.forEach((url, server) => {
        if (seen.has(url)) return;
        seen.add(url);
        this.targets.push({ pool, server });
      });
    }
  }

  /** The version the servers were last given, or null before the first. */
  get version(): number | null {
    return this.sent.at(-1)?.version ?? null;
  }

  /** Makes every server hold `version`, the weights of `model` (actor_infer's, holding that version). */
  async bring(version: number, model: Qwen2Model, tokenizer: Tokenizer): Promise<void> {
    if (model.lora && !model.lora.modulesToSave?.length) return this.bringAdapter(version, model, tokenizer);
    for (const pool of this.pools) pool.weightVersion = null;
    if (version !== this.version) {
      const folder = weightsFolder(this.dir, version);
      await saveModel(folder, model, tokenizer, { dtype: this.dtype, merged: model.lora !== null });
      this.sent.push({ version, folder });
      await Promise.all(this.targets.map((t) => this.load(t, folder, version)));
      for (const path of stale(
        this.dir,
        this.sent.slice(-this.kept).map((s) => s.folder),
      ))
        rmSync(path, { recursive: true, force: true });
    } else {
      const folder = this.sent.at(-1)!.folder;
      await Promise.all(
        this.targets.map(async (t) => {
          if ((await t.pool.heldVersion(t.server)) !== String(version)) await this.load(t, folder, version);
        }),
      );
    }
    for (const pool of this.pools) pool.weightVersion = String(version);
  }

  /** LoRA: every server holds the adapter of `version` (and the SGLang ones the base), and requests name it. */
  private async bringAdapter(version: number, model: Qwen2Model, tokenizer: Tokenizer): Promise<void> {
    if (this.base === null) {
      this.base = join(this.dir, 'base');
      await saveModel(this.base, model.withoutAdapters(), tokenizer, { dtype: this.dtype });
      await Promise.all(this.targets.filter((t) => t.pool.type === 'sglang').map((t) => t.pool.updateWeights(t.server, this.base!, null)));
    }
    if (version !== this.version) {
      const folder = weightsFolder(this.dir, version);
      await saveModel(folder, model, tokenizer, { dtype: this.dtype, base: this.baseName });
      this.sent.push({ version, folder });
      await Promise.all(this.targets.map((t) => t.pool.adapterCall(t.server, basename(folder), folder)));
      const dropped = this.sent.at(-this.kept - 1);
      if (dropped) await Promise.all(this.targets.map((t) => t.pool.adapterCall(t.server, basename(dropped.folder), null)));
      const kept = [this.base, ...this.sent.slice(-this.kept).map((s) => s.folder)];
      for (const path of stale(this.dir, kept)) rmSync(path, { recursive: true, force: true });
    }
    for (const pool of this.pools) {
      pool.weightVersion = null;
      pool.adapter = basename(weightsFolder(this.dir, version));
    }
  }

  /** One server loads `folder` as `version` and says it holds it. */
  private async load(target: Target, folder: string, version: number): Promise<void> {
    const { pool, server } = target;
    await pool.updateWeights(server, folder, String(version));
    const held = await pool.heldVersion(server);
    if (held !== String(version)) {
      throw new InferenceError(`${pool.urls[server]}: loaded the weights of version ${version} (${folder}) but says it holds version ${held}`);
    }
  }
}
