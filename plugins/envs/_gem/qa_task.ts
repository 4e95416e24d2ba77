/**
 * GEM's QA env (qa_env.py) as a task: the question in GEM's prompt, the answer from the last
 * <answer> tags (or the last \boxed{} with extract_boxed), exact match after SQuAD normalisation
 * against the row's answer or any of a list (GEM's em_check).
 */
import { z } from 'agentic';
import { normalizeAnswer } from '../../rewards/exact_match';
import { refuseHubDatasets } from './data';
import { gemShape, type GemTask } from './dataset_env';
import { lastBoxedContent } from './boxed';

export function qaConfig(defaults: { question_key: string; extract_boxed: boolean }) {
  return z
    .strictObject({
      ...gemShape({ question_key: defaults.question_key, answer_key: 'answer' }),
      extract_boxed: z.boolean().default(defaults.extract_boxed).describe('Read the answer from the last \\boxed{} instead of the last <answer> tags.'),
    })
    .superRefine(refuseHubDatasets);
}

const PROMPT = (question: string) =>
  'For any question, always reason through your thought process using:\n<think> your reasoning here </think>\n' +
  `Then, provide your final answer using:\n<answer> your answer here </answer>\n\nQuestion: ${question}\n`;

export function qaTask(name: string, extractBoxed: boolean): GemTask {
  return {
    name,
    observation: PROMPT,
    grade(reply, answer) {
      const given = extractBoxed ? lastBoxedContent(reply) : lastTagged(reply);
      if (given === null) return { answer: null, correct: false };
      const normalized = normalizeAnswer(given);
      return { answer: given, correct: (Array.isArray(answer) ? answer : [answer]).some((a) => normalizeAnswer(String(a)) === normalized) };
    },
    answerText: (pick) => (extractBoxed ? `\\boxed{${pick}}` : `<answer>${pick}</answer>`),
  };
}

function lastTagged(reply: string): string | null {
  const tagged = [...reply.matchAll(/<answer>(.*?)<\/answer>/gs)];
  return tagged.length > 0 ? tagged.at(-1)![1]!.trim() : null;
}
