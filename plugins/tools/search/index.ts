/**
 * search: BM25 over the shipped encyclopedia of an invented land (plugins/datasets/corpus), the
 * corpus the corpus_qa questions are answered from. For your own passages, make another search
 * tool in a plugin file: `export default createSearchTool({ name: 'my_search', corpusPath: 'docs.jsonl' })`.
 */
import { createSearchTool, parseJsonlCorpus } from 'agentic';
import { BUILTIN_DATASETS } from '../../datasets/_index';

const CORPUS = 'corpus/passages';

export default createSearchTool({
  name: 'search',
  passages: () => parseJsonlCorpus(BUILTIN_DATASETS[CORPUS]!, `plugins/datasets/${CORPUS}`),
  topK: 3,
});
