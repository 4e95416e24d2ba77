/**
 * The three registries (envs, rewards, tools) and the checks that a definition has the shape its
 * kind promises. Each entry remembers where it came from, for listings and clash messages.
 */
import { PluginError } from '../errors';
import { didYouMean } from '../util/suggest';
import type { EnvPlugin, OpponentHooks, PluginDefinition, PluginKind, PluginOfKind, RewardPlugin, SeatSpec, ToolPlugin } from '../sdk/types';

export const PLUGIN_KINDS: readonly PluginKind[] = ['env', 'reward', 'tool'];
const NAME_PATTERN = /^[a-z][a-z0-9_]*$/;
const ENV_METHODS = ['reset', 'step', 'render', 'close', 'sampleRandomAction'] as const;

/**
 * Names other systems give to what a built-in plays, so their configs run as written
 * (docs/roll.md, docs/agentfly.md): ROLL's sandboxed and agent-native Sokoban are the same game
 * (the sandbox and the tool-call wrapper are infrastructure); GEM's env ids, which ROLL's GEM
 * examples name; AgentFly's reward and tool names.
 */
export const FOREIGN_NAMES: Readonly<Record<PluginKind, Readonly<Record<string, string>>>> = {
  env: {
    sokoban_sandbox: 'sokoban',
    sokoban_native_env: 'sokoban',
    'game:GuessTheNumber-v0': 'guess_the_number',
    'game:Mastermind-v0': 'mastermind',
    'game:Minesweeper-v0': 'minesweeper',
    'game:Wordle-v0': 'wordle',
    'game:FifteenPuzzle-v0': 'fifteen_puzzle',
    'game:Hangman-v0': 'hangman',
    'game:Sudoku-v0': 'sudoku',
    'game:TowerofHanoi-v0': 'tower_of_hanoi',
    'TicTacToe-v0': 'tic_tac_toe',
    'KuhnPoker-v0': 'kuhn_poker',
    'ConnectFour-v0': 'connect_four',
    'SimpleNegotiation-v0': 'simple_negotiation',
    'rg:letter_counting': 'letter_counting',
    roll_math: 'gem_math',
    'math:ASDiv2K': 'gem_math',
    'math:GSM8K': 'gem_math',
    'math:Math12K': 'gem_math',
    'math:Math8K-3to5': 'gem_math',
    'math:Orz57K': 'gem_math',
    'math:DeepScaleR40K': 'gem_math',
    roll_qa: 'gem_qa',
    'qa:NaturalQuestions': 'gem_qa',
    'qa:HotpotQA': 'gem_qa',
    'logic:RuleTaker-d0': 'gem_logic',
    'logic:RuleTaker-d1': 'gem_logic',
    'logic:RuleTaker-d2': 'gem_logic',
    'logic:RuleTaker-d3': 'gem_logic',
    'logic:RuleTaker-d5': 'gem_logic',
  },
  reward: { math_reward_string_equal: 'math_string_equal', math_equal_reward_tool: 'math_equal_tool', qa_f1_reward: 'qa_f1' },
  tool: { google_search: 'search', python_code: 'python_executor' },
};

/** Foreign env ids (by prefix) that name nothing here, with what is missing. */
const GEM_CODE =
  "GEM's code envs grade by stdin/stdout tests ({inputs, outputs} rows), which agentic does not run; its code_tests reward runs Python asserts: use env_type tool_use with reward code_tests and {question, tests} rows";
const REFUSED_ENVS: ReadonlyArray<[prefix: string, why: string]> = [
  ['code:', GEM_CODE],
  ['roll_code', GEM_CODE],
];

export interface PluginEntry<K extends PluginKind = PluginKind> {
  definition: PluginOfKind<K>;
  /** Where it came from: plugins/... for a built-in, else the file it was loaded from. */
  source: string;
  builtin: boolean;
}

export function isPluginDefinition(value: unknown): value is PluginDefinition {
  return typeof value === 'object' && value !== null && PLUGIN_KINDS.includes((value as { kind?: PluginKind }).kind!);
}

/** Throws a PluginError naming `source` unless `value` is a well-formed definition. */
export function checkDefinition(value: unknown, source: string): PluginDefinition {
  const fail = (why: string): never => {
    throw new PluginError(`${source}: ${why}`);
  };
  if (!isPluginDefinition(value)) {
    return fail('the default export is not a plugin; export default defineEnv(...), defineReward(...) or defineTool(...)');
  }
  const { kind, name, description } = value as { kind: PluginKind; name: unknown; description: unknown };
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    fail(`${kind} plugin name ${JSON.stringify(name)} must be snake_case (a-z, 0-9, _; starting with a letter)`);
  }
  const label = `${kind} '${name}'`;
  if (typeof description !== 'string' || description.trim() === '') fail(`${label} needs a one-line description`);
  const sandboxed = (value as { sandboxed?: unknown }).sandboxed;
  if (sandboxed !== undefined && typeof sandboxed !== 'boolean') fail(`${label}: 'sandboxed' must be true or false`);
  const isSchema = (s: unknown) => typeof (s as { safeParse?: unknown })?.safeParse === 'function';
  switch (kind) {
    case 'env': {
      const env = (value as EnvPlugin).env;
      if (typeof env !== 'function') fail(`${label}: 'env' must be the environment class`);
      for (const method of ENV_METHODS) {
        if (typeof env.prototype?.[method] !== 'function') fail(`${label}: the environment class has no ${method}() method`);
      }
      if (!isSchema((value as EnvPlugin).config)) fail(`${label}: 'config' must be a schema made with z from 'agentic'`);
      const seats = (value as EnvPlugin).seats;
      if (seats !== undefined) {
        const problem = seatSpecProblem(seats, env.prototype);
        if (problem) fail(`${label}: seats ${problem}`);
      }
      break;
    }
    case 'reward':
      if (typeof (value as RewardPlugin).score !== 'function') fail(`${label} has no score() function`);
      break;
    case 'tool': {
      const tool = value as ToolPlugin;
      if (typeof tool.call !== 'function') fail(`${label} has no call() function`);
      if (!isSchema(tool.parameters) || typeof (tool.parameters as { shape?: unknown }).shape !== 'object') {
        fail(`${label}: 'parameters' must be z.object({...}) from 'agentic'`);
      }
      break;
    }
  }
  return value;
}

const SEAT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** What is wrong with a seated env's SeatSpec (defineSeatedEnv), or null. */
function seatSpecProblem(seats: SeatSpec, prototype: Partial<OpponentHooks> | undefined): string | null {
  if (typeof seats !== 'object' || seats === null) return 'must be { names, zeroSum, opponents }';
  const { names, zeroSum, opponents } = seats;
  if (!Array.isArray(names) || names.length < 2) return 'names must list at least 2 seats';
  const bad = names.find((name) => typeof name !== 'string' || !SEAT_NAME.test(name));
  if (bad !== undefined) return `name ${JSON.stringify(bad)} must be letters, digits, _ or - (a config key names it)`;
  if (new Set(names).size !== names.length) return `names must be unique, got ${names.join(', ')}`;
  if (typeof zeroSum !== 'boolean') return 'zeroSum must be true or false';
  if (!Array.isArray(opponents) || opponents.some((name) => typeof name !== 'string' || !NAME_PATTERN.test(name))) {
    return 'opponents must be a list of snake_case names';
  }
  if (opponents.includes('random')) return "opponents must not list 'random' (sampleRandomAction plays it for every seated env)";
  if (opponents.length > 0 && typeof prototype?.opponentAction !== 'function') {
    return `name opponents (${opponents.join(', ')}), so the environment class needs an opponentAction(name) method`;
  }
  return null;
}

export class PluginRegistry {
  private readonly entries: { [K in PluginKind]: Map<string, PluginEntry<K>> } = {
    env: new Map(),
    reward: new Map(),
    tool: new Map(),
  };

  /** Adds a checked definition. Registering the same definition again is a no-op. */
  register(definition: PluginDefinition, source: string, builtin = false): void {
    const table = this.entries[definition.kind] as Map<string, PluginEntry>;
    const existing = table.get(definition.name);
    if (existing) {
      if (existing.definition === definition) return;
      throw new PluginError(`${source}: ${definition.kind} '${definition.name}' is already defined by ${existing.source}; rename one of them`);
    }
    table.set(definition.name, { definition, source, builtin });
  }

  get<K extends PluginKind>(kind: K, name: string): PluginEntry<K> | undefined {
    const entry = this.entries[kind].get(name) ?? this.entries[kind].get(FOREIGN_NAMES[kind][name] ?? '');
    return entry as PluginEntry<K> | undefined;
  }

  /** The entry, or a PluginError that lists what exists. */
  require<K extends PluginKind>(kind: K, name: string): PluginEntry<K> {
    const entry = this.get(kind, name);
    if (entry) return entry;
    const refused = kind === 'env' ? REFUSED_ENVS.find(([prefix]) => name.startsWith(prefix)) : undefined;
    if (refused) throw new PluginError(`env '${name}': ${refused[1]}`);
    const names = this.names(kind);
    const hint = didYouMean(name, names);
    const known = names.length > 0 ? `; registered: ${names.join(', ')}` : '';
    throw new PluginError(`unknown ${kind} '${name}'${hint}${hint ? '' : known}`);
  }

  names(kind: PluginKind): string[] {
    return [...this.entries[kind].keys()].sort();
  }

  list<K extends PluginKind>(kind: K): PluginEntry<K>[] {
    return this.names(kind).map((name) => this.entries[kind].get(name)! as PluginEntry<K>);
  }
}
