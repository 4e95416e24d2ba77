/**
 * The PyTorch peer's model and training batch (../shared/bench/torch_peer.py, src/bench/model_bench.ts's
 * PEER_SHAPE), for the profiling scripts: a seeded model, its optimizer, one batch, one step.
 * Start a backend before calling it.
 */
import { Rng } from '../../src/engine/rng';
import { tf } from '../../src/engine/tf';
import { modelConfig } from '../../src/model/config';
import { AdamW, disposeGradients, lossAndGradients } from '../../src/model/optim';
import { Qwen2Model } from '../../src/model/qwen2';

export function peerModel() {
  const config = modelConfig({
    vocab_size: 512,
    hidden_size: 128,
    intermediate_size: 384,
    num_hidden_layers: 4,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    tie_word_embeddings: true,
    max_position_embeddings: 512,
  });
  const model = Qwen2Model.random(config, { seed: 0 });
  const optimizer = new AdamW(model.variables);
  const rng = Rng.fromSeed(0);
  const [rows, length] = [16, 255];
  const ids = tf.tensor2d(
    Int32Array.from({ length: rows * length }, () => rng.int(512)),
    [rows, length],
    'int32',
  );
  const targets = Int32Array.from({ length: rows * length }, () => rng.int(512));
  /** One training step: the mean negative log-likelihood of the targets, its gradients, AdamW. */
  async function trainStep(): Promise<void> {
    const { loss, gradients } = lossAndGradients(
      () => tf.tidy(() => model.tokenStats(model.forward(ids).hidden, targets).logProbs.mean().neg() as tf.Scalar),
      model.variables,
    );
    optimizer.apply(gradients, 1e-4);
    await loss.data();
    loss.dispose();
    disposeGradients(gradients);
  }
  /** The bench's generation: 32 prompts of 128 random ids, 64 sampled tokens each. */
  const generationRequests = () =>
    Array.from({ length: 32 }, (_, i) => ({
      id: i,
      promptIds: Array.from({ length: 128 }, () => rng.int(512)),
      sampling: { temperature: 1, topP: 1, topK: 0, doSample: true },
      maxNewTokens: 64,
      rng: Rng.fromSeed(i),
    }));
  return { model, trainStep, generationRequests };
}
