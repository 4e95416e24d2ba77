import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BYTE_TO_CHAR, bpeTokenizerConfig, bpeTokenizerJson, DEFAULT_SPECIAL_TOKENS, trainBpe } from '../../src/model/bpe';
import { BUILTIN_CHAT_TEMPLATE } from '../../src/model/chat_template';
import { defaultTokenizer } from '../../src/model/default_tokenizer';
import { Tokenizer } from '../../src/model/tokenizer';
import { Rng } from '../../src/engine/rng';
import { ROOT } from '../helpers';

/** A varied corpus: source text of this repository plus seeded nonsense with unicode in it. */
function corpus(): string[] {
  const texts = ['src/model/bpe.ts', 'src/model/safetensors.ts', 'README.md'].map((p) => readFileSync(join(ROOT, p), 'utf8'));
  const rng = Rng.fromSeed(1, 'bpe-test');
  const syllables = ['ka', 'lo', 'mi', 'ré', 'zü', '中', '文', 'ñu', ' ', '  ', '\n', '42', '😀', ', '];
  texts.push(Array.from({ length: 4000 }, () => rng.choice(syllables)).join(''));
  return texts;
}

function tokenizerOf(texts: string[], vocabSize: number): Tokenizer {
  const trained = trainBpe(texts, { vocabSize });
  return new Tokenizer({ tokenizerJson: bpeTokenizerJson(trained), tokenizerConfig: bpeTokenizerConfig(trained, BUILTIN_CHAT_TEMPLATE) });
}

const SAMPLES = [
  'Hello, world! The quick brown fox.',
  'Ünïcödé façade naïve café e\u0301 — “quotes” ‘single’',
  'emoji 😀👍🏽🇫🇷 family 👨\u200d👩\u200d👧 中文分词 日本語 한국어',
  '  leading   spaces\tand\ttabs\r\n\n\ntrailing   ',
  'def f(x):\n    return x ** 2  # 0.5e-3\n',
  '<|im_start|>user\n<answer>dragon</answer><|im_end|>\n<|pad|><|endoftext|>',
  '',
  '\u0000\u0001 control bytes \u007f and lone combining \u0301',
];

describe('training', () => {
  test('merges the most frequent pair first', () => {
    const trained = trainBpe(['ab ab ab cd'], { vocabSize: 256 + 2 + 4 });
    expect(trained.merges).toEqual([
      ['a', 'b'],
      ['Ġ', 'ab'],
    ]);
    expect(trained.vocab.slice(256)).toEqual(['ab', 'Ġab']);
  });

  test('ties go to the pair with the smallest ids, and pairs seen once are not merged by default', () => {
    expect(trainBpe(['xy yx'], { vocabSize: 300, minFrequency: 1 }).merges[0]).toEqual([BYTE_TO_CHAR[32]!, 'y']);
    expect(trainBpe(['xy yx'], { vocabSize: 300 }).merges).toEqual([]);
  });

  test('special tokens are cut out of the training text, never learned', () => {
    const trained = trainBpe(['<|im_start|>'.repeat(50)], { vocabSize: 300 });
    expect(trained.merges).toEqual([]);
  });

  test('is deterministic and reaches the requested vocabulary size', () => {
    const a = bpeTokenizerJson(trainBpe(corpus(), { vocabSize: 700 }));
    const b = bpeTokenizerJson(trainBpe(corpus(), { vocabSize: 700 }));
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(tokenizerOf(corpus(), 700).vocabSize).toBe(700);
  });

  test('refuses a vocabulary too small for the bytes and special tokens', () => {
    expect(() => trainBpe([], { vocabSize: 259 })).toThrow('vocabSize 259 leaves no room for the 256 byte tokens and 4 special tokens');
  });
});

describe('the trained tokenizer loads in @huggingface/tokenizers', () => {
  const tokenizer = tokenizerOf(corpus(), 700);

  test('decode(encode(s)) gives back any text, unicode and control bytes included', () => {
    for (const text of SAMPLES) expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
  });

  test('merges shorten text it was trained on', () => {
    const text = readFileSync(join(ROOT, 'src/model/bpe.ts'), 'utf8');
    expect(tokenizer.encode(text).length).toBeLessThan(new TextEncoder().encode(text).length / 2);
  });

  test('special tokens are single ids after the vocabulary, and are skipped on request', () => {
    const ids = tokenizer.encode('<|im_start|>user<|im_end|>');
    expect(ids[0]).toBe(700 - 3);
    expect(ids.at(-1)).toBe(700 - 2);
    expect(DEFAULT_SPECIAL_TOKENS.map((t) => tokenizer.tokenToId(t))).toEqual([696, 697, 698, 699]);
    expect(tokenizer.eosTokenId).toBe(698);
    expect(tokenizer.padTokenId).toBe(699);
    expect(tokenizer.decode(ids, { skipSpecialTokens: true })).toBe('user');
  });
});

describe('the embedded default tokenizer (assets/tokenizer)', () => {
  const tokenizer = defaultTokenizer();

  test('has the ChatML special tokens and the built-in chat template', () => {
    expect(tokenizer.imStartId).not.toBeNull();
    expect(tokenizer.imEndId).toBe(tokenizer.eosTokenId);
    expect(tokenizer.padTokenId).toBe(tokenizer.tokenToId('<|pad|>')!);
    expect(tokenizer.chatTemplate).toBe(BUILTIN_CHAT_TEMPLATE);
    expect(tokenizer.vocabSize).toBeLessThanOrEqual(1024);
  });

  test('round-trips any text', () => {
    for (const text of SAMPLES) expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
  });
});
