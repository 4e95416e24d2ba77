/**
 * The compiled binary, as a user gets it: built from this checkout, copied alone into an empty
 * folder (no Bun on PATH, no node_modules, no configs/), and run there.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { copyFileSync, existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_CONFIGS } from '../../src/config/builtin';
import { loadConfig } from '../../src/config/load';
import { rollKeysWarning } from '../../src/config/roll';
import { maskSecrets } from '../../src/config/secrets';
import { parseYaml, stringifyYaml } from '../../src/config/yaml';
import { PluginHost } from '../../src/host/plugin_host';
import { agentic, lines, ROOT, scratch, writeFiles } from '../helpers';
import { call, startServe } from '../serve/helpers';
import { IN_CI, missing } from '../system_tools';
import { AGENT_REASON, failingAgentFolder } from './failing_agent';
import { notInstalledCommands, pluginImportsFolder } from './plugin_imports';
import { RedisServer, WorkerProcess } from '../rollout_sources/distributed/helpers';

let bin = '';
let home = '';

beforeAll(() => {
  const buildDir = scratch();
  const build = Bun.spawnSync([process.execPath, 'scripts/build.ts', '--outfile', join(buildDir, 'agentic')], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
  home = scratch();
  bin = join(home, 'agentic');
  copyFileSync(join(buildDir, 'agentic'), bin);
}, 180_000);

/** The configs --config-name can name, as shipped in configs/. */
const SHIPPED = Object.keys(BUILTIN_CONFIGS)
  .filter((file) => !file.includes('/'))
  .map((file) => file.replace(/\.yaml$/, ''))
  .sort();

/** Runs the binary in its empty folder with a PATH that has no bun. */
const run = (args: string[], cwd = home) => agentic(args, { bin, cwd, env: { PATH: '/usr/bin:/bin', HOME: home } });

const PLUGIN = `import { defineEnv, z, Rng } from 'agentic';
class Dice {
  private face = 0;
  reset(seed: number) { this.face = Rng.fromSeed(seed).intBetween(1, 6); return { observation: 'a die is cast', info: { instruction: 'guess the face' } }; }
  step(response: string) { const ok = response.includes(String(this.face)); return { observation: '', reward: ok ? 1 : 0, terminated: true, truncated: false, info: { metrics: { success: ok } } }; }
  render() { return 'die'; }
  close() {}
  sampleRandomAction() { return '<answer>3</answer>'; }
}
export default defineEnv({ name: 'dice', description: 'Guess a die.', config: z.strictObject({ sides: z.int().default(6) }), env: Dice });
`;

describe('the compiled binary in an empty folder', () => {
  test('the folder holds only the binary', () => {
    expect(readdirSync(home)).toEqual(['agentic']);
  });

  test('--help lists the commands', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    for (const name of ['train', 'eval', 'render', 'resume', 'config']) expect(stdout).toContain(name);
  });

  test('the system BLAS is reached from the binary through bun:ffi (or XNNPACK, said so, where there is none)', async () => {
    const { code, stdout } = await run(['doctor']);
    expect(code).toBe(0);
    const row = lines(stdout).find((l) => l.trim().startsWith('matmuls'));
    if (IN_CI) expect(row).toMatch(/matmuls +OpenBLAS [\d.]+ \(.+\) \(blas=auto\)$/);
    else expect(row).toMatch(/matmuls +(.+\(blas=auto\)|XNNPACK \(no system BLAS found.*)$/);
  }, 60_000);

  test('config exp_name=foo seed=123 prints the resolved YAML', async () => {
    const { code, stdout, stderr } = await run(['config', 'exp_name=foo', 'seed=123']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const config = parseYaml(stdout, 'stdout') as Record<string, unknown>;
    expect(config.exp_name).toBe('foo');
    expect(config.seed).toBe(123);
  });

  test('bad values and unknown keys exit non-zero with one line naming the key', async () => {
    for (const [arg, key] of [
      ['seed=abc', 'seed'],
      ['nosuchkey=1', 'nosuchkey'],
    ] as const) {
      const { code, stderr } = await run(['config', arg]);
      expect(code).toBe(2);
      expect(lines(stderr)).toHaveLength(1);
      expect(stderr).toContain(key);
    }
  });

  test('loads a user plugin that imports agentic, by path and from a plugins folder', async () => {
    const dir = scratch({ 'dice.ts': PLUGIN, 'more/dice2.ts': PLUGIN.replace("name: 'dice'", "name: 'dice_two'") });
    writeFiles(dir, {
      'exp.yaml':
        'plugins: [more]\ncustom_envs:\n  D: {env_type: ./dice.ts}\n  D2: {env_type: dice_two}\ntrain_env_manager: {num_env_groups: 2, group_size: 1, tags: [D, D2]}\nrollout_batch_size: 2\n',
    });
    const listed = await run(['plugins', './dice.ts'], dir);
    expect(listed.stderr).toBe('');
    expect(listed.stdout).toMatch(/dice +Guess a die\. +\[dice\.ts\]/);
    const resolved = await run(['config', '-c', 'exp.yaml'], dir);
    expect(resolved.stderr).toBe('');
    const config = parseYaml(resolved.stdout, 'x') as any;
    expect(config.custom_envs.D.env_config).toEqual({ sides: 6 });
    expect(config.custom_envs.D2.env_config).toEqual({ sides: 6 });
  });

  test('asynchronous training: the rollout worker starts from the binary and loads a user plugin by path', async () => {
    const dir = scratch({ 'dice.ts': PLUGIN });
    writeFiles(dir, {
      'exp.yaml':
        'pretrain: agentic:nano\nwarm_start: {enabled: false}\nasync_generation_ratio: 1\nmax_steps: 2\nsave_steps: 0\ntrack_with: [jsonl]\n' +
        'custom_envs:\n  D: {env_type: ./dice.ts}\ntrain_env_manager: {num_env_groups: 2, group_size: 2, tags: [D]}\nval_env_manager: {num_env_groups: 2, group_size: 1, tags: [D]}\nrollout_batch_size: 4\nval_batch_size: 2\n',
    });
    const { code, stderr } = await run(['train', '-c', 'exp.yaml'], dir);
    expect(code).toBe(0);
    expect(stderr).toContain('actor_infer: a worker thread with its own engine, playing 1 step ahead');
    const steps = lines(readFileSync(join(dir, 'output', 'agentic', 'logs', 'metrics.jsonl'), 'utf8')).map((line) => JSON.parse(line));
    expect(steps.slice(0, 2).map((r) => r.metrics['async/staleness_max'])).toEqual([0, 1]);
  }, 60_000);

  test("outside agents play from the binary: module agents import openai and the AI SDK from their own folder's node_modules", async () => {
    // the user's agents, copied out of the repository, beside a node_modules of their own
    const dir = scratch();
    for (const file of ['openai_calculator.ts', 'ai_sdk_calculator.ts']) copyFileSync(join(ROOT, 'examples/agents', file), join(dir, file));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const agent = (file: string) =>
      `{env_type: agent, max_steps: 3, max_tokens_per_step: 16, env_config: {agent: ./${file}, tools: [calculator], reward: math_string_equal}}`;
    writeFiles(dir, {
      'exp.yaml':
        `pretrain: agentic:nano\ncustom_envs:\n  OpenAI: ${agent('openai_calculator.ts')}\n  AiSdk: ${agent('ai_sdk_calculator.ts')}\n` +
        'train_env_manager: {num_env_groups: 2, group_size: 1, tags: [OpenAI, AiSdk]}\nval_env_manager: {num_env_groups: 2, group_size: 1, tags: [OpenAI, AiSdk]}\nrollout_batch_size: 2\nval_batch_size: 2\n',
    });
    const { code, stderr } = await run(['eval', '-c', 'exp.yaml', '--out', 'eval.json'], dir);
    expect({ code, stderr }).toMatchObject({ code: 0 });
    const { tags, metrics } = JSON.parse(readFileSync(join(dir, 'eval.json'), 'utf8'));
    expect([tags.OpenAI.env_failure, tags.AiSdk.env_failure]).toEqual([0, 0]);
    expect(metrics['val/env/OpenAI/gateway_calls']).toBeGreaterThan(0);
    // the AI SDK streams its calls
    expect(metrics['val/env/AiSdk/gateway_streamed']).toBe(metrics['val/env/AiSdk/gateway_calls']);
    expect(metrics['val/env/AiSdk/gateway_calls']).toBeGreaterThan(0);
  }, 60_000);

  test('a run whose every episode fails says why at every step and stops at the third with exit 1 and one line, as from a checkout', async () => {
    const dir = failingAgentFolder('agentic:nano');
    const { code, stderr } = await run(['train', '-c', 'config.yaml', 'save_steps=1'], dir);
    expect(code).toBe(1);
    const log = lines(stderr);
    const reason = `env Calc#0: ${AGENT_REASON}`;
    expect(log.filter((l) => l.startsWith('step ')).map((l) => l.endsWith(`s  failed 4/4: env_failure 4 (${reason})`))).toEqual([true, true]);
    expect(log.at(-1)).toStartWith('error: step 3: the run learns from nothing, 3 failed steps in a row (max_failed_steps_in_a_row=3; ');
    expect(log.at(-1)).toEndWith(`; in this one 4 of 4 episodes failed, most often env_failure (4): ${reason}`);
    expect(existsSync(join(dir, 'output', 'agentic', 'checkpoints', 'checkpoint-2'))).toBe(true);
    expect(existsSync(join(dir, 'output', 'agentic', 'model'))).toBe(false);
  }, 60_000);

  test('a broken plugin is one line naming the file', async () => {
    const dir = scratch({ 'bad.ts': 'export default 42;' });
    const { code, stderr } = await run(['plugins', 'bad.ts'], dir);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe('error: bad.ts: the default export is not a plugin; export default defineEnv(...), defineReward(...) or defineTool(...)');
  });

  test("a plugin's packages resolve from its own folder: one not installed stops the command at start with the install line, as from a checkout", async () => {
    const dir = pluginImportsFolder();
    for (const [args, line] of notInstalledCommands(dir)) {
      const { code, stdout, stderr } = await run(args, dir);
      expect({ args, code, stdout, stderr }).toEqual({ args, code: 2, stdout: '', stderr: `error: ${line}\n` });
    }
    const own = await run(['plugins', './own/fooed.ts'], dir);
    expect({ code: own.code, stderr: own.stderr }).toEqual({ code: 0, stderr: '' });
    expect(own.stdout).toMatch(/\n {2}fooed +foo says x +\[own\/fooed\.ts\]\n/);
  }, 30_000);

  test('plugins check: the built-in bandit passes, a user env file is checked too', async () => {
    const builtin = await run(['plugins', 'check', 'bandit', '--episodes', '2']);
    expect(builtin.stderr).toBe('');
    expect(builtin.code).toBe(0);
    expect(builtin.stdout).toContain("env 'bandit': all checks passed");
    // Dice renders text for 'rgb' too, which the contract forbids
    const dir = scratch({ 'dice.ts': PLUGIN });
    const user = await run(['plugins', 'check', './dice.ts', '--episodes', '2'], dir);
    expect(user.code).toBe(1);
    expect(user.stdout).toContain(
      `FAIL  render          env 'dice': render() returned a malformed result: render('rgb') is the string "die", expected null or { width, height, data }`,
    );
  });

  test('named configs from a configs folder next to it', async () => {
    const dir = scratch({
      'configs/mine.yaml':
        'defaults:\n  - envs/b@custom_envs.B\nexp_name: mine\ntrain_env_manager: {num_env_groups: 1, group_size: 4, tags: [B]}\nrollout_batch_size: 4\n',
      'configs/envs/b.yaml': 'env_type: bandit\n',
    });
    const { code, stdout, stderr } = await run(['config', '--config-name', 'mine'], dir);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('exp_name: mine');
  });

  test('every shipped config is built in: config --config-name X prints it composed as from the repository', async () => {
    const printed = await Promise.all(SHIPPED.map((name) => run(['config', '--config-name', name])));
    for (const [i, name] of SHIPPED.entries()) {
      const loaded = await loadConfig({ cwd: ROOT, configName: name }, new PluginHost(ROOT));
      // the start-up line is the repository's too (sokoban_compact keeps agentic.yaml's FrozenLake entries unplayed)
      const warning = rollKeysWarning(loaded);
      const stderr = warning ? `warning: ${warning}\n` : '';
      expect({ name, ...printed[i]! }).toEqual({ name, code: 0, stderr, stdout: stringifyYaml(maskSecrets(loaded.config)) });
    }
  }, 60_000);

  test('config --list names every shipped config, one a line with its summary', async () => {
    const { code, stdout, stderr } = await run(['config', '--list']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(lines(stdout).map((line) => line.split(' ')[0])).toEqual(SHIPPED);
    for (const line of lines(stdout)) expect(line).toMatch(/^\w+ +[A-Z].+\.$/);
  });

  test('--config-name of a config that is nowhere: one line naming them all', async () => {
    const { code, stderr } = await run(['config', '--config-name', 'nope']);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe(`error: config 'nope' not found in configs/ or built in; available: ${SHIPPED.join(', ')}`);
  });

  test('the shipped configs that read shipped data play from the binary: WebShop, arithmetic, search over the corpus, the embedded suites', async () => {
    const cwd = scratch();
    // webshop names val_suite webshop/v1: eval plays all of its 59 episodes, read from the binary
    for (const [name, tag, episodes] of [
      ['webshop', 'WebShopVal', 59],
      ['tool_use', 'ArithmeticVal', 2],
      ['agentfly_search_rpp', 'SearchQAVal', 2],
    ] as const) {
      const small = ['--policy', 'random', 'val_batch_size=2', 'val_env_manager.num_env_groups=2', '--out', join(cwd, `${name}.json`)];
      const { code, stdout, stderr } = await agentic(['eval', '--config-name', name, ...small], { bin, cwd, env: { PATH: '/usr/bin:/bin', HOME: home } });
      // the config's name and stderr travel with the exit code, so a failure says which and why
      expect({ name, code, stderr }).toMatchObject({ name, code: 0 });
      expect(stdout).toMatch(new RegExp(`^${tag} +${episodes} `, 'm'));
    }
  });

  test('MCP from the binary: a tool_use episode calls the calculator that `agentic mcp-tools` of the binary serves', async () => {
    const cwd = scratch({ 'answers.txt': '<tool_call>{"name": "calculator", "arguments": {"expression": "2*4 + 9*6"}}</tool_call>\n<answer>62</answer>\n' });
    const tools = `custom_envs.Arithmetic.env_config.tools=[{mcp: {command: '${bin}', args: [mcp-tools, calculator]}}]`;
    const script = ['--script', join(cwd, 'answers.txt'), '--out', join(cwd, 'played.json')];
    const { code, stdout, stderr } = await run(['play', 'Arithmetic', '--config-name', 'tool_use', 'seed=5', ...script, tools], cwd);
    expect({ code, stderr }).toMatchObject({ code: 0 });
    expect(stdout).toContain('--- tool calls (1)\n[1] calculator: ok\n62\n');
    expect(stdout).toContain('score: 1 (success)');
  });

  test.skipIf(missing('sandbox'))('the code agent plays from the binary: the coding set, its tests run in the sandbox', async () => {
    const cwd = scratch();
    const small = ['--policy', 'random', 'val_batch_size=2', 'val_env_manager.num_env_groups=2', '--out', join(cwd, 'code.json')];
    const { code, stdout, stderr } = await agentic(['eval', '--config-name', 'agentfly_code_grpo', ...small], {
      bin,
      cwd,
      env: { PATH: '/usr/bin:/bin', HOME: home },
    });
    expect({ code, stderr }).toMatchObject({ code: 0 });
    expect(stdout).toMatch(/^CodingVal +2 /m);
  });

  test('doctor: the embedded wasm backend runs', async () => {
    const { code, stdout } = await run(['doctor']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/agentic +\S+ \(compiled binary\)/);
    expect(stdout).toMatch(/backend wasm +ok \(matmul checked/);
  });

  test.skipIf(missing('mesa'))('doctor backend=webgpu: the embedded Dawn library loads and computes (Mesa here)', async () => {
    const { code, stdout, stderr } = await run(['doctor', 'backend=webgpu']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/backend webgpu +ok \(matmul checked, \d+ ms\), selected/);
    expect(stdout).toMatch(/adapter +.* via (Vulkan|OpenGLES)/);
  });

  test('doctor backend=tensorflow: not installed, one row saying how to install it', async () => {
    const { code, stdout } = await run(['doctor', 'backend=tensorflow']);
    expect(code).toBe(1);
    expect(stdout).toMatch(/backend tensorflow +FAILED: the tensorflow backend needs .* neither is installed: run `bun add @tensorflow\/tfjs-node`/);
  });

  test('doctor: the wasm backend also runs single-threaded and on 2 threads (workers from the binary)', async () => {
    for (const threads of ['1', '2']) {
      const { code, stdout } = await agentic(['doctor'], { bin, cwd: home, env: { PATH: '/usr/bin:/bin', HOME: home, AGENTIC_WASM_THREADS: threads } });
      expect(code).toBe(0);
      expect(stdout).toMatch(/backend wasm +ok \(matmul checked/);
    }
  });

  test('play: a scripted FrozenLake episode to the goal, saved under the working folder', async () => {
    const cwd = scratch();
    const moves = ['Left', 'Left', 'Down', 'Down', 'Down', 'Right', 'Right', 'Right'].map((m) => `<answer>${m}</answer>`).join('\n');
    const { code, stdout } = await agentic(['play', 'FrozenLake', 'seed=20', '--script', '-'], {
      bin,
      cwd,
      env: { PATH: '/usr/bin:/bin', HOME: home },
      stdin: `${moves}\n`,
    });
    expect(code).toBe(0);
    expect(stdout).toContain('score: 1 (success)');
    expect(readdirSync(join(cwd, 'output', 'play'))).toEqual(['FrozenLake-seed20.json']);
  });

  test('serve: answers /generate with log-probs, and drains on SIGTERM', async () => {
    const server = await startServe(['pretrain=agentic:nano'], { bin, cwd: home, env: { PATH: '/usr/bin:/bin', HOME: home } });
    try {
      const { status, body } = await call(server.url, '/generate', {
        input_ids: [1, 2, 3],
        sampling_params: { max_new_tokens: 4, temperature: 0 },
        return_logprob: true,
      });
      expect(status).toBe(200);
      expect(body.meta_info).toMatchObject({ completion_tokens: 4, finish_reason: { type: 'length', length: 4 }, weight_version: 'default' });
      expect(body.meta_info.output_token_logprobs).toHaveLength(4);
      expect(await server.stop()).toBe(0);
    } finally {
      server.child.kill('SIGKILL');
    }
  });
});

describe.skipIf(missing('redis'))('the compiled binary with a redis-server', () => {
  test('distributed rollouts: agentic worker from the binary plays the jobs of a run with its own copy of the actor, a user plugin loaded by path', async () => {
    const redis = await RedisServer.start();
    const dir = scratch({ 'dice.ts': PLUGIN });
    writeFiles(dir, {
      'exp.yaml':
        'pretrain: agentic:nano\nwarm_start: {enabled: false}\nmax_steps: 2\nsave_steps: 0\ntrack_with: [jsonl]\n' +
        'custom_envs:\n  D: {env_type: ./dice.ts}\ntrain_env_manager: {num_env_groups: 2, group_size: 2, tags: [D]}\nval_env_manager: {num_env_groups: 2, group_size: 1, tags: [D]}\nrollout_batch_size: 4\nval_batch_size: 2\n' +
        `distributed: {redis_url: '${redis.url}'}\n`,
    });
    const worker = WorkerProcess.start('bin', ['-c', 'exp.yaml'], { cwd: dir, bin, env: { PATH: '/usr/bin:/bin', HOME: home } });
    try {
      await worker.ready();
      const { code, stderr } = await run(['train', '-c', 'exp.yaml'], dir);
      expect(code).toBe(0);
      expect(stderr).toContain('actor_infer: agentic worker processes through Redis');
      const steps = lines(readFileSync(join(dir, 'output', 'agentic', 'logs', 'metrics.jsonl'), 'utf8')).map((line) => JSON.parse(line));
      expect(steps.slice(0, 2).map((r) => [r.metrics['distributed/workers_seen'], r.metrics['distributed/worker/bin/episodes']])).toEqual([
        [1, 4],
        [1, 4],
      ]);
    } finally {
      worker.kill('SIGTERM');
      expect(await worker.done).toBe(0);
      await redis.stop();
    }
    expect(worker.stderr).toContain('worker bin stopped; 8 job(s) played');
  }, 90_000);
});
