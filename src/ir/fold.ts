// Arithmetic on f32 constants done once, here, instead of at every element. `normalize(vec3(-0.4,
// -0.3, 0.8))` inside the ray marcher's loop lowers to a square root and a division of constants;
// binaryen folds them on the optimised tier, but the fast tier (an edit's first frame) computed
// them at every step that hit the blob.
//
// Exact: each operation is the interpreter's (src/ir/interp.ts: the double result rounded to f32,
// which for +, -, *, / and sqrt is the correctly rounded f32 result WebAssembly computes). A NaN
// result is left unfolded (its payload is the machine's).

import type { Expr, IrFunction } from './ir.js';
import { mapStmts, someStmtExpr } from './walk.js';

const fr = Math.fround;

const FOLD: Partial<Record<string, (a: number, b: number) => number>> = {
  'f32.add': (a, b) => fr(a + b),
  'f32.sub': (a, b) => fr(a - b),
  'f32.mul': (a, b) => fr(a * b),
  'f32.div': (a, b) => fr(a / b),
  'f32.sqrt': (a) => fr(Math.sqrt(a)),
};

/** The value of an operation on f32 constants, or null (not one, or NaN). */
function value(e: Expr): number | null {
  const f = e.k === 'op' ? FOLD[e.op] : undefined;
  if (e.k !== 'op' || !f || !e.args.every((a) => a.k === 'const' && a.t === 'f32')) return null;
  const [a, b] = e.args.map((x) => (x as Extract<Expr, { k: 'const' }>).v);
  const v = f(a, b);
  return Number.isNaN(v) ? null : v;
}

const foldable = (e: Expr) => value(e) !== null;

function fold(e: Expr): Expr {
  const v = value(e);
  return v === null ? e : { k: 'const', t: 'f32', v };
}

/** `fn` with its f32 arithmetic of constants folded (itself when there is none). */
export function foldConstants(fn: IrFunction): IrFunction {
  if (!someStmtExpr(fn.body, foldable)) return fn;
  return { ...fn, body: mapStmts(fn.body, { expr: fold }) };
}
