/**
 * A contained Python runner shared by tools and rewards: each call runs a snippet in a fresh
 * `python3` process, in a fresh temporary working folder that is removed afterwards. Calls are
 * asynchronous (many run at once) and never block the event loop.
 *
 * What contains the code, outermost first (docs/sandbox.md says the same for users):
 * - bubblewrap (`bwrap`, python_sandbox=bwrap, the default): new user, PID, network, IPC, UTS and
 *   cgroup namespaces, all capabilities dropped, no further user namespaces, an unprivileged uid,
 *   and a filesystem of its own: read-only binds of /usr (with /bin, /lib... as on the host) and of
 *   the interpreter's prefixes, a private /proc and /dev, the script read-only at /sandbox/main.py,
 *   and the run's folder at /work (the only writable place, and HOME). No other file exists for
 *   the code; there is no network at all (not even loopback); when the run ends, the kernel ends
 *   every process it started. When agentic runs as root, the code must not run as kernel uid 0
 *   (the kernel exempts it from RLIMIT_NPROC, also inside a user namespace): an outer bwrap
 *   (root, a mount namespace only) puts a fresh tmpfs on /tmp and binds the run's folder and the
 *   interpreter's prefixes there, where the sandbox user can reach them wherever they are on the
 *   host (a pyenv under /root, a TMPDIR of 0700), setpriv drops to 65534, and an unprivileged
 *   bwrap builds the sandbox from there.
 * - kernel resource limits set before the code runs (prelude.py): CPU seconds, address space, file
 *   size, open files and, under bwrap, a process count of the run's own (RLIMIT_NPROC, counted in
 *   its user namespace; threads count).
 * - a wall-clock timeout, an output byte limit and an abort signal, each of which kills the whole
 *   process group.
 * - a Python audit hook (prelude.py): a second layer that gives clear errors for the common
 *   mistakes (files outside the working folder, network, processes, ctypes). Nothing depends on
 *   it: code can switch it off, and the tests prove containment with it off.
 * python_sandbox=unconfined (the `sandbox` option) runs without bwrap: rlimits (no process count),
 * the hook, the timeout and the process-group kill still apply, but nothing is a boundary.
 *
 * The mode is an argument of each call, never a setting of this module: the run decides it once
 * (the config's python_sandbox, checked at start-up) and hands it to the plugins it builds (their
 * EnvContext, ToolContext and RewardContext). What this module keeps is what the machine allows,
 * probed once a process. AGENTIC_PYTHON picks the interpreter and AGENTIC_BWRAP the bwrap binary.
 */
import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, normalize } from 'node:path';
import { PluginError } from '../errors';
import type { PythonSandboxMode } from './modes';
import prelude from './prelude.py' with { type: 'text' };

export { PYTHON_SANDBOX_MODES, type PythonSandboxMode } from './modes';

export interface PythonRunOptions {
  /** Wall-clock limit; the process group is killed when it passes. Default 10 000. */
  timeoutMs?: number;
  /** CPU-time limit (RLIMIT_CPU). Default: the wall-clock limit rounded up to whole seconds. */
  cpuSeconds?: number;
  /** Address-space limit (RLIMIT_AS) in MiB. Default 512. */
  memoryMb?: number;
  /** The most processes and threads at once (RLIMIT_NPROC, in the run's own user namespace; bwrap only). Default 32. */
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
  /** How the code is contained: bwrap (the default, required) or unconfined (python_sandbox=unconfined). */
  sandbox?: PythonSandboxMode;
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

/** What this machine allows, found once per process (a real sandboxed run of a probe). */
export interface SandboxSupport {
  /** The interpreter as it runs (sys.executable: a pyenv shim resolved, a venv kept). */
  python: string;
  /** The interpreter's prefixes (prefix, base and exec prefixes) outside /usr: bound read-only. */
  prefixes: string[];
  /** The bwrap binary (AGENTIC_BWRAP, else bwrap on PATH), or null when there is none. */
  bwrap: string | null;
  /** Its `--version` line (`bubblewrap 0.8.0`), or null. */
  bwrapVersion: string | null;
  /** Why bwrap cannot contain runs here (one line), or null when it can. */
  problem: string | null;
  /** What to do about the problem (install what is missing, or what bwrap needs of the machine), or null. */
  remedy: string | null;
  /** The kernel user id the code runs as under bwrap: 65534 when agentic is root, else agentic's own. */
  uid: number;
  /** agentic is root: an outer bwrap stages the prefixes and setpriv drops to 65534 first. */
  staged: boolean;
}

/** What the refusals ask for, by what is wrong: only a missing program is something to install. */
const REMEDIES = {
  noBwrap: 'install bubblewrap (apt-get install bubblewrap)',
  brokenBwrap: 'reinstall bubblewrap (apt-get install --reinstall bubblewrap) or set AGENTIC_BWRAP to a working bwrap',
  noSetpriv: 'install util-linux (apt-get install util-linux) for setpriv',
  noNamespaces: 'let bwrap create unprivileged user namespaces here (docs/sandbox.md says how)',
} as const;

const DEFAULTS = { timeoutMs: 10_000, memoryMb: 512, maxProcesses: 32, maxOutputBytes: 16_384, maxFileMb: 16 };
const NOBODY = 65534;
/** Where the run's folder and script are inside the sandbox. */
const INSIDE = { work: '/work', script: '/sandbox/main.py' };
/**
 * Where the outer bwrap (agentic as root) binds the run's folder and the prefixes (numbered), on a
 * tmpfs of its own mount namespace: bwrap reads every bind's source as the host has it, so a
 * TMPDIR or prefix that 65534 cannot enter is bound here while still root.
 */
const STAGE = { run: '/tmp/run', prefix: '/tmp/prefix' };
/** Top-level folders that merged-/usr systems make links into /usr, and others keep as folders. */
const SYSTEM_FOLDERS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];
/** The prelude's exit status when the CPU-time limit is reached (128 + SIGXCPU, as shells report it). */
const EXIT_OUT_OF_CPU = 152;
/** How long to wait for the output pipes to close after the process itself has exited. */
const PIPE_GRACE_MS = 250;

/** The one-line refusal when bwrap is required and unusable; `needed` says by what. */
export function sandboxRefusal(support: SandboxSupport, needed = ''): string {
  return `python sandbox: ${support.problem}${needed}; ${support.remedy}, or set python_sandbox=unconfined to run model-written code without a boundary`;
}

let support: Promise<SandboxSupport> | undefined;

/**
 * Finds the interpreter (AGENTIC_PYTHON, else python3 on PATH) and whether bwrap can contain it
 * (a probe run in the sandbox). Throws a PluginError only when there is no interpreter.
 */
export function sandboxSupport(): Promise<SandboxSupport> {
  support ??= probe().catch((error) => {
    support = undefined;
    throw error;
  });
  return support;
}

interface Interpreter {
  python: string;
  /** sys.prefix, as the interpreter reports it outside the sandbox. */
  prefix: string;
  prefixes: string[];
}

async function findInterpreter(): Promise<Interpreter> {
  const wanted = process.env.AGENTIC_PYTHON || 'python3';
  const found = isAbsolute(wanted) ? wanted : Bun.which(wanted);
  const code = 'import json, sys; print(json.dumps([sys.executable, sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]))';
  const run = found ? await capture([found, '-I', '-c', code]) : undefined;
  let paths: string[] | undefined;
  try {
    paths = run?.code === 0 ? (JSON.parse(run.stdout) as string[]) : undefined;
  } catch {
    paths = undefined;
  }
  if (!paths || paths.some((p) => typeof p !== 'string' || !isAbsolute(p))) {
    throw new PluginError(`python sandbox: cannot run '${wanted}'; install Python 3 or set AGENTIC_PYTHON to an interpreter`);
  }
  const [python, ...prefixes] = paths as [string, ...string[]];
  return { python, prefix: prefixes[0]!, prefixes: outsideUsr(prefixes) };
}

/** The distinct folders not under /usr (bound already) nor under one another. */
function outsideUsr(paths: readonly string[]): string[] {
  const under = (path: string, root: string) => path === root || path.startsWith(`${root}/`);
  const distinct = [...new Set(paths.map((p) => normalize(p)))].filter((p) => !under(p, '/usr')).sort();
  return distinct.filter((p) => !distinct.some((q) => q !== p && under(p, q)));
}

async function probe(): Promise<SandboxSupport> {
  const { python, prefix, prefixes } = await findInterpreter();
  const staged = process.getuid?.() === 0;
  const base = { python, prefixes, staged, uid: staged ? NOBODY : (process.getuid?.() ?? NOBODY), bwrapVersion: null, remedy: null };
  const wanted = process.env.AGENTIC_BWRAP || 'bwrap';
  const bwrap = isAbsolute(wanted) ? wanted : Bun.which(wanted);
  const named = process.env.AGENTIC_BWRAP ? `AGENTIC_BWRAP=${wanted}` : 'bwrap';
  if (!bwrap || !existsSync(bwrap)) {
    return { ...base, bwrap: null, problem: isAbsolute(wanted) ? `${named}: no such file` : `${named} not found on PATH`, remedy: REMEDIES.noBwrap };
  }
  const version = await capture([bwrap, '--version']);
  if (version.code !== 0) return { ...base, bwrap, problem: `${named} does not run (${bwrap} --version failed)`, remedy: REMEDIES.brokenBwrap };
  const found: SandboxSupport = { ...base, bwrap, bwrapVersion: version.stdout.trim(), problem: null };
  if (staged && !Bun.which('setpriv')) {
    return { ...found, problem: 'agentic runs as root and setpriv (util-linux) is missing to drop to uid 65534', remedy: REMEDIES.noSetpriv };
  }
  // a real run: the namespaces, the binds and the interpreter's own prefix inside
  const check = 'import os, sys; print(os.getuid(), sys.prefix)';
  const run = await runContained(found, check, { timeoutMs: 10_000, cpuSeconds: 10, memoryMb: 512, maxProcesses: 32, maxOutputBytes: 4096, maxFileMb: 1 });
  if (run.exitCode === 0 && run.stdout.trim() === `${NOBODY} ${prefix}`) return found;
  const why = run.stderr.trim().split('\n').at(-1) || `exit status ${run.exitCode}, printed ${JSON.stringify(run.stdout.trim())}`;
  return { ...found, problem: `bwrap cannot create the sandbox here (${why})`, remedy: REMEDIES.noNamespaces };
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

type Limits = Required<Omit<PythonRunOptions, 'signal' | 'stdin' | 'files' | 'sandbox'>>;

/** Runs `code` as main.py in a fresh sandbox and collects what it printed. */
export async function runPython(code: string, options: PythonRunOptions = {}): Promise<PythonRunResult> {
  const timeoutMs = positive('timeoutMs', options.timeoutMs ?? DEFAULTS.timeoutMs);
  const limits: Limits = {
    timeoutMs,
    cpuSeconds: Math.ceil(positive('cpuSeconds', options.cpuSeconds ?? timeoutMs / 1000)),
    memoryMb: positive('memoryMb', options.memoryMb ?? DEFAULTS.memoryMb),
    maxProcesses: Math.floor(positive('maxProcesses', options.maxProcesses ?? DEFAULTS.maxProcesses)),
    maxOutputBytes: Math.floor(positive('maxOutputBytes', options.maxOutputBytes ?? DEFAULTS.maxOutputBytes)),
    maxFileMb: positive('maxFileMb', options.maxFileMb ?? DEFAULTS.maxFileMb),
  };
  for (const name of Object.keys(options.files ?? {})) checkedFilePath(name);
  const way = await sandboxSupport();
  if (options.sandbox === 'unconfined') return runUnconfined(way.python, code, limits, options);
  if (way.problem) throw new PluginError(sandboxRefusal(way));
  return runContained(way, code, limits, options);
}

/** A fresh run folder: main.py beside work/ (which holds the given files). */
async function makeRunFolder(code: string, files: PythonRunOptions['files']): Promise<{ root: string; work: string; script: string }> {
  const root = await mkdtemp(join(tmpdir(), 'agentic-py-'));
  const work = join(root, 'work');
  const script = join(root, 'main.py');
  await mkdir(work);
  await writeFile(script, code);
  for (const [name, content] of Object.entries(files ?? {})) {
    const path = join(work, checkedFilePath(name));
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
  }
  return { root, work, script };
}

function preludeArgs(python: string, paths: { work: string; script: string }, limits: Limits, limitProcesses: boolean): string[] {
  const config = {
    ...paths,
    cpu_seconds: limits.cpuSeconds,
    memory_bytes: Math.floor(limits.memoryMb * 2 ** 20),
    file_bytes: Math.floor(limits.maxFileMb * 2 ** 20),
    max_processes: limits.maxProcesses,
    limit_processes: limitProcesses,
  };
  return [python, '-I', '-B', '-X', 'utf8', '-c', prelude, JSON.stringify(config)];
}

/** Under bwrap: the boundary this file's header describes. */
async function runContained(way: SandboxSupport, code: string, limits: Limits, options: PythonRunOptions = {}): Promise<PythonRunResult> {
  const { root, work, script } = await makeRunFolder(code, options.files);
  try {
    const real = way.prefixes.map((prefix) => realpathSync(prefix));
    // staged: the paths the sandbox user (65534) sees in the outer bwrap's /tmp, whatever the host's TMPDIR
    const seen = way.staged ? { script: join(STAGE.run, 'main.py'), work: join(STAGE.run, 'work') } : { script, work };
    const sources = way.staged ? way.prefixes.map((_, i) => `${STAGE.prefix}${i}`) : real;
    if (way.staged) {
      // 65534 reads main.py and writes to work/ through the bind of the run folder
      await chmod(root, 0o755);
      await chownTree(work, NOBODY);
    }
    const inner = [
      way.bwrap!,
      '--unshare-all',
      '--unshare-user',
      '--disable-userns',
      '--die-with-parent',
      '--new-session',
      '--cap-drop',
      'ALL',
      '--ro-bind',
      '/usr',
      '/usr',
      ...systemFolders(),
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      ...way.prefixes.flatMap((prefix, i) => ['--ro-bind', sources[i]!, prefix]),
      '--ro-bind',
      seen.script,
      INSIDE.script,
      '--bind',
      seen.work,
      INSIDE.work,
      '--remount-ro',
      '/dev',
      '--remount-ro',
      '/',
      '--chdir',
      INSIDE.work,
      '--uid',
      String(NOBODY),
      '--gid',
      String(NOBODY),
      '--',
      ...preludeArgs(way.python, INSIDE, limits, true),
    ];
    const outer = way.staged
      ? [
          way.bwrap!,
          '--die-with-parent',
          '--dev-bind',
          '/',
          '/',
          '--tmpfs',
          '/tmp',
          '--bind',
          root,
          STAGE.run,
          ...real.flatMap((prefix, i) => ['--ro-bind', prefix, sources[i]!]),
          '--',
          'setpriv',
          `--reuid=${NOBODY}`,
          `--regid=${NOBODY}`,
          '--clear-groups',
          '--',
        ]
      : [];
    return await supervise([...outer, ...inner], work, INSIDE.work, limits, options);
  } finally {
    await removeRunFolder(root);
  }
}

/** python_sandbox=unconfined: the interpreter itself, with the rlimits and the hook only. */
async function runUnconfined(python: string, code: string, limits: Limits, options: PythonRunOptions): Promise<PythonRunResult> {
  const { root, work, script } = await makeRunFolder(code, options.files);
  try {
    return await supervise(preludeArgs(python, { work, script }, limits, false), work, work, limits, options);
  } finally {
    await removeRunFolder(root);
  }
}

/** Removes a run folder, also where the code took its own permissions away (chmod 0 on a folder). */
async function removeRunFolder(root: string): Promise<void> {
  try {
    await rm(root, { recursive: true, force: true });
  } catch {
    await unlockTree(root);
    await rm(root, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function unlockTree(path: string): Promise<void> {
  try {
    await chmod(path, 0o700);
    for (const entry of await readdir(path, { withFileTypes: true })) if (entry.isDirectory()) await unlockTree(join(path, entry.name));
  } catch {
    // not ours, or gone
  }
}

let systemBinds: string[] | undefined;

/** bwrap arguments that recreate the host's /bin, /lib... : links into /usr, or read-only binds (read once a process). */
function systemFolders(): string[] {
  systemBinds ??= readSystemFolders();
  return systemBinds;
}

function readSystemFolders(): string[] {
  const args: string[] = [];
  for (const name of SYSTEM_FOLDERS) {
    const path = `/${name}`;
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
      else if (stat.isDirectory()) args.push('--ro-bind', path, path);
    } catch {
      // not on this system
    }
  }
  return args;
}

/** Spawns `command` in its own process group, in `cwd`, and enforces the time, output and abort limits. */
async function supervise(command: string[], cwd: string, home: string, limits: Limits, options: PythonRunOptions): Promise<PythonRunResult> {
  const startedAt = Date.now();
  if (options.signal?.aborted) return ended({ stdout: '', stderr: '', exitCode: null, reason: 'aborted', truncated: false }, startedAt);
  const child = Bun.spawn(command, {
    cwd,
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, TMPDIR: home, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' },
    stdin: options.stdin === undefined ? 'ignore' : new TextEncoder().encode(options.stdin),
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
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await child.exited;
    // a process that left the group could hold the pipes open: do not wait for it for long
    const grace = new Promise<void>((resolve) => setTimeout(resolve, PIPE_GRACE_MS));
    await Promise.race([Promise.all([stdout.done, stderr.done]), grace]);
    stdout.stop();
    stderr.stop();
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
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
