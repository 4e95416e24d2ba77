/**
 * `agentic bench` side by side with the PyTorch peer (../shared/bench/torch_peer.py, Debian's
 * python3-torch), in one run: rounds alternate the peer and each of our matmul paths, so a busy
 * moment hits all of them alike. Prints and writes the medians and our ratio to the peer.
 *
 *   bun scripts/bench/versus_peer.ts [--rounds 3] [--paths auto,none] [--peer-threads 1] [--out output/bench/versus_peer.json]
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dir, '../..');
const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
};
const rounds = Number(arg('rounds', '3'));
const paths = arg('paths', 'auto,none').split(',');
const peerThreads = arg('peer-threads', '1');
const out = resolve(root, arg('out', 'output/bench/versus_peer.json'));
const peer = resolve(root, '../shared/bench/torch_peer.py');
const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

interface Sample {
  train_tok_s: number;
  gen_tok_s: number;
  train_mfu?: number;
  sgemm_gflops?: number;
  matmuls?: string;
}

function run(command: string[]): Sample {
  const done = Bun.spawnSync(command, { cwd: root, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, NO_COLOR: '1' } });
  const line = done.stdout
    .toString()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .at(-1);
  if (done.exitCode !== 0 || !line) throw new Error(`${command.join(' ')} failed: ${done.stderr.toString().trim().split('\n').at(-1)}`);
  return JSON.parse(line) as Sample;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const samples: Record<string, Sample[]> = { peer: [], ...Object.fromEntries(paths.map((p) => [p, []])) };
for (let round = 0; round < rounds; round++) {
  samples.peer!.push(run([python, peer, '--threads', peerThreads]));
  for (const path of paths) {
    samples[path]!.push(run([process.execPath, 'src/cli/main.ts', 'bench', '--blas', path, '--out', join(dirname(out), `bench_${path}.json`)]));
  }
  console.error(
    `round ${round + 1}/${rounds}: ${Object.entries(samples)
      .map(([k, v]) => `${k} ${v.at(-1)!.train_tok_s}/${v.at(-1)!.gen_tok_s}`)
      .join(', ')}`,
  );
}
const peerTrain = median(samples.peer!.map((s) => s.train_tok_s));
const peerGen = median(samples.peer!.map((s) => s.gen_tok_s));
const summary = {
  rounds,
  peer: {
    threads: Number(peerThreads),
    train_tok_s: samples.peer!.map((s) => s.train_tok_s),
    gen_tok_s: samples.peer!.map((s) => s.gen_tok_s),
    sgemm_gflops: samples.peer!.map((s) => s.sgemm_gflops),
  },
  ours: Object.fromEntries(
    paths.map((path) => {
      const runs = samples[path]!;
      const train = median(runs.map((s) => s.train_tok_s));
      const gen = median(runs.map((s) => s.gen_tok_s));
      return [
        path,
        {
          matmuls: runs[0]!.matmuls,
          train_tok_s: runs.map((s) => s.train_tok_s),
          gen_tok_s: runs.map((s) => s.gen_tok_s),
          train_mfu: runs.map((s) => s.train_mfu),
          sgemm_gflops: runs.map((s) => s.sgemm_gflops),
          train_vs_peer: Number((train / peerTrain).toFixed(2)),
          gen_vs_peer: Number((gen / peerGen).toFixed(2)),
        },
      ];
    }),
  ),
};
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
console.log(JSON.stringify(summary));
