/**
 * code_tests: runs the row's tests against the code in the response, in the Python sandbox. The
 * code is the last ```python (or bare ```) block of the response, or the whole response when it
 * has none. `row.tests` is Python (asserts): one string scores 1 if it all passes, else 0; a list
 * scores the fraction of its items that pass, each run on its own after the code. Timeouts and
 * errors are logged as metrics; the whole run shares one time limit. The tests run in the same
 * process as the code: this guards against mistakes, not against code written to fake a pass.
 */
import { defineReward, runPython } from 'agentic';
import harness from './harness.py' with { type: 'text' };

const LIMITS = { timeoutMs: 10_000, memoryMb: 1024, maxOutputBytes: 65_536 };

/** The last fenced python (or unlabelled) code block, or the whole text. */
export function extractCode(response: string): string {
  const blocks = [...response.matchAll(/```[ \t]*(python3?|py)?[ \t]*\r?\n([\s\S]*?)```/gi)];
  return blocks.length > 0 ? blocks.at(-1)![2]! : response;
}

interface HarnessReport {
  passed: boolean[];
  error: string | null;
}

export default defineReward({
  name: 'code_tests',
  sandboxed: true,
  description: "Runs the row's Python tests against the response's code in the sandbox; reward = the fraction that pass.",
  async score({ response, row }, _settings, { pythonSandbox }) {
    const tests = row.tests;
    const list = typeof tests === 'string' ? [tests] : tests;
    if (!Array.isArray(list) || list.length === 0 || !list.every((t) => typeof t === 'string')) {
      throw new Error("the dataset row needs 'tests': Python asserts as a string or a non-empty list of strings");
    }
    const marker = `@@agentic-tests-${crypto.randomUUID()}@@`;
    const run = await runPython(harness, {
      ...LIMITS,
      sandbox: pythonSandbox,
      files: { 'solution.py': extractCode(response), 'tests.json': JSON.stringify({ tests: list, marker }) },
    });
    const line = run.stdout.split('\n').findLast((l) => l.startsWith(marker));
    const report: HarnessReport = line ? JSON.parse(line.slice(marker.length)) : { passed: list.map(() => false), error: null };
    const passed = report.passed.filter(Boolean).length;
    const fraction = passed / list.length;
    const error = report.error ?? (line ? null : `${run.reason}: ${run.stderr.trim().split('\n').at(-1) ?? ''}`.trim());
    return {
      reward: typeof tests === 'string' ? (fraction === 1 ? 1 : 0) : fraction,
      passed,
      total: list.length,
      all_passed: passed === list.length,
      timed_out: run.timedOut,
      crashed: !line,
      ...(error ? { error } : {}),
    };
  },
});
