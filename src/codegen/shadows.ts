// Emitting a `while` loop's lockstep counters (lockstep.ts decides which they are, before
// emission): each counter's scalar shadow, set at the loop's entry and after each set of the
// counter, and the exit test split into the scalar conjuncts (tested once per repetition) and the
// per-lane rest.

import binaryen from 'binaryen';
import type { Expr, Stmt } from '../ir/ir.js';
import type { Gen, Ref } from './context.js';
import { scalarCondition, scalarI32 } from './lanes.js';
import { and, type LockstepCounters } from './lockstep.js';

type Loop = Extract<Stmt, { k: 'loop' }>;

export interface Lockstep {
  /** IR local -> the i32 local of its shadow. Gen.shadows while the loop's body compiles. */
  shadows: Map<number, number>;
  /** The shadows' values at the loop's entry. */
  init: Ref[];
  /** i32: the exit test's lockstep conjuncts hold (the lanes may stay). */
  stay: Ref;
  /** The rest of the exit test, per lane: lanes leave where it is false (null: none leave). */
  varying: Expr | null;
}

/** The lockstep code of `loop` as the lockstep pass decided (Gen.lockstep), or null: none. */
export function lockstepCode(g: Gen, loop: Loop): Lockstep | null {
  if (!g.lockstep.has(loop)) throw new Error(`internal: the lockstep pass did not see the loop of node ${loop.node}`);
  return shadowsFor(g, g.lockstep.get(loop)!);
}

/** The shadows' locals (allocated in g), their initial values and the scalar test, for `found`. */
export function shadowsFor(g: Gen, found: LockstepCounters | null): Lockstep | null {
  if (!found) return null;
  const m = g.m;
  const shadows = new Map<number, number>();
  const init: Ref[] = [];
  for (const [local, value] of found.counters) {
    const shadow = g.local(binaryen.i32);
    const pre: Ref[] = [];
    const v = scalarI32(g, value, pre);
    init.push(...pre, g.set(shadow, v));
    shadows.set(local, shadow);
  }
  const ls: Lockstep = { shadows, init, stay: g.i32(1), varying: found.varying };
  ls.stay = withShadows(g, ls, () => {
    const pre: Ref[] = [];
    const stay = scalarCondition(g, and(found.scalar)!, pre);
    return pre.length ? m.block(null, [...pre, stay], binaryen.i32) : stay;
  });
  return ls;
}

/** Compile with the lockstep counters' shadows followed (their sets update them). */
export function withShadows<T>(g: Gen, ls: Lockstep | null, build: () => T): T {
  const saved = g.shadows;
  if (ls) g.shadows = ls.shadows;
  try {
    return build();
  } finally {
    g.shadows = saved;
  }
}

/** The exit test of a lockstep loop, per lane: `if (!varying) break 0` (nothing when null). */
export function varyingExit(ls: Lockstep): Stmt[] {
  if (!ls.varying) return [];
  return [{ k: 'if', c: { k: 'op', t: 'bool', op: 'bool.not', args: [ls.varying] }, then: [{ k: 'break', depth: 0 }], else: [] }];
}

/** After a set of `local` in a lockstep loop: its shadow follows (empty when it has none). */
export function shadowSet(g: Gen, local: number, e: Expr): Ref[] {
  const shadow = g.shadows?.get(local);
  if (shadow === undefined) return [];
  const pre: Ref[] = [];
  const value = scalarI32(g, e, pre);
  return [...pre, g.set(shadow, value)];
}
