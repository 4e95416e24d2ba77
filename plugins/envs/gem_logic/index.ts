/**
 * gem_logic: GEM's RuleTaker logic datasets (`logic:RuleTaker-d0` ... `-d5`): GEM's QA env with
 * its RuleTaker settings, question_key `question` and the answer read from the reply's last
 * \boxed{} (extract_boxed). GEM's prompt still asks for <answer> tags, as GEM's own does; a
 * template that asks for \boxed{} (agent_template) tells the policy what is graded.
 */
import { defineGemDatasetEnv } from '../_gem/dataset_env';
import { qaConfig, qaTask } from '../_gem/qa_task';

export default defineGemDatasetEnv({
  name: 'gem_logic',
  description: "GEM's RuleTaker logic datasets (logic:RuleTaker-d*): a question, a \\boxed{} answer graded by exact match as GEM does.",
  config: qaConfig({ question_key: 'question', extract_boxed: true }),
  task: (config) => qaTask('gem_logic', config.extract_boxed),
});
