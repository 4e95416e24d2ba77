/**
 * math_string_equal: 1 when the last number of the final answer equals the last number of the
 * row's `answer`, else 0 (AgentFly's string-equal math reward, without its tool-use gate). The
 * final answer is the last <answer>...</answer> in the response, or the whole response. Numbers
 * are read leniently: thousands commas and $ are dropped, a minus sign counts, and 42, 42.0 and
 * 42.50 vs 42.5 compare equal.
 */
import { defineReward } from 'agentic';
import { finalAnswer } from './exact_match';

/** The last number in a text, in a canonical spelling ("1,200.50" -> "1200.5"), or null. */
export function lastNumber(text: string): string | null {
  const cleaned = text.replace(/(\d),(?=\d{3}\b)/g, '$1').replace(/\$/g, '');
  const numbers = cleaned.match(/-?\d+(?:\.\d+)?/g);
  if (!numbers) return null;
  let number = numbers.at(-1)!;
  if (number.includes('.')) number = number.replace(/0+$/, '').replace(/\.$/, '');
  number = number.replace(/^(-?)0+(?=\d)/, '$1');
  return number === '-0' ? '0' : number;
}

export default defineReward({
  name: 'math_string_equal',
  description: "1 if the last number in the final answer equals the last number in the row's answer, else 0.",
  score({ response, row }) {
    if (row.answer === undefined || row.answer === null) throw new Error("the dataset row has no 'answer'");
    const expected = lastNumber(String(row.answer));
    if (expected === null) throw new Error(`the row's answer ${JSON.stringify(row.answer)} has no number`);
    const predicted = lastNumber(finalAnswer(response));
    return { reward: predicted === expected ? 1 : 0, has_number: predicted !== null };
  },
});
