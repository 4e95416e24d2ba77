/**
 * qa_f1: token-level F1 between the final answer and the row's `answer` after SQuAD-style
 * normalisation, as HotpotQA scores it (a yes/no/noanswer on either side must match exactly).
 * The final answer is the last <answer>...</answer> in the response, or the whole response.
 * `answer` may be a list: the best-matching one counts. Reward = F1; em, f1, precision and recall
 * are logged.
 */
import { defineReward } from 'agentic';
import { finalAnswer, normalizeAnswer } from './exact_match';

export interface QaScores {
  em: number;
  f1: number;
  precision: number;
  recall: number;
}

const EXACT_ONLY = new Set(['yes', 'no', 'noanswer']);

export function qaScores(prediction: string, truth: string): QaScores {
  const [p, g] = [normalizeAnswer(prediction), normalizeAnswer(truth)];
  const em = p === g ? 1 : 0;
  const zero = { em, f1: 0, precision: 0, recall: 0 };
  if ((EXACT_ONLY.has(p) || EXACT_ONLY.has(g)) && p !== g) return zero;
  const predicted = p.split(' ').filter(Boolean);
  const truthTokens = g.split(' ').filter(Boolean);
  const left = new Map<string, number>();
  for (const token of truthTokens) left.set(token, (left.get(token) ?? 0) + 1);
  let same = 0;
  for (const token of predicted) {
    const count = left.get(token) ?? 0;
    if (count > 0) {
      same++;
      left.set(token, count - 1);
    }
  }
  if (same === 0) return zero;
  const precision = same / predicted.length;
  const recall = same / truthTokens.length;
  return { em, f1: (2 * precision * recall) / (precision + recall), precision, recall };
}

export default defineReward({
  name: 'qa_f1',
  description: "Token F1 between the final answer and the row's answer (SQuAD normalisation); also logs em.",
  score({ response, row }) {
    const expected = row.answer;
    const truths = (Array.isArray(expected) ? expected : [expected]).filter((a) => a !== undefined && a !== null).map(String);
    if (truths.length === 0) throw new Error("the dataset row has no 'answer'");
    const prediction = finalAnswer(response);
    const best = truths.map((truth) => qaScores(prediction, truth)).reduce((a, b) => (b.f1 > a.f1 || (b.f1 === a.f1 && b.em > a.em) ? b : a));
    return { reward: best.f1, ...best };
  },
});
