/**
 * python_executor: runs a Python snippet in the sandbox (a fresh process and folder each call, so
 * nothing persists between calls, as in AgentFly's code interpreter) and shows the policy what it
 * printed. A failure shows stderr (the traceback); a limit says which one was reached.
 */
import { defineTool, runPython, z, type PythonRunResult } from 'agentic';

/** The most characters of output the policy sees. */
export const MAX_OBSERVATION_CHARS = 4096;
const LIMITS = { timeoutMs: 10_000, memoryMb: 1024, maxOutputBytes: 16_384 };

const ENDINGS: Partial<Record<PythonRunResult['reason'], string>> = {
  timeout: `Execution timed out after ${LIMITS.timeoutMs / 1000} s.`,
  cpu: 'Execution stopped: CPU time limit exceeded.',
  memory: `Execution stopped: memory limit (${LIMITS.memoryMb} MB) exceeded.`,
  output: 'Execution stopped: too much output.',
  aborted: 'Execution was cancelled.',
  killed: 'Execution was killed.',
};

export function describeRun(run: PythonRunResult): string {
  const parts: string[] = [];
  if (run.stdout !== '') parts.push(run.stdout.trimEnd());
  if (run.reason !== 'ok' && run.stderr.trim() !== '') parts.push(run.stderr.trimEnd());
  const ending = ENDINGS[run.reason] ?? (run.reason === 'error' && run.stderr.trim() === '' ? `Exited with status ${run.exitCode}.` : undefined);
  if (ending) parts.push(ending);
  const text = parts.length > 0 ? parts.join('\n') : 'The code ran and printed nothing; use print() to show values.';
  return text.length > MAX_OBSERVATION_CHARS ? `${text.slice(0, MAX_OBSERVATION_CHARS)}\n... (output truncated)` : text;
}

export default defineTool({
  name: 'python_executor',
  sandboxed: true,
  description: 'Run Python 3 code (standard library only, no network, no files kept between calls) and return what it prints.',
  parameters: z.object({
    code: z.string().describe('The Python code to run; print() the values you want to see'),
  }),
  async call({ code }, { signal, pythonSandbox }) {
    const run = await runPython(code, { ...LIMITS, signal, sandbox: pythonSandbox });
    return { observation: describeRun(run), info: { reason: run.reason, exit_code: run.exitCode, duration_ms: run.durationMs } };
  },
});
