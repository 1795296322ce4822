// Unswitching the interior loop (interior.ts) on a condition that is the same for a whole row.
//
// A body such as life's `if (frame == 0) { seed } else { step }` tests its condition once per
// vector, in the interior loop too, although it cannot change within a row: the test, and the
// branch's join, cost instructions at every vector (and the seeding branch kept the x vector
// advancing in the step's loop). Here the interior version is compiled twice, once with the
// condition known true and once known false (each compiles only its branch: control.ts reads
// `Gen.known`), and the interior range runs one loop or the other, chosen once per row when the
// range is entered. The results are the same by construction: the condition reads no lane-
// dependent value, no local and no field, so it has the same value for every vector of the row,
// and evaluating it earlier cannot trap (IR operations do not trap).

import type { Expr, Stmt } from '../ir/ir.js';
import { printExpr } from '../ir/print-ir.js';
import { unreachable } from '../ir/walk.js';
import type { Gen } from './context.js';
import { constValue } from './unroll.js';

export type If = Extract<Stmt, { k: 'if' }>;

/**
 * Is `e` the same at every element of a row? Constants, uniforms, extents and the y and z
 * coordinates, through operations and selects; not x, locals (set per vector) or loads.
 */
export function rowInvariant(e: Expr): boolean {
  switch (e.k) {
    case 'const': case 'uniform': case 'extent':
      return true;
    case 'coord':
      return e.axis !== 0;
    case 'local': case 'load':
      return false;
    case 'op':
      return e.args.every(rowInvariant);
    case 'select':
      return rowInvariant(e.c) && rowInvariant(e.a) && rowInvariant(e.b);
    default:
      return unreachable(e);
  }
}

/**
 * The `if` to unswitch the interior loop on: the first at the body's top level whose condition
 * is row-invariant and not a constant (a constant one already compiles only its branch). Only
 * one: each further `if` would double the interior code again.
 */
export function planUnswitch(g: Gen): If | null {
  for (const s of g.fn.body) {
    if (s.k === 'if' && rowInvariant(s.c) && constValue(g.subst, s.c) === undefined) return s;
  }
  return null;
}

/** The decision for people (after:plan). */
export function describeUnswitch(s: If | null): string {
  return s ? `on ${printExpr(s.c)} (row-invariant): one interior loop per branch` : 'no';
}
