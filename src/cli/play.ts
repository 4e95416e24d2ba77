/**
 * `agentic play ENV_OR_TAG [overrides]`: one episode in the terminal, turn by turn. Each turn
 * shows the observation and the exact prompt the policy is given, then takes a response from a
 * person (typed, or a script's next line), the random policy or a model, and shows what the env
 * made of it and the response's tokens. The trajectory is saved as a saved-episodes file that
 * `agentic render --trajectories` replays (docs/play.md).
 */
import { join } from 'node:path';
import { isStepWise, type AgenticConfig } from '../config/schema';
import { UsageError } from '../errors';
import type { Qwen2Model } from '../model/qwen2';
import type { Tokenizer } from '../model/tokenizer';
import type { ResponseSource } from '../play/responses';
import type { ConfigLoader } from '../play/target';
import type { PluginHost } from '../host/plugin_host';
import type { ChatFormat } from '../rollout/chat';
import type { Policy } from '../rollout/policy';
import type { InferenceServers } from '../rollout/servers';
import { checkOutputPath, configArgs, configRequest, OVERRIDES_HELP, overridesArg, overridesFrom } from './args';
import { command } from './command';
import { log, out } from './log';

const POLICIES = ['human', 'random', 'model'] as const;
type PolicyName = (typeof POLICIES)[number];

/** Keys whose override names a model: with one, the model plays (or scores a person's responses). */
const MODEL_KEYS = ['pretrain', 'actor_infer.model_args.model_name_or_path'];

interface PlayFlags {
  policy?: string;
  human?: boolean;
  script?: string;
  auto?: boolean;
  checkpoint?: string;
}

async function namesModel(flags: PlayFlags, overrides: readonly string[]): Promise<boolean> {
  if (flags.checkpoint !== undefined) return true;
  const { parseOverride } = await import('../config/overrides');
  return overrides.some((text) => {
    const override = parseOverride(text);
    return override.op !== 'delete' && MODEL_KEYS.includes(override.path.join('.'));
  });
}

/** Who answers, from the flags; contradictory flags are a UsageError. */
export function choosePolicy(flags: PlayFlags, modelNamed: boolean): PolicyName {
  if (flags.policy !== undefined && !POLICIES.includes(flags.policy as PolicyName)) {
    throw new UsageError(`--policy: expected one of ${POLICIES.join(', ')}, got '${flags.policy}'`);
  }
  if (flags.human && flags.policy !== undefined && flags.policy !== 'human')
    throw new UsageError(`--human: a person answers, but --policy says ${flags.policy}; give one of them`);
  if (flags.script !== undefined) {
    if (flags.script === '') throw new UsageError("option '--script' needs a value (a file, or - for stdin)");
    if (flags.policy === 'random' || flags.policy === 'model')
      throw new UsageError(`--script: the script gives the responses, so it cannot go with --policy ${flags.policy}`);
  }
  const policy = (flags.policy as PolicyName | undefined) ?? (flags.human || flags.script !== undefined || !modelNamed ? 'human' : 'model');
  if (flags.auto && policy === 'human' && flags.script === undefined) {
    throw new UsageError(
      '--auto: a person types each response; --auto lets --policy model or random play without waiting (give responses without a terminal with --script FILE)',
    );
  }
  return policy;
}

/** A word as a shell reads it back: quoted only when it must be. */
export function shellWord(word: string): string {
  if (/^[A-Za-z0-9_\-.\/=:,+@%]+$/.test(word)) return word;
  if (!/['\n]/.test(word)) return `'${word}'`;
  if (!/["$`\\!\n]/.test(word)) return `"${word}"`;
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * How the config is resolved for a list of overrides: from the config flags, or (--checkpoint)
 * from the checkpoint's saved config with its actor as the model, as `agentic eval` does. `words`
 * name the same config on a command line, for the replay command.
 */
async function configSource(
  args: Record<string, unknown> & PlayFlags,
  overrides: readonly string[],
  host: PluginHost,
): Promise<{ load: ConfigLoader; words: string[] }> {
  const { loadConfig } = await import('../config/load');
  if (args.checkpoint === undefined) {
    const words = (['config', 'config-path', 'config-name'] as const).flatMap((flag) =>
      typeof args[flag] === 'string' ? [`--${flag}`, args[flag] as string] : [],
    );
    return { load: async (list) => (await loadConfig(configRequest(args, list), host)).config, words };
  }
  const { checkpointConfig, locateCheckpoint } = await import('./checkpoints');
  const { savedConfigFile } = await import('../checkpoint/load');
  const found = await locateCheckpoint(args.checkpoint, args, overrides, host);
  const actor = join(found.path, 'actor');
  log.info(`checkpoint ${found.path} (step ${found.step}), with its saved config`);
  const { isHttpProxy } = await import('../config/schema');
  const { withProxyType } = await import('../rollout/env_manager');
  const load: ConfigLoader = async (list) => {
    const saved = (await checkpointConfig(found, list, host)).config;
    const config = {
      ...saved,
      pretrain: actor,
      actor_infer: { ...saved.actor_infer, model_args: { ...saved.actor_infer.model_args, model_name_or_path: null } },
    };
    // inference servers hold their own weights, not the checkpoint's: its actor plays here
    return isHttpProxy(config.val_env_manager.llm_proxy.proxy_type) ? withProxyType(config, 'val', 'policy') : config;
  };
  return { load, words: ['-c', savedConfigFile(found)] };
}

interface Player {
  model: Qwen2Model | null;
  /** The connected inference servers of val_env_manager's llm_proxy, when they play the model's turns. */
  servers: InferenceServers | null;
  tokenizer: Tokenizer;
  /** What was loaded, for messages ('' without a model). */
  source: string;
}

/**
 * actor_infer's model (else pretrain) on the config's backend when one is wanted, else only its
 * tokenizer; `servers` (val_env_manager's inference servers) play the model instead, checked
 * against that tokenizer.
 */
async function loadPlayer(config: AgenticConfig, wantModel: boolean, servers: InferenceServers | null): Promise<Player> {
  const reference = config.actor_infer.model_args.model_name_or_path ?? config.pretrain;
  const { loadModel, loadTokenizer } = await import('../model/load');
  if (servers) {
    const tokenizer = await loadTokenizer(reference);
    await servers.connect(tokenizer);
    const source = `on ${servers.type} server${servers.urls.length > 1 ? 's' : ''} ${servers.urls.join(', ')}`;
    log.info(`model: ${source}`);
    return { model: null, servers, tokenizer, source };
  }
  if (!wantModel) return { model: null, servers: null, tokenizer: await loadTokenizer(reference), source: '' };
  const { describeBackend, startBackend } = await import('../engine/backend');
  const { policyAdapter, runBackend } = await import('../config/validate');
  const started = await startBackend(runBackend(config), { webgpuAdapter: config.webgpu_adapter, blas: config.blas });
  const loaded = await loadModel(reference, { seed: config.seed, trainable: false, adapter: policyAdapter(config) });
  log.info(`model: ${loaded.source} on ${describeBackend(started)}`);
  return { model: loaded.model, servers: null, tokenizer: loaded.tokenizer, source: loaded.source };
}

interface PolicyParts {
  config: AgenticConfig;
  chat: ChatFormat;
  player: Player;
  /** A person's responses (script or terminal); needed by the human policy. */
  responses: ResponseSource | null;
  /** The terminal whose Enter paces a model or the random policy; null plays straight through. */
  paceWith: ResponseSource | null;
}

/** The policy that answers, who it is (for the record), and where its log-probs come from. */
/** The saved play's last lines, and the exit code: 1 when the input ran out before the episode ended. */
function reportSaved(
  outcome: { stoppedAt: number | null; record: { turns: readonly unknown[] } },
  path: string,
  scriptSource: { read: number; unread: number } | null,
  replayWords: readonly string[],
): number {
  if (outcome.stoppedAt !== null) {
    const played = outcome.record.turns.length;
    const why = scriptSource ? `the script ran out after ${scriptSource.read} response${scriptSource.read === 1 ? '' : 's'}` : 'the input ended (Ctrl-D)';
    log.error(`${why} at turn ${outcome.stoppedAt}, before the episode ended; saved the ${played} turn${played === 1 ? '' : 's'} played to ${path}`);
    return 1;
  }
  if (scriptSource && scriptSource.unread > 0)
    log.warn(`the episode ended before the script did: its last ${scriptSource.unread} line${scriptSource.unread === 1 ? ' was' : 's were'} not used`);
  log.info(`saved the trajectory to ${path}; replay it with: ${replayWords.map(shellWord).join(' ')}`);
  return 0;
}

async function buildPolicy(name: PolicyName, parts: PolicyParts): Promise<{ policy: Policy; label: string; logProbs: 'sampled' | 'scored' | null }> {
  const { config, chat, player } = parts;
  const { GivenPolicy, PacedPolicy, responseLogProbs } = await import('../play/policies');
  if (name === 'human') {
    const { generatingArgs, samplingParams } = await import('../rollout/env_manager');
    // the quantity a sampled token's log-prob is: over the whole vocabulary at the temperature it was sampled at (1 when greedy)
    const sampling = samplingParams(generatingArgs(config, 'val'));
    const model = player.model;
    const policy = new GivenPolicy(parts.responses!, chat, {
      score: model ? (context, response) => responseLogProbs(model, context, response, sampling, chat.responsePiece) : null,
      onCut: (kept, total) => out(`note: the response is ${total} tokens; the turn allows ${kept}, so the env gets the first ${kept}`),
    });
    return { policy, label: parts.responses!.label, logProbs: model ? 'scored' : null };
  }
  let policy: Policy;
  if (name === 'random') {
    const { RandomPolicy } = await import('../rollout/policy');
    policy = new RandomPolicy(chat);
  } else {
    const { makePolicy, withProxyType } = await import('../rollout/env_manager');
    // --policy model wins over a config whose val proxy is random; inference servers answer where the config names them
    const proxied = player.servers ? config : withProxyType(config, 'val', 'policy');
    policy = makePolicy(proxied, 'val', player.model, chat, { servers: player.servers });
  }
  if (parts.paceWith) policy = new PacedPolicy(policy, parts.paceWith);
  return { policy, label: name === 'random' ? 'random' : `model ${player.source}`, logProbs: name === 'model' ? 'sampled' : null };
}

export default command(
  {
    meta: { name: 'play', description: 'Play one episode turn by turn in the terminal: as a person, from a script, or with a model' },
    args: {
      env: {
        type: 'positional',
        required: true,
        valueHint: 'ENV_OR_TAG',
        description: 'A custom_envs tag of the config (FrozenLake), a registered env (frozen_lake, tool_use) or an env plugin file (./my_env.ts)',
      },
      ...configArgs,
      policy: {
        type: 'string',
        valueHint: 'human|random|model',
        description:
          "Who answers: human (you, or --script; the default without a model), random (the env's random actions), model (the default with --checkpoint or pretrain=...)",
      },
      human: { type: 'boolean', description: 'You answer (--policy human); with a model named, the model scores your responses' },
      script: {
        type: 'string',
        valueHint: 'file|-',
        description: 'Read the responses from a file (- for stdin), one per line; \\n in a line is a new line, \\t a tab, \\\\ a backslash',
      },
      auto: { type: 'boolean', description: 'Let a model or the random policy play every turn without waiting for Enter' },
      checkpoint: {
        type: 'string',
        valueHint: 'path|auto',
        description: "Play a training checkpoint's actor with its saved config: a checkpoint folder, or auto for the newest of the run the config names",
      },
      out: { type: 'string', valueHint: 'file', description: 'Where to save the trajectory (default output/play/<tag>-seed<seed>.json)' },
      seat: {
        type: 'string',
        valueHint: 'name',
        description:
          "An env with seats: the seat you play (default: the first the config gives the policy); other policy seats are the loaded model's, else the env's random player",
      },
      ...overridesArg,
    },
    async run({ args }) {
      const [ref, ...words] = args._;
      if (ref === undefined || ref === '') throw new UsageError('name the env to play: agentic play ENV_OR_TAG [overrides]');
      const { looksLikeOverride } = await import('../config/overrides');
      if (looksLikeOverride(ref) && !ref.includes('/')) throw new UsageError(`'${ref}' is an override; name the env first: agentic play ENV_OR_TAG ${ref}`);
      const overrides = overridesFrom(words);
      const modelNamed = await namesModel(args, overrides);
      const policyName = choosePolicy(args, modelNamed);
      if (args.checkpoint === '') throw new UsageError("option '--checkpoint' needs a value");
      if (args.out === '') throw new UsageError("option '--out' needs a value");
      if (args.seat === '') throw new UsageError("option '--seat' needs a value");
      const interactive = policyName === 'human' ? args.script === undefined : !args.auto;
      const { readScript, scriptLines, ScriptSource, TerminalSource } = await import('../play/responses');
      const script = args.script === undefined ? null : scriptLines(await readScript(args.script));

      const { PluginHost } = await import('../host/plugin_host');
      const { resolvePlayTarget } = await import('../play/target');
      const host = new PluginHost();
      const source = await configSource(args, overrides, host);
      const target = await resolvePlayTarget(ref, overrides, source.load, host);
      const { config, tag } = target;
      const { withPlugins } = await import('./start_up');
      return withPlugins(config, host, async (host) => {
        // before anything is loaded or made: nobody could answer or press Enter
        if (interactive && !process.stdin.isTTY) {
          const instead =
            policyName === 'human'
              ? 'give the responses with --script FILE (or --script - to read them from stdin)'
              : 'add --auto to let the policy play without waiting for Enter';
          throw new UsageError(`stdin is not a terminal, so nobody can answer here; ${instead}`);
        }
        const path = args.out ?? join('output', 'play', `${tag}-seed${config.seed}.json`);
        checkOutputPath(path);
        const { checkPythonSandbox } = await import('./sandbox_check');
        await checkPythonSandbox(config, host, { tags: [tag], warn: (line) => log.warn(line) });

        const { proxyServers } = await import('../rollout/env_manager');
        const player = await loadPlayer(config, policyName === 'model' || modelNamed, policyName === 'model' ? proxyServers(config, 'val') : null);
        const { ChatFormat } = await import('../rollout/chat');
        const chat = new ChatFormat(player.tokenizer);
        const interrupt = () => {
          log.error('interrupted; nothing saved');
          process.exit(130);
        };
        const terminal = interactive ? new TerminalSource(interrupt) : null;
        const scriptSource = script ? new ScriptSource(`script ${args.script === '-' ? 'stdin' : args.script}`, script, out) : null;
        const { policy, label, logProbs } = await buildPolicy(policyName, { config, chat, player, responses: scriptSource ?? terminal, paceWith: terminal });

        const custom = config.custom_envs[tag]!;
        const scoredBy = logProbs === 'scored' ? `, scored by the model ${player.source}` : '';
        out(
          `playing ${tag} (env ${custom.env_type}, ${isStepWise(custom.env_manager_cls) ? 'step-wise' : 'trajectory-wise'}), seed ${config.seed}; responses: ${label}${scoredBy}`,
        );
        const { playSession } = await import('../play/session');
        const { writePlayRecord } = await import('../play/record');
        let outcome: Awaited<ReturnType<typeof playSession>>;
        try {
          // a seated env's other policy seats: the model when you play against it
          const opponent =
            policyName === 'human' && player.model ? (await buildPolicy('model', { config, chat, player, responses: null, paceWith: null })).policy : null;
          outcome = await playSession({
            config,
            host,
            tag,
            chat,
            policy,
            policyLabel: label,
            logProbs,
            untimed: interactive,
            print: out,
            seat: args.seat ?? null,
            opponent,
          });
        } finally {
          player.model?.dispose();
        }
        writePlayRecord(path, outcome.record);
        return reportSaved(outcome, path, scriptSource, ['agentic', 'render', ...source.words, '--trajectories', path, ...target.overrides]);
      });
    },
  },
  `RESPONSES
  A person answers one line per turn, at the terminal or from --script (one line per response).
  In a line, \\n stands for a new line, \\t for a tab and \\\\ for a backslash; other backslashes
  stay as written. A response longer than the turn's token budget is cut there, as a model's is.
  With a model named (pretrain=..., --checkpoint), the model scores each given response: the
  token view shows its log-probs; without one they are n/a.

ENDINGS
  The episode ends as the rollout ends it (the env, max_steps, sequence_length); the trajectory is
  saved to --out, in the format agentic render --trajectories replays, and the command that
  replays it is printed. Exit 0.
  Input that ends first (the script runs out, Ctrl-D): the turns played are saved, without an
  endReason and with "stopped" saying why; one line, exit 1.
  Ctrl-C: one line, nothing saved, exit 130. No terminal and no --script: one line, exit 2.

${OVERRIDES_HELP}
  seed=N picks the episode: the env is reset with N.

EXAMPLES
  agentic play FrozenLake seed=3                              # you play the default config's FrozenLake
  agentic play FrozenLake seed=3 --script moves.txt           # the responses from a file, no terminal needed
  agentic play FrozenLake --policy random --auto
  agentic play FrozenLake --checkpoint auto                   # the newest checkpoint's actor, Enter per turn
  agentic play Arithmetic --config-name tool_use seed=5       # tool calls and their outputs as they happen
  agentic play sokoban sequence_length=1024                   # any registered env, with its entry's defaults
  agentic play TicTacToeVsMinimax --config-name tic_tac_toe --seat X   # you play X against minimax
  agentic play ./my_env.ts sequence_length=1024 custom_envs.guess_parity.max_steps=3   # your own env file`,
);
