/**
 * The plugins that ship with agentic, bundled into the binary. Every plugin module under
 * plugins/ must be listed here (a test checks that this list and the folder agree).
 */
import bandit from '../../plugins/envs/bandit';
import frozenLake from '../../plugins/envs/frozen_lake';
import sokoban from '../../plugins/envs/sokoban';
import toolUse from '../../plugins/envs/tool_use';
import webshop from '../../plugins/envs/webshop';
import exactMatch from '../../plugins/rewards/exact_match';
import calculator from '../../plugins/tools/calculator';
import type { PluginDefinition } from './types';

export const BUILTIN_PLUGINS: ReadonlyArray<{ definition: PluginDefinition; source: string }> = [
  { definition: bandit, source: 'plugins/envs/bandit' },
  { definition: frozenLake, source: 'plugins/envs/frozen_lake' },
  { definition: sokoban, source: 'plugins/envs/sokoban' },
  { definition: toolUse, source: 'plugins/envs/tool_use' },
  { definition: webshop, source: 'plugins/envs/webshop' },
  { definition: exactMatch, source: 'plugins/rewards/exact_match.ts' },
  { definition: calculator, source: 'plugins/tools/calculator' },
];
