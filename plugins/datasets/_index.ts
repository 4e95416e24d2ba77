/**
 * The datasets that ship with agentic, embedded in the binary: the file's path under
 * plugins/datasets -> its text (JSON Lines). Written by scripts/datasets/*.ts; rows are
 * {question, answer, ...} (coding rows: {question, tests, solution, entry_point}).
 */
import codingTrain from './coding/train.jsonl' with { type: 'text' };
import codingVal from './coding/val.jsonl' with { type: 'text' };
import passages from './corpus/passages.jsonl' with { type: 'text' };
import corpusQaTrain from './corpus_qa/train.jsonl' with { type: 'text' };
import corpusQaVal from './corpus_qa/val.jsonl' with { type: 'text' };

export const BUILTIN_DATASETS: Readonly<Record<string, string>> = {
  'corpus/passages.jsonl': passages,
  'corpus_qa/train.jsonl': corpusQaTrain,
  'corpus_qa/val.jsonl': corpusQaVal,
  'coding/train.jsonl': codingTrain,
  'coding/val.jsonl': codingVal,
};

/** The rows of a shipped JSON Lines file. */
export function builtinRows(name: string): Array<Record<string, unknown>> {
  const text = BUILTIN_DATASETS[name];
  if (text === undefined) throw new Error(`no built-in dataset '${name}'; shipped: ${Object.keys(BUILTIN_DATASETS).join(', ')}`);
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
