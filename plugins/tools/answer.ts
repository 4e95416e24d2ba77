/**
 * answer: the policy's final answer. Calling it ends the episode; the observation echoes the
 * answer, and the reward reads it from the trajectory or the final response.
 */
import { defineTool, z } from 'agentic';

export default defineTool({
  name: 'answer',
  description: 'Give the final answer and end the task. Keep it short and direct.',
  parameters: z.object({
    answer: z.string().describe('The final answer'),
  }),
  terminal: true,
  call({ answer }) {
    return answer;
  },
});
