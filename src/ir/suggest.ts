// "Did you mean": the closest known name to a misspelt one.
//
// Bounded in cost whatever it is given: names longer than LONGEST get no suggestion (no one
// misspells a name of 65 letters by two), and a candidate whose length alone puts it out of reach
// is skipped before its distance is computed.

/** The longest name (and candidate) a suggestion is searched for. */
export const LONGEST = 64;

/** Edits (insert, delete, replace, swap two neighbours) that turn a into b. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The candidate closest to `name`, if close enough to be a likely misspelling: at most 1 edit
 * for words of up to 3 letters, 2 for longer ones (compared without case).
 */
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  if (name.length > 40) return undefined;
  const w = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    if (c === name || Math.abs(c.length - name.length) > 2) continue;
    const d = editDistance(w, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  const limit = name.length <= 3 ? 1 : 2;
  return best !== undefined && bestDistance <= limit && bestDistance < name.length ? best : undefined;
}

/** Candidates within typo distance, closest first. */
export function similar(name: string, candidates: Iterable<string>, most = 5): string[] {
  if (name.length > LONGEST) return [];
  return [...candidates]
    .filter((c) => c.length <= LONGEST)
    .map((c) => ({ c, d: editDistance(name.toLowerCase(), c.toLowerCase()) }))
    .filter(({ c, d }) => d <= Math.max(2, Math.floor(Math.max(name.length, c.length) / 2)) || c.includes(name) || name.includes(c))
    .sort((a, b) => a.d - b.d)
    .slice(0, most)
    .map(({ c }) => c);
}
