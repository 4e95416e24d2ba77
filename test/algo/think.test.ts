import { describe, expect, test } from 'bun:test';
import { answerTokenMask, dropThinkCredit, outsideAnswerTokenMask, outsideThinkTokenMask, samplingTemperatures, thinkTokenMask } from '../../src/algo/think';
import { ANSWER_OPENING } from '../../src/sdk/answer';

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

test('outsideThinkTokenMask marks every response token but the thinking content, answer tags or none', () => {
  const row = ids('Q', '<think', '>goal', ' 2', '</', 'think', '><', 'answer', '>Down', '</', 'answer', '>');
  expect([...outsideThinkTokenMask(row, mask(0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), pieceOf)]).toEqual([0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
  // a move with no answer tags (TextArena's [5]) is outside the thinking all the same
  const bare = ids('Q', '<think', '>goal', '</', 'think', '>', 'x');
  expect([...outsideThinkTokenMask(bare, mask(0, 1, 1, 1, 1, 1, 1), pieceOf)]).toEqual([0, 1, 0, 1, 1, 1, 1]);
  expect([...answerTokenMask(bare, mask(0, 1, 1, 1, 1, 1, 1), pieceOf)]).toEqual([0, 0, 0, 0, 0, 0, 0]);
});

describe('samplingTemperatures', () => {
  const sampled = { temperature: 0.75, topP: 1, topK: 0, doSample: true };
  const hot = { ...sampled, opening: { ...ANSWER_OPENING, temperature: 2 } };
  // two turns in one trajectory row: the prompt token 'Q' between them starts a new turn's text
  const row = ids('Q', '<think', '>goal', '</', 'think', '><', 'answer', '>Down', '</', 'answer', '>', 'Q', '><', 'answer', '>Down', 'x');
  const bits = mask(0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1);

  test("the token that begins each answer, and only it, at the opening's temperature", () => {
    // '>Down' holds the tag's '>' and the move; the closing tag after it is sampled as usual
    expect([...samplingTemperatures(row, bits, pieceOf, hot)]).toEqual([1, 0.75, 0.75, 0.75, 0.75, 0.75, 0.75, 2, 0.75, 0.75, 0.75, 1, 0.75, 0.75, 2, 0.75]);
    // a tokenizer that keeps the tag's '>' on its own: that token and the move's both begin the answer
    const split = ids('><', 'answer', '>', '>Down', '</');
    expect([...samplingTemperatures(split, mask(1, 1, 1, 1, 1), pieceOf, hot)]).toEqual([0.75, 0.75, 2, 2, 0.75]);
  });

  test('without a span, or decoding greedily, every response token is at the one temperature its log-prob has', () => {
    expect(new Set(samplingTemperatures(row, bits, pieceOf, sampled).filter((_, t) => bits[t]))).toEqual(new Set([0.75]));
    expect(new Set(samplingTemperatures(row, bits, pieceOf, { ...hot, doSample: false }))).toEqual(new Set([1]));
    // greedy outside the answer (temperature 0) has log-probs at 1; the answer is still sampled at its own
    const greedyElsewhere = samplingTemperatures(row, bits, pieceOf, { ...hot, temperature: 0 });
    expect([...greedyElsewhere.subarray(5, 11)]).toEqual([1, 1, 2, 1, 1, 1]);
  });
});
