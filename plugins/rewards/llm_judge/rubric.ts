/**
 * The judge's prompt: a rubric template filled from the sample. `{question}` is the row's
 * question, `{answer}` the policy's final answer, `{reference}` the row's `answer` (the reference
 * answer), and any other `{field}` the row's field of that name. Only `{identifier}` is a
 * placeholder, so JSON braces in a rubric stay as written.
 */
import type { RewardInput } from 'agentic';
import type { ParserName } from './parse';

const QUESTION_AND_ANSWERS = `You are grading an answer to a question against a reference answer.

Question:
{question}

Reference answer:
{reference}

Answer to grade:
{answer}

`;

/** The built-in rubric for each parser: it asks for what that parser reads. */
export const DEFAULT_RUBRICS: Record<ParserName, string> = {
  number: `${QUESTION_AND_ANSWERS}Does the answer say the same as the reference? Give one sentence of reasoning, then on the last line a score from 0 to 1 alone (1: correct, 0: wrong, in between: partly correct).`,
  pass_fail: `${QUESTION_AND_ANSWERS}Does the answer say the same as the reference? Give one sentence of reasoning, then on the last line PASS if it does or FAIL if it does not.`,
};

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The rubric with its placeholders filled; a placeholder the sample has no value for throws, naming it. */
export function fillRubric(rubric: string, input: RewardInput): string {
  const { answer: reference, ...row } = input.row;
  const values: Record<string, unknown> = { ...row, reference, answer: input.response };
  return rubric.replace(PLACEHOLDER, (_, name: string) => {
    const value = values[name];
    if (value === undefined || value === null)
      throw new Error(`the rubric's {${name}} has no value: the row has no '${name === 'reference' ? 'answer' : name}'`);
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}
