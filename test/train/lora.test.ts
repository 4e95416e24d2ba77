/**
 * LoRA runs (ROLL's lora_target, lora_rank, lora_alpha): only the adapters train, the optimizer
 * keeps moments for them alone, the reference is the frozen base itself, checkpoints and the final
 * model are PEFT adapter folders (merged weights on request), and resuming is exact.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openCheckpoint } from '../../src/checkpoint/load';
import { ConfigError } from '../../src/errors';
import { tf } from '../../src/engine/tf';
import { loadModel, saveModel } from '../../src/model/load';
import { adaptedProjections, parseTarget } from '../../src/model/lora';
import { withAdapters, withoutAdapters, newAdapters } from '../../src/model/lora_adapters';
import type { Qwen2Model } from '../../src/model/qwen2';
import { readSafetensors } from '../../src/model/safetensors';
import { PluginHost } from '../../src/host/plugin_host';
import { readMetricsJsonl } from '../../src/tracking/jsonl';
import { buildRoles, roleNeeds } from '../../src/train/roles';
import { scratch } from '../helpers';
import { comparable, interrupted, runIn } from '../checkpoint/helpers';
import { configOf, hostWithVowels, microPolicyFolder, vowelsYaml } from './helpers';

setDefaultTimeout(60_000);

const host = hostWithVowels();
const LORA = ["actor_train.model_args.lora_target='q_proj,v_proj,down_proj'", 'actor_train.model_args.lora_rank=4', 'actor_train.model_args.lora_alpha=8'];
let pretrain = '';
beforeAll(async () => {
  pretrain = await microPolicyFolder();
});

async function valuesOf(variables: readonly tf.Variable[]): Promise<number[][]> {
  return Promise.all(variables.map(async (v) => Array.from((await v.data()) as Float32Array)));
}

/** The base's variables (every one but the adapters). */
function baseOf(model: Qwen2Model): tf.Variable[] {
  const adapters = new Set(model.trainedVariables);
  return model.variables.filter((v) => !adapters.has(v));
}

async function logits(model: Qwen2Model, ids: number[]): Promise<Float32Array> {
  const t = tf.tensor2d(Int32Array.from(ids), [1, ids.length], 'int32');
  const { hidden, present } = model.forward(t);
  const out = model.logits(hidden);
  const data = (await out.data()) as Float32Array;
  tf.dispose([t, hidden, out, ...present.flatMap((kv) => [kv.k, kv.v])]);
  return data;
}

describe('a LoRA run', () => {
  test('trains the adapters alone, and saves them as a PEFT folder naming the base; merged weights give the same logits', async () => {
    const before = tf.memory().numTensors;
    const run = await runIn(scratch(), host, pretrain, [...LORA, 'use_kl_loss=true', 'kl_loss_coef=0.1', 'actor_train.model_args.lora_save_merged=true']);
    expect(run.result.steps).toBe(2);
    const model = join(run.out, 'model');
    expect(readdirSync(model).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
    const config = JSON.parse(readFileSync(join(model, 'adapter_config.json'), 'utf8'));
    expect(config).toMatchObject({ peft_type: 'LORA', task_type: 'CAUSAL_LM', r: 4, lora_alpha: 8, base_model_name_or_path: pretrain, bias: 'none' });
    expect(config.target_modules).toEqual(['down_proj', 'q_proj', 'v_proj']);
    const { tensors } = readSafetensors(join(model, 'adapter_model.safetensors'));
    expect([...tensors.keys()].sort().slice(0, 2)).toEqual([
      'base_model.model.model.layers.0.mlp.down_proj.lora_A.weight',
      'base_model.model.model.layers.0.mlp.down_proj.lora_B.weight',
    ]);
    expect(tensors.get('base_model.model.model.layers.1.self_attn.v_proj.lora_A.weight')!.shape).toEqual([4, 32]);
    expect(tensors.get('base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight')!.shape).toEqual([16, 4]);
    expect(tensors.size).toBe(2 * 3 * 2);

    // the base is untouched, the adapters moved (B starts at zero)
    const trained = await loadModel(model, { seed: 0, trainable: true, keepAdapters: true });
    const base = await loadModel(pretrain, { seed: 0, trainable: false });
    expect(await valuesOf(baseOf(trained.model))).toEqual(await valuesOf(base.model.variables));
    const bs = trained.model.adapters.flatMap((layer) => Object.values(layer).map((a) => a.b));
    expect((await valuesOf(bs)).every((b) => b.some((v) => v !== 0))).toBe(true);

    // base + adapter: as the adapters compute it, folded on load (eval), and as saved merged
    const ids = [3, 14, 15, 92, 65, 35];
    const withAdapters = await logits(trained.model, ids);
    const folded = await loadModel(model, { seed: 0, trainable: false });
    expect(folded.model.lora).toBeNull();
    const merged = await loadModel(join(run.out, 'model_merged'), { seed: 0, trainable: false });
    for (const other of [await logits(folded.model, ids), await logits(merged.model, ids)]) {
      other.forEach((v, i) => expect(Math.abs(v - withAdapters[i]!)).toBeLessThan(1e-5));
    }
    expect(Array.from(await logits(base.model, ids))).not.toEqual(Array.from(withAdapters));
    for (const m of [trained, base, folded, merged]) m.model.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  for (const [what, extra] of [
    ['the adapters alone', []],
    ['the adapters and the embedding it trains whole', ['actor_train.model_args.additional_target=embed_tokens']],
  ] as const)
    test(`plays ahead in a worker that holds the base and receives ${what}`, async () => {
      // the worker loads the env from its plugin file (it does not share this thread's registry)
      const plugin = `plugins=[${resolve(import.meta.dir, '../fixtures/plugins/vowels.ts')}]`;
      const run = await runIn(scratch(), new PluginHost(), pretrain, [
        ...LORA,
        ...extra,
        plugin,
        'async_generation_ratio=1',
        'max_steps=3',
        'use_kl_loss=true',
        'kl_loss_coef=0.1',
      ]);
      expect(run.result.steps).toBe(3);
      const steps = readMetricsJsonl(join(run.out, 'logs', 'metrics.jsonl'));
      // step s trains on a batch of version s - 1: the adapters after s - 1 steps, sent to the worker
      expect(steps.map((r) => r.metrics['async/policy_version'])).toEqual([0, 0, 1]);
      expect(steps.every((r) => Number.isFinite(r.metrics['actor/train_infer_logprob_gap']) && r.metrics['actor/train_infer_logprob_gap']! < 1)).toBe(true);
    });

  test('keeps optimizer moments for the adapters only; its reference is the base, with no copy of it', async () => {
    const config = await configOf(vowelsYaml(pretrain), host, [...LORA, 'use_kl_loss=true', 'kl_loss_coef=0.1']);
    const roles = await buildRoles(config, roleNeeds(config));
    expect(roles.actorOptimizer.variables).toEqual(roles.actor.trainedVariables);
    expect(roles.actorOptimizer.variables.length).toBe(2 * 3 * 2);
    expect(roles.reference!.sharesBaseWith(roles.actor)).toBe(true);
    expect(roles.reference!.lora).toBeNull();
    expect(roles.sources.reference).toContain('frozen base');
    expect(roles.sources.actor_train).toContain('LoRA r 4, alpha 8 on q_proj, v_proj, down_proj (2 layers)');
    roles.dispose();
  });

  test('with additional_target the embedding trains whole beside the adapters; the reference keeps the base\u2019s; PEFT\u2019s folder carries it', async () => {
    const before = tf.memory().numTensors;
    const settings = [...LORA, 'actor_train.model_args.additional_target=embed_tokens', 'use_kl_loss=true', 'kl_loss_coef=0.1'];
    const config = await configOf(vowelsYaml(pretrain), host, settings);
    const roles = await buildRoles(config, roleNeeds(config));
    // the tied embedding first, then the adapters: one more variable for the optimizer
    expect(roles.actor.trainedVariables[0]).toBe(roles.actor.embed);
    expect(roles.actorOptimizer.variables).toEqual(roles.actor.trainedVariables);
    expect(roles.actorOptimizer.variables.length).toBe(1 + 2 * 3 * 2);
    expect(roles.reference!.embed).not.toBe(roles.actor.embed);
    expect(roles.reference!.blocks[0]!.q).toBe(roles.actor.blocks[0]!.q);
    expect(roles.reference!.sharesBaseWith(roles.actor)).toBe(true);
    expect(roles.sources.actor_train).toContain('q_proj, v_proj, down_proj (2 layers); embed_tokens trained whole');
    roles.dispose();
    expect(tf.memory().numTensors).toBe(before);

    const run = await runIn(scratch(), host, pretrain, settings);
    const model = join(run.out, 'model');
    const saved = JSON.parse(readFileSync(join(model, 'adapter_config.json'), 'utf8'));
    expect(saved).toMatchObject({ modules_to_save: ['embed_tokens'], ensure_weight_tying: true });
    const { tensors } = readSafetensors(join(model, 'adapter_model.safetensors'));
    const embedding = tensors.get('base_model.model.model.embed_tokens.weight')!;
    expect(Array.from(tensors.get('base_model.model.lm_head.weight')!.data)).toEqual(Array.from(embedding.data));
    const base = await loadModel(pretrain, { seed: 0, trainable: false });
    const baseEmbedding = Array.from((await base.model.embed.data()) as Float32Array);
    expect(Array.from(embedding.data)).not.toEqual(baseEmbedding);
    // loaded back: the trained embedding in the policy, the base's in the base
    const trained = await loadModel(model, { seed: 0, trainable: true, keepAdapters: true });
    expect(Array.from((await trained.model.embed.data()) as Float32Array)).toEqual(Array.from(embedding.data));
    expect(Array.from((await withoutAdapters(trained.model).embed.data()) as Float32Array)).toEqual(baseEmbedding);
    trained.model.dispose();
    base.model.dispose();
  });

  test('a checkpoint holds the adapter folder and the adapters\u2019 moments, not the base or a reference', async () => {
    const run = await runIn(scratch(), host, pretrain, [...LORA, 'use_kl_loss=true', 'kl_loss_coef=0.1', 'save_steps=1']);
    const folder = join(run.out, 'checkpoints', 'checkpoint-1');
    expect(readdirSync(folder).sort()).toEqual(['actor', 'config.yaml', 'manifest.json', 'metrics.jsonl', 'optimizer.safetensors', 'trainer_state.json']);
    expect(readdirSync(join(folder, 'actor')).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
    const { state } = openCheckpoint(folder);
    expect(state.optimizers.actor_train.variables).toBe(12);
    // layer 0's q_proj B, in the model's input-major layout: [r, out]
    expect(readSafetensors(join(folder, 'optimizer.safetensors')).tensors.get('actor_train/m/1')!.shape).toEqual([4, 32]);
  });
});

describe('a resumed LoRA run ends where the uninterrupted one does', () => {
  const cases: Array<[string, string[], 'stopped' | 'copied']> = [
    ['with a KL loss against the base', ['use_kl_loss=true', 'kl_loss_coef=0.1'], 'stopped'],
    ['with a lagging actor_infer, all-linear', ['actor_train.model_args.lora_target=all-linear', 'actor_infer.model_update_frequency=2'], 'copied'],
    [
      'training the embedding whole (additional_target), with a KL loss and a lagging actor_infer',
      ['actor_train.model_args.additional_target=embed_tokens', 'use_kl_loss=true', 'kl_loss_coef=0.1', 'actor_infer.model_update_frequency=2'],
      'stopped',
    ],
  ];
  for (const [name, extra, how] of cases) {
    test(name, async () => {
      const before = tf.memory().numTensors;
      const settings = [...LORA, ...extra, 'max_steps=3', 'save_steps=1'];
      const straight = await runIn(scratch(), host, pretrain, settings);
      const out = scratch();
      let resumeFrom = 'auto';
      if (how === 'stopped') {
        await interrupted(out, host, pretrain, settings, 2);
      } else {
        cpSync(straight.out, out, { recursive: true });
        resumeFrom = join(out, 'checkpoints', 'checkpoint-2');
      }
      const resumed = await runIn(out, host, pretrain, [...settings, `resume_from_checkpoint=${resumeFrom}`]);
      expect(resumed.result.steps).toBe(1);
      const bytes = (run: string, file: string) => readFileSync(join(run, file));
      expect(bytes(resumed.out, 'model/adapter_model.safetensors').equals(bytes(straight.out, 'model/adapter_model.safetensors'))).toBe(true);
      const last = 'checkpoints/checkpoint-3';
      expect(bytes(resumed.out, `${last}/optimizer.safetensors`).equals(bytes(straight.out, `${last}/optimizer.safetensors`))).toBe(true);
      if (extra.some((o) => o.startsWith('actor_infer'))) {
        const infer = `${last}/actor_infer/adapter_model.safetensors`;
        expect(bytes(resumed.out, infer).equals(bytes(straight.out, infer))).toBe(true);
      }
      const log = (run: string) => readMetricsJsonl(join(run, 'logs', 'metrics.jsonl'));
      expect(comparable(log(resumed.out))).toEqual(comparable(log(straight.out)));
      expect(tf.memory().numTensors).toBe(before);
    });
  }
});

describe('a policy that starts from an adapter (adapter_name_or_path, or pretrain naming an adapter folder)', () => {
  test('trains on the adapter with LoRA keys that describe it, folds it into the weights without, and refuses other keys', async () => {
    const base = await loadModel(pretrain, { seed: 0, trainable: false });
    const spec = { rank: 4, alpha: 8, targets: parseTarget('q_proj,v_proj,down_proj') };
    const adapters = newAdapters(spec, adaptedProjections(spec, 2), base.model, 1);
    for (const layer of adapters) for (const a of Object.values(layer)) a.b.assign(tf.randomNormal(a.b.shape, 0, 0.1, 'float32', 2));
    const adapted = withAdapters(base.model, spec, adapters);
    const folder = join(scratch(), 'adapter');
    await saveModel(folder, adapted, base.tokenizer, { base: pretrain });
    const ids = [7, 8, 9, 10, 11];
    const expected = await logits(adapted, ids);

    const trained = await configOf(vowelsYaml(pretrain), host, [...LORA, `actor_train.model_args.adapter_name_or_path=${folder}`]);
    const roles = await buildRoles(trained, roleNeeds(trained));
    expect(await valuesOf(roles.actor.trainedVariables)).toEqual(await valuesOf(adapted.trainedVariables));
    expect(roles.sources.actor_train).toContain(`with the LoRA adapter ${folder}`);
    roles.dispose();

    // pretrain naming the adapter folder brings the base it names; without LoRA keys it is folded in
    const folded = await buildRoles(await configOf(vowelsYaml(folder), host), { reference: false, critic: false });
    expect(folded.actor.lora).toBeNull();
    (await logits(folded.actor, ids)).forEach((v, i) => expect(Math.abs(v - expected[i]!)).toBeLessThan(1e-5));
    folded.dispose();

    const other = await configOf(vowelsYaml(folder), host, ['actor_train.model_args.lora_target=all-linear', 'actor_train.model_args.lora_rank=4']);
    await expect(buildRoles(other, roleNeeds(other))).rejects.toThrow(
      'actor_train.model_args: the loaded adapter (r 4, alpha 8 on q_proj, v_proj, down_proj (2 layers)) is not the one lora_target, lora_rank, lora_alpha and additional_target describe (r 4, alpha 8 on all-linear)',
    );
    adapted.dispose();
    base.model.dispose();
  });
});

describe('LoRA settings', () => {
  const refused = async (overrides: string[], message: string) => {
    const error = await configOf(vowelsYaml(pretrain), host, overrides).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(message);
  };

  test('ROLL\u2019s keys as its configs give them; what LoRA cannot mean is one line', async () => {
    // ROLL's LoRA example repeats actor_train's adapters on actor_infer, spelled out
    const same = await configOf(vowelsYaml(pretrain), host, [
      ...LORA,
      "actor_infer.model_args.lora_target='down_proj,q_proj,v_proj'",
      'actor_infer.model_args.lora_rank=4',
      'actor_infer.model_args.lora_alpha=8',
    ]);
    expect(same.actor_infer.model_args.lora_target).toBe('down_proj,q_proj,v_proj');
    await refused(
      [...LORA, 'actor_infer.model_args.lora_target=q_proj'],
      "actor_infer.model_args.lora_target: actor_infer generates with actor_train's adapters; give it actor_train's lora_target, lora_rank and lora_alpha, or none",
    );
    await refused(
      ['critic.model_args.lora_target=all-linear'],
      "critic.model_args.lora_target: LoRA trains actor_train's policy only (a LoRA run's reference is its frozen base); remove it",
    );
    await refused(
      ['actor_train.model_args.lora_rank=16'],
      'actor_train.model_args.lora_rank: LoRA is on only with lora_target; set lora_target (e.g. all-linear) or remove it',
    );
    await refused(
      ['actor_train.model_args.lora_save_merged=true'],
      'actor_train.model_args.lora_save_merged: only a LoRA run (actor_train.model_args.lora_target) has adapters to merge; remove it',
    );
    await refused(
      ['actor_train.model_args.additional_target=embed_tokens'],
      'actor_train.model_args.additional_target: names modules trained whole beside LoRA adapters; set lora_target, or remove it (without LoRA every weight trains)',
    );
    await refused(
      [...LORA, "actor_train.model_args.additional_target='embed_tokens,norm'"],
      "actor_train.model_args.additional_target: 'norm' cannot be trained whole beside the adapters: embed_tokens and lm_head can",
    );
    await refused(
      [
        ...LORA,
        'actor_train.model_args.additional_target=embed_tokens',
        "actor_infer.model_args.lora_target='q_proj,v_proj,down_proj'",
        'actor_infer.model_args.lora_rank=4',
        'actor_infer.model_args.additional_target=lm_head',
      ],
      "actor_infer.model_args.additional_target: actor_infer generates with actor_train's adapters; give it actor_train's additional_target, or none",
    );
    await refused(
      [...LORA, 'actor_train.model_args.lora_dropout=0.05'],
      "actor_train.model_args.lora_dropout: LoRA dropout is not built; 0 (ROLL's default) trains without it",
    );
  });

  test('a target that names no projection is one line when the model is built', async () => {
    const config = await configOf(vowelsYaml(pretrain), host, ["actor_train.model_args.lora_target='q_proj,c_attn'"]);
    await expect(buildRoles(config, roleNeeds(config))).rejects.toThrow(
      "lora_target: 'c_attn' is no linear layer of this model (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, or all-linear)",
    );
    const pattern = await configOf(vowelsYaml(pretrain), host, ["actor_train.model_args.lora_target='.*\\.1\\.self_attn\\.(q|v)_proj'"]);
    const roles = await buildRoles(pattern, roleNeeds(pattern));
    expect(roles.actor.adapters.map((layer) => Object.keys(layer))).toEqual([[], ['q', 'v']]);
    roles.dispose();
  });
});
