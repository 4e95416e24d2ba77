/**
 * calculator: evaluates an arithmetic expression for the policy. Exact for whole numbers and
 * fractions (1/3 + 1/6 -> 1/2), six significant digits for decimals (as AgentFly's sympy tool
 * prints them). Bad input becomes an "Error: ..." observation, never an exception.
 */
import { defineTool, z } from 'agentic';
import { CalcError, evaluate } from './expression';

export default defineTool({
  name: 'calculator',
  description: 'Evaluate an arithmetic expression: + - * / // % ^, parentheses, sqrt, abs, round, min, max, log, exp, sin, pi, e.',
  parameters: z.object({
    expression: z.string().describe('The expression to evaluate, e.g. (12 + 30) * 3 / 7'),
  }),
  call({ expression }) {
    try {
      return evaluate(expression);
    } catch (error) {
      if (error instanceof CalcError) return `Error: ${error.message}`;
      throw error;
    }
  },
});
