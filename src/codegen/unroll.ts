// Full unrolling of small counted loops (`for (let d = -2; d <= 2; d++) ...`, as the front end
// lowers them): the loop counter becomes a constant in each copy, so gathers at `x + d` take the
// fast path with a constant offset and their row addresses are hoisted per row. Stencils (blur,
// life) spend their time in such loops.
//
// A counted loop is `set(v, c0); loop { if (exit(v)) break 0; middle...; set(v, step(v)) }` where
// exit and step are constant given v, the middle never sets v and never breaks out of the loop.
// Every lane of the mask then runs exactly n repetitions (the last one only exits).

import type { Expr, Op, Stmt } from '../ir/ir.js';
import { someStmt, unreachable, visitExpr } from '../ir/walk.js';
import { escapingBreaks } from './analysis.js';
import type { Gen } from './context.js';

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

/** The value of a constant i32/bool expression (locals substituted by g.subst), else undefined. */
export function constValue(g: Gen, e: Expr): number | undefined {
  switch (e.k) {
    case 'const':
      return e.t === 'f32' ? undefined : e.v | 0;
    case 'local':
      return g.subst.get(e.i);
    case 'select': {
      const c = constValue(g, e.c);
      return c === undefined ? undefined : constValue(g, c ? e.a : e.b);
    }
    case 'op': {
      if (e.t === 'f32') return undefined;
      const args: number[] = [];
      for (const a of e.args) {
        const v = constValue(g, a);
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
 * The unroll step, for one loop as it is emitted: unroll `s` (preceded by `prev`) when it is a
 * counted loop under the current substitution and either inside an unrolled loop or within the
 * size budget. Taken per loop at emission, not before: a loop's bounds may be the counter of an
 * enclosing loop, a constant only inside that loop's unrolled copies.
 */
export function unrollDecision(g: Gen, prev: Stmt | undefined, s: Loop): Counted | null {
  const counted = countedLoop(g, prev, s);
  const unroll = counted !== null && (g.unrolling > 0 || withinBudget(g, prev, s));
  if (counted) g.record('unroll', `loop of node ${s.node}, counter L${counted.v}: ${counted.values.length - 1} repetitions${unroll ? ', unrolled' : ', kept (past the size budget)'}`);
  return unroll ? counted : null;
}

/** Is `s` (preceded by `prev` in its list) a counted loop under the current substitution? */
export function countedLoop(g: Gen, prev: Stmt | undefined, s: Loop): Counted | null {
  if (!prev || prev.k !== 'set' || g.fn.locals[prev.local] !== 'i32') return null;
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
  const start = constValue(g, prev.e);
  if (start === undefined) return null;

  const values: number[] = [];
  const saved = g.subst.get(v);
  let value = start;
  try {
    for (;;) {
      values.push(value);
      if (values.length > MAX_REPETITIONS) return null;
      g.subst.set(v, value);
      const done = constValue(g, exit.c);
      if (done === undefined) return null;
      if (done) break;
      const next = constValue(g, step.e);
      if (next === undefined) return null;
      value = next;
    }
  } finally {
    if (saved === undefined) g.subst.delete(v);
    else g.subst.set(v, saved);
  }
  return { v, values, middle };
}

/** Run `body` with v = value substituted. */
export function withValue<T>(g: Gen, v: number, value: number, body: () => T): T {
  const saved = g.subst.get(v);
  g.subst.set(v, value);
  try {
    return body();
  } finally {
    if (saved === undefined) g.subst.delete(v);
    else g.subst.set(v, saved);
  }
}

function exprSize(e: Expr): number {
  let n = 0;
  visitExpr(e, () => n++);
  return n;
}

/** IR nodes of a statement list once its counted loops are unrolled (Infinity past the limit). */
export function expandedSize(g: Gen, stmts: Stmt[]): number {
  let size = 0;
  for (let i = 0; i < stmts.length && size <= MAX_EXPANDED; i++) {
    const s = stmts[i];
    switch (s.k) {
      case 'set': size += 1 + exprSize(s.e); break;
      case 'if': size += 1 + exprSize(s.c) + expandedSize(g, s.then) + expandedSize(g, s.else); break;
      case 'block': size += 1 + expandedSize(g, s.body); break;
      case 'break': size += 1; break;
      case 'loop': {
        const c = countedLoop(g, stmts[i - 1], s);
        if (!c) {
          size += 1 + expandedSize(g, s.body);
          break;
        }
        for (let k = 0; k + 1 < c.values.length && size <= MAX_EXPANDED; k++) {
          size += withValue(g, c.v, c.values[k], () => expandedSize(g, c.middle));
        }
        break;
      }
      default:
        unreachable(s);
    }
  }
  return size > MAX_EXPANDED ? Infinity : size;
}

export function withinBudget(g: Gen, prev: Stmt | undefined, s: Loop): boolean {
  return expandedSize(g, prev ? [prev, s] : [s]) <= MAX_EXPANDED;
}

/**
 * The fuel every lane running `stmts` spends, when it is a constant spent only in loops of node
 * `node` that are all unrolled (so it can be charged at once), else undefined.
 */
export function fixedCharge(g: Gen, stmts: Stmt[], node: number): number | undefined {
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
        const inner = fixedCharge(g, s.body, node);
        if (inner === undefined) return undefined;
        total += inner;
        break;
      }
      case 'loop': {
        if (s.node !== node) return undefined;
        const c = countedLoop(g, stmts[i - 1], s);
        if (!c) return undefined;
        total += c.values.length;
        for (let k = 0; k + 1 < c.values.length; k++) {
          const inner = withValue(g, c.v, c.values[k], () => fixedCharge(g, c.middle, node));
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
