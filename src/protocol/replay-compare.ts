// Comparing answers for replays: a partial match of an expected answer (every key given must
// match) or the equality of two answers, numbers within a tolerance; and paths into answers.

export interface Difference {
  /** The path of the value that differs (`ok.values[1].value[0]`). */
  where: string;
  problem: string;
  expected: unknown;
  actual: unknown;
}

/** The first place `actual` departs from `expected`, or undefined. `partial`: keys `expected` lacks are not compared. */
export function firstDifference(expected: unknown, actual: unknown, where: string, how: { partial: boolean; tolerance: number }): Difference | undefined {
  const differ = (problem: string): Difference => ({ where, problem, expected, actual });
  if (typeof expected === 'number' && typeof actual === 'number') {
    const off = Math.abs(expected - actual);
    if (off <= how.tolerance || (Number.isNaN(expected) && Number.isNaN(actual))) return undefined;
    return differ(`expected ${expected}, got ${actual}${how.tolerance ? ` (off by ${off}, more than ${how.tolerance})` : ''}`);
  }
  if (expected === null || typeof expected !== 'object') return expected === actual ? undefined : differ(`expected ${shown(expected)}, got ${shown(actual)}`);
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return differ(`expected an array, got ${shown(actual)}`);
    if (actual.length !== expected.length) return differ(`expected ${expected.length} element${expected.length === 1 ? '' : 's'}, got ${actual.length}`);
    for (let i = 0; i < expected.length; i++) {
      const d = firstDifference(expected[i], actual[i], `${where}[${i}]`, how);
      if (d) return d;
    }
    return undefined;
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return differ(`expected an object, got ${shown(actual)}`);
  const keys = new Set([...Object.keys(expected), ...(how.partial ? [] : Object.keys(actual))]);
  for (const k of keys) {
    const d = firstDifference((expected as Record<string, unknown>)[k], (actual as Record<string, unknown>)[k], where ? `${where}.${k}` : k, how);
    if (d) return d;
  }
  return undefined;
}

/** A value in a message; `nothing` for a member that is not there. */
function shown(v: unknown): string {
  const s = v === undefined ? 'nothing' : JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
}

/** `ok.values[1].value` as keys and indexes, or undefined when it is not such a path. */
export function parsePath(text: string): (string | number)[] | undefined {
  if (!/^[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*|\[\d+\])*$/.test(text)) return undefined;
  return [...text.matchAll(/([A-Za-z_][\w-]*)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]!));
}

/** The value at a path, or undefined. */
export function getPath(value: unknown, path: (string | number)[]): unknown {
  let v = value;
  for (const p of path) v = v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[p] : undefined;
  return v;
}
