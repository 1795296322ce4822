// Lockstep counters of a `while` loop: i32 locals that every lane still in the loop agrees on.
//
// In `let i = 0; while (i < 256 && zr * zr + zi * zi <= 4.0) { ...; i++; }` every lane enters
// with the same i and each repetition adds 1 to the i of every lane still in the loop, so the
// lanes in the loop agree on i, and on `i < 256`. Such a conjunct of the exit test is computed
// once, on a scalar shadow of i, and when it fails every lane leaves at once (a scalar branch);
// the lanes only test the rest. Escape-time loops (fractals, ray marching with a step limit,
// Newton iterations) spend a compare and an `and` per vector per repetition on it otherwise.
//
// A local is a lockstep counter of the loop (whileShape: the exit test, then statements that
// lose no lanes) when it is an i32, not uniform, and
// - before the loop, in the same statement list, its last set has a uniform value that nothing
//   between that set and the loop changes (so the lanes at the loop share it), and
// - in the loop, it is set only by top-level statements after the exit test (every lane still
//   in the loop runs them), to values computed from lockstep counters and uniform values with
//   operations that have a scalar form (lanes.ts: scalarI32, scalarCondition).
// The vector local is kept as before (the lanes that left hold their own values); the shadow
// (an i32 local) follows it in the loop and is only read by the exit test.

//
// The lockstep pass (planLockstep) finds them for every `while` loop emission will meet, before
// emission; shadows.ts emits what it found.

import type { Expr, IrFunction, Stmt } from '../ir/ir.js';
import { printExpr } from '../ir/print-ir.js';
import { usesOf, visitLocals, whileShape, type Analysis } from './analysis.js';
import type { Gen } from './context.js';
import { shadowsFor, type Lockstep } from './shadows.js';
import { walkEmitted, type UnrollContext } from './unroll.js';

type Loop = Extract<Stmt, { k: 'loop' }>;

/** Operations scalarI32 and scalarCondition compute without a vector. */
const SCALAR_OPS = new Set([
  'i32.add', 'i32.sub', 'i32.mul', 'i32.neg',
  'i32.eq', 'i32.ne', 'i32.lt', 'i32.le', 'i32.gt', 'i32.ge', 'i32.to_bool',
  'bool.not', 'bool.and', 'bool.or', 'bool.xor', 'bool.ne', 'bool.eq',
]);

/** The conjuncts of a `bool.and` tree. */
function conjuncts(e: Expr): Expr[] {
  return e.k === 'op' && e.op === 'bool.and' ? [...conjuncts(e.args[0]), ...conjuncts(e.args[1])] : [e];
}

/**
 * The conjuncts of "stay in the loop" for an exit test `leave`: `!(a && b)` (a `while`) gives
 * a, b; `a || b` (`if (i >= n || done) break`) gives !a, !b; anything else, !leave.
 */
function stayConjuncts(leave: Expr): Expr[] {
  if (leave.k === 'op' && leave.op === 'bool.not') return conjuncts(leave.args[0]);
  if (leave.k === 'op' && leave.op === 'bool.or') return [...stayConjuncts(leave.args[0]), ...stayConjuncts(leave.args[1])];
  return [{ k: 'op', t: 'bool', op: 'bool.not', args: [leave] }];
}

export function and(parts: Expr[]): Expr | null {
  return parts.length ? parts.reduce((a, b) => ({ k: 'op', t: 'bool', op: 'bool.and', args: [a, b] })) : null;
}

/** What the lockstep pass found for one loop. */
export interface LockstepCounters {
  /** The lockstep counters: IR local -> its value at the loop's entry. */
  counters: Map<number, Expr>;
  /** The conjuncts of "stay in the loop" they decide (tested once, as a scalar). */
  scalar: Expr[];
  /** The rest of the test, per lane (null: none). */
  varying: Expr | null;
}

/** The lockstep pass's result: for each varying `while` loop emission meets, its counters or null. */
export type LockstepPlan = Map<Loop, LockstepCounters | null>;

/**
 * The lockstep pass: the lockstep counters of every varying `while`-shaped loop emission meets
 * (walking the body as emission does, through the unroll pass's contexts: an unrolled loop's
 * copies, not the loop). What a loop's counters are depends only on the loop and the statements
 * before it in its list, so each loop is decided once.
 */
export function planLockstep(fn: IrFunction, analysis: Analysis, unroll: UnrollContext): LockstepPlan {
  const plan: LockstepPlan = new Map();
  walkEmitted(fn.body, unroll, (s, _ctx, stmts, i) => {
    if (s.k === 'loop' && whileShape(s) && !analysis.uniformConstruct(s) && !plan.has(s)) plan.set(s, lockstepCounters(fn, analysis, stmts.slice(0, i), s));
  });
  return plan;
}

/** The lockstep pass's findings for people (after:lockstep). */
export function describeLockstep(plan: LockstepPlan): string[] {
  return [...plan].map(([loop, found]) =>
    found ? `loop of node ${loop.node}: counters ${[...found.counters.keys()].map((i) => `L${i}`).join(', ')}; tested once: ${printExpr(and(found.scalar)!)}` : `loop of node ${loop.node}: none`);
}

/**
 * One loop's lockstep counters and their code at once, outside the pass (the tests ask about
 * one loop): the shadows' locals allocated in `g`; null when no conjunct is lockstep.
 */
export function lockstep(g: Gen, before: Stmt[], loop: Loop): Lockstep | null {
  return shadowsFor(g, lockstepCounters(g.fn, g.analysis, before, loop));
}

/**
 * The decision for one loop: its lockstep counters (local -> initial value), the conjuncts of its
 * exit test they decide (`scalar`), and the rest (`varying`); null when no conjunct is lockstep.
 * `before` is the statement list before the loop, at the loop's level.
 */
export function lockstepCounters(fn: IrFunction, analysis: Analysis, before: Stmt[], loop: Loop): LockstepCounters | null {
  const exit = loop.body[0];
  if (exit.k !== 'if') return null;
  const rest = loop.body.slice(1);
  const uniform = (e: Expr) => analysis.uniformExpr(e);

  // Candidates: i32 locals the loop writes only at the top level of `rest`, with an init.
  const writes = new Map<number, number>();
  visitLocals(loop.body, (i, written) => written && writes.set(i, (writes.get(i) ?? 0) + 1));
  const counters = new Map<number, Expr>(); // local -> init
  for (const [local, count] of writes) {
    if (fn.locals[local] !== 'i32' || analysis.uniformLocal[local]) continue;
    if (rest.filter((s) => s.k === 'set' && s.local === local).length !== count) continue;
    const init = initialValue(before, local, uniform);
    if (init) counters.set(local, init);
  }
  // A counter's sets must compute from counters and uniform values only.
  const lockstepExpr = (e: Expr): boolean =>
    uniform(e) ||
    (e.k === 'local' && counters.has(e.i)) ||
    (e.k === 'op' && SCALAR_OPS.has(e.op) && e.args.every(lockstepExpr));
  for (let changed = true; changed; ) {
    changed = false;
    for (const s of rest) {
      if (s.k === 'set' && counters.has(s.local) && !lockstepExpr(s.e)) {
        counters.delete(s.local);
        changed = true;
      }
    }
  }

  const parts = stayConjuncts(exit.c);
  const scalar = parts.filter(lockstepExpr);
  if (scalar.length === 0) return null;
  return { counters, scalar, varying: and(parts.filter((p) => !scalar.includes(p))) };
}

/**
 * The value `local` has at the end of `before` when it is the same for every lane: its last set
 * there is at this level with a uniform value, and nothing after that set changes the local or
 * what the value reads. Else null.
 */
function initialValue(before: Stmt[], local: number, uniform: (e: Expr) => boolean): Expr | null {
  for (let i = before.length - 1; i >= 0; i--) {
    const s = before[i];
    let writes = false;
    visitLocals([s], (j, written) => written && j === local && (writes = true));
    if (!writes) continue;
    if (s.k !== 'set' || !uniform(s.e)) return null;
    const changed = new Set<number>();
    visitLocals(before.slice(i), (j, written) => written && changed.add(j));
    return [...usesOf(s.e)].some((j) => changed.has(j)) ? null : s.e;
  }
  return null;
}

