/**
 * gem_logic: GEM's RuleTaker logic datasets (`logic:RuleTaker-d0` ... `-d5`): GEM's QA env with
 * its RuleTaker settings, question_key `question` and the answer read from the reply's last
 * \boxed{} (extract_boxed). GEM's prompt still asks for <answer> tags, as GEM's own does; a
 * template that asks for \boxed{} (agent_template) tells the policy what is graded.
 */
import { defineEnv } from 'agentic';
import { loadQaRows } from '../_gem/data';
import { GemDatasetEnv } from '../_gem/dataset_env';
import { qaConfig, qaTask, type QaConfig } from '../_gem/qa_task';

const Config = qaConfig({ question_key: 'question', extract_boxed: true });

class GemLogic extends GemDatasetEnv {
  constructor(config: QaConfig, context: ConstructorParameters<typeof GemDatasetEnv>[1]) {
    super(config, context, qaTask('gem_logic', config.extract_boxed));
  }
}

export default defineEnv({
  name: 'gem_logic',
  description: "GEM's RuleTaker logic datasets (logic:RuleTaker-d*): a question, a \\boxed{} answer graded by exact match as GEM does.",
  config: Config,
  env: GemLogic,
  epochRows: (config, context) => loadQaRows(config, context.cwd).length,
});
