// A function's form with its literals as data. A live edit most often nudges a number (`0.05` ->
// `0.06`), and each such edit compiled a new fast module (codegen, binaryen, V8's TurboFan: 13-16
// ms of the ray marcher's edit). The form reads the function's f32 literals from uniform slots
// after its own, one per distinct value, so functions that differ only in those values share a
// form, and a module of the form runs any of them: the host writes the values into the argument
// block (codegen/layout.ts writeArgs). The optimiser compiles the form's fast module in the
// background (main/optimiser.ts); a literal edit then runs on it at once (main/modules.ts).
//
// Kept as constants: +0 (codegen's select against zero is one `and`), 2 (2 * x is x + x) and
// the non-finite values. Slots follow each value's first appearance in a walk of the body, so
// the host (writing the values) and the compile worker (reading the slots, on a copy of the IR)
// agree without telling each other.

import type { Expr, IrFunction, Stmt } from './ir.js';
import { mapChildren, mapStmts } from './walk.js';

/** The name of a literal's uniform slot (the host fills these from `values`, not from a frame's input). */
export const LITERAL_UNIFORM = 'literal';

export interface Literals {
  /** The function with its literals read from uniform slots `fn.uniforms.length + i`. */
  ir: IrFunction;
  /** Literal i's value (f32-exact). */
  values: number[];
}

/** The values codegen treats specially, which stay constants (lanes.ts: zeroBits, `two`). */
function kept(v: number): boolean {
  return Object.is(v, 0) || v === 2 || !Number.isFinite(v);
}

const made = new WeakMap<IrFunction, Literals>();

/** `fn` with its f32 literals as uniforms, and their values (once per IR object: an IR is never changed once built). */
export function literalsOf(fn: IrFunction): Literals {
  let out = made.get(fn);
  if (!out) {
    out = lift(fn);
    made.set(fn, out);
    // The form is its own form (asked again by the module cache's keys: not walked again).
    if (out.ir !== fn) made.set(out.ir, { ir: out.ir, values: [] });
  }
  return out;
}

function lift(fn: IrFunction): Literals {
  const slot = new Map<number, number>();
  const values: number[] = [];
  const base = fn.uniforms.length;
  // Memoised by node: lowering shares small values between parents (a DAG), walked once each.
  const done = new Map<Expr, Expr>();
  const expr = (e: Expr): Expr => {
    if (e.k === 'const') {
      if (e.t !== 'f32' || kept(e.v)) return e;
      let s = slot.get(e.v);
      if (s === undefined) {
        s = values.length;
        slot.set(e.v, s);
        values.push(e.v);
      }
      return { k: 'uniform', t: 'f32', slot: base + s };
    }
    if (e.k !== 'op' && e.k !== 'select' && !(e.k === 'load' && e.at)) return e;
    let out = done.get(e);
    if (!out) {
      out = mapChildren(e, expr);
      done.set(e, out);
    }
    return out;
  };
  const own = (s: Stmt): Stmt => (s.k === 'set' ? { ...s, e: expr(s.e) } : s.k === 'if' ? { ...s, c: expr(s.c) } : s);
  const body = mapStmts(fn.body, { stmt: own });
  if (!values.length) return { ir: fn, values };
  return { ir: { ...fn, body, uniforms: [...fn.uniforms, ...values.map(() => ({ name: LITERAL_UNIFORM, t: 'f32' as const }))] }, values };
}
