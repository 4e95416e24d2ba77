/** "Did you mean" support: the candidates closest to a mistyped word. */

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => {
    const row = new Array<number>(cols).fill(0);
    row[0] = i;
    return row;
  });
  for (let j = 0; j < cols; j++) d[0]![j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** Candidates within a small edit distance of `word` (case-insensitive), closest first. */
export function closestMatches(word: string, candidates: Iterable<string>, limit = 3): string[] {
  const lower = word.toLowerCase();
  const budget = Math.max(2, Math.floor(word.length / 3));
  const scored: Array<[string, number]> = [];
  for (const candidate of new Set(candidates)) {
    const distance = editDistance(lower, candidate.toLowerCase());
    const isPrefix = lower.length >= 3 && candidate.toLowerCase().startsWith(lower);
    if (distance <= budget || isPrefix) scored.push([candidate, isPrefix ? Math.min(distance, 1) : distance]);
  }
  scored.sort((x, y) => x[1] - y[1] || x[0].localeCompare(y[0]));
  // only the closest tier: a near miss should not list everything remotely similar
  const best = scored[0]?.[1] ?? 0;
  return scored
    .filter(([, d]) => d <= best + 1)
    .slice(0, limit)
    .map(([candidate]) => candidate);
}

/** " (did you mean a or b?)", or "" when nothing is close. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const matches = closestMatches(word, candidates);
  if (matches.length === 0) return '';
  const list = matches.length === 1 ? matches[0] : `${matches.slice(0, -1).join(', ')} or ${matches.at(-1)}`;
  return ` (did you mean ${list}?)`;
}
