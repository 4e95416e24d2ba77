/**
 * The evaluation suites that ship with agentic, embedded in the binary as text: pinned lists of
 * held-out episodes by what they are (a map, a room, a question, a shopping goal), one JSON object
 * a line in suites/<env>/<version>.jsonl. `val_suite: <env>/<version>` makes validation and
 * `agentic eval` replay them through the env's reset(seed, draw, {episode}), so two runs, two
 * versions of agentic or a paper score the same episodes. scripts/build_suites.ts made each
 * version once, from episodes no training stream of the shipped configs plays; a version, once
 * shipped, never changes (a new list is a new version).
 */
import frozenLakeV1 from '../../suites/frozen_lake/v1.jsonl' with { type: 'text' };
import frozenLakeV2 from '../../suites/frozen_lake/v2.jsonl' with { type: 'text' };
import sokobanV1 from '../../suites/sokoban/v1.jsonl' with { type: 'text' };
import sokobanV2 from '../../suites/sokoban/v2.jsonl' with { type: 'text' };
import toolUseV1 from '../../suites/tool_use/v1.jsonl' with { type: 'text' };
import webshopV1 from '../../suites/webshop/v1.jsonl' with { type: 'text' };
import { ConfigError } from '../errors';
import type { SuiteEpisode } from '../sdk/types';

/** Every suite file by its name, `<env>/<version>` (a test checks that this list and suites/ agree). */
export const BUILTIN_SUITES: Readonly<Record<string, string>> = {
  'frozen_lake/v1': frozenLakeV1,
  'frozen_lake/v2': frozenLakeV2,
  'sokoban/v1': sokobanV1,
  'sokoban/v2': sokobanV2,
  'tool_use/v1': toolUseV1,
  'webshop/v1': webshopV1,
};

export interface Suite {
  /** `<env>/<version>`. */
  name: string;
  /** The env type that replays it. */
  env: string;
  episodes: readonly SuiteEpisode[];
}

const loaded = new Map<string, Suite>();

/** The suite `name`; an unknown name is a one-line ConfigError naming the known ones. */
export function loadSuite(name: string): Suite {
  const text = BUILTIN_SUITES[name];
  if (text === undefined) throw new ConfigError(`val_suite: no suite '${name}' (known: ${Object.keys(BUILTIN_SUITES).join(', ')})`);
  let suite = loaded.get(name);
  if (!suite) {
    const episodes = text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => Object.freeze(JSON.parse(line) as SuiteEpisode));
    suite = { name, env: name.split('/')[0]!, episodes: Object.freeze(episodes) };
    loaded.set(name, suite);
  }
  return suite;
}
