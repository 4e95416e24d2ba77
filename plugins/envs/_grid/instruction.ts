/** The instruction of a grid game: what to do, what each symbol means, and how to answer. */
import type { MoveSettings } from './moves';

/** How many moves an answer may hold (MoveSettings), and two moves to show an answer with. */
export interface AnswerForm extends Pick<MoveSettings, 'max_actions_per_turn' | 'action_sep'> {
  examples: readonly [first: string, second: string];
}

function howToAnswer({ max_actions_per_turn, action_sep, examples: [first, second] }: AnswerForm): string {
  if (max_actions_per_turn === 1) return `Give exactly one action per turn inside answer tags, for example <answer>${first}</answer>.`;
  return (
    `Give up to ${max_actions_per_turn} actions per turn inside answer tags, separated by "${action_sep}" and played in order ` +
    `until the game ends, for example <answer>${first} ${action_sep} ${second}</answer>.`
  );
}

export function gridInstruction(task: string, symbols: Readonly<Record<string, string>>, actions: readonly string[], answer: AnswerForm): string {
  return [
    task,
    `Symbols: ${Object.entries(symbols)
      .map(([symbol, meaning]) => `${symbol} = ${meaning}`)
      .join(', ')}.`,
    `Actions: ${actions.join(', ')}. ${howToAnswer(answer)}`,
  ].join('\n');
}
