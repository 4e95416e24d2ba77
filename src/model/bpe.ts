/**
 * Training a byte-level BPE tokenizer, saved as a standard tokenizer.json that Hugging Face
 * tokenizers (Rust/Python and JS) load. The 256 byte symbols are the base vocabulary, so every
 * text encodes; text is split into pieces by a regex (words with their leading punctuation or
 * space, single digits, punctuation runs, whitespace runs) before merges, as GPT-style tokenizers do.
 *
 * Training is deterministic: the most frequent pair is merged first, ties going to the pair whose
 * token ids are smallest (left id, then right id).
 */

/** Added after the learned vocabulary, in this order. */
export const DEFAULT_SPECIAL_TOKENS: readonly string[] = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|pad|>'];

/**
 * The pre-tokenizer split regex (Oniguruma syntax for tokenizer.json, also valid JavaScript with
 * the `u` flag): a grid cell, contractions, a letter run with one optional leading non-letter, one
 * digit, a punctuation run, newlines, and whitespace.
 *
 * A grid cell is one of the built-in grid games' symbols followed by another symbol, a line break
 * or the end of the text, so a drawn board is one piece (and, after training, one token) per cell
 * whatever its neighbours: a small policy then sees each cell as itself instead of learning merged
 * runs like `__` and `_O`. Words that merely start with one of those letters are unaffected.
 */
export const SPLIT_PATTERN =
  "[_#OPGXS\u221a](?=[_#OPGXS\u221a\r\n]|$)|'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** GPT-2's reversible map from bytes to printable characters: token strings are made of these. */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const chars: string[] = new Array(256);
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    chars[b] = String.fromCharCode(printable ? b : next++);
  }
  return chars;
})();

export interface BpeTrainOptions {
  /** Size of the whole vocabulary: 256 bytes, the merges, and the special tokens. */
  vocabSize: number;
  specialTokens?: readonly string[];
  /** Pairs seen fewer times than this are never merged (training may stop short of vocabSize). */
  minFrequency?: number;
}

export interface TrainedBpe {
  /** Token strings (byte-level characters) by id, specials excluded. */
  vocab: string[];
  merges: Array<[string, string]>;
  specialTokens: string[];
}

/** Pair keys pack two ids into one number; ids stay below this. */
const PAIR_SHIFT = 2 ** 21;

/** A binary max-heap of [count, pair] with lazy deletion (stale entries are skipped on pop). */
class PairHeap {
  private counts: number[] = [];
  private pairs: number[] = [];

  get size(): number {
    return this.counts.length;
  }

  /** Whether entry i ranks above entry j: higher count, then the smaller pair key. */
  private above(i: number, j: number): boolean {
    const ci = this.counts[i]!;
    const cj = this.counts[j]!;
    return ci > cj || (ci === cj && this.pairs[i]! < this.pairs[j]!);
  }

  private swap(i: number, j: number): void {
    [this.counts[i], this.counts[j]] = [this.counts[j]!, this.counts[i]!];
    [this.pairs[i], this.pairs[j]] = [this.pairs[j]!, this.pairs[i]!];
  }

  push(count: number, pair: number): void {
    this.counts.push(count);
    this.pairs.push(pair);
    for (let i = this.counts.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!this.above(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): [count: number, pair: number] {
    const top: [number, number] = [this.counts[0]!, this.pairs[0]!];
    const lastCount = this.counts.pop()!;
    const lastPair = this.pairs.pop()!;
    if (this.counts.length > 0) {
      this.counts[0] = lastCount;
      this.pairs[0] = lastPair;
      for (let i = 0; ; ) {
        const left = 2 * i + 1;
        const right = left + 1;
        let best = i;
        if (left < this.counts.length && this.above(left, best)) best = left;
        if (right < this.counts.length && this.above(right, best)) best = right;
        if (best === i) break;
        this.swap(i, best);
        i = best;
      }
    }
    return top;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Piece frequencies of a corpus: special tokens cut out, then the split regex, as the tokenizer will see it. */
function countPieces(texts: Iterable<string>, specialTokens: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  const splitter = new RegExp(SPLIT_PATTERN, 'gu');
  const specials = specialTokens.length > 0 ? new RegExp(specialTokens.map(escapeRegExp).join('|'), 'g') : null;
  for (const text of texts) {
    for (const segment of specials ? text.split(specials) : [text]) {
      for (const match of segment.matchAll(splitter)) counts.set(match[0], (counts.get(match[0]) ?? 0) + 1);
    }
  }
  return counts;
}

export function trainBpe(texts: Iterable<string>, options: BpeTrainOptions): TrainedBpe {
  const specialTokens = [...(options.specialTokens ?? DEFAULT_SPECIAL_TOKENS)];
  const minFrequency = options.minFrequency ?? 2;
  const targetTokens = options.vocabSize - specialTokens.length;
  if (targetTokens < 256) throw new Error(`vocabSize ${options.vocabSize} leaves no room for the 256 byte tokens and ${specialTokens.length} special tokens`);
  if (options.vocabSize >= PAIR_SHIFT) throw new Error(`vocabSize ${options.vocabSize} is too large (at most ${PAIR_SHIFT - 1})`);

  const vocab = [...BYTE_TO_CHAR];
  const idOf = new Map(vocab.map((token, id) => [token, id]));
  const encoder = new TextEncoder();
  const words: number[][] = [];
  const wordCounts: number[] = [];
  for (const [piece, count] of countPieces(texts, specialTokens)) {
    words.push(Array.from(encoder.encode(piece)));
    wordCounts.push(count);
  }

  const pairCounts = new Map<number, number>();
  const pairWords = new Map<number, Set<number>>();
  const addPairs = (w: number, sign: 1 | -1, changed: Set<number>): void => {
    const symbols = words[w]!;
    for (let i = 0; i + 1 < symbols.length; i++) {
      const key = symbols[i]! * PAIR_SHIFT + symbols[i + 1]!;
      pairCounts.set(key, (pairCounts.get(key) ?? 0) + sign * wordCounts[w]!);
      if (sign > 0) {
        let set = pairWords.get(key);
        if (!set) pairWords.set(key, (set = new Set()));
        set.add(w);
      }
      changed.add(key);
    }
  };
  const initial = new Set<number>();
  for (let w = 0; w < words.length; w++) addPairs(w, 1, initial);
  const heap = new PairHeap();
  for (const key of initial) heap.push(pairCounts.get(key)!, key);

  const merges: Array<[string, string]> = [];
  while (vocab.length < targetTokens && heap.size > 0) {
    const [count, key] = heap.pop();
    if (pairCounts.get(key) !== count) continue; // stale entry
    if (count < minFrequency) break;
    const left = Math.floor(key / PAIR_SHIFT);
    const right = key % PAIR_SHIFT;
    const token = vocab[left]! + vocab[right]!;
    let merged = idOf.get(token);
    if (merged === undefined) {
      merged = vocab.length;
      vocab.push(token);
      idOf.set(token, merged);
    }
    merges.push([vocab[left]!, vocab[right]!]);

    const changed = new Set<number>();
    for (const w of pairWords.get(key) ?? []) {
      addPairs(w, -1, changed);
      words[w] = mergePair(words[w]!, left, right, merged);
      addPairs(w, 1, changed);
    }
    pairCounts.delete(key);
    pairWords.delete(key);
    changed.delete(key);
    for (const k of changed) {
      const c = pairCounts.get(k)!;
      if (c > 0) heap.push(c, k);
      else {
        pairCounts.delete(k);
        pairWords.delete(k);
      }
    }
  }
  return { vocab, merges, specialTokens };
}

/** `symbols` with each `left` followed by `right` replaced by `merged`, left to right. */
function mergePair(symbols: readonly number[], left: number, right: number, merged: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < symbols.length; i++) {
    if (i + 1 < symbols.length && symbols[i] === left && symbols[i + 1] === right) {
      out.push(merged);
      i++;
    } else out.push(symbols[i]!);
  }
  return out;
}

const BYTE_LEVEL = { add_prefix_space: false, trim_offsets: false, use_regex: false };

/** The tokenizer.json of a trained tokenizer: BPE model, regex split + ByteLevel, special tokens after the vocabulary. */
export function bpeTokenizerJson(trained: TrainedBpe): Record<string, unknown> {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: trained.specialTokens.map((content, i) => ({
      id: trained.vocab.length + i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: SPLIT_PATTERN }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', ...BYTE_LEVEL },
      ],
    },
    post_processor: { type: 'ByteLevel', ...BYTE_LEVEL },
    decoder: { type: 'ByteLevel', ...BYTE_LEVEL },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: Object.fromEntries(trained.vocab.map((token, id) => [token, id])),
      merges: trained.merges,
    },
  };
}

/** tokenizer_config.json for a trained tokenizer: ChatML turn ends as EOS, `<|pad|>` for padding. */
export function bpeTokenizerConfig(trained: TrainedBpe, chatTemplate: string): Record<string, unknown> {
  const has = (token: string): string | null => (trained.specialTokens.includes(token) ? token : null);
  return {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: Object.fromEntries(
      trained.specialTokens.map((content, i) => [
        String(trained.vocab.length + i),
        { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true },
      ]),
    ),
    bos_token: null,
    eos_token: has('<|im_end|>') ?? has('<|endoftext|>'),
    pad_token: has('<|pad|>') ?? has('<|endoftext|>'),
    unk_token: null,
    chat_template: chatTemplate,
    clean_up_tokenization_spaces: false,
    errors: 'replace',
    model_max_length: 32768,
    split_special_tokens: false,
    tokenizer_class: 'PreTrainedTokenizerFast',
  };
}
