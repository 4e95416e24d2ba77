/**
 * An outside agent's program as a command line (the agent env's `command:`, a seat's
 * `seat_agent: {command: ...}`): run as a child process with what it needs in environment
 * variables, it prints its result as JSON on its last line of standard output. It runs in a
 * process group of its own and is killed, group and all, when its episode's time is up, so
 * nothing it started is left running.
 */
import { spawn } from 'node:child_process';

/** Most of a command's output kept (its last line is the answer; the rest is for error messages). */
const MAX_OUTPUT_CHARS = 1_000_000;

/**
 * Runs `argv` with `env` added to this process's environment; resolves with the JSON of its last
 * line of output, rejects with a line naming what went wrong (a non-zero exit with the last line
 * of its standard error, a kill at the deadline, a last line that is not JSON).
 */
export function runAgentCommand(argv: readonly string[], env: Record<string, string>, cwd: string, signal: AbortSignal): Promise<unknown> {
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
