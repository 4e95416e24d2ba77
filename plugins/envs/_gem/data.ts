/**
 * The rows of GEM's dataset envs. GEM loads `dataset_name` from the Hugging Face hub; nothing is
 * downloaded here, so a hub name is refused at config validation with the local file to give
 * instead. What is read: a .jsonl (one row a line) or .json (a list of rows) file, a folder
 * holding `<split>.jsonl` or `<split>.json`, or a built-in dataset (arithmetic/train, ...). Each
 * row is an object whose `question_key` field is the question (a non-empty string) and whose
 * `answer_key` field is the answer (a string, a number, or a list of acceptable answers).
 */
import { existsSync, statSync } from 'node:fs';
import { basename, extname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'agentic';
import { BUILTIN_DATASETS } from '../../datasets/_index';
import { loadRecords, type RowCheck } from '../tool_use/dataset';

export interface QaRow {
  question: string;
  answer: unknown;
}

const LOCAL_PREFIXES = ['./', '../', '/'];

/** Why `name` cannot be read here (a hub dataset, a parquet file), or null. */
function datasetNameProblem(name: string, keys: { question_key: string; answer_key: string }): string | null {
  const rows = `{${keys.question_key}, ${keys.answer_key}} rows (question_key/answer_key)`;
  if (name.endsWith('.parquet'))
    return `${name}: parquet is not read here; convert it to JSON Lines (pandas: pd.read_parquet(f).to_json(out, orient='records', lines=True)) and give the .jsonl file of ${rows}`;
  const local = name.endsWith('.jsonl') || name.endsWith('.json') || LOCAL_PREFIXES.some((p) => name.startsWith(p)) || name in BUILTIN_DATASETS;
  if (local) return null;
  return `${name} is a Hugging Face hub dataset, which is not downloaded here; give a local .jsonl/.json file of ${rows} as dataset_name=path/to/file.jsonl (or a folder ./data holding <split>.jsonl)`;
}

/** env_config keys of the data, as ROLL's GEM envs take them; `question_key` defaults differ by env. */
export function dataShape(defaults: { question_key: string; answer_key: string }) {
  return {
    dataset_name: z
      .string()
      .min(1)
      .describe(
        'A local .jsonl/.json file of rows, a folder (./data) holding <split>.jsonl, or a built-in dataset (arithmetic/train). Hugging Face hub names (axon-rl/GSM-8k) are refused: nothing is downloaded.',
      ),
    split: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe('With a folder: the <split>.jsonl it reads. With a file: its name without the extension, or null.'),
    question_key: z.string().min(1).default(defaults.question_key).describe('The row field that is the question (the first observation).'),
    answer_key: z
      .string()
      .min(1)
      .default(defaults.answer_key)
      .describe('The row field that is the answer: a string, a number, or a list of acceptable answers.'),
  };
}

/** Adds the refusal of unreadable dataset names to a config holding dataShape's keys. */
export function refuseHubDatasets(config: { dataset_name: string; question_key: string; answer_key: string }, context: z.RefinementCtx): void {
  const problem = datasetNameProblem(config.dataset_name, config);
  if (problem) context.addIssue({ code: 'custom', path: ['dataset_name'], message: problem });
}

export interface DataConfig {
  dataset_name: string;
  split: string | null;
  question_key: string;
  answer_key: string;
}

/** The rows the config names; relative paths are read from `cwd`. One line for anything wrong. */
export function loadQaRows(config: DataConfig, cwd: string): readonly QaRow[] {
  return loadRecords(datasetRef(config, cwd), cwd, rowCheck(config.question_key, config.answer_key));
}

function datasetRef({ dataset_name: name, split }: DataConfig, cwd: string): string {
  const ext = extname(name);
  if (name in BUILTIN_DATASETS || ext === '.jsonl' || ext === '.json') {
    const stem = name in BUILTIN_DATASETS ? name.split('/').at(-1)! : basename(name, ext);
    if (split !== null && split !== stem)
      throw new Error(`split '${split}': dataset_name ${name} holds one split, '${stem}'; set split=null or name a folder holding ${split}.jsonl`);
    return name;
  }
  const folder = isAbsolute(name) ? name : resolve(cwd, name);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new Error(`dataset_name ${name}: no such folder (or give a .jsonl/.json file)`);
  if (split === null) throw new Error(`dataset_name ${name} is a folder; name the split to read (split=train reads ${join(name, 'train.jsonl')})`);
  const file = ['.jsonl', '.json'].map((e) => join(name, `${split}${e}`)).find((f) => existsSync(isAbsolute(f) ? f : resolve(cwd, f)));
  if (!file) throw new Error(`dataset_name ${name} holds no ${split}.jsonl or ${split}.json`);
  return file;
}

const checks = new Map<string, RowCheck<QaRow>>();

/** One check per key pair, so rows parsed for one env are shared by all envs of the same keys. */
function rowCheck(questionKey: string, answerKey: string): RowCheck<QaRow> {
  const key = JSON.stringify([questionKey, answerKey]);
  let check = checks.get(key);
  if (!check) {
    check = (value, where) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${where}: a row must be a JSON object`);
      const row = value as Record<string, unknown>;
      const question = row[questionKey];
      if (typeof question !== 'string' || question.trim() === '')
        throw new Error(`${where}: the row needs a non-empty '${questionKey}' string (question_key); it has ${Object.keys(row).join(', ') || 'no fields'}`);
      const answer = row[answerKey];
      const ok = typeof answer === 'string' || typeof answer === 'number' || (Array.isArray(answer) && answer.length > 0);
      if (!ok) throw new Error(`${where}: the row needs an '${answerKey}' (answer_key): a string, a number or a list of them`);
      return Object.freeze({ question, answer });
    };
    checks.set(key, check);
  }
  return check;
}
