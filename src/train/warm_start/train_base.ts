/**
 * The warm start: a supervised first stage that teaches a small policy the answer format before RL,
 * on rows the run generates itself (./data.ts). The result is a Hugging Face folder
 * (warm_start.output_dir) that a later run with the same settings reuses (./base_cache.ts).
 */
import { join, resolve } from 'node:path';
import type { AgenticConfig } from '../../config/schema';
import { AgenticError } from '../../errors';
import type { PluginHost } from '../../host/plugin_host';
import { loadModel, saveModel } from '../../model/load';
import { AdamW, learningRateAt } from '../../model/optim';
import { ChatFormat } from '../../rollout/chat';
import { writeFileAtomic } from '../../util/atomic';
import { updateSupervised } from '../update';
import { existingBase, FINGERPRINT_FILE, rowsDigest, warmStartFingerprint } from './base_cache';
import { generateRows } from './data';

/** Where the warm start says what it does. */
export interface WarmStartLog {
  info: (line: string) => void;
}

export interface WarmStartResult {
  folder: string;
  /** False when an existing base built from the same settings was reused. */
  built: boolean;
  rows: number;
  /** Mean NLL per epoch, first to last. */
  losses: number[];
}

/** Builds the base (or finds one built from the same settings) and returns its folder. */
export async function warmStart(config: AgenticConfig, host: PluginHost, log: WarmStartLog, options: { force?: boolean } = {}): Promise<WarmStartResult> {
  const folder = resolve(config.warm_start.output_dir);
  // settings first (no work); then the rows themselves, which take a second or two to make
  const sameSettings = !options.force && existingBase(config) !== null;
  const ws = config.warm_start;
  const loaded = await loadModel(config.pretrain, { seed: config.seed, trainable: true });
  const optimizer = new AdamW(loaded.model.variables, { beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0 });
  try {
    const chat = new ChatFormat(loaded.tokenizer);
    const started = performance.now();
    const rows = await generateRows(config, host, chat);
    if (rows.ids.length === 0)
      throw new AgenticError('warm_start: the episodes gave no training rows (warm_start.episodes and warm_start.worked_examples are both 0?)');
    const data = rowsDigest(rows);
    const found = sameSettings ? existingBase(config, data) : null;
    if (found) return { folder: found, built: false, rows: 0, losses: [] };
    if (sameSettings)
      log.info(`warm start: the base in ${folder} was trained on other rows than these settings make now (the envs changed); building it again`);
    const { played, solved } = rows.worked;
    const worked = played > 0 ? `${solved} worked examples (${played - solved} of the ${played} played were not solved and are left out), ` : '';
    const randomRows = ws.solution_labels
      ? "; of the random episodes the notes, then the solution's move"
      : ws.random_actions
        ? ''
        : '; of the random episodes the notes alone';
    const think = ws.think ? ` (notes in <think>, then the move${randomRows})` : '';
    log.info(
      `warm start: ${worked}${rows.ids.length - rows.questions} action rows${think} from ${worked ? 'them and ' : ''}${ws.episodes} random-action episodes and ${rows.questions} state-question rows (${((performance.now() - started) / 1000).toFixed(1)} s); training ${loaded.source}`,
    );
    const losses: number[] = [];
    for (let epoch = 0; epoch < ws.epochs; epoch++) {
      const result = await updateSupervised(loaded.model, optimizer, rows, {
        epochs: 1,
        miniBatchRows: ws.batch_size,
        microBatchRows: ws.batch_size,
        gradientAccumulationSteps: 1,
        sequenceLength: config.sequence_length,
        learningRate: learningRateAt(epoch, { type: ws.lr_scheduler_type, peak: ws.learning_rate, totalSteps: ws.epochs }),
        maxGradNorm: config.max_grad_norm,
        shuffleSeed: [config.seed, 'warm_start', epoch],
        recompute: !config.actor_train.model_args.disable_gradient_checkpointing,
      });
      losses.push(result.metrics['sft/loss']!);
      log.info(
        `warm start: epoch ${epoch + 1}/${ws.epochs} loss ${result.metrics['sft/loss']!.toFixed(4)} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
      );
    }
    await saveModel(folder, loaded.model, loaded.tokenizer);
    writeFileAtomic(
      join(folder, FINGERPRINT_FILE),
      `${JSON.stringify({ fingerprint: warmStartFingerprint(config), data, rows: rows.ids.length, losses }, null, 2)}\n`,
    );
    return { folder, built: true, rows: rows.ids.length, losses };
  } finally {
    optimizer.dispose();
    loaded.model.dispose();
  }
}
