// "Did you mean": the closest word of a list by edit distance (with transpositions).

/** Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps. */
export function editDistance(a: string, b: string): number {
  const m = a.length;
  const n = b.length;
  const d: number[][] = Array.from({ length: m + 1 }, (_, i) => [i, ...new Array<number>(n).fill(0)]);
  for (let j = 0; j <= n; j++) d[0][j] = j;
  for (let i = 1; i <= m; i++) {
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2][j - 2] + 1);
      d[i][j] = v;
    }
  }
  return d[m][n];
}

/**
 * The candidate closest to `word`, if close enough to be a likely misspelling: at most 1 edit
 * for words of up to 3 letters, 2 for longer ones (compared without case).
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  if (word.length > 40) return undefined;
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const dist = editDistance(w, c.toLowerCase());
    if (dist < bestD) {
      best = c;
      bestD = dist;
    }
  }
  const limit = word.length <= 3 ? 1 : 2;
  return best !== undefined && bestD <= limit && bestD < word.length ? best : undefined;
}
