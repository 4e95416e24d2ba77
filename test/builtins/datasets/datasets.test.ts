import { describe, expect, test } from 'bun:test';
import { BUILTIN_DATASETS, builtinRows } from '../../../plugins/datasets/_index';
import { normalizeAnswer } from '../../../plugins/rewards/exact_match';

describe('shipped datasets', () => {
  test('are small (under 500 KB together)', () => {
    const bytes = Object.values(BUILTIN_DATASETS).reduce((sum, text) => sum + Buffer.byteLength(text), 0);
    expect(bytes).toBeLessThan(500_000);
  });

  test('corpus passages are {id, title, text} with unique ids', () => {
    const passages = builtinRows('corpus/passages');
    expect(passages.length).toBeGreaterThanOrEqual(150);
    expect(new Set(passages.map((p) => p.id)).size).toBe(passages.length);
    for (const p of passages) expect(Object.keys(p).sort()).toEqual(['id', 'text', 'title']);
  });

  test('every corpus question is {question, answer} and its answer is in the corpus', () => {
    const corpus = normalizeAnswer(
      builtinRows('corpus/passages')
        .map((p) => `${p.title} ${p.text}`)
        .join(' '),
    );
    for (const split of ['corpus_qa/train', 'corpus_qa/val']) {
      const rows = builtinRows(split);
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(Object.keys(row).sort()).toEqual(['answer', 'question']);
        expect(corpus).toContain(normalizeAnswer(String(row.answer)));
      }
    }
    const train = new Set(builtinRows('corpus_qa/train').map((r) => r.question));
    expect(builtinRows('corpus_qa/val').some((r) => train.has(r.question))).toBe(false);
  });

  test('coding tasks are {question, tests, solution, entry_point}, split by question', () => {
    const train = builtinRows('coding/train');
    const val = builtinRows('coding/val');
    for (const row of [...train, ...val]) {
      expect(Object.keys(row).sort()).toEqual(['entry_point', 'question', 'solution', 'tests']);
      expect((row.tests as string[]).every((t) => t.startsWith('assert '))).toBe(true);
      expect(String(row.question)).toContain(`\`${row.entry_point}(`);
    }
    const trainQuestions = new Set(train.map((r) => r.question));
    expect(val.some((r) => trainQuestions.has(r.question))).toBe(false);
  });
});
