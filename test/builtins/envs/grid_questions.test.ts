import { describe, expect, test } from 'bun:test';
import { gridNotes, gridQuestions } from '../../../plugins/envs/_grid/questions';
import frozenLake from '../../../plugins/envs/frozen_lake';
import sokoban from '../../../plugins/envs/sokoban';
import { PluginHost } from '../../../src/plugins/host';
import type { EnvPlugin } from '../../../src/plugins/types';

const answers = (qs: ReadonlyArray<{ question: string; answer: string }>) => Object.fromEntries(qs.map((q) => [q.question, q.answer]));

describe('gridQuestions', () => {
  test('places the player and the things, and names the neighbours (edge past the border)', () => {
    const qs = gridQuestions('_P__\n_O__\n__G_', { player: ['P'], things: [{ name: 'the goal', symbols: ['G'] }] });
    expect(answers(qs)).toEqual({
      'Where are you?': '<answer>row 1, column 2</answer>',
      'Where is the goal?': '<answer>row 3, column 3</answer>',
      'Where is the goal from you?': '<answer>2 rows below, 1 column to the east</answer>',
      'What is Up of you?': '<answer>edge</answer>',
      'What is Down of you?': '<answer>O</answer>',
      'What is Left of you?': '<answer>_</answer>',
      'What is Right of you?': '<answer>_</answer>',
    });
  });

  test('a thing not drawn is not asked about; no player, no questions', () => {
    expect(Object.keys(answers(gridQuestions('P_\n__', { player: ['P'], things: [{ name: 'the goal', symbols: ['G'] }] })))).not.toContain('Where is the goal?');
    expect(gridQuestions('__\n__', { player: ['P'], things: [] })).toEqual([]);
  });

  test('no answer names an action: they say where things are, not what to do', () => {
    const host = new PluginHost();
    for (const plugin of [frozenLake, sokoban] as unknown as EnvPlugin[]) {
      const env = new plugin.env(plugin.config.parse({}), host.envContext());
      for (let seed = 0; seed < 20; seed++) {
        env.reset(seed);
        const qs = env.stateQuestions!();
        expect(qs.length).toBeGreaterThanOrEqual(5);
        for (const { answer } of qs) expect(answer).not.toMatch(/Up|Down|Left|Right/);
      }
    }
  });
});

describe('gridNotes', () => {
  const lake = { player: ['P'], things: [{ name: 'the goal', symbols: ['G'] }], hazards: { name: 'holes', symbols: ['O'] } };

  test('the goal from the player, then the directions with a hole next to the player', () => {
    expect(gridNotes('_P__\n_O__\n__G_', lake)).toBe('goal 2 below 1 east; holes Down');
    expect(gridNotes('G_O\n_OP', lake)).toBe('goal 1 above 2 west; holes Up Left');
    expect(gridNotes('P__G', lake)).toBe('goal same row 3 east; holes none');
  });

  test('a thing that is gone, or no player, is said plainly', () => {
    expect(gridNotes('P_\n__', lake)).toBe('goal gone; holes none');
    expect(gridNotes('__\n__', lake)).toBe('no player on the board');
  });
});
