/**
 * The plugins that ship with agentic, bundled into the binary. Every plugin module under
 * plugins/ must be listed here (a test checks that this list and the folder agree).
 */
import agent from '../../plugins/envs/agent';
import bandit from '../../plugins/envs/bandit';
import connectFour from '../../plugins/envs/connect_four';
import fifteenPuzzle from '../../plugins/envs/fifteen_puzzle';
import frozenLake from '../../plugins/envs/frozen_lake';
import kuhnPoker from '../../plugins/envs/kuhn_poker';
import simpleNegotiation from '../../plugins/envs/simple_negotiation';
import ticTacToe from '../../plugins/envs/tic_tac_toe';
import gemLogic from '../../plugins/envs/gem_logic';
import gemMath from '../../plugins/envs/gem_math';
import gemQa from '../../plugins/envs/gem_qa';
import guessTheNumber from '../../plugins/envs/guess_the_number';
import hangman from '../../plugins/envs/hangman';
import letterCounting from '../../plugins/envs/letter_counting';
import mastermind from '../../plugins/envs/mastermind';
import minesweeper from '../../plugins/envs/minesweeper';
import sokoban from '../../plugins/envs/sokoban';
import sudoku from '../../plugins/envs/sudoku';
import toolUse from '../../plugins/envs/tool_use';
import towerOfHanoi from '../../plugins/envs/tower_of_hanoi';
import webshop from '../../plugins/envs/webshop';
import wordle from '../../plugins/envs/wordle';
import codeTests from '../../plugins/rewards/code_tests';
import exactMatch from '../../plugins/rewards/exact_match';
import llmJudge from '../../plugins/rewards/llm_judge';
import mathEqualTool from '../../plugins/rewards/math_equal_tool';
import mathStringEqual from '../../plugins/rewards/math_string_equal';
import qaF1 from '../../plugins/rewards/qa_f1';
import answer from '../../plugins/tools/answer';
import calculator from '../../plugins/tools/calculator';
import pythonExecutor from '../../plugins/tools/python_executor';
import search from '../../plugins/tools/search';
import type { PluginDefinition } from '../sdk/types';

export const BUILTIN_PLUGINS: ReadonlyArray<{ definition: PluginDefinition; source: string }> = [
  { definition: agent, source: 'plugins/envs/agent' },
  { definition: bandit, source: 'plugins/envs/bandit' },
  { definition: fifteenPuzzle, source: 'plugins/envs/fifteen_puzzle' },
  { definition: frozenLake, source: 'plugins/envs/frozen_lake' },
  { definition: ticTacToe, source: 'plugins/envs/tic_tac_toe' },
  { definition: kuhnPoker, source: 'plugins/envs/kuhn_poker' },
  { definition: connectFour, source: 'plugins/envs/connect_four' },
  { definition: simpleNegotiation, source: 'plugins/envs/simple_negotiation' },
  { definition: gemLogic, source: 'plugins/envs/gem_logic' },
  { definition: gemMath, source: 'plugins/envs/gem_math' },
  { definition: gemQa, source: 'plugins/envs/gem_qa' },
  { definition: guessTheNumber, source: 'plugins/envs/guess_the_number' },
  { definition: hangman, source: 'plugins/envs/hangman' },
  { definition: letterCounting, source: 'plugins/envs/letter_counting' },
  { definition: mastermind, source: 'plugins/envs/mastermind' },
  { definition: minesweeper, source: 'plugins/envs/minesweeper' },
  { definition: sokoban, source: 'plugins/envs/sokoban' },
  { definition: sudoku, source: 'plugins/envs/sudoku' },
  { definition: toolUse, source: 'plugins/envs/tool_use' },
  { definition: towerOfHanoi, source: 'plugins/envs/tower_of_hanoi' },
  { definition: webshop, source: 'plugins/envs/webshop' },
  { definition: wordle, source: 'plugins/envs/wordle' },
  { definition: codeTests, source: 'plugins/rewards/code_tests' },
  { definition: exactMatch, source: 'plugins/rewards/exact_match.ts' },
  { definition: llmJudge, source: 'plugins/rewards/llm_judge' },
  { definition: mathEqualTool, source: 'plugins/rewards/math_equal_tool.ts' },
  { definition: mathStringEqual, source: 'plugins/rewards/math_string_equal.ts' },
  { definition: qaF1, source: 'plugins/rewards/qa_f1.ts' },
  { definition: answer, source: 'plugins/tools/answer.ts' },
  { definition: calculator, source: 'plugins/tools/calculator' },
  { definition: pythonExecutor, source: 'plugins/tools/python_executor' },
  { definition: search, source: 'plugins/tools/search' },
];
