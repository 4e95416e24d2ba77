/**
 * The rollout seam's in-thread source: the batch of a step with the validation when it is due,
 * and a state that a second source restores to play the same next batch (what a checkpoint needs).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { PluginHost } from '../../src/host/plugin_host';
import { ChatFormat } from '../../src/rollout/chat';
import { buildRoles, roleNeeds, type Roles } from '../../src/train/roles';
import { LocalRollouts } from '../../src/rollout_sources/local';
import { openRollouts } from '../../src/rollout_sources/open';
import type { RolloutSource } from '../../src/train/rollout_source';
import { StepLog } from '../../src/train/step_log';
import { configOf, hostWithVowels, microPolicyFolder, vowelsYaml } from '../train/helpers';

setDefaultTimeout(60_000);

let roles: Roles;
const opened: RolloutSource[] = [];
let open: () => Promise<RolloutSource>;

beforeAll(async () => {
  const host: PluginHost = hostWithVowels();
  const config = await configOf(vowelsYaml(await microPolicyFolder()), host, ['eval_steps=2']);
  roles = await buildRoles(config, roleNeeds(config));
  const chat = new ChatFormat(roles.tokenizer);
  open = async () => {
    const source = await openRollouts(config, host, roles, chat);
    opened.push(source);
    return source;
  };
});

afterAll(async () => {
  for (const source of opened) await source.close();
  roles.dispose();
});

const ids = (source: Awaited<ReturnType<RolloutSource['next']>>) => source.batch.samples.map((s) => Array.from(s.inputIds));

describe('LocalRollouts', () => {
  test('plays in this thread, validating on the steps eval_steps names', async () => {
    const source = await open();
    expect(source).toBeInstanceOf(LocalRollouts);
    expect(source.sampledElsewhere).toBe(false);
    const first = new StepLog();
    const played = await source.next(0, first, 0);
    expect(played.batch.samples).toHaveLength(8);
    expect(played.baselines).toBeNull();
    expect(played.refLogProbs).toBeNull();
    expect(first.valEpisodes?.length).toBeGreaterThan(0);
    expect(Object.keys(first.metrics).some((k) => k.startsWith('val/'))).toBe(true);
    const second = new StepLog();
    await source.next(1, second, 1);
    expect(second.valEpisodes).toBeUndefined();
    expect(Object.keys(second.metrics).some((k) => k.startsWith('val/'))).toBe(false);
  });

  test('a source restored to the state of another plays the same next batch', async () => {
    const a = await open();
    await a.next(0, new StepLog(), 0);
    const state = await a.state();
    expect(state.inFlight).toBeUndefined();
    const b = await open();
    b.restore(state);
    const fromA = await a.next(1, new StepLog(), 1);
    const fromB = await b.next(1, new StepLog(), 1);
    expect(ids(fromB)).toEqual(ids(fromA));
    expect((await b.state()).trainEpisodes).toEqual((await a.state()).trainEpisodes);
  });
});
