import { describe, expect, test } from 'bun:test';
import bandit from '../../plugins/envs/bandit';
import frozenLake from '../../plugins/envs/frozen_lake';
import sokoban from '../../plugins/envs/sokoban';
import toolUse from '../../plugins/envs/tool_use';
import { hasWarmStartHook } from '../../src/sdk/warm_start_hooks';

/** Which of stateQuestions, stateNotes and solutionAction `env` implements. */
const hooks = (env: object) => (['stateQuestions', 'stateNotes', 'solutionAction'] as const).map((name) => hasWarmStartHook(env, name));

describe('hasWarmStartHook', () => {
  test("reads an env class's optional hooks from its prototype, or an instance's", () => {
    expect(hooks(frozenLake.env.prototype)).toEqual([true, true, true]);
    expect(hooks(sokoban.env.prototype)).toEqual([true, true, true]);
    expect(hooks(toolUse.env.prototype)).toEqual([true, false, true]);
    expect(hooks(bandit.env.prototype)).toEqual([false, false, false]);
    expect(hasWarmStartHook({ stateNotes: () => 'notes' }, 'stateNotes')).toBe(true);
    expect(hasWarmStartHook({ stateNotes: 'notes' }, 'stateNotes')).toBe(false);
  });
});
