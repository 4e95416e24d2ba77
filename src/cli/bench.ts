/** `agentic bench`: the model-engine or rollout benchmark (see src/bench/); prints and writes JSON. */
import { UsageError } from '../errors';
import { writeFileAtomic } from '../util/atomic';
import { checkOutputPath, debugArg } from './args';
import { command } from './command';
import { log, out } from './log';

const BACKENDS = ['wasm', 'cpu', 'webgpu', 'tensorflow'] as const;
const DEFAULT_STEPS = 5;
const MODELS = ['nano', '0.5b'] as const;
const MODEL_FLAGS = ['model', 'lora', 'recompute', 'peak-tflops'] as const;

export default command(
  {
    meta: { name: 'bench', description: 'Benchmark the model engine (training, generation), or rollouts with --rollout (JSON)' },
    args: {
      backend: { type: 'string', description: `tfjs backend: ${BACKENDS.join(', ')}`, default: 'wasm' },
      out: { type: 'string', description: 'Where to write the JSON (default output/bench/<backend>.json)' },
      steps: { type: 'string', description: `Timed training steps (default ${DEFAULT_STEPS}; the rollout benchmark plays a fixed set of episodes)` },
      model: {
        type: 'string',
        description: `The model's shape: ${MODELS.join(', ')} (Qwen2.5-0.5B's; writes output/bench/<backend>_0.5b.json)`,
        default: 'nano',
      },
      lora: { type: 'string', description: 'Train LoRA adapters of this rank on every linear projection instead of every weight' },
      recompute: { type: 'boolean', description: "Gradient checkpointing: recompute each block's activations in the backward pass" },
      'peak-tflops': { type: 'string', description: "The card's peak TFLOPS, <fp32>[,<fp16>], for MFU (default: a table of known GPUs)" },
      blas: {
        type: 'string',
        description: "wasm's matmuls: auto (a system BLAS if found), none (XNNPACK), openblas, blis, mkl, accelerate or a path",
        default: 'auto',
      },
      quick: { type: 'boolean', description: 'A tiny shape that runs in seconds (checks the benchmark, measures nothing useful)' },
      rollout: { type: 'boolean', description: 'Benchmark rollouts instead: 64 FrozenLake envs batched vs one env at a time' },
      ...debugArg,
    },
    async run({ args }) {
      const backend = args.backend as (typeof BACKENDS)[number];
      if (!BACKENDS.includes(backend)) throw new UsageError(`--backend: expected one of ${BACKENDS.join(', ')}, got '${args.backend}'`);
      if (args.rollout && args.steps !== undefined)
        throw new UsageError('--steps: --rollout times a fixed set of episodes, not training steps; leave --steps out');
      const steps = Number(args.steps ?? DEFAULT_STEPS);
      if (!Number.isInteger(steps) || steps < 1) throw new UsageError(`--steps: expected a positive integer, got '${args.steps}'`);
      const model = args.model as (typeof MODELS)[number];
      if (!MODELS.includes(model)) throw new UsageError(`--model: expected one of ${MODELS.join(', ')}, got '${args.model}'`);
      const given = MODEL_FLAGS.filter((flag) => (flag === 'model' ? args.model !== 'nano' : args[flag] !== undefined && args[flag] !== false));
      if (args.rollout && given.length > 0) throw new UsageError(`--${given[0]}: applies to the model benchmark, not --rollout`);
      if (args.quick && model !== 'nano') throw new UsageError('--model: --quick is a tiny shape of its own; leave --model out');
      const lora = args.lora === undefined ? null : Number(args.lora);
      if (lora !== null && !(Number.isInteger(lora) && lora >= 1)) throw new UsageError(`--lora: expected a positive integer rank, got '${args.lora}'`);
      const { knownPeak, parsePeakTflops } = await import('../bench/gpu_peaks');
      const givenPeak = args['peak-tflops'] === undefined ? null : parsePeakTflops(args['peak-tflops']);
      if (typeof givenPeak === 'string') throw new UsageError(`--peak-tflops: ${givenPeak}`);
      const path = args.out ?? `output/bench/${args.rollout ? 'rollout_' : ''}${backend}${model === 'nano' ? '' : `_${model}`}.json`;
      checkOutputPath(path);
      const { blasChoiceProblem } = await import('../engine/blas');
      const problem = blasChoiceProblem(args.blas);
      if (problem) throw new UsageError(`--blas: ${problem}`);
      const { describeBackend, startBackend } = await import('../engine/backend');
      const started = await startBackend(backend, { blas: args.blas });
      log.info(`backend ${describeBackend(started)}`);
      let result: object;
      if (args.rollout) {
        const { QUICK_ROLLOUT_BENCH, ROLLOUT_BENCH, runRolloutBench } = await import('../bench/rollout_bench');
        const report = await runRolloutBench(args.quick ? QUICK_ROLLOUT_BENCH : ROLLOUT_BENCH, (line) => log.info(line));
        log.info(
          `batched rollout: ${report.speedup.toFixed(2)}x the tokens/s of one env at a time end to end, ${report.decodeSpeedup.toFixed(2)}x in decoding`,
        );
        result = { backend, ...report };
      } else {
        const { MODEL_SHAPES, QUICK_SHAPE, runModelBench } = await import('../bench/model_bench');
        const adapter = started.adapter;
        const peak = givenPeak ?? (adapter ? knownPeak(`${adapter.device} ${adapter.description}`) : null);
        if (peak) log.info(`MFU against ${peak.gpu}: ${peak.fp32_tflops} TFLOPS float32, ${peak.fp16_tflops ?? '(not given)'} float16`);
        else
          log.info(
            `MFU against a card's peak: none (${adapter ? `no datasheet figures for '${adapter.device}'` : `the ${backend} backend names no card`}; give --peak-tflops <fp32>[,<fp16>])`,
          );
        const shape = { ...(args.quick ? QUICK_SHAPE : MODEL_SHAPES[model]), steps };
        const report = await runModelBench(shape, { lora, recompute: args.recompute === true, peak, adapter }, (line) => log.info(line));
        const mib = (bytes: number | null) => (bytes === null ? '-' : `${(bytes / 2 ** 20).toFixed(1)} MiB`);
        log.info(
          `train ${report.train_tok_s} tok/s, generation ${report.gen_tok_s} tok/s; tfjs peak ${mib(report.memory.tfjs_peak_bytes)}, GPU peak ${mib(report.memory.gpu_peak_bytes)}`,
        );
        result = { model: args.quick ? 'quick' : model, ...report, matmuls: started.matmuls ?? null, adapter: adapter ?? null };
      }
      const json = JSON.stringify(result);
      writeFileAtomic(path, `${json}\n`);
      out(json);
      log.info(`wrote ${path}`);
      return 0;
    },
  },
  "--model nano (the default) is ../shared/bench/torch_peer.py's shape: hidden 128, 4 layers, 4 heads, 2 kv heads,\n" +
    'ffn 384, vocab 512; train at batch 16 x seq 256, generation of 64 tokens for 32 prompts of 128.\n' +
    "--model 0.5b is Qwen2.5-0.5B's (hidden 896, 24 layers, 14 heads, 2 kv heads, ffn 4864, vocab 151936, tied):\n" +
    'train at batch 4 x seq 512, generation of 64 tokens for 16 prompts of 128; all weights train unless --lora.\n' +
    "MFU: against the sgemm rate (train_mfu) and the card's datasheet float32 and float16 peaks (src/bench/gpu_peaks.ts).\n" +
    '--quick is a tiny shape of its own and takes no --model.\n' +
    '--rollout: FrozenLake episodes (3 turns, 32 tokens a turn) of the agentic:tiny policy, 64 envs sharing one\n' +
    'continuously batched decode vs one env at a time; writes output/bench/rollout_<backend>.json.',
);
