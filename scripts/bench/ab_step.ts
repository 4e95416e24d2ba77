/**
 * A training step and a generation with the host kernels (src/engine/kernels/attention.ts's
 * hostKernels) and without, alternated in one process so a busy machine hits both alike:
 * `bun scripts/bench/ab_step.ts [rounds]`. Prints the median ms of each.
 */
import { startBackend } from '../../src/engine/backend';
import { hostKernels } from '../../src/engine/kernels/attention';
import { generate } from '../../src/model/generate';
import { peerModel } from './peer_model';

await startBackend('wasm');
const rounds = Number(process.argv[2] ?? 5);
const { model, trainStep: train, generationRequests } = peerModel();

async function gen() {
  await generate(model, generationRequests());
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const times: Record<string, number[]> = { trainOff: [], trainOn: [], genOff: [], genOn: [] };
const cpu: Record<string, number[]> = { trainOff: [], trainOn: [], genOff: [], genOn: [] };
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const timed = async (key: string, work: () => Promise<void>) => {
  const [start, cpuStart] = [performance.now(), cpuMs()];
  await work();
  times[key]!.push(performance.now() - start);
  cpu[key]!.push(cpuMs() - cpuStart);
};
for (const on of [false, true]) {
  hostKernels.enabled = on;
  await train();
  await gen();
}
for (let r = 0; r < rounds; r++) {
  for (const on of [false, true]) {
    hostKernels.enabled = on;
    await timed(on ? 'trainOn' : 'trainOff', train);
  }
  for (const on of [false, true]) {
    hostKernels.enabled = on;
    await timed(on ? 'genOn' : 'genOff', gen);
  }
}
console.log('wall ms', Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Math.round(median(v))])));
console.log('cpu ms', Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Math.round(median(v))])));
console.log(JSON.stringify(Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.map(Math.round)]))));
