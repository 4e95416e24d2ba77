/**
 * Running an agent program for one episode: a module's `run(ctx)` in this process, or a command
 * line as a child process. Either way the agent ends with its final output: `{ answer, reward? }`
 * or just the answer as a string (a module returns it; a command prints it as JSON on its last
 * line of standard output). The host checks that output (the SDK's AgentOutput), so a wrong one
 * fails the episode with what it was. A command runs in a process group of its own and is killed,
 * group and all, when the episode's time is up, so nothing it started is left running.
 */
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import type { OpenAiTool } from 'agentic';

/** What a module agent's run() is given (docs/agents.md). */
export interface AgentContext {
  /** OpenAI's base URL for this episode (what OPENAI_BASE_URL would hold). */
  baseUrl: string;
  /** The key that identifies this episode (what OPENAI_API_KEY would hold). */
  apiKey: string;
  model: string;
  question: string;
  /** The dataset row without its hidden fields (the answer). */
  task: Record<string, unknown>;
  /** The tools the env offers, as OpenAI function definitions. */
  tools: OpenAiTool[];
  /** Calls one of `tools`; errors come back as text, as a tool message would show them. */
  callTool(name: string, args: unknown): Promise<string>;
  /** Date.now() by which the agent must be done. */
  deadline: number;
  /** Aborted when the episode's time is up. */
  signal: AbortSignal;
}

export type AgentModule = { run: (ctx: AgentContext) => unknown };

const modules = new Map<string, Promise<AgentModule>>();

/** The module at `path`, imported once; one without a run() function is an error. */
export function loadAgentModule(path: string): Promise<AgentModule> {
  let loaded = modules.get(path);
  if (!loaded) {
    loaded = import(pathToFileURL(path).href).then((mod: Record<string, unknown>) => {
      const run = mod.run ?? (mod.default as Record<string, unknown> | undefined)?.run;
      if (typeof run !== 'function') throw new Error(`${path}: no run(ctx) function exported`);
      return { run: run as AgentModule['run'] };
    });
    modules.set(path, loaded);
  }
  return loaded;
}

/** Most of a command's output kept (its last line is the answer; the rest is for error messages). */
const MAX_OUTPUT_CHARS = 1_000_000;

/**
 * Runs `argv` with `env` added to this process's environment; resolves with the JSON of its last
 * line of output, rejects with a line naming what went wrong (a non-zero exit with the last line
 * of its standard error, a kill at the deadline, a last line that is not JSON).
 */
export function runCommand(argv: readonly string[], env: Record<string, string>, cwd: string, signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      if (stdout.length < MAX_OUTPUT_CHARS) stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-MAX_OUTPUT_CHARS);
    });
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    };
    const onAbort = () => {
      killGroup();
      reject(new Error(`the agent command was killed at the episode's deadline`));
    };
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      reject(new Error(`the agent command ${argv[0]} did not start: ${error.message}`));
    });
    child.on('close', (code, killedBy) => {
      signal.removeEventListener('abort', onAbort);
      // whatever the agent started and left behind goes with it
      killGroup();
      if (signal.aborted) return;
      const lastError = stderr.trim().split('\n').at(-1) ?? '';
      if (code !== 0) {
        reject(new Error(`the agent command exited with ${code ?? killedBy}${lastError ? `: ${lastError.slice(0, 300)}` : ''}`));
        return;
      }
      const last = stdout.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(last));
      } catch {
        reject(new Error(`the agent command's last line of output is not JSON: ${JSON.stringify(last.slice(0, 200))}`));
      }
    });
  });
}
