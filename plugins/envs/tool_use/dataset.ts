/**
 * The question/answer rows an episode is drawn from: a built-in dataset by `<name>/<split>`, or
 * a .jsonl file (one row a line) or .json file (a list of rows). Every row is an object with a
 * non-empty `question` string and an `answer` (any JSON value but null: a string, a number, a
 * list of acceptable answers) or, for coding tasks scored by running them, `tests`; other
 * fields pass through to the reward function. A malformed row
 * is a one-line error naming the file and the line the row starts on. Envs whose rows have
 * other fields (GEM's dataset envs) read files the same way with their own row check (loadRecords).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { BUILTIN_DATASETS } from '../../datasets/_index';

export interface Row {
  question: string;
  answer: unknown;
  [field: string]: unknown;
}

/** Turns one parsed JSON value into a row, or throws naming `where` (file:line). */
export type RowCheck<T> = (value: unknown, where: string) => T;

/** Parsed rows by row check, then by source and file version. */
const cache = new WeakMap<RowCheck<unknown>, Map<string, readonly unknown[]>>();

/** The rows `ref` names; relative file paths are read from `cwd`. Parsed once per file version. */
export function loadRows(ref: string, cwd: string): readonly Row[] {
  return loadRecords(ref, cwd, checkRow);
}

/** The rows of a built-in dataset or a .json/.jsonl file, each checked by `check`. */
export function loadRecords<T>(ref: string, cwd: string, check: RowCheck<T>): readonly T[] {
  const builtin = BUILTIN_DATASETS[ref];
  if (builtin !== undefined) return cached(check, `builtin:${ref}`, () => parseRows(builtin, `${ref} (built in)`, 'jsonl', check));
  const format = ref.endsWith('.jsonl') ? 'jsonl' : ref.endsWith('.json') ? 'json' : null;
  if (format === null) {
    const known = Object.keys(BUILTIN_DATASETS).sort().join(', ');
    throw new Error(`dataset '${ref}' is neither a built-in dataset (${known}) nor a .json or .jsonl file`);
  }
  const path = isAbsolute(ref) ? ref : resolve(cwd, ref);
  if (!existsSync(path) || !statSync(path).isFile()) throw new Error(`dataset ${ref}: no such file`);
  const { mtimeMs, size } = statSync(path);
  return cached(check, `file:${path}:${mtimeMs}:${size}`, () => parseRows(readFileSync(path, 'utf8'), ref, format, check));
}

function cached<T>(check: RowCheck<T>, key: string, load: () => readonly T[]): readonly T[] {
  let byKey = cache.get(check);
  if (!byKey) cache.set(check, (byKey = new Map()));
  let rows = byKey.get(key) as readonly T[] | undefined;
  if (!rows) {
    rows = load();
    byKey.set(key, rows);
  }
  return rows;
}

/** Parses and checks rows; `shown` names the source in errors. */
export function parseRows<T = Row>(text: string, shown: string, format: 'json' | 'jsonl', check: RowCheck<T> = checkRow as RowCheck<T>): readonly T[] {
  const rows: T[] = [];
  if (format === 'jsonl') {
    text.split('\n').forEach((line, index) => {
      if (line.trim() === '') return;
      rows.push(check(parseJson(line, `${shown}:${index + 1}`), `${shown}:${index + 1}`));
    });
  } else {
    const list = parseJson(text, shown);
    if (!Array.isArray(list)) throw new Error(`${shown}: a .json dataset must be a list of rows`);
    const lines = elementLines(text);
    list.forEach((value, index) => rows.push(check(value, `${shown}:${lines[index] ?? 1}`)));
  }
  if (rows.length === 0) throw new Error(`${shown}: the dataset has no rows`);
  return Object.freeze(rows);
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${where}: not valid JSON (${(error as Error).message.split('\n')[0]})`);
  }
}

/** `value` as a row, or a one-line error naming `where` (a suite's episode is checked the same way). */
export function checkRow(value: unknown, where: string): Row {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${where}: a row must be a JSON object`);
  const row = value as Record<string, unknown>;
  if (typeof row.question !== 'string' || row.question.trim() === '') throw new Error(`${where}: the row needs a non-empty 'question' string`);
  const hasAnswer = row.answer !== undefined && row.answer !== null;
  if (!hasAnswer && row.tests === undefined) throw new Error(`${where}: the row needs an 'answer' (or 'tests' for a coding task)`);
  return Object.freeze(row) as Row;
}

/** The line each element of a (valid) top-level JSON list starts on. */
function elementLines(text: string): number[] {
  const lines: number[] = [];
  let depth = 0;
  let line = 1;
  let inString = false;
  let expectingElement = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') line++;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (depth === 1 && expectingElement && !/\s/.test(c) && c !== ']') {
      lines.push(line);
      expectingElement = false;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth++;
      if (depth === 1) expectingElement = true;
    } else if (c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 1) expectingElement = true;
  }
  return lines;
}
