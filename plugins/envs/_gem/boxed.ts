/**
 * Reading an answer out of `\boxed{...}` the way GEM's envs read it: a game matches its own
 * pattern inside the braces and takes the last match in the response; GEM's dataset envs
 * (reasoning-gym, math) take whatever stands in the last `\boxed{...}`, braces balanced.
 */

/** The last `\boxed{<inner>}` in `response`, `inner` a pattern with its groups and flags; null when none. */
export function lastBoxed(response: string, inner: RegExp): RegExpExecArray | null {
  const pattern = new RegExp(`\\\\boxed\\{${inner.source}\\}`, `g${inner.flags.replace('g', '')}`);
  let last: RegExpExecArray | null = null;
  for (let match = pattern.exec(response); match !== null; match = pattern.exec(response)) last = match;
  return last;
}

/**
 * What stands inside the last `\boxed{...}` (nested braces kept), or null when there is none or
 * its braces never close: GEM's extract_last_boxed_answer (which also finds a last `\fbox{...}`
 * when there is no `\boxed`, then refuses it for not starting with `\boxed{`: null all the same).
 */
export function lastBoxedContent(response: string): string | null {
  const start = response.lastIndexOf('\\boxed');
  if (start < 0) return null;
  let depth = 0;
  for (let i = start; i < response.length; i++) {
    if (response[i] === '{') depth++;
    else if (response[i] === '}' && --depth === 0) {
      const boxed = response.slice(start, i + 1);
      return boxed.startsWith('\\boxed{') ? boxed.slice('\\boxed{'.length, -1) : null;
    }
  }
  return null;
}
