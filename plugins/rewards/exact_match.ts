/**
 * exact_match: 1 when the final answer equals the row's `answer` after SQuAD-style normalisation
 * (lower case, no punctuation, no articles, single spaces), else 0. The answer is the content of
 * the last <answer>...</answer> in the response, or the whole response when it has none. `answer`
 * may be a list of acceptable answers.
 */
import { defineReward } from 'agentic';

export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .join(' ');
}

export function finalAnswer(response: string): string {
  const tagged = [...response.matchAll(/<answer>([\s\S]*?)<\/answer>/g)];
  return tagged.length > 0 ? tagged.at(-1)![1]! : response;
}

export default defineReward({
  name: 'exact_match',
  description: "1 if the final answer equals the row's answer after SQuAD normalisation, else 0.",
  score({ response, row }) {
    const expected = row.answer;
    const candidates = (Array.isArray(expected) ? expected : [expected]).filter((a) => a !== undefined && a !== null);
    if (candidates.length === 0) throw new Error("the dataset row has no 'answer'");
    const predicted = normalizeAnswer(finalAnswer(response));
    return candidates.some((a) => normalizeAnswer(String(a)) === predicted) ? 1 : 0;
  },
});
