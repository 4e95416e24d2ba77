import { describe, expect, test } from 'bun:test';
import { answerTokenMask, dropThinkCredit, outsideAnswerTokenMask, thinkTokenMask } from '../../src/algo/think';

// a toy vocabulary whose pieces split the tags the way a BPE tokenizer does
const PIECES = ['Q', '<think', '>goal', ' 2', ' below', '</', 'think', '><', 'answer', '>Down', '>', '<think>', 'x'];
const ids = (...pieces: string[]) => Int32Array.from(pieces.map((p) => PIECES.indexOf(p)));
const pieceOf = (id: number) => PIECES[id]!;
const mask = (...bits: number[]) => Uint8Array.from(bits);

describe('thinkTokenMask', () => {
  test('marks the tokens that show the content of a think span, not the tags or the answer', () => {
    const row = ids('Q', '<think', '>goal', ' 2', ' below', '</', 'think', '><', 'answer', '>Down', '</', 'answer', '>');
    const inside = thinkTokenMask(row, mask(0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), pieceOf);
    expect([...inside]).toEqual([0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
  });

  test('reads each turn on its own; prompt tokens are never marked; an unclosed span runs to the end of its turn', () => {
    // turn 1: closed span; prompt 'Q'; turn 2: opened and cut off
    const row = ids('<think>', 'x', '</', 'think', '>', 'Q', '<think>', 'x', 'x');
    const inside = thinkTokenMask(row, mask(1, 1, 1, 1, 1, 0, 1, 1, 1), pieceOf);
    expect([...inside]).toEqual([0, 1, 0, 0, 0, 0, 0, 1, 1]);
    // the same tokens outside the response mask are left alone
    expect([...thinkTokenMask(row, mask(0, 0, 0, 0, 0, 0, 0, 0, 0), pieceOf)]).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
  });

  test('an empty span or no span marks nothing', () => {
    expect([...thinkTokenMask(ids('<think>', '</', 'think', '>', '>Down'), mask(1, 1, 1, 1, 1), pieceOf)]).toEqual([0, 0, 0, 0, 0]);
    expect([...thinkTokenMask(ids('>Down', 'x'), mask(1, 1), pieceOf)]).toEqual([0, 0]);
  });
});

test('dropThinkCredit zeroes the advantages of think tokens only, row by row', () => {
  const rows = [
    { ids: ids('Q', '<think', '>goal', '</', 'think', '><', 'answer', '>Down'), mask: mask(0, 1, 1, 1, 1, 1, 1, 1) },
    { ids: ids('Q', '>Down'), mask: mask(0, 1) },
  ];
  const advantages = [Float32Array.from([0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]), Float32Array.from([0, -1])];
  const thinkMasks = rows.map((r) => thinkTokenMask(r.ids, r.mask, pieceOf));
  expect(dropThinkCredit(advantages, thinkMasks)).toBe(1);
  expect([...advantages[0]!]).toEqual([0, 0.5, 0, 0.5, 0.5, 0.5, 0.5, 0.5]);
  expect([...advantages[1]!]).toEqual([0, -1]);
});

test('answerTokenMask marks the content of the answer tags only', () => {
  const row = ids('Q', '<think', '>goal', '</', 'think', '><', 'answer', '>Down', '</', 'answer', '>');
  expect([...answerTokenMask(row, mask(0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), pieceOf)]).toEqual([0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]);
  // the word "answer" in the thinking is not a tag; an unclosed answer runs to the end of its turn
  const unclosed = ids('<think>', 'answer', '</', 'think', '><', 'answer', '>Down');
  expect([...answerTokenMask(unclosed, mask(1, 1, 1, 1, 1, 1, 1), pieceOf)]).toEqual([0, 0, 0, 0, 0, 0, 1]);
  expect([...thinkTokenMask(unclosed, mask(1, 1, 1, 1, 1, 1, 1), pieceOf)]).toEqual([0, 1, 0, 0, 0, 0, 0]);
});

test('outsideAnswerTokenMask marks every response token but the answer content', () => {
  const row = ids('Q', '<think', '>goal', '</', 'think', '><', 'answer', '>Down', '</', 'answer', '>');
  expect([...outsideAnswerTokenMask(row, mask(0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), pieceOf)]).toEqual([0, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1]);
});
