// What the reliability suite (fuzz, mutate, load tests) shares: the seed and the long-run flag,
// a seeded generator, and the check every answer of the protocol must pass.
//
// ENTELECHY_SEED=N replays a run; ENTELECHY_LONG=1 runs the long sizes (docs/reliability.md).
// Without a seed, CI runs fixed seeds (the same lines every time); a long run without one draws
// a fresh seed and prints it.

import { homedir, tmpdir } from 'node:os';
import { ROOT } from './helpers.js';

export const LONG = process.env.ENTELECHY_LONG === '1';

/** The seed of this run: ENTELECHY_SEED, else `fixed` (short runs) or a fresh one (long runs). */
export function seedOf(fixed: number): number {
  const env = process.env.ENTELECHY_SEED;
  if (env !== undefined && env !== '') {
    const n = Number(env);
    if (!Number.isSafeInteger(n)) throw new Error(`ENTELECHY_SEED must be an integer, got ${env}`);
    return n;
  }
  return LONG ? Math.floor(Math.random() * 2 ** 31) : fixed;
}

/** How to rerun a failure: the seed and the flag, in one line. */
export function replayHint(file: string, seed: number): string {
  return `rerun: ENTELECHY_SEED=${seed}${LONG ? ' ENTELECHY_LONG=1' : ''} npx tap dist/test/${file}.test.js`;
}

/** A small deterministic generator (mulberry32) with the picks the generators use. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed | 0;
  }
  /** In [0, 1). */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) | 0;
    let r = Math.imul(this.s ^ (this.s >>> 15), 1 | this.s);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** Paths of this machine no answer may show unless the request itself named them. */
const MACHINE_PATHS = [ROOT, tmpdir() === '/tmp' ? '/tmp/' : tmpdir(), homedir().length > 1 ? homedir() + '/' : undefined, '/node_modules/', 'file://'].filter(
  (p): p is string => !!p,
);

/**
 * What is wrong with an answer line to a request line, or undefined: one JSON object on one line
 * with exactly one of `ok` and `error`, the request's id echoed (`expectedId`: undefined when the
 * request had none the protocol takes), and no stack, machine path, "this is a bug" or internal
 * error in it. `extraPaths` are more paths the answer may not show (the scene's folder).
 */
export function answerProblem(request: string, answer: string, expectedId: unknown, extraPaths: string[] = []): string | undefined {
  if (answer.includes('\n') || answer.includes('\r')) return 'the answer spans more than one line';
  let a: any;
  try {
    a = JSON.parse(answer);
  } catch {
    return 'the answer is not JSON';
  }
  if (typeof a !== 'object' || a === null || Array.isArray(a)) return 'the answer is not a JSON object';
  if (('ok' in a) === ('error' in a)) return 'the answer has neither or both of `ok` and `error`';
  if (expectedId === undefined ? 'id' in a : a.id !== expectedId) return `the answer's id is ${JSON.stringify(a.id)}, the request's ${JSON.stringify(expectedId)}`;
  if (a.error) {
    if (a.error.internal) return `an internal error: ${String(a.error.message).slice(0, 300)}`;
    if (typeof a.error.message !== 'string' || !a.error.message) return 'an error without a message';
  }
  // An error names what the user sent, never where the code lives: only errors are searched for
  // stacks and paths (ok answers carry documents and data, which hold whatever was composed).
  const error = a.error ? JSON.stringify(a.error) : '';
  if (/this is a bug/i.test(error)) return `"this is a bug": ${error.slice(0, 300)}`;
  if (/\\n\s+at |\bat \S+ \(\S+:\d+:\d+\)|node:internal|\.[cm]?js:\d+:\d+|\.ts:\d+:\d+/.test(error)) return `a stack or code location: ${error.slice(0, 300)}`;
  for (const p of [...MACHINE_PATHS, ...extraPaths]) {
    if (error.includes(p) && !request.includes(p)) return `an absolute path of the machine (${p}): ${answer.slice(0, 300)}`;
  }
  return undefined;
}

/** The id a request line's answer must carry: the line's `id` when the protocol takes it. */
export function expectedIdOf(line: string): unknown {
  // A byte order mark before a request is skipped, as some Windows tools write one (envelope.ts).
  if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const id = (v as { id?: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : undefined;
}
