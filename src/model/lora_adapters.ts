/**
 * Putting LoRA adapters (./lora.ts) on a model and taking them off. `applyLora` is the one way a
 * caller gives a model its adapters: new ones that train (seeded), a PEFT folder's that train on,
 * a folder's folded into the weights, or a folder's as a view over the model's weights. Below it
 * are the pieces it is made of: building the adapters' variables, giving them to a model (freezing
 * the rest), folding them in, and views of a model's base weights with other adapters or none. A
 * view shares the base's variables and owns only what it adds, so a LoRA run holds one copy of the
 * base for the actor, its frozen reference and a lagging actor_infer, and a server holds one for
 * every adapter it serves.
 */
import { tf } from '../engine/tf';
import { Rng } from '../engine/rng';
import { AgenticError } from '../errors';
import {
  adaptedProjections,
  adapterVariables,
  canonicalModules,
  loraScale,
  projectionShape,
  readAdapterFolder,
  type Adapter,
  type AdapterFolder,
  type LayerAdapters,
  type LoraSpec,
  type ModelSizes,
  type Projection,
  type SavedModule,
  type SavedModuleValues,
} from './lora';
import { uniqueVariableName } from './hf_weights';
import { type ModelParts, Qwen2Model } from './qwen2';

/** What applyLora does with a model. */
export type LoraRequest =
  /**
   * Adapters that train, every other weight frozen (and the modules trained whole): a PEFT
   * folder's when `folder` names one, else new ones as `spec` describes, seeded by `seed` (A
   * uniform, B zero: the model computes what it did), else none. `spec`'s targets must name linear
   * layers of the model; a folder's adapters are taken as they are (adaptersMatch compares them).
   */
  | { use: 'train'; spec: LoraSpec | null; folder: string | null; seed: number }
  /** A PEFT folder's adapters folded into the weights, which are then all `trainable` or all frozen; no folder: the model as it is. */
  | { use: 'fold'; folder: string | null; trainable: boolean }
  /** A new model over `model`'s weights with a PEFT folder's adapters (a server's adapter): `model` is untouched. */
  | { use: 'view'; folder: string };

/**
 * Gives `model` its LoRA adapters as `request` says (see LoraRequest) and returns the model that
 * has them: `model` itself, or for a view a new model that owns only the adapters. A folder this
 * engine cannot apply, or targets that name no linear layer of the model, is a ModelError.
 */
export function applyLora(model: Qwen2Model, request: LoraRequest): Qwen2Model {
  const layers = model.config.num_hidden_layers;
  const read = request.folder === null ? null : readAdapterFolder(request.folder, layers, model);
  if (request.use === 'view') return withAdapters(model, read!.spec, adaptersFrom(read!), read!.modules);
  if (read) addAdapters(model, read.spec, adaptersFrom(read), read.modules);
  if (request.use === 'fold') {
    if (read) foldAdapters(model, request.trainable);
    return model;
  }
  const { spec, seed } = request;
  if (!spec) return model;
  const chosen = adaptedProjections(spec, layers);
  if (!read) addAdapters(model, spec, newAdapters(spec, chosen, model, seed));
  return model;
}

/**
 * Whether `model`'s adapters are the ones `spec` describes: the same rank, alpha, projections of
 * each layer and modules trained whole (a loaded folder's may be others).
 */
export function adaptersMatch(model: Qwen2Model, spec: LoraSpec): boolean {
  const lora = model.lora;
  if (!lora) return false;
  const chosen = adaptedProjections(spec, model.config.num_hidden_layers);
  return (
    lora.rank === spec.rank &&
    lora.alpha === spec.alpha &&
    model.adapters.every((layer, i) => Object.keys(layer).join() === chosen[i]!.join()) &&
    lora.modulesToSave!.join() === canonicalModules(spec.modulesToSave, model.config.tie_word_embeddings).join()
  );
}

/** New adapters, seeded: A uniform in ±1/sqrt(in), B zero (the model's output is unchanged). */
export function newAdapters(spec: LoraSpec, chosen: Projection[][], model: ModelSizes, seed: number): LayerAdapters[] {
  return chosen.map((projections, layer) => {
    const adapters: LayerAdapters = {};
    for (const p of projections) {
      const [inputs, outputs] = projectionShape(model, p);
      const rng = Rng.fromSeed(seed, 'lora-init', layer, p);
      const bound = 1 / Math.sqrt(inputs);
      const a = Float32Array.from({ length: inputs * spec.rank }, () => (2 * rng.float() - 1) * bound);
      adapters[p] = { a: owned(tf.tensor2d(a, [inputs, spec.rank])), b: owned(tf.zeros([spec.rank, outputs])) };
    }
    return adapters;
  });
}

/** Trainable variables holding an adapter folder's tensors. */
export function adaptersFrom(folder: AdapterFolder): LayerAdapters[] {
  return folder.tensors.map((layer) =>
    Object.fromEntries(Object.entries(layer).map(([p, { a, b }]) => [p, { a: owned(tf.tensor(a.data, a.shape)), b: owned(tf.tensor(b.data, b.shape)) }])),
  );
}

/** Copies of `adapters` (not trainable): a lagging actor_infer's own adapters over the shared base. */
function copyAdapters(adapters: readonly LayerAdapters[]): LayerAdapters[] {
  return adapters.map((layer) =>
    Object.fromEntries(
      Object.entries(layer).map(([p, { a, b }]) => [
        p,
        { a: tf.variable(a, false, uniqueVariableName('lora')), b: tf.variable(b, false, uniqueVariableName('lora')) },
      ]),
    ),
  );
}

/** A trainable variable holding `tensor`, which it disposes (tf.variable keeps its initial tensor otherwise). */
function owned(tensor: tf.Tensor): tf.Variable {
  const variable = tf.variable(tensor, true, uniqueVariableName('lora'));
  tensor.dispose();
  return variable;
}

/**
 * Gives each block of `model` its adapters and freezes every other weight: from here on only the
 * adapters train, and the modules the spec trains whole (their base values kept aside for
 * withoutAdapters; `modules` loads saved values into them). The model owns them from now on.
 */
export function addAdapters(model: Qwen2Model, spec: LoraSpec, adapters: LayerAdapters[], modules: SavedModuleValues = {}): void {
  if (model.lora) throw new AgenticError('this model already has LoRA adapters');
  if (adapters.length !== model.blocks.length) throw new AgenticError(`LoRA: ${adapters.length} layers of adapters for ${model.blocks.length} blocks`);
  for (const v of model.variables) v.trainable = false;
  model.blocks.forEach((block, i) => (block.adapters = adapters[i]!));
  model.lora = { ...spec, modulesToSave: canonicalModules(spec.modulesToSave, model.config.tie_word_embeddings) };
  model.own(adapterVariables(adapters));
  for (const [module, variable] of Object.entries(model.savedModules()) as Array<[SavedModule, tf.Variable]>) {
    const base = tf.variable(variable, false, uniqueVariableName(`${variable.name}_base`));
    model.baseModules[module === 'embed_tokens' ? 'embed' : 'lmHead'] = base;
    model.own([base]);
    const saved = modules[module];
    if (saved) tf.tidy(() => variable.assign(tf.tensor(saved.data, saved.shape)));
    variable.trainable = true;
  }
}

/**
 * Folds the adapters of `model` into its weights (W + (alpha / r) A B) and drops them: the model
 * computes the same function as plain weights, every one of them `trainable` or frozen.
 */
export function foldAdapters(model: Qwen2Model, trainable: boolean): void {
  if (!model.lora) return;
  const scale = loraScale(model.lora);
  for (const block of model.blocks) {
    for (const [p, adapter] of Object.entries(block.adapters) as Array<[Projection, Adapter]>) {
      tf.tidy(() => block[p].assign(block[p].add(tf.matMul(adapter.a, adapter.b).mul(scale))));
    }
    const dropped = adapterVariables([block.adapters]);
    block.adapters = {};
    model.release(dropped);
  }
  model.lora = null;
  model.release(Object.values(model.baseModules));
  model.baseModules = {};
  for (const v of model.variables) v.trainable = trainable;
}

/**
 * The same base weights without the adapters, sharing the model's variables (no copy): the
 * reference of a LoRA run is its frozen base. Disposing the view frees nothing.
 */
export function withoutAdapters(model: Qwen2Model): Qwen2Model {
  return new Qwen2Model(model.config, model.head, { ...baseParts(model), blocks: model.blocks.map((b) => ({ ...b, adapters: {} })) }, []);
}

/**
 * The same base weights with copies of the adapters and of the whole-trained modules (not
 * trainable): a lagging actor_infer of a LoRA run holds its own over the shared base. Disposing it
 * frees only those copies.
 */
export function withAdapterCopies(model: Qwen2Model): Qwen2Model {
  const modules = Object.fromEntries(Object.entries(model.savedModules()).map(([m, v]) => [m, tf.variable(v, false, uniqueVariableName(`${v.name}_copy`))]));
  return withAdapters(model, model.lora!, copyAdapters(model.adapters), modules);
}

/**
 * The same base weights with `adapters` (an adapter an inference server loaded, say) and, for
 * the modules the spec trains whole, `modules` (host values, or variables the view takes). The
 * view owns the adapters and those modules: disposing it frees them, not the base.
 */
export function withAdapters(
  model: Qwen2Model,
  spec: LoraSpec,
  adapters: LayerAdapters[],
  modules: SavedModuleValues | Partial<Record<SavedModule, tf.Variable>> = {},
): Qwen2Model {
  const own = canonicalModules(spec.modulesToSave, model.config.tie_word_embeddings).map((module) => {
    const value = modules[module];
    if (!value) throw new AgenticError(`LoRA: no values for ${module}, which the adapter trains whole`);
    if (value instanceof tf.Variable) return [module, value] as const;
    const tensor = tf.tensor(value.data, value.shape);
    const variable = tf.variable(tensor, false, uniqueVariableName(module));
    tensor.dispose();
    return [module, variable] as const;
  });
  const chosen = Object.fromEntries(own) as Partial<Record<SavedModule, tf.Variable>>;
  const blocks = model.blocks.map((b, i) => ({ ...b, adapters: adapters[i]! }));
  const base = baseParts(model);
  const parts = { ...base, blocks, embed: chosen.embed_tokens ?? base.embed, lmHead: chosen.lm_head ?? base.lmHead };
  const view = new Qwen2Model(model.config, model.head, parts, [...adapterVariables(adapters), ...Object.values(chosen)]);
  view.lora = { ...spec, modulesToSave: own.map(([m]) => m) };
  view.baseModules = { embed: base.embed, lmHead: base.lmHead ?? undefined };
  return view;
}

/** The model's parts with the base's own values of the modules a LoRA run trains whole. */
function baseParts(model: Qwen2Model): ModelParts {
  const { embed, blocks, finalNorm, lmHead, valueHead, baseModules } = model;
  return { embed: baseModules.embed ?? embed, blocks, finalNorm, lmHead: baseModules.lmHead ?? lmHead, valueHead };
}
