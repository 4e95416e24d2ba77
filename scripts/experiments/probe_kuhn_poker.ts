/**
 * A Kuhn Poker policy's exact payoff against the equilibrium (issue #69's target):
 * `bun scripts/experiments/probe_kuhn_poker.ts <model-folder> [games] [key=value ...]`; the
 * overrides apply to configs/kuhn_poker.yaml, the config the probe plays with. How it measures:
 * kuhn_exact.ts, which `bun run learn:kuhn_poker` runs on its final model too.
 */
import { PluginHost } from '../../src/host/plugin_host';
import { kuhnExactPayoff } from './kuhn_exact';
import { orExit } from './probe_setup';

const [folder, count = '512', ...overrides] = process.argv.slice(2);
const games = Number(count);
if (!folder || !Number.isInteger(games) || games < 128 || games % 128 !== 0) {
  console.error('usage: bun scripts/experiments/probe_kuhn_poker.ts <model-folder> [games, a multiple of 128] [key=value ...]');
  process.exit(2);
}

const exact = await orExit(kuhnExactPayoff(folder, games, overrides, new PluginHost()));
console.log(`\n${exact.lines.join('\n')}`);
