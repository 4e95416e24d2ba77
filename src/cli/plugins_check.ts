/** `agentic plugins check ENV [key=value...]`: play random episodes of an env and check its contract. */
import { looksLikeOverride, parseOverride } from '../config/overrides';
import { setAt, type TreeObject } from '../config/tree';
import { validateEnvConfig } from '../config/validate';
import { UsageError } from '../errors';
import { PluginHost } from '../host/plugin_host';
import { McpPool } from '../sdk/mcp/pool';
import { checkEnvContract, ENV_CHECKS, type EnvCheckOptions, type EnvCheckReport, SEATED_ENV_CHECKS } from '../sdk/check_env';
import type { EnvPlugin } from '../sdk/types';
import { debugArg } from './args';
import { command } from './command';
import { out } from './log';

/**
 * Checks an environment plugin (src/sdk/check_env.ts). `envConfig` is the raw env_config
 * (undefined: the defaults); a config the schema rejects throws a ConfigError naming the key,
 * before anything runs.
 */
export async function checkEnv(plugin: EnvPlugin, envConfig: unknown, options: EnvCheckOptions): Promise<EnvCheckReport> {
  return checkEnvContract(plugin, validateEnvConfig(plugin, envConfig), options);
}

/** A whole number from an option's text, or a UsageError naming the option. */
function wholeNumber(text: unknown, flag: string, min: number, max: number): number {
  const value = typeof text === 'string' && /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`option '--${flag}' expects a whole number from ${min} to ${max}, got '${String(text)}'`);
  }
  return value;
}

/** A time limit in seconds (fractions allowed) as ms, or a UsageError. */
function seconds(text: unknown, flag: string): number {
  const value = typeof text === 'string' && /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!(value >= 0.001 && value <= 3600)) throw new UsageError(`option '--${flag}' expects seconds from 0.001 to 3600, got '${String(text)}'`);
  return Math.round(value * 1000);
}

/** env_config from `key=value` words (Hydra-typed values; dotted keys reach into nested settings). */
function envConfigFrom(words: readonly string[]): TreeObject {
  const config: TreeObject = {};
  for (const word of words) {
    if (!looksLikeOverride(word)) throw new UsageError(`expected an env_config setting key=value after the env, got '${word}'`);
    const override = parseOverride(word);
    if (override.op === 'delete') throw new UsageError(`'${word}': env_config starts from the plugin's defaults; set keys with key=value`);
    setAt(config, override.path, override.value!);
  }
  return config;
}

function formatReport(report: EnvCheckReport): string {
  const width = Math.max(...report.checks.map((c) => c.name.length));
  const lines = report.checks.map((c) => `  ${c.status === 'fail' ? 'FAIL' : c.status}  ${c.name.padEnd(width)}  ${c.message}`);
  const { stats } = report;
  const round = (x: number) => +x.toFixed(4);
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const parts = [`${plural(stats.episodes, 'episode')}, ${plural(stats.steps, 'step')} (${stats.endedByEnv} ended by the env, ${stats.failed} failed)`];
  if (stats.meanReturn !== null) parts.push(`mean return ${round(stats.meanReturn)}`);
  if (stats.successRate !== null) parts.push(`success rate ${round(stats.successRate)}`);
  lines.push(parts.join('; '));
  const failed = report.checks.filter((c) => c.status === 'fail').map((c) => c.name);
  const skipped = report.checks.filter((c) => c.status === 'skip').length;
  const skips = skipped > 0 ? ` (${skipped} skipped)` : '';
  lines.push(
    failed.length === 0
      ? `env '${report.env}': all checks passed${skips}`
      : `env '${report.env}': ${failed.length} of ${report.checks.length} checks failed: ${failed.join(', ')}${skips}`,
  );
  return lines.join('\n');
}

export default command(
  {
    meta: { name: 'plugins check', description: 'Check an environment plugin: play random episodes and test it against the Env contract' },
    args: {
      env: {
        type: 'positional',
        required: true,
        valueHint: 'env',
        description: 'A built-in env by name (bandit), or an env plugin file by path (./my_env.ts)',
      },
      settings: {
        type: 'positional',
        required: false,
        valueHint: 'key=value...',
        description: "env_config settings over the plugin's defaults, e.g. risky_prob=0.5",
      },
      episodes: { type: 'string', valueHint: 'n', default: '8', description: 'Random episodes to play' },
      seed: { type: 'string', valueHint: 's', default: '0', description: 'Seed of the first episode (the others count up from it)' },
      'max-steps': { type: 'string', valueHint: 'n', default: '20', description: 'Steps after which a random episode is cut' },
      timeout: { type: 'string', valueHint: 'seconds', default: '10', description: 'Time limit of one reset(), step() or close(), in seconds' },
      ...debugArg,
    },
    async run({ args }) {
      const [ref, ...words] = args._;
      const episodes = wholeNumber(args.episodes, 'episodes', 1, 10_000);
      const seed = wholeNumber(args.seed, 'seed', 0, 2 ** 32 - 1);
      const maxSteps = wholeNumber(args['max-steps'], 'max-steps', 1, 100_000);
      const timeoutMs = seconds(args.timeout, 'timeout');
      const envConfig = envConfigFrom(words);
      // the MCP servers the env's config names are this command's, and end with it
      const mcp = new McpPool();
      const host = new PluginHost(process.cwd(), { mcp, pythonSandbox: 'bwrap' });
      try {
        const plugin = await host.resolveEnv(ref!);
        const source = host.registry.get('env', plugin.name)?.source ?? ref;
        const context = host.envContext();
        validateEnvConfig(plugin, envConfig); // a bad setting is a usage error, before any output
        out(
          `checking env '${plugin.name}' (${source}): ${episodes} random episode${episodes === 1 ? '' : 's'} from seed ${seed}, at most ${maxSteps} steps each`,
        );
        const report = await checkEnv(plugin, envConfig, { context, episodes, seed, maxSteps, timeoutMs });
        out(formatReport(report));
        return report.passed ? 0 : 1;
      } finally {
        await mcp.close();
      }
    },
  },
  `CHECKS (pass, FAIL, or skip when the env does not report what a check needs)

${Object.entries(ENV_CHECKS)
  .map(([name, what]) => `  ${name.padEnd(16)}${what}`)
  .join('\n')}

and for an env with seats (defineSeatedEnv):
${Object.entries(SEATED_ENV_CHECKS)
  .map(([name, what]) => `  ${name.padEnd(16)}${what}`)
  .join('\n')}

Exits 0 when no check fails, 1 when one does, 2 when the env or its config cannot be used.
Every call runs under a time limit, but a synchronous endless loop in the env cannot be
interrupted: press Ctrl-C.`,
);
