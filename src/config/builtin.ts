/**
 * The configs that ship with agentic, embedded in the binary as text, by their path under configs/
 * (what --config-name and a defaults list name). Every file under configs/ is listed here (a test
 * checks that this list and the folder agree).
 */
import agentfly from '../../configs/agentfly.yaml' with { type: 'text' };
import agentflyCodeGrpo from '../../configs/agentfly_code_grpo.yaml' with { type: 'text' };
import agentflyMathGrpo from '../../configs/agentfly_math_grpo.yaml' with { type: 'text' };
import agentflySearchRpp from '../../configs/agentfly_search_rpp.yaml' with { type: 'text' };
import agentic from '../../configs/agentic.yaml' with { type: 'text' };
import banditGrpo from '../../configs/bandit_grpo.yaml' with { type: 'text' };
import calculator from '../../configs/calculator.yaml' with { type: 'text' };
import calculatorHermes from '../../configs/calculator_hermes.yaml' with { type: 'text' };
import calculatorOpenaiAgent from '../../configs/calculator_openai_agent.yaml' with { type: 'text' };
import frozenLake from '../../configs/frozen_lake.yaml' with { type: 'text' };
import frozenLakeGigpo from '../../configs/frozen_lake_gigpo.yaml' with { type: 'text' };
import frozenLakeRewardOnly from '../../configs/frozen_lake_reward_only.yaml' with { type: 'text' };
import frozenLakeSlippery from '../../configs/frozen_lake_slippery.yaml' with { type: 'text' };
import gemGuessTheNumber from '../../configs/gem_guess_the_number.yaml' with { type: 'text' };
import gemMastermind from '../../configs/gem_mastermind.yaml' with { type: 'text' };
import kuhnPoker from '../../configs/kuhn_poker.yaml' with { type: 'text' };
import sokoban from '../../configs/sokoban.yaml' with { type: 'text' };
import sokobanCompact from '../../configs/sokoban_compact.yaml' with { type: 'text' };
import sokobanRewardOnly from '../../configs/sokoban_reward_only.yaml' with { type: 'text' };
import ticTacToe from '../../configs/tic_tac_toe.yaml' with { type: 'text' };
import toolUse from '../../configs/tool_use.yaml' with { type: 'text' };
import webshop from '../../configs/webshop.yaml' with { type: 'text' };
import webshopCompact from '../../configs/webshop_compact.yaml' with { type: 'text' };
import envsBandit from '../../configs/envs/bandit.yaml' with { type: 'text' };
import envsCoding from '../../configs/envs/coding.yaml' with { type: 'text' };
import envsFrozenLake from '../../configs/envs/frozen_lake.yaml' with { type: 'text' };
import envsSearchQa from '../../configs/envs/search_qa.yaml' with { type: 'text' };
import envsSokoban from '../../configs/envs/sokoban.yaml' with { type: 'text' };
import envsToolUse from '../../configs/envs/tool_use.yaml' with { type: 'text' };
import envsWebshop from '../../configs/envs/webshop.yaml' with { type: 'text' };

export const BUILTIN_CONFIGS: Readonly<Record<string, string>> = {
  'agentfly.yaml': agentfly,
  'agentfly_code_grpo.yaml': agentflyCodeGrpo,
  'agentfly_math_grpo.yaml': agentflyMathGrpo,
  'agentfly_search_rpp.yaml': agentflySearchRpp,
  'agentic.yaml': agentic,
  'bandit_grpo.yaml': banditGrpo,
  'calculator.yaml': calculator,
  'calculator_hermes.yaml': calculatorHermes,
  'calculator_openai_agent.yaml': calculatorOpenaiAgent,
  'frozen_lake.yaml': frozenLake,
  'frozen_lake_gigpo.yaml': frozenLakeGigpo,
  'frozen_lake_reward_only.yaml': frozenLakeRewardOnly,
  'frozen_lake_slippery.yaml': frozenLakeSlippery,
  'gem_guess_the_number.yaml': gemGuessTheNumber,
  'gem_mastermind.yaml': gemMastermind,
  'kuhn_poker.yaml': kuhnPoker,
  'sokoban.yaml': sokoban,
  'sokoban_compact.yaml': sokobanCompact,
  'sokoban_reward_only.yaml': sokobanRewardOnly,
  'tic_tac_toe.yaml': ticTacToe,
  'tool_use.yaml': toolUse,
  'webshop.yaml': webshop,
  'webshop_compact.yaml': webshopCompact,
  'envs/bandit.yaml': envsBandit,
  'envs/coding.yaml': envsCoding,
  'envs/frozen_lake.yaml': envsFrozenLake,
  'envs/search_qa.yaml': envsSearchQa,
  'envs/sokoban.yaml': envsSokoban,
  'envs/tool_use.yaml': envsToolUse,
  'envs/webshop.yaml': envsWebshop,
};

/** How sources and messages name a built-in config, by its path under configs/. */
export function builtinConfigName(path: string): string {
  return `configs/${path} (built in)`;
}
