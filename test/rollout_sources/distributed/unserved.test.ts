/**
 * A distributed run that nobody serves (src/rollout_sources/distributed/unserved.ts, src/worker/idle.ts): a real
 * redis-server, a trainer and `agentic worker` processes, distributed.idle_warning_s of 1 s. The
 * trainer says which queue waits, who is on Redis and the command that serves it; a worker of
 * another queue says which it watches; the command the trainer gives serves the run.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { scratch } from '../../helpers';
import { missing } from '../../system_tools';
import { AgenticProcess, RedisServer, WorkerProcess, waitsYaml } from './helpers';

const started: Array<{ stop(): unknown }> = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const YAML = (redis: string) => waitsYaml({ redis, proxy: 'random', turns: 3, latencyMs: 10, perWorker: 2, distributed: 'idle_warning_s: 1' });

function worker(name: string, args: string[], cwd: string): WorkerProcess {
  const w = WorkerProcess.start(name, args, { cwd });
  started.push({ stop: () => (w.kill(9), w.done) });
  return w;
}

describe.skipIf(missing('redis'))('a distributed run that no worker serves', () => {
  test('the trainer says so within distributed.idle_warning_s: the queue, who is on Redis, and the worker command line, which serves the run; a worker of another queue says which it watches', async () => {
    const redis = await RedisServer.start();
    started.push(redis);
    const dir = scratch({ 'exp.yaml': YAML(redis.url) });
    const trainer = new AgenticProcess(['train', '-c', 'exp.yaml', 'exp_name=e'], { cwd: dir });
    started.push({ stop: () => (trainer.kill(9), trainer.exited) });

    const url = redis.url.replace(/[.]/g, '\\.');
    const alone = await trainer.line(
      new RegExp(
        `^warning: distributed: no worker has taken a job of e-train for (\\d+) s \\(2 waiting\\); no worker is connected to Redis at ${url}; start one with this run's config: agentic worker -c (\\S+)$`,
      ),
    );
    expect(Number(alone[1])).toBeLessThan(3);
    expect(alone[2]).toBe(`${dir}/output/e/.agentic/config.yaml`);

    // a worker started without the run's exp_name watches the default queue
    const stray = worker('stray', ['-c', 'exp.yaml'], dir);
    await stray.ready();
    await trainer.line(
      new RegExp(
        `^warning: distributed: no worker has taken a job of e-train for \\d+ s \\(2 waiting\\); the workers on Redis at ${url} watch agentic-train \\(stray\\), not e-train \\(another exp_name or distributed\\.queue\\); start one with this run's config: agentic worker -c \\S+$`,
      ),
    );
    for (let i = 0; i < 100 && !stray.stderr.includes('no job for'); i++) await sleep(50);
    expect(stray.stderr).toMatch(
      new RegExp(
        `worker stray: no job for \\d+ s on agentic-train \\(Redis at ${url}\\), where no trainer listens; the trainers on this Redis listen on e-train, e-val\\. A trainer's queues are its distributed\\.queue \\(default: its exp_name\\) with -train and -val: start the worker with the trainer's config and exp_name`,
      ),
    );

    // the command line the trainer gave serves it
    const served = worker('served', ['-c', alone[2]!], dir);
    expect(await trainer.exited).toBe(0);
    expect(served.stderr).toContain('worker served: jobs of e-train');
    expect(stray.stderr).not.toContain('job(s) played');
  }, 120_000);
});
