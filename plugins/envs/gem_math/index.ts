/**
 * gem_math: GEM's math datasets (`math:GSM8K`, `math:Math12K`, ... and ROLL's `roll_math`). The
 * question is the observation; the answer is the content of the reply's last \boxed{}, graded
 * against the row's answer as GEM's math grader does (see ../_gem/math_grade.ts for what its
 * symbolic stage leaves out): 1 if right, else 0, and the episode ends. A tool_wrapper adds GEM's
 * tools (python code, search, MCP) before the answer. Rows come from a local file (../_gem/data.ts).
 */
import { defineEnv, z } from 'agentic';
import { GemDatasetEnv, gemShape, type GemTask } from '../_gem/dataset_env';
import { lastBoxed, mathAnswerCorrect } from '../_gem/math_grade';
import { loadQaRows, refuseHubDatasets } from '../_gem/data';

const Config = z.strictObject(gemShape({ question_key: 'problem', answer_key: 'answer' })).superRefine(refuseHubDatasets);

const MATH: GemTask = {
  name: 'gem_math',
  observation: (question) => question,
  grade(reply, answer) {
    const given = lastBoxed(reply);
    return { answer: given, correct: given !== null && mathAnswerCorrect(given, answer) };
  },
  answerText: (pick) => `\\boxed{${pick}}`,
};

class GemMath extends GemDatasetEnv {
  constructor(config: ConstructorParameters<typeof GemDatasetEnv>[0], context: ConstructorParameters<typeof GemDatasetEnv>[1]) {
    super(config, context, MATH);
  }
}

export default defineEnv({
  name: 'gem_math',
  description: "GEM's math datasets (math:*, roll_math): a question, an answer in \\boxed{} graded as GEM does; optional GEM tools.",
  config: Config,
  env: GemMath,
  epochRows: (config, context) => loadQaRows(config, context.cwd).length,
});
