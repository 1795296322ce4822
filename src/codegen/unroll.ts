// Full unrolling of small counted loops (`for (let d = -2; d <= 2; d++) ...`, as the front end
// lowers them): the loop counter becomes a constant in each copy, so gathers at `x + d` take the
// fast path with a constant offset and their row addresses are hoisted per row. Stencils (blur,
// life) spend their time in such loops.
//
// A counted loop is `set(v, c0); loop { if (exit(v)) break 0; middle...; set(v, step(v)) }` where
// exit and step are constant given v, the middle never sets v and never breaks out of the loop.
// Every lane of the mask then runs exactly n repetitions (the last one only exits).
//
// The unroll pass (planUnroll) decides before emission, for every context a loop is reached in;
// emission (control.ts, unrolledLoop) follows its decisions and substitutes the counters.

import type { Expr, IrFunction, Op, Stmt } from '../ir/ir.js';
import { someStmt, unreachable, visitExpr } from '../ir/walk.js';
import { escapingBreaks } from './analysis.js';

type Loop = Extract<Stmt, { k: 'loop' }>;

export interface Counted {
  /** The counter local. */
  v: number;
  /** v at the start of each repetition; the last repetition exits. */
  values: number[];
  middle: Stmt[];
}

/** Repetitions beyond this are not unrolled. */
const MAX_REPETITIONS = 33;
/** IR nodes an unrolled loop nest may expand to. */
const MAX_EXPANDED = 3000;

/** Substituted locals: the counters of the enclosing unrolled loops, by IR local. */
export type Subst = ReadonlyMap<number, number>;

/** The value of a constant i32/bool expression (locals substituted by `subst`), else undefined. */
export function constValue(subst: Subst, e: Expr): number | undefined {
  switch (e.k) {
    case 'const':
      return e.t === 'f32' ? undefined : e.v | 0;
    case 'local':
      return subst.get(e.i);
    case 'select': {
      const c = constValue(subst, e.c);
      return c === undefined ? undefined : constValue(subst, c ? e.a : e.b);
    }
    case 'op': {
      if (e.t === 'f32') return undefined;
      const args: number[] = [];
      for (const a of e.args) {
        const v = constValue(subst, a);
        if (v === undefined) return undefined;
        args.push(v);
      }
      return fold(e.op, args[0], args[1]);
    }
    case 'coord':
    case 'extent':
    case 'uniform':
    case 'load':
      return undefined;
    default:
      return unreachable(e);
  }
}

function fold(op: Op, a: number, b: number): number | undefined {
  switch (op) {
    case 'i32.add': return (a + b) | 0;
    case 'i32.sub': return (a - b) | 0;
    case 'i32.mul': return Math.imul(a, b);
    case 'i32.and': case 'bool.and': return a & b;
    case 'i32.or': case 'bool.or': return a | b;
    case 'i32.xor': case 'bool.xor': case 'bool.ne': return a ^ b;
    case 'bool.eq': return a === b ? 1 : 0;
    case 'bool.not': return a ^ 1;
    case 'i32.neg': return -a | 0;
    case 'i32.eq': return a === b ? 1 : 0;
    case 'i32.ne': return a !== b ? 1 : 0;
    case 'i32.lt': return a < b ? 1 : 0;
    case 'i32.le': return a <= b ? 1 : 0;
    case 'i32.gt': return a > b ? 1 : 0;
    case 'i32.ge': return a >= b ? 1 : 0;
    case 'i32.min': return Math.min(a, b);
    case 'i32.max': return Math.max(a, b);
    case 'bool.to_i32': return a;
    case 'i32.to_bool': return a !== 0 ? 1 : 0;
    default: return undefined;
  }
}

function setsLocal(stmts: Stmt[], v: number): boolean {
  return someStmt(stmts, (s) => s.k === 'set' && s.local === v);
}

/**
 * What the unroll pass decided for the loops of one context: the function's body, or one copy of
 * an unrolled loop's middle (its counter, and those of the loops around it, substituted). Emission
 * keeps the context it is in (Gen.unroll) and enters a copy's context as it emits that copy.
 */
export interface UnrollContext {
  /** The counters substituted here. */
  subst: Subst;
  /** Inside an unrolled nest whose whole fuel is charged at its entry: loops here charge nothing. */
  charged: boolean;
  /** The counted loops reached in this context (not past an unrolled loop: those are in its copies). */
  loops: Map<Loop, LoopUnroll>;
}

/** The unroll pass's decision for one counted loop in one context. */
export interface LoopUnroll {
  counted: Counted;
  unrolled: boolean;
  /**
   * Unrolled only: the fuel the nest's every lane spends, when it is a constant of this loop's node,
   * charged once at entry; undefined: one unit per repetition (nothing when the context is charged).
   */
  charge: number | undefined;
  /** Unrolled only: the context of each copy of the middle, in order (all repetitions but the last). */
  copies: UnrollContext[];
}

/** The context of the function's body: nothing substituted, no loop unrolled. */
export function rootContext(): UnrollContext {
  return { subst: new Map(), charged: false, loops: new Map() };
}

/**
 * The unroll pass: which counted loops to unroll, in every context they are reached in, walking
 * the body as emission does (a condition the substitution makes constant takes only its branch).
 * A counted loop is unrolled inside an unrolled loop, or at the top when its nest fits the size
 * budget. The decision is per context, not per loop: a loop's bounds may be the counter of an
 * enclosing loop, a constant only inside that loop's unrolled copies.
 */
export function planUnroll(fn: IrFunction): UnrollContext {
  const root = rootContext();
  walk(fn, fn.body, root, false);
  return root;
}

function walk(fn: IrFunction, stmts: Stmt[], ctx: UnrollContext, inside: boolean): void {
  for (let i = 0; i < stmts.length; i++) {
    const s = stmts[i];
    switch (s.k) {
      case 'set':
        break;
      case 'break':
        return; // the rest of the list is unreachable
      case 'if': {
        const known = constValue(ctx.subst, s.c);
        if (known === undefined || known) walk(fn, s.then, ctx, inside);
        if (known === undefined || !known) walk(fn, s.else, ctx, inside);
        break;
      }
      case 'block':
        walk(fn, s.body, ctx, inside);
        break;
      case 'loop': {
        const prev = stmts[i - 1];
        const counted = countedLoop(fn, ctx.subst, prev, s);
        const unrolled = counted !== null && (inside || withinBudget(fn, ctx.subst, prev, s));
        if (!counted || !unrolled) {
          if (counted) ctx.loops.set(s, { counted, unrolled: false, charge: undefined, copies: [] });
          walk(fn, s.body, ctx, inside);
          break;
        }
        const charge = ctx.charged ? undefined : fixedCharge(fn, ctx.subst, [prev, s], s.node);
        const copies = counted.values.slice(0, -1).map((value) => {
          const copy: UnrollContext = { subst: new Map(ctx.subst).set(counted.v, value), charged: ctx.charged || charge !== undefined, loops: new Map() };
          walk(fn, counted.middle, copy, true);
          return copy;
        });
        ctx.loops.set(s, { counted, unrolled: true, charge, copies });
        break;
      }
      default:
        unreachable(s);
    }
  }
}

/** What a pass sees of one statement emission reaches: the statement, its list and place, the context. */
export type EmittedVisit = (s: Stmt, ctx: UnrollContext, stmts: Stmt[], i: number) => boolean | void;

/**
 * Walk the body as emission does, through the unroll pass's contexts (for the passes after it:
 * lockstep, interior): `visit` sees each statement reached, before its branches or body; a
 * condition the substitution makes constant takes only its branch, the rest of a list after a
 * `break` is unreachable, and an unrolled loop is not itself reached: its middle is, once in each
 * copy's context. `visit` returning true stops the walk, which then returns true.
 */
export function walkEmitted(stmts: Stmt[], ctx: UnrollContext, visit: EmittedVisit): boolean {
  for (let i = 0; i < stmts.length; i++) {
    const s = stmts[i];
    if (s.k === 'loop') {
      const unrolled = ctx.loops.get(s);
      if (unrolled?.unrolled) {
        if (unrolled.copies.some((copy) => walkEmitted(unrolled.counted.middle, copy, visit))) return true;
        continue;
      }
    }
    if (visit(s, ctx, stmts, i)) return true;
    switch (s.k) {
      case 'set':
        break;
      case 'break':
        return false; // the rest of the list is unreachable
      case 'if': {
        const known = constValue(ctx.subst, s.c);
        if ((known === undefined || known) && walkEmitted(s.then, ctx, visit)) return true;
        if ((known === undefined || !known) && walkEmitted(s.else, ctx, visit)) return true;
        break;
      }
      case 'block':
      case 'loop':
        if (walkEmitted(s.body, ctx, visit)) return true;
        break;
      default:
        unreachable(s);
    }
  }
  return false;
}

/** The unroll pass's decisions for people (after:unroll): each loop once, in the body's order. */
export function describeUnroll(root: UnrollContext): string[] {
  const lines: string[] = [];
  const visit = (ctx: UnrollContext) => {
    for (const [s, d] of ctx.loops) {
      lines.push(`loop of node ${s.node}, counter L${d.counted.v}: ${d.counted.values.length - 1} repetitions${d.unrolled ? ', unrolled' : ', kept (past the size budget)'}`);
      d.copies.forEach(visit);
    }
  };
  visit(root);
  return [...new Set(lines)];
}

/** Is `s` (preceded by `prev` in its list) a counted loop under the substitution `subst`? */
export function countedLoop(fn: IrFunction, subst: Subst, prev: Stmt | undefined, s: Loop): Counted | null {
  if (!prev || prev.k !== 'set' || fn.locals[prev.local] !== 'i32') return null;
  const v = prev.local;
  const body = s.body;
  if (body.length < 2) return null;
  const exit = body[0];
  const step = body[body.length - 1];
  if (exit.k !== 'if' || exit.else.length || exit.then.length !== 1) return null;
  const brk = exit.then[0];
  if (brk.k !== 'break' || brk.depth !== 0) return null;
  if (step.k !== 'set' || step.local !== v) return null;
  const middle = body.slice(1, -1);
  if (setsLocal(middle, v) || middle.some((m) => escapingBreaks(m).length > 0)) return null;
  const start = constValue(subst, prev.e);
  if (start === undefined) return null;

  const values: number[] = [];
  const at = new Map(subst);
  let value = start;
  for (;;) {
    values.push(value);
    if (values.length > MAX_REPETITIONS) return null;
    at.set(v, value);
    const done = constValue(at, exit.c);
    if (done === undefined) return null;
    if (done) break;
    const next = constValue(at, step.e);
    if (next === undefined) return null;
    value = next;
  }
  return { v, values, middle };
}

/** `subst` with v = value. */
function withValue(subst: Subst, v: number, value: number): Subst {
  return new Map(subst).set(v, value);
}

function exprSize(e: Expr): number {
  let n = 0;
  visitExpr(e, () => n++);
  return n;
}

/** IR nodes of a statement list once its counted loops are unrolled (Infinity past the limit). */
export function expandedSize(fn: IrFunction, subst: Subst, stmts: Stmt[]): number {
  let size = 0;
  for (let i = 0; i < stmts.length && size <= MAX_EXPANDED; i++) {
    const s = stmts[i];
    switch (s.k) {
      case 'set': size += 1 + exprSize(s.e); break;
      case 'if': size += 1 + exprSize(s.c) + expandedSize(fn, subst, s.then) + expandedSize(fn, subst, s.else); break;
      case 'block': size += 1 + expandedSize(fn, subst, s.body); break;
      case 'break': size += 1; break;
      case 'loop': {
        const c = countedLoop(fn, subst, stmts[i - 1], s);
        if (!c) {
          size += 1 + expandedSize(fn, subst, s.body);
          break;
        }
        for (let k = 0; k + 1 < c.values.length && size <= MAX_EXPANDED; k++) {
          size += expandedSize(fn, withValue(subst, c.v, c.values[k]), c.middle);
        }
        break;
      }
      default:
        unreachable(s);
    }
  }
  return size > MAX_EXPANDED ? Infinity : size;
}

function withinBudget(fn: IrFunction, subst: Subst, prev: Stmt | undefined, s: Loop): boolean {
  return expandedSize(fn, subst, prev ? [prev, s] : [s]) <= MAX_EXPANDED;
}

/**
 * The fuel every lane running `stmts` spends, when it is a constant spent only in loops of node
 * `node` that are all unrolled (so it can be charged at once), else undefined.
 */
function fixedCharge(fn: IrFunction, subst: Subst, stmts: Stmt[], node: number): number | undefined {
  let total = 0;
  for (let i = 0; i < stmts.length; i++) {
    const s = stmts[i];
    switch (s.k) {
      case 'set': break;
      case 'break': return total; // the rest of the list does not run
      case 'if':
        if (containsLoopIn([s])) return undefined;
        break;
      case 'block': {
        if (!containsLoopIn(s.body)) break;
        if (s.body.some((b) => escapingBreaks(b).length > 0)) return undefined; // some lanes skip part
        const inner = fixedCharge(fn, subst, s.body, node);
        if (inner === undefined) return undefined;
        total += inner;
        break;
      }
      case 'loop': {
        if (s.node !== node) return undefined;
        const c = countedLoop(fn, subst, stmts[i - 1], s);
        if (!c) return undefined;
        total += c.values.length;
        for (let k = 0; k + 1 < c.values.length; k++) {
          const inner = fixedCharge(fn, withValue(subst, c.v, c.values[k]), c.middle, node);
          if (inner === undefined) return undefined;
          total += inner;
        }
        break;
      }
      default:
        unreachable(s);
    }
  }
  return total;
}

function containsLoopIn(stmts: Stmt[]): boolean {
  return someStmt(stmts, (s) => s.k === 'loop');
}
