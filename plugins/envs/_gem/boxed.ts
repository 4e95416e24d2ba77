/**
 * How GEM's language games read an action: the last `\boxed{...}` whose content fits the game's
 * pattern (an earlier or later box that does not fit is passed over), as `re.finditer(...)[-1]`
 * does in gem/envs/game_env.
 */

/** The capture groups of the last `\boxed{<content>}` in `response`, or null when none fits. */
export function lastBoxed(response: string, content: string): string[] | null {
  const matches = [...response.matchAll(new RegExp(`\\\\boxed\\{${content}\\}`, 'g'))];
  const last = matches.at(-1);
  return last ? last.slice(1).map((group) => group ?? '') : null;
}
