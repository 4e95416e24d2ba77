/**
 * A Hugging Face tokenizer (tokenizer.json + tokenizer_config.json) with the ids the trainer needs:
 * end of sequence, padding and the ChatML markers, and the model's chat template.
 */
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { firstLine, ModelError } from '../errors';
import { displayPath } from '../util/paths';
import { BUILTIN_CHAT_TEMPLATE, renderChatTemplate, templateFromConfig, type ChatTemplateOptions, type TemplateMessage } from './chat_template';

export const TOKENIZER_FILE = 'tokenizer.json';
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';
export const CHAT_TEMPLATE_FILE = 'chat_template.jinja';

/** What a tokenizer is made from and saved as. */
export interface TokenizerFiles {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  /** A template from a separate chat_template.jinja; it wins over tokenizer_config's. */
  chatTemplate?: string | null;
}

interface AddedTokenJson {
  id: number;
  content: string;
  special?: boolean;
}

/** A special-token entry of tokenizer_config.json: a string, or {content: string, ...}. */
function tokenText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { content?: unknown }).content === 'string') return (value as { content: string }).content;
  return null;
}

/** A JSON file that must hold an object; anything else is a one-line ModelError naming the file. */
export function readJsonObject(path: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ModelError(`${displayPath(path)}: ${existsSync(path) ? 'not valid JSON' : 'cannot read'}: ${firstLine(error)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ModelError(`${displayPath(path)}: not a JSON object`);
  return value as Record<string, unknown>;
}

export interface EncodeOptions {
  /** Add what the tokenizer's post-processor adds (BOS/EOS); Qwen's adds nothing. Default true, as in transformers. */
  addSpecialTokens?: boolean;
}

export interface DecodeOptions {
  skipSpecialTokens?: boolean;
}

export class Tokenizer {
  /** Number of ids the tokenizer can produce (vocabulary and added tokens): the embedding needs at least this many rows. */
  readonly vocabSize: number;
  readonly eosTokenId: number | null;
  /** The padding id: pad_token, else the end-of-sequence token. */
  readonly padTokenId: number | null;
  readonly bosTokenId: number | null;
  readonly imStartId: number | null;
  readonly imEndId: number | null;
  /** Ids of added tokens marked special (skipped by decode with skipSpecialTokens). */
  readonly specialTokenIds: ReadonlySet<number>;
  /** Whether the model ships its own chat template (else the built-in one is used). */
  readonly hasOwnChatTemplate: boolean;
  readonly chatTemplate: string;
  private readonly hf: HfTokenizer;

  constructor(
    private readonly files: TokenizerFiles,
    /** Where it came from, for messages. */
    readonly source = 'tokenizer',
  ) {
    try {
      this.hf = new HfTokenizer(files.tokenizerJson, files.tokenizerConfig);
    } catch (error) {
      throw new ModelError(`${source}: cannot build the tokenizer: ${firstLine(error)}`);
    }
    const added = (files.tokenizerJson.added_tokens ?? []) as AddedTokenJson[];
    const vocab = this.hf.get_vocab(true);
    let maxId = -1;
    for (const id of vocab.values()) maxId = Math.max(maxId, id);
    for (const token of added) maxId = Math.max(maxId, token.id);
    this.vocabSize = maxId + 1;
    this.specialTokenIds = new Set(added.filter((t) => t.special).map((t) => t.id));
    const idOf = (key: string): number | null => {
      const text = tokenText(files.tokenizerConfig[key]);
      return text === null ? null : (this.tokenToId(text) ?? null);
    };
    this.eosTokenId = idOf('eos_token');
    this.bosTokenId = idOf('bos_token');
    this.padTokenId = idOf('pad_token') ?? this.eosTokenId;
    this.imStartId = this.tokenToId('<|im_start|>') ?? null;
    this.imEndId = this.tokenToId('<|im_end|>') ?? null;
    const own = files.chatTemplate ?? templateFromConfig(files.tokenizerConfig.chat_template);
    this.hasOwnChatTemplate = own !== null;
    this.chatTemplate = own ?? BUILTIN_CHAT_TEMPLATE;
  }

  /** Reads tokenizer.json, tokenizer_config.json (optional) and chat_template.jinja (optional) from a folder. */
  static fromFolder(folder: string): Tokenizer {
    const jsonPath = join(folder, TOKENIZER_FILE);
    if (!existsSync(jsonPath)) throw new ModelError(`${displayPath(folder)}: no ${TOKENIZER_FILE} (a fast tokenizer file is required)`);
    const configPath = join(folder, TOKENIZER_CONFIG_FILE);
    const templatePath = join(folder, CHAT_TEMPLATE_FILE);
    return new Tokenizer(
      {
        tokenizerJson: readJsonObject(jsonPath),
        tokenizerConfig: existsSync(configPath) ? readJsonObject(configPath) : {},
        chatTemplate: existsSync(templatePath) ? readFileSync(templatePath, 'utf8') : null,
      },
      displayPath(jsonPath),
    );
  }

  encode(text: string, options: EncodeOptions = {}): number[] {
    return this.hf.encode(text, { add_special_tokens: options.addSpecialTokens ?? true }).ids;
  }

  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    if (ids.length === 0) return '';
    return this.hf.decode([...ids], { skip_special_tokens: options.skipSpecialTokens ?? false });
  }

  tokenToId(token: string): number | undefined {
    return this.hf.token_to_id(token);
  }

  idToToken(id: number): string | undefined {
    return this.hf.id_to_token(id);
  }

  /** The prompt text of a conversation, by the model's template (or the built-in one). */
  applyChatTemplate(messages: readonly TemplateMessage[], options: ChatTemplateOptions = {}): string {
    const config = this.files.tokenizerConfig;
    const variables = { bos_token: tokenText(config.bos_token) ?? '', eos_token: tokenText(config.eos_token) ?? '', ...options.variables };
    return renderChatTemplate(this.chatTemplate, messages, { ...options, variables }, this.source);
  }

  /** The files to save: tokenizer.json as loaded, tokenizer_config.json with the chat template in it. */
  toFiles(): { tokenizerJson: Record<string, unknown>; tokenizerConfig: Record<string, unknown> } {
    return { tokenizerJson: this.files.tokenizerJson, tokenizerConfig: { ...this.files.tokenizerConfig, chat_template: this.chatTemplate } };
  }
}
