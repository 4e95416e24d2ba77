/** `agentic bench`: the model-engine or rollout benchmark (see src/bench/); prints and writes JSON. */
import { UsageError } from '../errors';
import { writeFileAtomic } from '../util/atomic';
import { checkOutputPath, debugArg } from './args';
import { command } from './command';
import { log, out } from './log';

const BACKENDS = ['wasm', 'cpu', 'webgpu', 'tensorflow'] as const;
const DEFAULT_STEPS = 5;

export default command(
  {
    meta: { name: 'bench', description: 'Benchmark the model engine (training, generation), or rollouts with --rollout (JSON)' },
    args: {
      backend: { type: 'string', description: `tfjs backend: ${BACKENDS.join(', ')}`, default: 'wasm' },
      out: { type: 'string', description: 'Where to write the JSON (default output/bench/<backend>.json)' },
      steps: { type: 'string', description: `Timed training steps (default ${DEFAULT_STEPS}; the rollout benchmark plays a fixed set of episodes)` },
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
      const path = args.out ?? `output/bench/${args.rollout ? 'rollout_' : ''}${backend}.json`;
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
        const { PEER_SHAPE, QUICK_SHAPE, runModelBench } = await import('../bench/model_bench');
        result = {
          ...(await runModelBench({ ...(args.quick ? QUICK_SHAPE : PEER_SHAPE), steps }, (line) => log.info(line))),
          matmuls: started.matmuls ?? null,
        };
      }
      const json = JSON.stringify(result);
      writeFileAtomic(path, `${json}\n`);
      out(json);
      log.info(`wrote ${path}`);
      return 0;
    },
  },
  'Same shape as ../shared/bench/torch_peer.py: hidden 128, 4 layers, 4 heads, 2 kv heads, ffn 384, vocab 512;\n' +
    'train at batch 16 x seq 256, generation of 64 tokens for 32 prompts of 128.\n' +
    '--rollout: FrozenLake episodes (3 turns, 32 tokens a turn) of the agentic:tiny policy, 64 envs sharing one\n' +
    'continuously batched decode vs one env at a time; writes output/bench/rollout_<backend>.json.',
);
