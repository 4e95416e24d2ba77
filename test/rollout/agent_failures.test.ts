import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RolloutBatch } from '../../src/rollout/types';
import { scratch } from '../helpers';
import { missing } from '../system_tools';
import { AGENTS, calculatorYaml, collect, commandAgent, moduleAgent, ScriptedPolicy } from './calculator_agents';

/**
 * A module agent whose first run() does `misbehave` (a function body with ctx in scope) and whose
 * other runs play the task with the openai client; the batch is played by the ScriptedPolicy.
 */
async function oneMisbehaving(misbehave: string, options: { timeoutS?: number } = {}): Promise<RolloutBatch> {
  const dir = scratch({
    'agent.ts': `
import { run as play } from ${JSON.stringify(join(AGENTS, 'openai_calculator.ts'))};
let first = true;
export async function run(ctx: any) {
  if (!first) return play(ctx);
  first = false;
  ${misbehave}
}`,
  });
  return collect(calculatorYaml(moduleAgent(join(dir, 'agent.ts')), options), new ScriptedPolicy());
}

/** The batch's one failed episode; the others played the task through and were scored. */
function theFailure(batch: RolloutBatch) {
  const failed = batch.episodes.filter((e) => e.failure !== null);
  expect(failed).toHaveLength(1);
  for (const e of batch.episodes.filter((e) => e.failure === null)) {
    expect(e.endReason).toBe('terminated');
    expect(e.score).toBe(1);
  }
  return { endReason: failed[0]!.endReason, failure: failed[0]!.failure };
}

/** Whether `pid` is a live process: /proc has it and it is not a zombie (its state follows the name's closing parenthesis). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

const POST = (url: string, key: string, body: string) =>
  `fetch(${url} + '/chat/completions', { method: 'POST', headers: { authorization: 'Bearer ' + ${key}, 'content-type': 'application/json' }, body: ${body} })`;

describe('what costs an outside agent its episode, and only its own', () => {
  test('an agent that never calls the model', async () => {
    const batch = await oneMisbehaving(`return { answer: '42' };`);
    expect(theFailure(batch)).toEqual({ endReason: 'env_failure', failure: 'agent: the agent never called the model' });
  }, 30_000);

  test('an agent whose every model call is refused (a model the gateway does not serve) and that answers anyway: the refusal is the reason', async () => {
    const call = POST('ctx.baseUrl', 'ctx.apiKey', `JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })`);
    const batch = await oneMisbehaving(`await (await ${call}).text();\n  return { answer: '42' };`);
    expect(theFailure(batch)).toEqual({
      endReason: 'env_failure',
      failure:
        "agent: the gateway refused every model call of the agent (1), the first: model 'gpt-4o-mini' is not served here; this server serves 'agentic-policy'",
    });
    expect(batch.episodes.find((e) => e.failure !== null)!.metrics.gateway_refused).toBe(1);
  }, 30_000);

  test('an agent that throws', async () => {
    const batch = await oneMisbehaving(`throw new Error('lost my way');`);
    const { endReason, failure } = theFailure(batch);
    expect(endReason).toBe('env_failure');
    expect(failure).toContain('runAgent() threw');
    expect(failure).toContain('lost my way');
  }, 30_000);

  test('an agent that uses the key of another episode (stashed by the first)', async () => {
    // the first run stashes its key and waits, open, until the second has called with it
    const dir = scratch({
      'agent.ts': `
import { run as play } from ${JSON.stringify(join(AGENTS, 'openai_calculator.ts'))};
let stashed: string | null = null;
let used!: () => void;
const usedIt = new Promise<void>((resolve) => { used = resolve; });
export async function run(ctx: any) {
  if (stashed === null) {
    stashed = ctx.apiKey;
    await Promise.race([usedIt, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    return play(ctx);
  }
  if (stashed === 'done') return play(ctx);
  const other = stashed;
  stashed = 'done';
  const response = await ${POST('ctx.baseUrl', 'other', `JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })`)};
  used();
  return { answer: String(response.status) };
}`,
    });
    const batch = await collect(calculatorYaml(moduleAgent(join(dir, 'agent.ts'))), new ScriptedPolicy());
    expect(theFailure(batch)).toEqual({ endReason: 'env_failure', failure: 'agent: the agent called the model with the key of another episode' });
  }, 30_000);

  test('an agent that sends a 10 MB body', async () => {
    const batch = await oneMisbehaving(`
  const response = await ${POST('ctx.baseUrl', 'ctx.apiKey', `JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(10_000_000) }] })`)};
  return { answer: String(response.status) };`);
    expect(theFailure(batch)).toEqual({
      endReason: 'env_failure',
      failure: 'agent: the agent sent a request of 10000043 bytes (the gateway takes at most 2097152)',
    });
  }, 30_000);

  test('an agent still running at its deadline: the episode ends there, and its late call is refused', async () => {
    // the late call's outcome is left where the test can read it (the module runs in this process)
    const batch = await oneMisbehaving(
      `
  await new Promise((resolve) => setTimeout(resolve, ctx.deadline - Date.now() + 100));
  const late = ${POST('ctx.baseUrl', 'ctx.apiKey', `JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })`)};
  (globalThis as any).lateCall = await late.then((response) => response.status, () => 'no connection');
  return { answer: '42' };`,
      { timeoutS: 2 },
    );
    expect(theFailure(batch)).toEqual({ endReason: 'timeout', failure: 'the agent did not finish within the episode budget of 2 s' });
    const late = globalThis as { lateCall?: number | string };
    for (let waited = 0; late.lateCall === undefined && waited < 2000; waited += 50) await Bun.sleep(50);
    // its session was closed with the episode (410), or the gateway with the rollout
    expect([410, 'no connection']).toContain(late.lateCall!);
  }, 30_000);

  test.skipIf(missing('python'))(
    'a command agent that exits non-zero',
    async () => {
      const dir = scratch({
        // the shell's own builtins only, so the test needs no tool beyond sh and python3
        'first_fails.sh': `if [ ! -e "$1/first" ]; then : > "$1/first"; echo 'no luck today' >&2; exit 3; fi\nexec python3 ${join(AGENTS, 'python_calculator.py')}\n`,
      });
      const batch = await collect(calculatorYaml(commandAgent(['sh', join(dir, 'first_fails.sh'), dir], ', tools: [calculator]')), new ScriptedPolicy());
      const { endReason, failure } = theFailure(batch);
      expect(endReason).toBe('env_failure');
      expect(failure).toContain('the agent command exited with 3: no luck today');
    },
    30_000,
  );

  test('a command agent past its deadline is killed there, with what it started', async () => {
    // each run (Bun, so the test needs no other tool) starts a child, records both pids, then waits past the deadline
    const dir = scratch({
      'sleeper.ts': [
        `const child = Bun.spawn([process.execPath, '-e', 'await Bun.sleep(30_000)']);`,
        `await Bun.write(\`\${process.argv[2]}/\${process.pid}\`, \`\${process.pid} \${child.pid}\`);`,
        'await Bun.sleep(30_000);',
        '',
      ].join('\n'),
    });
    const batch = await collect(calculatorYaml(commandAgent([process.execPath, join(dir, 'sleeper.ts'), dir]), { timeoutS: 1 }), new ScriptedPolicy());
    expect(batch.episodes.map((e) => e.endReason)).toEqual(Array(4).fill('timeout'));
    const pids = readdirSync(dir)
      .filter((name) => /^\d+$/.test(name))
      .flatMap((name) => readFileSync(join(dir, name), 'utf8').trim().split(' ').map(Number));
    expect(pids).toHaveLength(8);
    const running = () => pids.filter(isRunning);
    for (let waited = 0; running().length > 0 && waited < 2000; waited += 50) await Bun.sleep(50);
    expect(running()).toEqual([]);
  }, 30_000);

  test('a module that is missing, does not load or has no run() fails each episode with one line that says so', async () => {
    const dir = scratch({ 'no_run.ts': 'export function act() { return 1; }\n', 'broken.ts': 'export function run( {\n' });
    const failures = async (file: string) => {
      const batch = await collect(calculatorYaml(moduleAgent(join(dir, file))), new ScriptedPolicy());
      expect(batch.episodes.every((e) => e.endReason === 'env_failure')).toBe(true);
      return [...new Set(batch.episodes.map((e) => e.failure!.replace(/Calc#\d/, 'Calc#n')))];
    };
    expect(await failures('missing.ts')).toEqual([
      `env Calc#n: runAgent() threw: agent: ${join(dir, 'missing.ts')} does not exist (paths are relative to the run folder, ${process.cwd()})`,
    ]);
    expect(await failures('no_run.ts')).toEqual([`env Calc#n: runAgent() threw: agent: ${join(dir, 'no_run.ts')} exports no run(ctx) function`]);
    const broken = await failures('broken.ts');
    expect(broken).toHaveLength(1);
    expect(broken[0]).toStartWith(`env Calc#n: runAgent() threw: agent: ${join(dir, 'broken.ts')} did not load: `);
  }, 30_000);
});
