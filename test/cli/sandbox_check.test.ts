import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load';
import { checkPythonSandbox, sandboxedPluginsUsed, UNCONFINED_WARNING } from '../../src/cli/sandbox_check';
import { PluginHost } from '../../src/host/plugin_host';
import { McpPool } from '../../src/sdk/mcp/pool';
import { agentic, lines, MAIN, ROOT, scratch } from '../helpers';
import { missing } from '../system_tools';

const withSandbox = test.skipIf(missing('sandbox'));
const withPython = test.skipIf(missing('python'));

const load = async (configName: string, overrides: string[] = []) => {
  const host = new PluginHost(ROOT);
  return { host, config: (await loadConfig({ cwd: ROOT, configName, overrides }, host)).config };
};

/** bwrap made unusable the documented way: AGENTIC_BWRAP names a binary that does not exist. */
const NO_BWRAP = { AGENTIC_BWRAP: '/nonexistent/bwrap' };
const SMALL_EVAL = ['--policy', 'random', 'val_batch_size=2', 'val_env_manager.num_env_groups=2'];

// most tests here start one or two agentic processes of about a second each; CI's machine has been 3-6x slower at times
setDefaultTimeout(30_000);

describe('the Python sandbox check at start-up', () => {
  test("finds the sandboxed tools and rewards the envs' configs name (defaults filled in)", async () => {
    const coding = await load('agentfly_code_grpo');
    expect(await sandboxedPluginsUsed(coding.config, coding.host)).toEqual([
      'tool python_executor in Coding, CodingVal',
      'reward code_tests in Coding, CodingVal',
    ]);
    expect(await sandboxedPluginsUsed(coding.config, coding.host, ['CodingVal'])).toEqual([
      'tool python_executor in CodingVal',
      'reward code_tests in CodingVal',
    ]);
    const lake = await load('frozen_lake');
    expect(await sandboxedPluginsUsed(lake.config, lake.host)).toEqual([]);
  });

  test("a GEM tool wrapper's python_code (ROLL's name for python_executor) is found under the name the config gives it", async () => {
    const host = new PluginHost(ROOT);
    const folder = join(ROOT, 'test/fixtures/roll/examples/qwen3_agentic_gem');
    const data = `gem_math.dapo_17k_with_python_code.env_config.dataset_name=${join(ROOT, 'test/fixtures/gem/dapo.jsonl')}`;
    const { config } = await loadConfig({ configPath: folder, configName: 'gem_math_dapo_python_code', overrides: ['pretrain=agentic:nano', data] }, host);
    expect(await sandboxedPluginsUsed(config, host)).toEqual(['tool python_code in dapo_17k_with_python_code']);
    // the wrapper reaches the env inside its env_config; without it the same env runs no code
    delete config.custom_envs.dapo_17k_with_python_code!.env_config.tool_wrapper;
    expect(await sandboxedPluginsUsed(config, host)).toEqual([]);
  });

  withSandbox('with bwrap working it passes silently; python_sandbox=unconfined warns at each start-up and sets nothing', async () => {
    const warnings: string[] = [];
    const coding = await load('agentfly_code_grpo');
    await checkPythonSandbox(coding.config, coding.host, { warn: (line) => warnings.push(line) });
    expect(warnings).toEqual([]);
    const unconfined = await load('agentfly_code_grpo', ['python_sandbox=unconfined']);
    await checkPythonSandbox(unconfined.config, unconfined.host, { warn: (line) => warnings.push(line) });
    expect(warnings).toEqual([UNCONFINED_WARNING]);
    // the mode is the run's, handed to its plugins; the check leaves nothing behind for the next command
    expect(unconfined.host.forRun({ mcp: new McpPool(), pythonSandbox: unconfined.config.python_sandbox }).envContext().pythonSandbox).toBe('unconfined');
    expect(coding.host.envContext().pythonSandbox).toBe('bwrap');
  });

  withPython('bwrap unusable: a run whose envs run code stops with one line naming the install command and the opt-out', async () => {
    const out = join(scratch(), 'eval.json');
    const refused = await agentic(['eval', '--config-name', 'agentfly_code_grpo', '--out', out, ...SMALL_EVAL], { env: NO_BWRAP });
    console.log(`bwrap missing: exit ${refused.code}: ${refused.stderr.trim()}`);
    expect(refused.code).not.toBe(0);
    expect(lines(refused.stderr)).toEqual([
      'error: python sandbox: AGENTIC_BWRAP=/nonexistent/bwrap: no such file (needed by tool python_executor in CodingVal, reward code_tests in CodingVal); install bubblewrap (apt-get install bubblewrap), or set python_sandbox=unconfined to run model-written code without a boundary',
    ]);
    // envs that run no code do not need bwrap
    const lake = await agentic(['eval', '--config-name', 'frozen_lake', '--out', out, ...SMALL_EVAL], { env: NO_BWRAP });
    expect(lake.code).toBe(0);
  });

  withPython('python_sandbox=unconfined: one warning, and the code runs', async () => {
    const out = join(scratch(), 'eval.json');
    const run = await agentic(['eval', '--config-name', 'agentfly_code_grpo', '--out', out, ...SMALL_EVAL, 'python_sandbox=unconfined'], { env: NO_BWRAP });
    console.log(`unconfined: exit ${run.code}: ${lines(run.stderr)[0]}`);
    expect(run.code).toBe(0);
    expect(lines(run.stderr).filter((l) => l.startsWith('warning:'))).toEqual([`warning: ${UNCONFINED_WARNING}`]);
    expect(lines(run.stdout)[1]).toMatch(/^CodingVal +2 /);
  });

  withSandbox('agentic doctor reports the sandbox, and fails when the config needs bwrap and it is unusable', async () => {
    const ok = await agentic(['doctor', '--config-name', 'agentfly_code_grpo']);
    const row = lines(ok.stdout).find((l) => l.startsWith('sandbox '));
    console.log(`doctor: ${row}`);
    expect(row).toMatch(/^sandbox +bwrap ok: bubblewrap [\d.]+ at \S+; namespaces work; code runs as uid \d+/);
    expect(lines(ok.stdout).find((l) => l.startsWith('python '))).toMatch(/^python +\//);
    const missing = await agentic(['doctor', '--config-name', 'agentfly_code_grpo'], { env: NO_BWRAP });
    const failed = lines(missing.stdout).find((l) => l.startsWith('sandbox '));
    console.log(`doctor, bwrap missing: ${failed}`);
    expect(missing.code).toBe(1);
    expect(failed).toContain('FAILED: AGENTIC_BWRAP=/nonexistent/bwrap: no such file; install bubblewrap (apt-get install bubblewrap)');
  });

  withSandbox(
    'a private TMPDIR (0700, as mktemp -d makes it) holds the runs, and the sandbox still works',
    async () => {
      const tmp = scratch();
      expect(statSync(tmp).mode & 0o777).toBe(0o700);
      const doctor = await agentic(['doctor', '--config-name', 'agentfly_code_grpo'], { env: { TMPDIR: tmp } });
      const row = lines(doctor.stdout).find((l) => l.startsWith('sandbox '));
      console.log(`doctor, TMPDIR ${tmp}: ${row}`);
      expect(row).toMatch(/^sandbox +bwrap ok: /);
      expect(doctor.code).toBe(0);
      const out = join(scratch(), 'eval.json');
      const run = await agentic(['eval', '--config-name', 'agentfly_code_grpo', '--out', out, ...SMALL_EVAL], { env: { TMPDIR: tmp } });
      expect(lines(run.stderr).filter((l) => /^(error|warning):/.test(l))).toEqual([]);
      expect(run.code).toBe(0);
      expect(lines(run.stdout)[1]).toMatch(/^CodingVal +2 /);
      expect(readdirSync(tmp).filter((name) => name.startsWith('agentic-py-'))).toEqual([]);
    },
    60_000,
  );

  withSandbox('bwrap installed but refused a user namespace: the line quotes bwrap and does not ask to install it', async () => {
    // an unmapped user namespace (unshare --user) may not create another: the kernel refuses bwrap as some hosts do
    const out = join(scratch(), 'eval.json');
    const child = Bun.spawn(['unshare', '--user', '--', process.execPath, MAIN, 'eval', '--config-name', 'agentfly_code_grpo', '--out', out, ...SMALL_EVAL], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
    console.log(`no user namespaces: exit ${code}: ${stderr.trim()}`);
    expect(code).toBe(2);
    const [line, ...more] = lines(stderr);
    expect(more).toEqual([]);
    expect(line).toStartWith('error: python sandbox: bwrap cannot create the sandbox here (bwrap: ');
    expect(line).toContain('(needed by tool python_executor in CodingVal, reward code_tests in CodingVal); let bwrap create unprivileged user namespaces here');
    expect(line).toEndWith('or set python_sandbox=unconfined to run model-written code without a boundary');
    expect(line).not.toContain('install');
  });

  withPython('runPython itself refuses in one line when bwrap is unusable and nothing opted out', async () => {
    const script = [
      `import { runPython } from ${JSON.stringify(join(ROOT, 'src/sandbox/python.ts'))};`,
      `try { await runPython('print(1)'); } catch (error) { console.log('refused:', error.constructor.name, error.message); }`,
      `console.log('unconfined:', (await runPython('print(6 * 7)', { sandbox: 'unconfined' })).stdout.trim());`,
    ].join('\n');
    const child = Bun.spawn([process.execPath, '-e', script], { cwd: ROOT, env: { ...process.env, ...NO_BWRAP }, stdout: 'pipe', stderr: 'pipe' });
    const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    expect(code).toBe(0);
    const [refused, unconfined] = lines(stdout);
    expect(refused).toBe(
      'refused: PluginError python sandbox: AGENTIC_BWRAP=/nonexistent/bwrap: no such file; install bubblewrap (apt-get install bubblewrap), or set python_sandbox=unconfined to run model-written code without a boundary',
    );
    expect(unconfined).toBe('unconfined: 42');
  });
});
