/**
 * The datasets that ship with agentic, by `<name>/<split>` (what a `dataset:` setting names).
 * They are imported as text, so the compiled binary carries them. A dataset joins with one
 * import and one entry per split; rows are JSON lines of {question, answer, ...}.
 */
import arithmeticTrain from './arithmetic/train.jsonl' with { type: 'text' };
import arithmeticVal from './arithmetic/val.jsonl' with { type: 'text' };

export const BUILTIN_DATASETS: Readonly<Record<string, string>> = {
  'arithmetic/train': arithmeticTrain,
  'arithmetic/val': arithmeticVal,
};
