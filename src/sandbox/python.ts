/**
 * A contained Python runner shared by tools and rewards: each call runs a snippet in a fresh
 * `python3` process, in a fresh temporary working folder that is removed afterwards. Calls are
 * asynchronous (many run at once) and never block the event loop.
 *
 * What contains the code, outermost first:
 * - a new user, network and PID namespace (`unshare -rn --pid --fork --kill-child`, util-linux)
 *   when the kernel allows it: no network at all (not even loopback), and killing the runner
 *   kills every process the code started. Without it, the network is blocked inside Python only.
 * - kernel resource limits set before the code runs: CPU seconds, address space, file size, open
 *   files and, inside the namespace, a process count of its own (RLIMIT_NPROC; the kernel ignores
 *   it for root).
 * - a wall-clock timeout, an output byte limit and an abort signal, each of which kills the whole
 *   process group.
 * - a Python audit hook (see prelude.py) that refuses reading outside the working folder and the
 *   interpreter's library, writing outside the working folder, links, network connections,
 *   ctypes and creating processes; and a minimal environment (no inherited variables).
 * The audit hook is a guard rail for model-written code, not a security boundary: Python code that
 * sets out to defeat it (through the interpreter's internals) can read files the user can read.
 * Run untrusted code from outside your own training setup in a container or VM.
 */
import { chown, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, normalize } from 'node:path';
import { PluginError } from '../errors';
import prelude from './prelude.py' with { type: 'text' };

export interface PythonRunOptions {
  /** Wall-clock limit; the process group is killed when it passes. Default 10 000. */
  timeoutMs?: number;
  /** CPU-time limit (RLIMIT_CPU). Default: the wall-clock limit rounded up to whole seconds. */
  cpuSeconds?: number;
  /** Address-space limit (RLIMIT_AS) in MiB. Default 512. */
  memoryMb?: number;
  /** The most processes and threads at once (RLIMIT_NPROC, inside the namespace). Default 32. */
  maxProcesses?: number;
  /** Bytes kept of stdout and of stderr each; more kills the run. Default 16 384. */
  maxOutputBytes?: number;
  /** The largest file the code may write (RLIMIT_FSIZE), in MiB. Default 16. */
  maxFileMb?: number;
  /** Aborting kills the run; the result's reason is 'aborted'. */
  signal?: AbortSignal;
  /** Text fed to the code's standard input (default: empty). */
  stdin?: string;
  /** Files to put in the working folder first, by relative path (the code is main.py). */
  files?: Readonly<Record<string, string | Uint8Array>>;
}

/**
 * Why the run ended: 'ok' (exit 0), 'error' (non-zero exit), 'timeout' (wall clock), 'cpu' (CPU
 * limit), 'memory' (MemoryError at the address-space limit), 'output' (output limit reached),
 * 'aborted' (the signal), 'killed' (another signal ended it).
 */
export type PythonRunReason = 'ok' | 'error' | 'timeout' | 'cpu' | 'memory' | 'output' | 'aborted' | 'killed';

export interface PythonRunResult {
  stdout: string;
  stderr: string;
  /** The exit status, or null when a signal ended the process. */
  exitCode: number | null;
  timedOut: boolean;
  /** Output went past maxOutputBytes and was cut there. */
  truncated: boolean;
  reason: PythonRunReason;
  /** Wall-clock milliseconds from spawn to exit. */
  durationMs: number;
  /** When the process started and ended (Date.now()), for logs and overlap checks. */
  startedAt: number;
  endedAt: number;
}

/** What this machine allows, found once per process. */
export interface SandboxSupport {
  /** The interpreter's real path (a pyenv shim or a venv link resolved). */
  python: string;
  /** Whether `unshare -rn --pid` works here: no network, a process count per run, sure cleanup. */
  namespaces: boolean;
  /**
   * Whether runs drop to the `nobody` user (65534). Only when agentic runs as root (for whom the
   * kernel ignores the process count) and that user can run the interpreter (a pyenv under
   * /root cannot be); then file permissions hold too.
   */
  dropsRoot: boolean;
}

const DEFAULTS = { timeoutMs: 10_000, memoryMb: 512, maxProcesses: 32, maxOutputBytes: 16_384, maxFileMb: 16 };
const NAMESPACE_COMMAND = ['unshare', '--user', '--map-root-user', '--net', '--pid', '--fork', '--kill-child'];
const NOBODY = 65534;
const DROP_ROOT_COMMAND = ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'];
/** The prelude's exit status when the CPU-time limit is reached (128 + SIGXCPU, as shells report it). */
const EXIT_OUT_OF_CPU = 152;
/** How long to wait for the output pipes to close after the process itself has exited. */
const PIPE_GRACE_MS = 250;

let support: Promise<SandboxSupport> | undefined;

/** Finds the interpreter (AGENTIC_PYTHON, else python3 on PATH) and probes for namespaces. */
export function sandboxSupport(): Promise<SandboxSupport> {
  support ??= probe();
  return support;
}

async function probe(): Promise<SandboxSupport> {
  const wanted = process.env.AGENTIC_PYTHON || 'python3';
  const found = isAbsolute(wanted) ? wanted : Bun.which(wanted);
  const prefixOf = async (command: string[], python: string) => {
    const run = await capture([...command, python, '-I', '-c', 'import sys; print(sys.prefix); print(sys.executable)']);
    return run.code === 0 ? run.stdout.trim().split('\n') : undefined;
  };
  const direct = found ? await prefixOf([], found) : undefined;
  if (!direct || direct.length !== 2) {
    support = undefined;
    throw new PluginError(`python sandbox: cannot run '${wanted}'; install Python 3 or set AGENTIC_PYTHON to an interpreter`);
  }
  const [prefix, python] = direct as [string, string];
  // the most contained way that runs the same interpreter (same sys.prefix)
  const ways: Array<Omit<SandboxSupport, 'python'>> = [
    { dropsRoot: true, namespaces: true },
    { dropsRoot: false, namespaces: true },
    { dropsRoot: true, namespaces: false },
  ];
  const root = process.getuid?.() === 0;
  for (const way of ways) {
    if (way.dropsRoot && !root) continue;
    const command = wrapper(way);
    if (Bun.which(command[0]!) === null) continue;
    if ((await prefixOf(command, python))?.[0] === prefix) return { python, ...way };
  }
  return { python, namespaces: false, dropsRoot: false };
}

function wrapper(way: Omit<SandboxSupport, 'python'>): string[] {
  return [...(way.dropsRoot ? DROP_ROOT_COMMAND : []), ...(way.namespaces ? NAMESPACE_COMMAND : [])];
}

async function capture(command: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const child = Bun.spawn(command, { stdin: 'ignore', stdout: 'pipe', stderr: 'ignore' });
    const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    return { code, stdout };
  } catch {
    return { code: 127, stdout: '' };
  }
}

/** Reads a stream up to `limit` bytes; calls `onOverflow` once when more arrives. */
class BoundedReader {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;
  overflowed = false;
  readonly done: Promise<void>;
  readonly stop: () => void;

  constructor(stream: ReadableStream<Uint8Array>, limit: number, onOverflow: () => void) {
    const reader = stream.getReader();
    this.stop = () => void reader.cancel().catch(() => undefined);
    const pump = async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        const bytes = value as Uint8Array;
        const room = limit - this.size;
        if (bytes.byteLength > room) {
          if (room > 0) this.chunks.push(bytes.subarray(0, room));
          this.size = limit;
          this.overflowed = true;
          onOverflow();
          this.stop();
          return;
        }
        this.chunks.push(bytes);
        this.size += bytes.byteLength;
      }
    };
    this.done = pump().catch(() => undefined);
  }

  text(): string {
    return new TextDecoder().decode(Buffer.concat(this.chunks));
  }
}

async function chownTree(path: string, id: number): Promise<void> {
  await chown(path, id, id);
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const inner = join(path, entry.name);
    if (entry.isDirectory()) await chownTree(inner, id);
    else await chown(inner, id, id);
  }
}

function checkedFilePath(name: string): string {
  const path = normalize(name);
  if (isAbsolute(path) || path.startsWith('..') || path === 'main.py' || path === '.') {
    throw new PluginError(`python sandbox: file name '${name}' must be a relative path inside the working folder, not main.py`);
  }
  return path;
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new PluginError(`python sandbox: ${name} must be a positive number, got ${value}`);
  return value;
}

/** Runs `code` as main.py in a fresh sandbox and collects what it printed. */
export async function runPython(code: string, options: PythonRunOptions = {}): Promise<PythonRunResult> {
  const timeoutMs = positive('timeoutMs', options.timeoutMs ?? DEFAULTS.timeoutMs);
  const cpuSeconds = Math.ceil(positive('cpuSeconds', options.cpuSeconds ?? timeoutMs / 1000));
  const memoryMb = positive('memoryMb', options.memoryMb ?? DEFAULTS.memoryMb);
  const maxProcesses = Math.floor(positive('maxProcesses', options.maxProcesses ?? DEFAULTS.maxProcesses));
  const maxOutputBytes = Math.floor(positive('maxOutputBytes', options.maxOutputBytes ?? DEFAULTS.maxOutputBytes));
  const maxFileMb = positive('maxFileMb', options.maxFileMb ?? DEFAULTS.maxFileMb);
  const way = await sandboxSupport();

  const root = await mkdtemp(join(tmpdir(), 'agentic-py-'));
  try {
    const work = join(root, 'work');
    await mkdir(work);
    const script = join(root, 'main.py');
    await writeFile(script, code);
    for (const [name, content] of Object.entries(options.files ?? {})) {
      const path = join(work, checkedFilePath(name));
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, content);
    }
    if (way.dropsRoot) await chownTree(root, NOBODY);
    const config = {
      work,
      script,
      cpu_seconds: cpuSeconds,
      memory_bytes: Math.floor(memoryMb * 2 ** 20),
      file_bytes: Math.floor(maxFileMb * 2 ** 20),
      max_processes: maxProcesses,
      limit_processes: way.namespaces,
    };
    const command = [...wrapper(way), way.python, '-I', '-B', '-X', 'utf8', '-c', prelude, JSON.stringify(config)];
    return await supervise(command, work, { timeoutMs, maxOutputBytes, signal: options.signal, stdin: options.stdin });
  } finally {
    await rm(root, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function supervise(
  command: string[],
  work: string,
  limits: { timeoutMs: number; maxOutputBytes: number; signal?: AbortSignal; stdin?: string },
): Promise<PythonRunResult> {
  const startedAt = Date.now();
  if (limits.signal?.aborted) return ended({ stdout: '', stderr: '', exitCode: null, reason: 'aborted', truncated: false }, startedAt);
  const child = Bun.spawn(command, {
    cwd: work,
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: work, TMPDIR: work, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' },
    stdin: limits.stdin === undefined ? 'ignore' : new TextEncoder().encode(limits.stdin),
    stdout: 'pipe',
    stderr: 'pipe',
    detached: true, // its own process group, so one kill reaches everything it started
  });
  let cause: 'timeout' | 'output' | 'aborted' | undefined;
  const kill = (why: typeof cause) => {
    cause ??= why;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL'); // the group is gone already; make sure the leader is too
    }
  };
  const stdout = new BoundedReader(child.stdout, limits.maxOutputBytes, () => kill('output'));
  const stderr = new BoundedReader(child.stderr, limits.maxOutputBytes, () => kill('output'));
  const timer = setTimeout(() => kill('timeout'), limits.timeoutMs);
  const onAbort = () => kill('aborted');
  limits.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await child.exited;
    // a process that left the group could hold the pipes open: do not wait for it for long
    const grace = new Promise<void>((resolve) => setTimeout(resolve, PIPE_GRACE_MS));
    await Promise.race([Promise.all([stdout.done, stderr.done]), grace]);
    stdout.stop();
    stderr.stop();
  } finally {
    clearTimeout(timer);
    limits.signal?.removeEventListener('abort', onAbort);
    if (child.exitCode === null) kill(cause);
  }
  const exitCode = child.exitCode;
  const text = { stdout: stdout.text(), stderr: stderr.text() };
  const reason = cause ?? exitReason(exitCode, child.signalCode, text.stderr);
  return ended({ ...text, exitCode, reason, truncated: stdout.overflowed || stderr.overflowed }, startedAt);
}

function exitReason(exitCode: number | null, signal: unknown, stderr: string): PythonRunReason {
  if (exitCode === 0) return 'ok';
  if (signal === 'SIGXCPU' || exitCode === EXIT_OUT_OF_CPU) return 'cpu';
  if (exitCode === null) return 'killed';
  const lastLine = stderr.trimEnd().split('\n').at(-1) ?? '';
  if (lastLine.startsWith('MemoryError')) return 'memory';
  return 'error';
}

function ended(
  partial: { stdout: string; stderr: string; exitCode: number | null; reason: PythonRunReason; truncated: boolean },
  startedAt: number,
): PythonRunResult {
  const endedAt = Date.now();
  return {
    ...partial,
    timedOut: partial.reason === 'timeout',
    durationMs: endedAt - startedAt,
    startedAt,
    endedAt,
  };
}
