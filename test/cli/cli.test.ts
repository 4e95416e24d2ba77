import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pkg from '../../package.json';
import { parseYaml } from '../../src/config/yaml';
import { agentic, lines, scratch } from '../helpers';
import { missing } from '../system_tools';
import { notInstalledCommands, pluginImportsFolder } from './plugin_imports';

const COMMANDS = ['train', 'eval', 'render', 'resume', 'config', 'plugins', 'doctor', 'serve'];

/** A user's mistake: exit 2, exactly one line on stderr, no stack trace, nothing on stdout. */
async function expectOneLineError(args: string[], fragment: string | RegExp, options: Parameters<typeof agentic>[1] = {}) {
  const result = await agentic(args, options);
  expect(result.code).toBe(2);
  expect(lines(result.stderr)).toHaveLength(1);
  expect(result.stderr).toMatch(/^error: /);
  expect(result.stderr).toMatch(fragment);
  expect(result.stderr).not.toContain('    at ');
  expect(result.stdout).toBe('');
  return result;
}

describe('help and version', () => {
  test('--help lists every command', async () => {
    const { code, stdout } = await agentic(['--help']);
    expect(code).toBe(0);
    for (const name of COMMANDS) expect(stdout).toContain(name);
    expect(stdout).not.toContain('\u001B['); // no colour codes when piped
  });

  test('no arguments prints the same help', async () => {
    const [plain, help] = await Promise.all([agentic([]), agentic(['--help'])]);
    expect(plain).toEqual(help);
  });

  test('--version and -v', async () => {
    for (const flag of ['--version', '-v']) {
      const { code, stdout } = await agentic([flag]);
      expect(code).toBe(0);
      expect(stdout.trim()).toBe(`agentic ${pkg.version}`);
    }
  });

  for (const name of COMMANDS) {
    test(`${name} --help`, async () => {
      const { code, stdout, stderr } = await agentic([name, '--help']);
      expect(code).toBe(0);
      expect(stderr).toBe('');
      expect(stdout).toContain(`USAGE agentic ${name}`);
      if (['train', 'eval', 'render', 'config', 'plugins', 'serve'].includes(name)) {
        for (const flag of ['--config-path', '--config-name', '-c, --config', 'OVERRIDES']) expect(stdout).toContain(flag);
      }
    });
  }

  test('-h works after overrides too', async () => {
    const { code, stdout } = await agentic(['config', 'seed=1', '-h']);
    expect(code).toBe(0);
    expect(stdout).toContain('USAGE agentic config');
  });
});

describe('usage errors: one line, exit 2', () => {
  test('unknown command, with a suggestion', () => expectOneLineError(['trian'], "unknown command 'trian' (did you mean train?)"));
  test('unknown flag on a command', () => expectOneLineError(['config', '--foo'], "unknown option '--foo' for 'agentic config'"));
  test('unknown flag before the command', () => expectOneLineError(['--bogus', 'config'], "unknown option '--bogus' for 'agentic'"));
  test('unknown flag with a value', () => expectOneLineError(['train', '--lr=3'], "unknown option '--lr'"));
  test('a misspelt flag gets a suggestion', () => expectOneLineError(['config', '--config-nam', 'x'], 'did you mean --config-name'));
  test('a flag missing its value', () => expectOneLineError(['config', '--config-name'], "option '--config-name' needs a value"));
  test('a positional that is not an override', () =>
    expectOneLineError(['config', 'seed'], "expected an override (key=value, +key=value, ++key=value or ~key), got 'seed'"));
  test('-c and --config-name together', () => expectOneLineError(['config', '-c', 'a.yaml', '--config-name', 'b'], 'not both'));

  test('a command that takes options only refuses any other word, naming it and the command', async () => {
    await expectOneLineError(['bench', 'blas=none'], "'agentic bench' takes options only, not 'blas=none' (did you mean --blas none?)");
    await expectOneLineError(['bench', '--quick', 'fast'], "'agentic bench' takes options only, not 'fast'");
    await expectOneLineError(['bench', '--', 'steps=3'], "'agentic bench' takes options only, not 'steps=3' (did you mean --steps 3?)");
  }, 30_000);

  test('every command refuses an argument it does not read before doing anything', async () => {
    const cases: Array<[string[], string]> = [
      [['train', 'warmup'], "got 'warmup'"],
      [['sft', 'warmup'], "got 'warmup'"],
      [['eval', 'warmup'], "got 'warmup'"],
      [['render', 'warmup'], "got 'warmup'"],
      [['play', 'FrozenLake', 'warmup'], "got 'warmup'"],
      [['serve', 'warmup'], "got 'warmup'"],
      [['worker', 'warmup'], "got 'warmup'"],
      [['resume', 'output/x/checkpoint-1', 'warmup'], "got 'warmup'"],
      [['config', 'warmup'], "got 'warmup'"],
      [['doctor', 'warmup'], "got 'warmup'"],
      [['plugins', 'warmup'], 'warmup: no such plugin file or folder'],
      [['plugins', 'check', 'bandit', 'warmup'], "got 'warmup'"],
      [['bench', 'warmup'], "'agentic bench' takes options only, not 'warmup'"],
    ];
    await Promise.all(cases.map(([args, fragment]) => expectOneLineError(args, fragment)));
  }, 60_000);
});

describe('agentic config', () => {
  test('prints the resolved config as YAML, with overrides applied', async () => {
    const { code, stdout, stderr } = await agentic(['config', 'exp_name=foo', 'seed=123']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain('exp_name: foo\n');
    expect(stdout).toContain('seed: 123\n');
    const config = parseYaml(stdout, 'stdout') as Record<string, any>;
    expect(config.output_dir).toBe('./output/foo');
    expect(config.custom_envs.FrozenLake.env_config.p).toBe(0.8);
  });

  test('bad values and unknown keys: one line naming the key', async () => {
    await expectOneLineError(['config', 'seed=abc'], 'seed: expected integer, got "abc"');
    await expectOneLineError(['config', 'nosuchkey=1'], /nosuchkey: unknown key/);
    await expectOneLineError(['config', 'sed=1'], 'sed: unknown key (did you mean seed?)');
    await expectOneLineError(['config', 'actor_train.training_args.learning_rate=[1,'], "unclosed '['");
  });

  test('every override form from the command line', async () => {
    const { code, stdout, stderr } = await agentic([
      'config',
      '+vars.note=hello',
      '++vars.note=bye',
      '~val_env_manager.tags',
      'track_with=[console,jsonl]',
      'actor_train.training_args.learning_rate=1e-3',
      "exp_name='007'",
      'logging_dir=${output_dir}/tb',
    ]);
    // with no val tags, the val entry is played by no env manager: not built or checked
    expect(stderr).toBe('warning: custom_envs entries no env manager plays (not built or checked): FrozenLake (docs/roll.md)\n');
    expect(code).toBe(0);
    const config = parseYaml(stdout, 'stdout') as Record<string, any>;
    expect(config.vars).toEqual({ note: 'bye' });
    expect(config.val_env_manager.tags).toEqual([]);
    expect(config.track_with).toEqual(['console', 'jsonl']);
    expect(config.actor_train.training_args.learning_rate).toBe(0.001);
    expect(config.exp_name).toBe('007');
    expect(config.logging_dir).toBe('./output/007/tb');
  });

  test('both spellings of --config-path/--config-name, and -c / --config', async () => {
    const dir = scratch({
      'confs/exp.yaml':
        'defaults:\n  - /envs/b@custom_envs.B\nexp_name: spelled\ntrain_env_manager: {num_env_groups: 1, group_size: 2, tags: [B]}\nrollout_batch_size: 2\n',
      'confs/envs/b.yaml': 'env_type: bandit\n',
    });
    const forms = [
      ['--config-path', 'confs', '--config-name', 'exp'],
      ['--config_path', 'confs', '--config_name', 'exp'],
      ['--config-path=confs', '--config-name=exp'],
      ['-c', 'confs/exp.yaml'],
      ['--config', 'confs/exp.yaml'],
      ['--config=confs/exp.yaml'],
    ];
    for (const form of forms) {
      const { code, stdout, stderr } = await agentic(['config', ...form], { cwd: dir });
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).toContain('exp_name: spelled\n');
    }
  }, 60_000);

  test('a config that uses a plugin by path shows the plugin defaults', async () => {
    const dir = scratch({
      'my_env.ts': `import { defineEnv, z } from 'agentic';
class Coin { reset() { return { observation: 'flip', info: { instruction: 'call it' } }; }
  step() { return { observation: '', reward: 1, terminated: true, truncated: false, info: { metrics: {} } }; }
  render() { return 'coin'; } close() {} sampleRandomAction() { return '<answer>heads</answer>'; } }
export default defineEnv({ name: 'coin', description: 'Call a coin flip.', config: z.strictObject({ bias: z.number().default(0.5) }), env: Coin });`,
      'exp.yaml':
        'custom_envs:\n  Coin: {env_type: ./my_env.ts, env_config: {}}\ntrain_env_manager: {num_env_groups: 1, group_size: 1, tags: [Coin]}\nrollout_batch_size: 1\n',
    });
    const { code, stdout, stderr } = await agentic(['config', '-c', 'exp.yaml', 'custom_envs.Coin.env_config.bias=0.9'], { cwd: dir });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect((parseYaml(stdout, 'x') as any).custom_envs.Coin.env_config).toEqual({ bias: 0.9 });
  });

  test('--debug and AGENTIC_DEBUG=1 add the stack trace', async () => {
    for (const run of [agentic(['config', 'seed=abc', '--debug']), agentic(['config', 'seed=abc'], { env: { AGENTIC_DEBUG: '1' } })]) {
      const { code, stderr } = await run;
      expect(code).toBe(2);
      expect(stderr.split('\n')[0]).toBe('error: seed: expected integer, got "abc"');
      expect(stderr).toContain('    at ');
    }
  });
});

describe('commands that validate and then say what is missing', () => {
  test('train with no config runs the built-in one (here shortened to a step)', async () => {
    const out = scratch();
    const warm = ['warm_start.episodes=8', 'warm_start.worked_examples=8', 'warm_start.epochs=1', `warm_start.output_dir=${out}/base`];
    const args = ['train', 'max_steps=1', 'eval_steps=0', 'rollout_batch_size=8', 'train_env_manager.num_env_groups=1', `output_dir=${out}`, ...warm];
    const { code, stdout, stderr } = await agentic(args);
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toContain('training agentic (seed 42) from configs/agentic.yaml (built in)');
    expect(stderr).toContain('warm start: base saved to');
    expect(stderr).toMatch(/\nstep 1\/1 +score /);
  }, 60_000);

  for (const name of ['train', 'eval', 'render']) {
    test(`${name} rejects a bad config first`, () => expectOneLineError([name, 'seed=abc'], 'seed: expected integer'));
  }
});

describe('agentic plugins', () => {
  test('lists the built-ins by kind', async () => {
    const { code, stdout } = await agentic(['plugins']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/environments \(\d+\)\n {2}agent +An agent you already wrote/);
    expect(stdout).toMatch(/\n {2}bandit +Two-armed bandit/);
    expect(stdout).toMatch(/\n {2}frozen_lake +FrozenLake/);
    expect(stdout).toMatch(/\n {2}sokoban +Sokoban/);
    expect(stdout).toContain('exact_match');
    expect(stdout).toContain('llm_judge');
    expect(stdout).toContain('calculator');
  });

  test('loads and lists a plugin file given by path, with its source', async () => {
    const dir = scratch({
      'shout.ts': `import { defineTool, z } from 'agentic';
export default defineTool({ name: 'shout', description: 'Upper-cases text.', parameters: z.object({ text: z.string() }), call: ({ text }) => text.toUpperCase() });`,
    });
    const { code, stdout } = await agentic(['plugins', './shout.ts'], { cwd: dir });
    expect(code).toBe(0);
    expect(stdout).toMatch(/shout +Upper-cases text\. +\[shout\.ts\]/);
  });

  test('a broken plugin is one line naming the file', async () => {
    const dir = scratch({ 'broken.ts': 'export default { not: "a plugin" };' });
    await expectOneLineError(['plugins', 'broken.ts'], 'broken.ts: the default export is not a plugin', { cwd: dir });
    const syntax = scratch({ 'syntax.ts': 'export default {' });
    await expectOneLineError(['plugins', 'syntax.ts'], /^error: syntax\.ts:1:\d+: cannot load: /, { cwd: syntax });
  });
});

describe("a plugin's packages resolve from its own folder, and nothing is downloaded", () => {
  test('a package that is not installed stops the command at start: one line naming the file, the package and the install command', async () => {
    const dir = pluginImportsFolder();
    // where Bun would put what it downloads
    const cache = scratch();
    for (const [args, line] of notInstalledCommands(dir)) {
      const { code, stdout, stderr } = await agentic(args, { cwd: dir, env: { BUN_INSTALL_CACHE_DIR: cache } });
      expect({ args, code, stdout, stderr }).toEqual({ args, code: 2, stdout: '', stderr: `error: ${line}\n` });
    }
    expect(readdirSync(cache)).toEqual([]);
  }, 30_000);

  test("a package in the plugin's own node_modules resolves, by its package.json's exports", async () => {
    const dir = pluginImportsFolder();
    const { code, stdout, stderr } = await agentic(['plugins', './own/fooed.ts'], { cwd: dir });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/\n {2}fooed +foo says x +\[own\/fooed\.ts\]\n/);
  });
});

const NAN_REWARD_ENV = `import { defineEnv } from 'agentic';
class Broken {
  reset() { return { observation: 'start', info: { instruction: 'say anything' } }; }
  step() { return { observation: 'end', reward: Number.NaN, terminated: true, truncated: false, info: { metrics: {} } }; }
  render(mode) { return mode === 'text' ? 'start' : null; }
  close() {}
  sampleRandomAction() { return '<answer>x</answer>'; }
}
export default defineEnv({ name: 'nan_reward', description: 'Rewards NaN.', env: Broken });
`;

describe('agentic plugins check', () => {
  test('bandit passes every check: one line per check, a summary, exit 0', async () => {
    const { code, stdout, stderr } = await agentic(['plugins', 'check', 'bandit', '--episodes', '3', 'risky_prob=0.5']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toStartWith("checking env 'bandit' (plugins/envs/bandit): 3 random episodes from seed 0, at most 20 steps each\n");
    expect(stdout).toContain('"risky_prob":0.5');
    for (const name of ['config', 'construct', 'reset', 'step', 'determinism', 'isolation', 'invalid_action', 'render', 'close']) {
      expect(stdout).toMatch(new RegExp(`^  pass  ${name} +\\S`, 'm'));
    }
    expect(stdout).toMatch(/^3 episodes, 3 steps \(3 ended by the env, 0 failed\); mean return [\d.]+; success rate [\d.]+$/m);
    expect(stdout.trimEnd()).toEndWith("env 'bandit': all checks passed");
  });

  test('an env file that breaks the contract: the failing check names the reason, exit 1', async () => {
    const dir = scratch({ 'nan_env.ts': NAN_REWARD_ENV });
    const { code, stdout } = await agentic(['plugins', 'check', './nan_env.ts', '--episodes=2'], { cwd: dir });
    expect(code).toBe(1);
    expect(stdout).toContain("checking env 'nan_reward' (nan_env.ts)");
    expect(stdout).toContain(
      "  FAIL  step            env 'nan_reward': step() returned a malformed result: reward is NaN, expected a finite number (2 of 2 episodes)",
    );
    expect(stdout.trimEnd()).toMatch(/env 'nan_reward': \d+ of 11 checks failed: step(, \w+)* \(\d+ skipped\)$/);
  });

  test('a step that times out fails its check, and a timer the plugin left behind does not hold the exit', async () => {
    const dir = scratch({ 'slow_env.ts': NAN_REWARD_ENV.replace('step() {', 'step() { return new Promise((resolve) => setTimeout(resolve, 60_000));') });
    const started = performance.now();
    const { code, stdout } = await agentic(['plugins', 'check', './slow_env.ts', '--episodes=1', '--timeout', '0.05'], { cwd: dir });
    expect(code).toBe(1);
    expect(stdout).toContain("  FAIL  step            env 'nan_reward': step() did not finish within 50 ms (1 of 1 episodes)");
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  test('usage errors are one line, exit 2', async () => {
    await expectOneLineError(['plugins', 'check', 'bandti'], "unknown env 'bandti' (did you mean bandit?)");
    await expectOneLineError(['plugins', 'check', 'bandit', 'risky_prb=1'], "env 'bandit': env_config.risky_prb: unknown key (did you mean risky_prob");
    await expectOneLineError(['plugins', 'check', 'bandit', '--episodes', '0'], "option '--episodes' expects a whole number from 1 to 10000, got '0'");
    await expectOneLineError(
      ['plugins', 'check', 'bandit', '--max_step', '3'],
      "unknown option '--max_step' for 'agentic plugins check' (did you mean --max-steps?)",
    );
  });

  test('--help lists the checks', async () => {
    const { code, stdout } = await agentic(['plugins', 'check', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('USAGE agentic plugins check [OPTIONS] <ENV> [SETTINGS]');
    expect(stdout).toMatch(/^ {2}determinism +the same seed/m);
  });
});

test('agentic doctor runs a matmul on the wasm and cpu backends', async () => {
  const { code, stdout } = await agentic(['doctor']);
  expect(code).toBe(0);
  expect(stdout).toMatch(/backend wasm +ok \(matmul checked/);
  expect(stdout).toMatch(/backend cpu +ok/);
  expect(stdout).not.toContain('Hi, looks like');
  expect(stdout).toMatch(/^selected +wasm$/m);
  expect(stdout).toMatch(/^backend webgpu +not started \(check it with backend=webgpu\)$/m);
});

const noMesa = missing('mesa');

test.skipIf(noMesa)('agentic doctor backend=webgpu starts webgpu (Mesa here) and shows its adapter', async () => {
  const { code, stdout, stderr } = await agentic(['doctor', 'backend=webgpu']);
  expect(stderr).toBe('');
  expect(code).toBe(0);
  expect(stdout).toMatch(/^selected +webgpu \(webgpu_adapter=auto\)$/m);
  expect(stdout).toMatch(/^backend webgpu +ok \(matmul checked, \d+ ms\), selected$/m);
  expect(stdout).toMatch(/^ +adapter +\S+ \(vendor .*, architecture .*\) via (Vulkan|OpenGLES), /m);
  // the features Dawn offers on any adapter, and every limit doctor shows, with its number
  expect(stdout).toMatch(/^ +features +.*\bdawn-native\b/m);
  expect(stdout).toMatch(
    /^ +limits +maxBufferSize \d+, maxStorageBufferBindingSize \d+, maxStorageBuffersPerShaderStage \d+, maxComputeWorkgroupStorageSize \d+, maxComputeInvocationsPerWorkgroup \d+, maxComputeWorkgroupSizeX \d+, maxComputeWorkgroupsPerDimension \d+$/m,
  );
});

test.skipIf(noMesa)('agentic doctor backend=webgpu without a usable adapter: the row says why and how to fix it, exit 1', async () => {
  // an EGL platform Mesa does not know: the OpenGL ES adapter cannot start, as on a machine without Mesa
  const { code, stdout } = await agentic(['doctor', 'backend=webgpu', 'webgpu_adapter=opengles'], { env: { EGL_PLATFORM: 'no-such-platform' } });
  expect(code).toBe(1);
  expect(stdout).toMatch(
    /^backend webgpu +FAILED: webgpu: webgpu_adapter=opengles, but EGL offers no OpenGL ES context; .*libvulkan1.*apt-get install libegl1 libegl-dev libegl-mesa0 libgl1-mesa-dri; or use backend=wasm$/m,
  );
  expect(stdout).not.toMatch(/^backend webgpu +ok/m);
});

test('agentic doctor backend=tensorflow reports the missing package and fails', async () => {
  const { code, stdout } = await agentic(['doctor', 'backend=tensorflow'], { cwd: scratch() });
  expect(code).toBe(1);
  expect(stdout).toMatch(
    /^backend tensorflow +FAILED: the tensorflow backend needs @tensorflow\/tfjs-node-gpu or @tensorflow\/tfjs-node, and neither is installed: /m,
  );
});

test('agentic doctor with an unknown webgpu adapter or conflicting role backends: one line', async () => {
  await expectOneLineError(['doctor', 'webgpu_adapter=metal'], 'webgpu_adapter: expected one of auto, vulkan, opengles, got "metal"');
  await expectOneLineError(['doctor', 'actor_infer.strategy_args.backend=cpu'], /^error: actor_infer\.strategy_args\.backend: cpu differs from wasm/);
});

describe('agentic bench', () => {
  test('--quick runs the whole benchmark on a tiny shape and writes its JSON', async () => {
    const out = join(scratch(), 'bench.json');
    const { code, stdout } = await agentic(['bench', '--quick', '--steps', '1', '--out', out]);
    expect(code).toBe(0);
    const result = JSON.parse(readFileSync(out, 'utf8'));
    expect(JSON.parse(stdout)).toEqual(result);
    expect(result).toMatchObject({ model: 'quick', backend: 'wasm', lora: null, recompute: false, shape: { hidden: 32, steps: 1 } });
    for (const key of ['train_tok_s', 'gen_tok_s', 'train_gflops', 'gen_gflops', 'sgemm_gflops']) expect(result[key]).toBeGreaterThan(0);
    // memory: tfjs's peak holds at least the weights; wasm has no GPU buffers but a heap
    expect(result.memory.tfjs_peak_bytes).toBeGreaterThan(result.params * 4);
    expect(result.memory.wasm_heap_bytes).toBeGreaterThanOrEqual(result.memory.tfjs_peak_bytes);
    expect(result.memory).toMatchObject({ gpu_peak_bytes: null, gpu_allocated_bytes: null, generation_gpu_bytes: null });
    // no card on wasm: the MFU fields against a peak are there, and null
    expect(result).toMatchObject({ peak: null, train_mfu_fp32: null, train_mfu_fp16: null, gen_mfu_fp32: null, gen_mfu_fp16: null, adapter: null });
  });

  test('--lora trains only the adapters, --recompute checkpoints, --peak-tflops gives the MFU its peaks', async () => {
    const out = join(scratch(), 'bench.json');
    const { code, stderr } = await agentic(['bench', '--quick', '--steps', '1', '--lora', '4', '--recompute', '--peak-tflops', '0.5,2', '--out', out]);
    expect(code).toBe(0);
    const result = JSON.parse(readFileSync(out, 'utf8'));
    expect(result).toMatchObject({
      lora: { rank: 4, alpha: 8, target: 'all-linear' },
      recompute: true,
      peak: { gpu: '--peak-tflops', fp32_tflops: 0.5, fp16_tflops: 2 },
    });
    expect(result.trained_params).toBeGreaterThan(0);
    expect(result.trained_params).toBeLessThan(result.params);
    // a frozen weight costs 4 FLOPs a token, a trained one 6
    const attention = 12 * 1 * 32 * 16;
    expect(result.train_flops_per_token).toBe(6 * result.trained_params + 4 * (result.params - result.trained_params) + attention);
    expect(result.train_mfu_fp32).toBeCloseTo(result.train_gflops / 500, 3);
    expect(result.gen_mfu_fp16).toBeCloseTo(result.gen_gflops / 2000, 3);
    expect(stderr).toContain('MFU against --peak-tflops: 0.5 TFLOPS float32, 2 float16');
  });

  test('a shape the backend cannot hold is one line, before any weight is made', async () => {
    const { code, stdout, stderr } = await agentic(['bench', '--model', '0.5b', '--out', join(scratch(), 'bench.json')]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(lines(stderr).at(-1)).toBe(
      "error: bench: 494M parameters need 7.4 GiB for their weights, gradients and AdamW moments, beyond the wasm heap's 4 GiB; use --lora <rank>, or --backend webgpu",
    );
    expect(stderr).not.toContain('    at ');
  });

  test.skipIf(noMesa)(
    'on webgpu the JSON has the adapter with its limits and the GPU memory',
    async () => {
      const out = join(scratch(), 'bench.json');
      const { code } = await agentic(['bench', '--backend', 'webgpu', '--quick', '--steps', '1', '--out', out]);
      expect(code).toBe(0);
      const result = JSON.parse(readFileSync(out, 'utf8'));
      expect(result.adapter.limits.maxStorageBufferBindingSize).toBeGreaterThan(0);
      expect(result.memory.gpu_peak_bytes).toBeGreaterThan(0);
      expect(result.memory.gpu_allocated_bytes).toBeGreaterThanOrEqual(result.memory.gpu_peak_bytes);
      // generation's KV pages and workspace: at least the keys and values of every position generated
      const { layers, kv, hidden, heads, genBatch, prompt, newTokens } = result.shape;
      expect(result.memory.generation_gpu_bytes).toBeGreaterThan(2 * 4 * layers * kv * (hidden / heads) * genBatch * (prompt + newTokens));
      // llvmpipe is no card of the table
      expect(result.peak).toBeNull();
    },
    60_000,
  );

  test('bad options are one line and exit 2 before any benchmark runs', async () => {
    for (const [args, message] of [
      [['bench', '--backend', 'tpu'], "--backend: expected one of wasm, cpu, webgpu, tensorflow, got 'tpu'"],
      [['bench', '--steps', '0'], "--steps: expected a positive integer, got '0'"],
      [['bench', '--out', '/proc/agentic/x.json'], '--out /proc/agentic/x.json: cannot write there'],
      [['bench', '--rollout', '--steps', '3'], '--steps: --rollout times a fixed set of episodes, not training steps'],
      [['bench', '--model', '7b'], "--model: expected one of nano, 0.5b, got '7b'"],
      [['bench', '--quick', '--model', '0.5b'], '--model: --quick is a tiny shape of its own; leave --model out'],
      [['bench', '--lora', 'eight'], "--lora: expected a positive integer rank, got 'eight'"],
      [['bench', '--peak-tflops', '67,989,1'], "--peak-tflops: expected <fp32>[,<fp16>] in TFLOPS, positive numbers, got '67,989,1'"],
      [['bench', '--rollout', '--recompute'], '--recompute: applies to the model benchmark, not --rollout'],
    ] as const) {
      const { code, stderr } = await agentic([...args]);
      expect(code).toBe(2);
      expect(stderr.trim().split('\n')).toHaveLength(1);
      expect(stderr).toContain(message);
    }
  });
});
