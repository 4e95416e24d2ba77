/**
 * gem_qa: GEM's question-answering datasets (`qa:HotpotQA`, `qa:NaturalQuestions` and ROLL's
 * `roll_qa`). The observation is the question in GEM's prompt (think, then answer in
 * <answer></answer>); the answer is the reply's last <answer> (or, with extract_boxed, its last
 * \boxed{}), right when it equals one of the row's answers after SQuAD normalisation (GEM's
 * em_check): 1 if right, else 0, and the episode ends. A tool_wrapper adds GEM's tools (search,
 * python code, MCP) before the answer. Rows come from a local file (../_gem/data.ts).
 */
import { defineGemDatasetEnv } from '../_gem/dataset_env';
import { qaConfig, qaTask } from '../_gem/qa_task';

export default defineGemDatasetEnv({
  name: 'gem_qa',
  description: "GEM's QA datasets (qa:*, roll_qa): a question, an <answer> graded by exact match as GEM does; optional GEM tools.",
  config: qaConfig({ question_key: 'problem', extract_boxed: false }),
  task: (config) => qaTask('gem_qa', config.extract_boxed),
});
