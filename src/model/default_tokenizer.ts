/**
 * agentic's own small tokenizer, embedded in the binary: a byte-level BPE trained on the built-in
 * environments' text (scripts/build_tokenizer.ts), for models trained from scratch.
 */
import tokenizerConfig from '../../assets/tokenizer/tokenizer_config.json' with { type: 'json' };
import tokenizerJson from '../../assets/tokenizer/tokenizer.json' with { type: 'json' };
import { Tokenizer } from './tokenizer';

let cached: Tokenizer | null = null;

export function defaultTokenizer(): Tokenizer {
  cached ??= new Tokenizer(
    { tokenizerJson: tokenizerJson as Record<string, unknown>, tokenizerConfig: tokenizerConfig as Record<string, unknown> },
    'built-in tokenizer',
  );
  return cached;
}
