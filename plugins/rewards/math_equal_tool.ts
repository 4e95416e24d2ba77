/**
 * math_equal_tool: AgentFly's math_equal_reward_tool, which scores a calculator agent for using
 * its tool as well as for the answer: 0 when no tool answered in the episode, 0.1 when one did
 * and the final answer is wrong, 1 when it is right. Equality is math_string_equal's (the last
 * numbers agree), where AgentFly compares symbolically (sympy); for the numeric answers of
 * arithmetic and GSM8K-style rows the two agree.
 */
import { defineReward } from 'agentic';
import { finalAnswer } from './exact_match';
import { lastNumber } from './math_string_equal';

export default defineReward({
  name: 'math_equal_tool',
  description: 'AgentFly math_equal_reward_tool: 1 for a right answer after a tool call, 0.1 for a wrong one, 0 with no tool call.',
  score({ response, trajectory, row }) {
    if (row.answer === undefined || row.answer === null) throw new Error("the dataset row has no 'answer'");
    const expected = lastNumber(String(row.answer));
    if (expected === null) throw new Error(`the row's answer ${JSON.stringify(row.answer)} has no number`);
    const usedTool = trajectory.some((message) => message.role === 'tool');
    const correct = lastNumber(finalAnswer(response)) === expected;
    return { reward: !usedTool ? 0 : correct ? 1 : 0.1, acc: correct, used_tool: usedTool };
  },
});
