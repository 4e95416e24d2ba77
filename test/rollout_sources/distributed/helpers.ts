/**
 * The services of the distributed-rollout tests, real and started by the tests: a `redis-server`
 * on a free loopback port with its append-only file in a scratch folder, and `agentic worker`
 * child processes. Each test stops what it started.
 */
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { MAIN, ROOT, scratch } from '../../helpers';
import { freePort } from '../../../src/util/free_port';

export const WAITS_PLUGIN = join(ROOT, 'test/fixtures/plugins/waits.ts');

/**
 * A two-step run of the waits env on the Redis at `redis`: 2 groups of 2 a step, no checkpoint or
 * validation; `distributed` adds keys to that section (`key: value, ...`).
 */
export function waitsYaml(o: { redis: string; proxy: 'random' | 'policy'; turns: number; latencyMs: number; perWorker: number; distributed: string }): string {
  return `
pretrain: agentic:nano
warm_start: {enabled: false}
plugins: [${WAITS_PLUGIN}]
max_steps: 2
save_steps: 0
eval_steps: 0
track_with: [jsonl]
sequence_length: 256
custom_envs:
  W: {env_type: waits, max_steps: ${o.turns}, max_tokens_per_step: 8, env_config: {turns: ${o.turns}, latency_ms: ${o.latencyMs}}}
train_env_manager: {num_env_groups: 2, group_size: 2, tags: [W], llm_proxy: {proxy_type: ${o.proxy}}, max_env_num_per_worker: ${o.perWorker}}
rollout_batch_size: 4
actor_train: {training_args: {per_device_train_batch_size: 4}}
distributed: {redis_url: '${o.redis}', ${o.distributed}}
`;
}

/**
 * bwrap arguments that run a command with this machine's files, except `mounts`: each [source,
 * target] shows the folder `source` at `target` (null: an empty folder), as a worker on another
 * machine sees its own mounts. Its network is this machine's, so Redis is reachable.
 */
export function otherMachine(mounts: Array<[string | null, string]>): string[] {
  const binds = mounts.flatMap(([source, target]) => (source === null ? ['--tmpfs', target] : ['--bind', source, target]));
  // killed with its parent: the worker inside goes too
  return ['bwrap', '--die-with-parent', '--dev-bind', '/', '/', ...binds, '--'];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class RedisServer {
  private process: Subprocess | null = null;
  readonly dir = scratch();

  private constructor(
    readonly port: number,
    private readonly password: string | null,
  ) {}

  /** `password`: the server requires it (requirepass); the URL carries it percent-encoded. */
  static async start(password: string | null = null): Promise<RedisServer> {
    const redis = new RedisServer(await freePort(), password);
    await redis.restart();
    return redis;
  }

  get url(): string {
    return `redis://${this.password === null ? '' : `:${encodeURIComponent(this.password)}@`}127.0.0.1:${this.port}`;
  }

  private get auth(): string[] {
    return this.password === null ? [] : ['-a', this.password, '--no-auth-warning'];
  }

  /** Starts it (again, on the same port and files), and waits until it answers. */
  async restart(): Promise<void> {
    const requirepass = this.password === null ? [] : ['--requirepass', this.password];
    this.process = Bun.spawn(
      ['redis-server', '--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--dir', this.dir, ...requirepass],
      {
        stdout: 'ignore',
        stderr: 'ignore',
      },
    );
    for (let i = 0; i < 100; i++) {
      const ping = Bun.spawnSync(['redis-cli', '-p', String(this.port), ...this.auth, 'ping']);
      if (ping.stdout.toString().trim() === 'PONG') return;
      await sleep(50);
    }
    throw new Error(`redis-server on port ${this.port} did not start`);
  }

  /** SIGKILL: no shutdown save, only what the append-only file already had. */
  async kill(): Promise<void> {
    this.process?.kill(9);
    await this.process?.exited;
    this.process = null;
  }

  async stop(): Promise<void> {
    this.process?.kill();
    await this.process?.exited;
    this.process = null;
  }

  /** A redis-cli command's output. */
  cli(...args: string[]): string {
    return Bun.spawnSync(['redis-cli', '-p', String(this.port), ...this.auth, ...args]).stdout.toString();
  }
}

/** An `agentic worker` child process (from source, or the binary at `bin`), its output collected. */
export class WorkerProcess {
  private stderrText = '';
  readonly done: Promise<number>;

  private constructor(
    readonly name: string,
    private readonly child: Subprocess<'ignore', 'pipe', 'pipe'>,
  ) {
    const drain = async () => {
      const reader = child.stderr.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.stderrText += decoder.decode(value);
      }
    };
    this.done = Promise.all([drain(), new Response(child.stdout).text()]).then(() => child.exited);
  }

  /** `wrap`: a command the worker runs under, e.g. bwrap with the mounts of another machine. */
  static start(name: string, args: string[], options: { cwd: string; env?: Record<string, string>; bin?: string; wrap?: string[] }): WorkerProcess {
    const command = [...(options.wrap ?? []), ...(options.bin ? [options.bin] : [process.execPath, MAIN])];
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env };
    delete env.AGENTIC_DEBUG;
    const child = Bun.spawn([...command, 'worker', ...args, '--name', name], { cwd: options.cwd, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
    return new WorkerProcess(name, child);
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** Waits until the worker says it is taking jobs. */
  async ready(): Promise<void> {
    for (let i = 0; i < 600 && !this.stderrText.includes(`worker ${this.name}: jobs of`); i++) await sleep(50);
    if (!this.stderrText.includes(`worker ${this.name}: jobs of`)) throw new Error(`worker ${this.name} did not start: ${this.stderrText}`);
  }

  kill(signal: number | NodeJS.Signals = 'SIGTERM'): void {
    this.child.kill(signal);
  }
}

/** An `agentic` child process (a trainer), its stderr collected as it comes. */
export class AgenticProcess {
  private stderrText = '';
  readonly exited: Promise<number>;

  constructor(
    args: string[],
    options: { cwd: string },
    private readonly child = Bun.spawn([process.execPath, MAIN, ...args], {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: '1', AGENTIC_DEBUG: undefined },
      stdin: 'ignore',
      stdout: 'ignore',
      stderr: 'pipe',
    }),
  ) {
    const drain = async () => {
      const decoder = new TextDecoder();
      for await (const chunk of child.stderr) this.stderrText += decoder.decode(chunk);
    };
    this.exited = drain().then(() => child.exited);
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** Waits until a line of stderr matches `pattern` (or fails after `ms`), and returns its match. */
  async line(pattern: RegExp, ms = 60_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + ms;
    for (;;) {
      const match = this.stderrText
        .split('\n')
        .map((l) => pattern.exec(l))
        .find((m) => m !== null);
      if (match) return match;
      if (Date.now() > deadline) throw new Error(`no line matching ${pattern} in: ${this.stderrText}`);
      await sleep(50);
    }
  }

  kill(signal: number | NodeJS.Signals = 'SIGTERM'): void {
    this.child.kill(signal);
  }
}
