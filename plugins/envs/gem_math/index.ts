/**
 * gem_math: GEM's math datasets (`math:GSM8K`, `math:Math12K`, ... and ROLL's `roll_math`). The
 * question is the observation; the answer is the content of the reply's last \boxed{}, graded
 * against the row's answer as GEM's math grader does (see ../_gem/math_grade.ts for what its
 * symbolic stage leaves out): 1 if right, else 0, and the episode ends. A tool_wrapper adds GEM's
 * tools (python code, search, MCP) before the answer. Rows come from a local file (../_gem/data.ts).
 */
import { z } from 'agentic';
import { lastBoxedContent } from '../_gem/boxed';
import { refuseHubDatasets } from '../_gem/data';
import { defineGemDatasetEnv, gemShape, type GemTask } from '../_gem/dataset_env';
import { mathAnswerCorrect } from '../_gem/math_grade';

const MATH: GemTask = {
  name: 'gem_math',
  observation: (question) => question,
  grade(reply, answer) {
    const given = lastBoxedContent(reply);
    return { answer: given, correct: given !== null && mathAnswerCorrect(given, answer) };
  },
  answerText: (pick) => `\\boxed{${pick}}`,
};

export default defineGemDatasetEnv({
  name: 'gem_math',
  description: "GEM's math datasets (math:*, roll_math): a question, an answer in \\boxed{} graded as GEM does; optional GEM tools.",
  config: z.strictObject(gemShape({ question_key: 'problem', answer_key: 'answer' })).superRefine(refuseHubDatasets),
  task: () => MATH,
});
