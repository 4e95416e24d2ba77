import { describe, expect, test } from 'bun:test';
import answer from '../../../plugins/tools/answer';

describe('answer tool', () => {
  test('ends the episode and echoes the answer', async () => {
    expect(answer.terminal).toBe(true);
    expect(await answer.call({ answer: 'Celn' }, { signal: new AbortController().signal })).toBe('Celn');
    expect(answer.parameters.safeParse({}).success).toBe(false);
  });
});
