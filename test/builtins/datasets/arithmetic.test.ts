import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_DATASETS } from '../../../plugins/datasets/_index';
import { loadRows } from '../../../plugins/envs/tool_use/dataset';
import { evaluate } from '../../../plugins/tools/calculator/expression';
import { generateArithmetic, SPLIT_SIZES, toJsonl, type ArithmeticRow } from '../../../plugins/datasets/_generate/arithmetic';
import { ROOT } from '../../helpers';

const FOLDER = join(ROOT, 'plugins/datasets/arithmetic');
const committed = (split: string) => readFileSync(join(FOLDER, `${split}.jsonl`), 'utf8');
const rows = (split: string) =>
  committed(split)
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as ArithmeticRow);

describe('arithmetic dataset', () => {
  test('the committed files are what the generator writes (bun plugins/datasets/_generate/arithmetic.ts)', () => {
    const generated = generateArithmetic();
    for (const split of ['train', 'val'] as const) expect(committed(split)).toBe(toJsonl(generated[split]));
  });

  test('sizes, and no question in both splits', () => {
    expect(rows('train')).toHaveLength(SPLIT_SIZES.train);
    expect(rows('val')).toHaveLength(SPLIT_SIZES.val);
    const train = new Set(rows('train').map((r) => r.question));
    expect(train.size).toBe(SPLIT_SIZES.train);
    expect(rows('val').filter((r) => train.has(r.question))).toEqual([]);
    expect(committed('train').length + committed('val').length).toBeLessThan(320_000);
  });

  test('every row is {question, answer, expression} with a plain non-negative number as the answer; some have cents', () => {
    const all = [...rows('train'), ...rows('val')];
    for (const row of all) {
      expect(Object.keys(row)).toEqual(['question', 'answer', 'expression']);
      expect(row.question).toEndWith('?');
      expect(row.answer).toMatch(/^(0|[1-9]\d*)(\.\d{1,2})?$/);
      expect(row.answer).not.toMatch(/\.\d*0$/);
    }
    const decimals = all.filter((r) => r.answer.includes('.')).length;
    expect(decimals).toBeGreaterThan(all.length * 0.03);
    expect(decimals).toBeLessThan(all.length * 0.3);
  });

  test('every expression is a worked solution: the calculator prints the answer, from numbers of the question', () => {
    for (const row of [...rows('train'), ...rows('val')]) {
      expect(evaluate(row.expression)).toBe(row.answer);
      const asked = new Set(row.question.match(/\d+(?:\.\d+)?/g)!.map(Number));
      // the numbers it writes are the question's, the few constants of its template (2, 4, 1, 0.xx, ceil) aside
      for (const n of row.expression.match(/\d+(?:\.\d+)?/g)!.map(Number)) if (!asked.has(n)) expect([1, 2, 4]).toContain(n < 1 ? 1 : n);
    }
  });

  test('spot checks: answers recomputed from the questions of four kinds of problem', () => {
    const money = (text: string) => Math.round(Number(text) * 100);
    const answerCents = (row: ArithmeticRow) => money(row.answer);
    const checks: Array<[RegExp, (m: RegExpExecArray) => number]> = [
      [/buys (\d+) pens at \$([\d.]+) each and (\d+) books at \$([\d.]+) each/, (m) => Number(m[1]) * money(m[2]!) + Number(m[3]) * money(m[4]!)],
      [/buys (\d+) \w+ at \$([\d.]+) each and pays with \$(\d+)\./, (m) => money(m[3]!) - Number(m[1]) * money(m[2]!)],
      [/goes (\d+) km\/h for (\d+) hours, then (\d+) km\/h for (\d+) hours/, (m) => 100 * (Number(m[1]) * Number(m[2]) + Number(m[3]) * Number(m[4]))],
      [/packs of (\d+)\. \w+ needs (\d+) pencils/, (m) => 100 * Math.ceil(Number(m[2]) / Number(m[1]))],
    ];
    for (const [pattern, solve] of checks) {
      const matching = rows('train').flatMap((row) => {
        const m = pattern.exec(row.question);
        return m ? [{ row, m }] : [];
      });
      expect(matching.length).toBeGreaterThan(50);
      for (const { row, m } of matching) expect(answerCents(row)).toBe(solve(m));
    }
  });

  test('the built-in registry serves both splits by <name>/<split>', () => {
    expect(Object.keys(BUILTIN_DATASETS)).toContain('arithmetic/train');
    expect(loadRows('arithmetic/val', '/nonexistent') as unknown).toEqual(rows('val'));
    expect(loadRows('arithmetic/train', '/nonexistent')).toHaveLength(SPLIT_SIZES.train);
  });
});
