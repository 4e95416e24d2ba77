/**
 * An outside agent in a seat (seat_agent.ts): the example agent written with the `openai` client
 * plays seat O of tic_tac_toe through the gateway, its calls answered by the rollout's policy and
 * recorded as that seat's rows; an agent that fails costs its game, with one line naming its seat;
 * the config keys are checked at start-up; and `agentic train` plays and trains such a run.
 */
import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import type { AgenticConfig } from '../../src/config/schema';
import { EnvManager } from '../../src/rollout/env_manager';
import type { Policy, TurnQuery, TurnReply } from '../../src/rollout/policy';
import type { RolloutBatch } from '../../src/rollout/types';
import { agentic, ROOT, scratch } from '../helpers';
import { missing } from '../system_tools';
import { chat, configFrom, hostWith, tokenizer } from './helpers';

const EXAMPLE = join(ROOT, 'examples/agents/openai_game_seat.ts');
const PYTHON_EXAMPLE = `{command: [python3, ${join(ROOT, 'examples/agents/python_game_seat.py')}]}`;

/** Plays the first free cell of the prompt's last "Available Moves" line, whoever asks: the rule the agent's calls and the policy's own turns share. */
class FirstCellPolicy implements Policy {
  readonly name = 'first-cell';
  readonly remote = false;
  readonly asked: TurnQuery[] = [];
  async respond(query: TurnQuery): Promise<TurnReply> {
    this.asked.push(query);
    const prompt = tokenizer.decode([...query.promptIds], { skipSpecialTokens: false });
    const free = [...prompt.matchAll(/Available Moves: '\[(\d)\]'/g)].at(-1)?.[1];
    const tokens = [...tokenizer.encode(`[${free}]`, { addSpecialTokens: false }), chat.stopTokenIds[0]!];
    return { tokens, logProbs: tokens.map(() => -0.5), finishReason: 'stop_token', failure: null };
  }
  cancel(): void {}
  stats() {
    return { generatedTokens: 0 };
  }
  async close(): Promise<void> {}
}

function gameYaml(agent: string | null, seats = '{O: agent}'): string {
  return `
seed: 5
sequence_length: 1024
rollout_batch_size: 4
val_batch_size: 4
custom_envs:
  Game:
    env_type: tic_tac_toe
    env_manager_cls: step
    max_steps: 9
    max_tokens_per_step: 8
    seats: ${seats}
    ${agent === null ? '' : `seat_agent: ${agent}`}
train_env_manager: {num_env_groups: 2, group_size: 2, tags: [Game], generating_args: {max_new_tokens: 8, temperature: 1, top_p: 1, top_k: 0}}
val_env_manager: {num_env_groups: 2, group_size: 2, tags: [Game], generating_args: {max_new_tokens: 8, temperature: 1, top_p: 1, top_k: 0}}
`;
}

async function play(config: AgenticConfig, policy: Policy): Promise<RolloutBatch> {
  const manager = await EnvManager.build('train', config, hostWith());
  try {
    return await manager.collect(config.rollout_batch_size, policy, chat);
  } finally {
    await manager.close();
  }
}

describe('an outside agent in a seat', () => {
  test("the openai-client agent plays O through the gateway: its calls are its seat's rows, one per move, its return on the last", async () => {
    const policy = new FirstCellPolicy();
    const batch = await play(await configFrom(gameYaml(EXAMPLE)), policy);
    // 4 games, both seats recorded in each: the policy's own seat and the agent's
    expect(batch.episodes).toHaveLength(8);
    for (const episode of batch.episodes) {
      expect(episode.failure).toBeNull();
      const { seat } = episode;
      const agentSeat = seat!.players.indexOf('agent');
      const moves = seat!.moves.filter((m) => m.seat === seat!.index);
      expect(episode.turns.map((t) => t.responseText)).toEqual(moves.map((m) => m.responseText));
      expect(episode.turns.reduce((sum, t) => sum + t.reward, 0)).toBe(episode.score);
      if (seat!.index !== agentSeat) {
        expect(episode.metrics.gateway_calls).toBeUndefined();
        continue;
      }
      expect(episode.metrics.gateway_calls).toBe(moves.length);
      expect(episode.turns.slice(0, -1).every((t) => t.reward === 0)).toBe(true);
      // each call is a chat the agent wrote: the seat's rules as the system message, the board as the user's
      const first = tokenizer.decode(episode.turns[0]!.promptIds, { skipSpecialTokens: false });
      expect(first).toContain('Available Moves');
      expect(first).toContain(`You are Player ${seat!.index}`);
    }
    // rotation gives the agent both seats: O in two games, X in the others
    const agentSeats = batch.episodes.filter((e) => e.seat!.players[e.seat!.index] === 'agent').map((e) => e.seat!.names[e.seat!.index]);
    expect(agentSeats.sort()).toEqual(['O', 'O', 'X', 'X']);
    // the agent's calls have their own query ids, KV sessions and streams, apart from the policy's seat
    const sessions = new Set(policy.asked.map((q) => q.session));
    expect([...sessions].some((s) => s.endsWith(':a0') || s.endsWith(':a1'))).toBe(true);
    expect(new Set(policy.asked.map((q) => q.id)).size).toBe(policy.asked.length);
  }, 60_000);

  test.skipIf(missing('python'))(
    'the Python agent (a command, urllib) plays the same rows as the openai-client module',
    async () => {
      const rowsOf = (batch: RolloutBatch) => batch.episodes.map((e) => [e.score, e.turns.map((t) => [t.promptIds, t.responseIds, t.reward])]);
      const module = await play(await configFrom(gameYaml(EXAMPLE)), new FirstCellPolicy());
      const command = await play(await configFrom(gameYaml(PYTHON_EXAMPLE)), new FirstCellPolicy());
      for (const e of command.episodes) expect(e.failure).toBeNull();
      expect(rowsOf(command)).toEqual(rowsOf(module));
      // a command that fails costs its game, with its exit and its last line of standard error
      const failing = await play(await configFrom(gameYaml('{command: [sh, -c, "echo broken >&2; exit 3"]}')), new FirstCellPolicy());
      expect(failing.episodes[0]!.failure).toMatch(/^seat [OX]'s agent: the agent command exited with 3: broken$/);
    },
    60_000,
  );

  test('gateway.on_mismatch: drop leaves out the records whose agent started a fresh chat at a later turn', async () => {
    const batch = await play(await configFrom(gameYaml(EXAMPLE), hostWith(), ['gateway.on_mismatch=drop']), new FirstCellPolicy());
    const agentRecords = batch.episodes.filter((e) => e.seat!.players[e.seat!.index] === 'agent');
    // the example sends the rules and the board afresh at each turn: a second call never extends the first
    for (const e of agentRecords) {
      const calls = e.metrics.gateway_calls!;
      expect(e.metrics.prefix_mismatch).toBe(Math.max(0, calls - 1));
      if (calls > 1)
        expect(e.untrained).toBe(`seat ${e.seat!.names[e.seat!.index]}'s agent split its session ${calls - 1} time(s) (gateway.on_mismatch: drop)`);
      else expect(e.untrained).toBeUndefined();
    }
    expect(agentRecords.some((e) => e.untrained)).toBe(true);
  }, 30_000);

  test('an agent that throws or returns no move costs its game, with one line naming its seat', async () => {
    const dir = scratch({
      'throws.ts': "export function act() { throw new Error('no model today\\nsecond line'); }\n",
      'nothing.ts': 'export async function act() { return 42; }\n',
    });
    const thrown = await play(await configFrom(gameYaml(join(dir, 'throws.ts'))), new FirstCellPolicy());
    const failures = new Set(thrown.episodes.map((e) => `${e.endReason}: ${e.failure}`));
    expect([...failures].sort()).toEqual(["env_failure: seat O's agent: no model today", "env_failure: seat X's agent: no model today"]);
    const nothing = await play(await configFrom(gameYaml(join(dir, 'nothing.ts'))), new FirstCellPolicy());
    expect(nothing.episodes[0]!.failure).toMatch(/agent: act\(\) returned 42, not a move \(a string, or \{ action: string \}\)$/);
  }, 30_000);

  test('the keys are checked at start-up: agent needs seat_agent, seat_agent an agent seat, and a module with act()', async () => {
    const refused = async (yaml: string) => {
      const error = await configFrom(yaml).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      return (error as Error).message;
    };
    expect(await refused(gameYaml(null))).toBe(
      'custom_envs.Game.seats.O: agent needs custom_envs.Game.seat_agent, the module of the outside agent that plays it',
    );
    expect(await refused(gameYaml(EXAMPLE, '{O: random}'))).toBe(
      'custom_envs.Game.seat_agent: no seat of custom_envs.Game.seats is agent, so no game would call it; name a seat agent or leave seat_agent out',
    );
    const dir = scratch({ 'no_act.ts': 'export function run() { return 1; }\n' });
    const build = async (path: string) => (await EnvManager.build('train', await configFrom(gameYaml(path)), hostWith()).catch((e: Error) => e)) as Error;
    expect((await build(join(dir, 'missing.ts'))).message).toStartWith(`seat_agent: ${join(dir, 'missing.ts')} does not exist`);
    expect((await build(join(dir, 'no_act.ts'))).message).toBe(`seat_agent: ${join(dir, 'no_act.ts')} exports no act(ctx) function`);
    const broken = scratch({ 'broken.ts': 'export function act( {\n' });
    expect((await build(join(broken, 'broken.ts'))).message).toStartWith(`seat_agent: ${join(broken, 'broken.ts')} did not load: `);
  });

  test('agentic train plays and trains a run whose seat O is the openai-client agent', async () => {
    const out = scratch();
    const yaml = `${gameYaml('examples/agents/openai_game_seat.ts')}
pretrain: agentic:nano
max_steps: 2
eval_steps: 0
track_with: [jsonl]
adv_estimator: grpo
warm_start: {enabled: false}
`;
    const config = join(out, 'seat.yaml');
    await Bun.write(config, yaml);
    const { code, stderr } = await agentic(['train', '-c', config, `output_dir=${join(out, 'run')}`]);
    expect(stderr).not.toContain('error');
    expect(code).toBe(0);
    const steps = (await Bun.file(join(out, 'run/logs/metrics.jsonl')).text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(steps).toHaveLength(2);
    for (const { metrics } of steps) {
      expect(metrics['env/Game/gateway_calls']).toBeGreaterThan(0);
      expect(metrics['actor/optimizer_steps']).toBeGreaterThan(0);
    }
  }, 60_000);
});
