// Builtins written again in plain JavaScript, for the tests that compare the engine with a value
// computed another way (test/builtin-references.test.ts, test/example-references.test.ts).

/** The hash of src/ir/builtins.ts written again with JavaScript's integer operations. */
export function hash(...coords: number[]): number {
  let h = 0x9e3779b9 | 0;
  const primes = [0x27d4eb2d, 0x165667b1, 0x1b873593];
  coords.forEach((c, i) => {
    h ^= Math.imul(c | 0, primes[i]);
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
    h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
    h ^= h >>> 15;
  });
  return (h >>> 8) / 16777216;
}

/** Value noise in double precision: hashes at the lattice corners, blended with smoothstep. */
export function noise(p: number[]): number {
  const cell = p.map(Math.floor);
  const t = p.map((x, i) => {
    const f = x - cell[i];
    return f * f * (3 - 2 * f);
  });
  const blend = (axis: number, bits: number): number => {
    if (axis < 0) return hash(...cell.map((c, i) => ((bits >> i) & 1 ? c + 1 : c)));
    const lo = blend(axis - 1, bits);
    const hi = blend(axis - 1, bits | (1 << axis));
    return lo + (hi - lo) * t[axis];
  };
  return blend(p.length - 1, 0);
}
