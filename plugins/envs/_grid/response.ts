/** Writing a response that an env's configured answer pattern reads back as a given action. */
import { parseAnswer } from 'agentic';

/**
 * The plain `<answer>` form when the pattern reads it, else the form with a think block first (for
 * think-then-answer patterns), else the bare action name (for patterns that take the whole text).
 */
export function responseFor(action: string, pattern: string, actions: readonly string[]): string {
  const forms = [`<answer>${action}</answer>`, `<think>I will go ${action}.</think><answer>${action}</answer>`, action];
  return forms.find((text) => parseAnswer(text, { pattern, actions }).action === action) ?? forms[0]!;
}
