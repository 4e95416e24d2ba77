import { describe, expect, test } from 'bun:test';
import { ConfigError } from '../../src/errors';
import { DEFAULT_STEP_TEMPLATE, DEFAULT_TRAJ_TEMPLATE, fillTemplate, templateProblem } from '../../src/config/templates';
import { configFrom, hostWith, lakeYaml } from '../rollout/helpers';

describe('turn templates', () => {
  test('fill placeholders; doubled braces are literal', () => {
    expect(fillTemplate('Turn {turn_idx}: {{not a field}} {observation}', { turn_idx: 2, observation: 'P_G' })).toBe('Turn 2: {not a field} P_G');
  });

  test('the defaults use only their own placeholders', () => {
    expect(templateProblem(DEFAULT_TRAJ_TEMPLATE, 'traj')).toBeNull();
    expect(templateProblem(DEFAULT_STEP_TEMPLATE, 'step')).toBeNull();
    expect(templateProblem(DEFAULT_STEP_TEMPLATE, 'traj')).toContain('unknown placeholder {env_instruction}');
  });

  test('malformed templates are named', () => {
    expect(templateProblem('a {turn_idx', 'traj')).toContain('never closed');
    expect(templateProblem('a } b', 'traj')).toContain("lone '}'");
    expect(templateProblem('{1x}', 'traj')).toContain('not a placeholder name');
  });

  test('a config with a bad agent_template fails with a one-line error naming the key', async () => {
    const error = await configFrom(lakeYaml({ groups: 1, size: 1 }), hostWith(), ['custom_envs.Lake.agent_template="Turn {turn}: {observation}"']).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toStartWith('custom_envs.Lake.agent_template: unknown placeholder {turn} for env_manager_cls traj');
  });

  test("ROLL's env manager class paths are accepted", async () => {
    const config = await configFrom(lakeYaml({ groups: 1, size: 1 }), hostWith(), [
      'custom_envs.Lake.env_manager_cls=roll.pipeline.agentic.env_manager.step_env_manager.StepEnvManager',
    ]);
    expect(config.custom_envs.Lake!.env_manager_cls).toBe('step');
  });
});
