/** How a typed or scripted line becomes a response. */
import { describe, expect, test } from 'bun:test';
import { decodeEscapes, scriptLines, ScriptSource } from '../../src/play/responses';

describe('decodeEscapes', () => {
  test('\\n is a new line, \\t a tab, \\\\ a backslash', () => {
    expect(decodeEscapes('<think>goal below</think>\\n<answer>Down</answer>')).toBe('<think>goal below</think>\n<answer>Down</answer>');
    expect(decodeEscapes('a\\tb')).toBe('a\tb');
    expect(decodeEscapes('a\\\\nb')).toBe('a\\nb');
  });

  test('any other backslash stays as written, so JSON needs no extra escaping', () => {
    const call = '<tool_call>{"name": "echo", "arguments": {"text": "say \\"hi\\""}}</tool_call>';
    expect(decodeEscapes(call)).toBe(call);
    expect(decodeEscapes('C:\\data')).toBe('C:\\data');
  });
});

describe('scriptLines', () => {
  test('one response per line; the last newline starts no empty response; CRLF works', () => {
    expect(scriptLines('a\nb\n')).toEqual(['a', 'b']);
    expect(scriptLines('a\r\nb')).toEqual(['a', 'b']);
    expect(scriptLines('')).toEqual([]);
  });

  test('an empty line in the middle is an empty response', () => {
    expect(scriptLines('a\n\nb\n')).toEqual(['a', '', 'b']);
  });
});

test('ScriptSource echoes each line after the prompt, decodes it, and ends with null', async () => {
  const echoed: string[] = [];
  const source = new ScriptSource('script', ['one\\ntwo', 'three'], (text) => echoed.push(text));
  expect(await source.next('> ')).toBe('one\ntwo');
  expect(source.unread).toBe(1);
  expect(await source.next('> ')).toBe('three');
  expect(await source.next('> ')).toBeNull();
  expect(echoed).toEqual(['> one\\ntwo', '> three']);
  expect(source.read).toBe(2);
});
