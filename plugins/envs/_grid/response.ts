/** Writing a response that an env's configured answer pattern reads back as a given action. */
import { parseAnswer } from 'agentic';

/**
 * The plain `<answer>` form when `readsBack` accepts it, else the form with a think block first (for
 * think-then-answer patterns), else the bare answer (for patterns that take the whole text).
 */
export function responseWith(answer: string, readsBack: (response: string) => boolean): string {
  const forms = [`<answer>${answer}</answer>`, `<think>I will go ${answer}.</think><answer>${answer}</answer>`, answer];
  return forms.find(readsBack) ?? forms[0]!;
}

/** The response that the env's answer pattern reads back as `action`. */
export function responseFor(action: string, pattern: string, actions: readonly string[]): string {
  return responseWith(action, (text) => parseAnswer(text, { pattern, actions }).action === action);
}
