/**
 * What makes two processes tokenize alike: the sha256 of the tokenizer.json a model folder holds
 * (the bytes saveHfFolder writes: JSON.stringify of the loaded object) and of the chat template
 * text the tokenizer renders with (its own, else the built-in one). An inference server reports
 * both (`/get_model_info`'s tokenizer_sha256 and chat_template_sha256) and a trainer compares them
 * with its own before it sends a single prompt of ids.
 */
import { createHash } from 'node:crypto';
import type { Tokenizer } from './tokenizer';

export interface TokenizerFingerprint {
  tokenizerSha256: string;
  chatTemplateSha256: string;
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export function tokenizerFingerprint(tokenizer: Tokenizer): TokenizerFingerprint {
  return { tokenizerSha256: sha256(JSON.stringify(tokenizer.toFiles().tokenizerJson)), chatTemplateSha256: sha256(tokenizer.chatTemplate) };
}
