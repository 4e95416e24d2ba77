/**
 * A folder outside the repository whose plugins and agent import packages, for the commands that
 * load them from a checkout and from the binary (the rule: src/sdk/package_imports.ts). No
 * node_modules lies above its top level, where Bun would download what a file imports (left-pad is
 * on the registry, so a download would succeed):
 *
 * - pads.ts imports left-pad; helped.ts imports it through _helper.ts, which imports a made-up package;
 * - config.yaml plays agent.ts, a module agent that imports left-pad;
 * - own/fooed.ts imports `foo` from own/node_modules, a package named by its `exports`.
 */
import { scratch } from '../helpers';

const MADE_UP_PACKAGE = 'agentic-test-missing-pkg-xyz';

const reward = (name: string, description: string) => `export default defineReward({ name: '${name}', description: ${description}, score: () => 1 });\n`;

export function pluginImportsFolder(): string {
  return scratch({
    'pads.ts': `import { defineReward } from 'agentic';\nimport leftPad from 'left-pad';\n${reward('padded', "leftPad('x', 3)")}`,
    'helped.ts': `import { defineReward } from 'agentic';\nimport { word } from './_helper';\n${reward('helped', 'word')}`,
    '_helper.ts': `import { list } from '${MADE_UP_PACKAGE}/list';\nexport const word = String(list);\n`,
    'agent.ts': "import leftPad from 'left-pad';\nexport async function run() {\n  return { answer: leftPad('42', 2) };\n}\n",
    'config.yaml': `pretrain: agentic:nano
custom_envs:
  Calc: {env_type: agent, max_steps: 2, env_config: {agent: agent.ts, dataset: arithmetic/train, reward: math_string_equal}}
train_env_manager: {num_env_groups: 2, group_size: 2, tags: [Calc]}
val_env_manager: {num_env_groups: 2, group_size: 2, tags: [Calc]}
rollout_batch_size: 4
val_batch_size: 4
`,
    'own/fooed.ts': `import { defineReward } from 'agentic';\nimport foo from 'foo';\n${reward('fooed', "foo('x')")}`,
    'own/node_modules/foo/package.json': JSON.stringify({ name: 'foo', version: '1.0.0', type: 'module', exports: { '.': './main.js' } }),
    'own/node_modules/foo/main.js': 'export default (word) => `foo says ${word}`;\n',
  });
}

/** The commands that stop at start in that folder, each with the one line it prints after `error: `. */
export function notInstalledCommands(dir: string): Array<[string[], string]> {
  const notInstalled = (file: string, name: string) => `${file} imports '${name}', which is not installed: run \`npm install ${name}\` in ${dir}`;
  return [
    [['plugins', './pads.ts'], notInstalled('pads.ts', 'left-pad')],
    [['plugins', './helped.ts'], notInstalled('_helper.ts', MADE_UP_PACKAGE)],
    [['plugins', 'check', './pads.ts'], notInstalled('pads.ts', 'left-pad')],
    [['config', '-c', 'config.yaml'], `custom_envs.Calc.env_config: env 'agent' cannot be built: ${notInstalled('agent.ts', 'left-pad')}`],
  ];
}
