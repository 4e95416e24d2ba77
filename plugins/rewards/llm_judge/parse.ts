/**
 * Reading a judge's reply as a score in [0, 1], or null where it says none.
 *
 *   number     the last number in the reply (`0.8`, `Score: 1`, `.5`); one outside [0, 1] is no score
 *   pass_fail  the last of the words PASS, FAIL, YES, NO (any case, whole words): PASS and YES
 *              score 1, FAIL and NO score 0
 *
 * The last, because judges reason before they conclude, and the reasoning may quote either.
 */
export const PARSERS = ['number', 'pass_fail'] as const;
export type ParserName = (typeof PARSERS)[number];

const NUMBER = /-?(?:\d+(?:\.\d*)?|\.\d+)/g;
const VERDICT = /\b(pass|fail|yes|no)\b/gi;

export function parseScore(reply: string, parser: ParserName): number | null {
  if (parser === 'number') {
    const last = reply.match(NUMBER)?.at(-1);
    if (last === undefined) return null;
    const score = Number(last);
    return score >= 0 && score <= 1 ? score : null;
  }
  const last = reply.match(VERDICT)?.at(-1)?.toLowerCase();
  if (last === undefined) return null;
  return last === 'pass' || last === 'yes' ? 1 : 0;
}
