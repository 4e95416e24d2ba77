/**
 * The datasets that ship with agentic, by `<name>/<split>` (what a `dataset:` setting names),
 * embedded in the binary as text. Written by plugins/datasets/_generate/*.ts; rows are JSON lines of
 * {question, answer, ...} (coding rows: {question, tests, solution, entry_point}; the corpus:
 * {id, title, text}). A dataset joins with one import and one entry per split.
 */
import arithmeticTrain from './arithmetic/train.jsonl' with { type: 'text' };
import arithmeticVal from './arithmetic/val.jsonl' with { type: 'text' };
import codingTrain from './coding/train.jsonl' with { type: 'text' };
import codingVal from './coding/val.jsonl' with { type: 'text' };
import passages from './corpus/passages.jsonl' with { type: 'text' };
import corpusQaTrain from './corpus_qa/train.jsonl' with { type: 'text' };
import corpusQaVal from './corpus_qa/val.jsonl' with { type: 'text' };

export const BUILTIN_DATASETS: Readonly<Record<string, string>> = {
  'arithmetic/train': arithmeticTrain,
  'arithmetic/val': arithmeticVal,
  'corpus/passages': passages,
  'corpus_qa/train': corpusQaTrain,
  'corpus_qa/val': corpusQaVal,
  'coding/train': codingTrain,
  'coding/val': codingVal,
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
