/**
 * "Did you mean …" for names a user typed (model providers, simulation
 * profiles, config keys): the closest candidates by edit distance, when they
 * are close enough to be a plausible typo.
 */

/** Optimal-string-alignment distance (Levenshtein plus adjacent transpositions). */
export function typoDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const above = d[i - 1] as number[];
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = best;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/**
 * Candidates within a typo's reach of `word` (distance ≤ max(1, ⌊len/3⌋),
 * case-insensitive), closest first; at most `limit`.
 */
export function closestNames(word: string, candidates: readonly string[], limit = 3): string[] {
  const w = word.toLowerCase();
  const reach = Math.max(1, Math.floor(w.length / 3));
  return candidates
    .map((c) => ({ c, d: typoDistance(w, c.toLowerCase()) }))
    .filter((x) => x.d <= reach || (w.length >= 3 && x.c.toLowerCase().startsWith(w)))
    .sort((x, y) => x.d - y.d || x.c.localeCompare(y.c))
    .slice(0, limit)
    .map((x) => x.c);
}

/** ` (did you mean "a" or "b"?)`, or '' when nothing is close. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const near = closestNames(word, candidates);
  if (near.length === 0) return '';
  const quoted = near.map((n) => `"${n}"`);
  const list = quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
  return ` (did you mean ${list}?)`;
}
