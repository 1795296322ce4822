// Small constructors for IR expressions, and the typed value the front end passes around.

import { OPS, type Expr, type Op, type Scalar } from '../ir.js';
import { BOOL, F32, I32, type ElemType } from '../types.js';
import { truncSatI32 } from '../convert.js';

/** A typed value during lowering: an element type and one IR expression per scalar component. */
export interface Value {
  type: ElemType;
  comps: Expr[];
}

export const cst = (t: Scalar, v: number): Expr => ({ k: 'const', t, v: t === 'f32' ? Math.fround(v) : t === 'i32' ? v | 0 : v ? 1 : 0 });
export const f32 = (v: number): Expr => cst('f32', v);
export const i32 = (v: number): Expr => cst('i32', v);

export function op(name: Op, ...args: Expr[]): Expr {
  return { k: 'op', t: OPS[name].result, op: name, args };
}

export function select(c: Expr, a: Expr, b: Expr): Expr {
  return { k: 'select', t: a.t, c, a, b };
}

/** Convert a scalar expression to another scalar type (JavaScript-like: numbers to bool is != 0). */
export function convert(e: Expr, to: Scalar): Expr {
  if (e.t === to) return e;
  if (e.k === 'const') {
    if (to === 'bool') return cst('bool', e.v !== 0 ? 1 : 0);
    if (to === 'f32') return cst('f32', e.v);
    if (to === 'i32') return cst('i32', e.t === 'f32' ? truncSatI32(e.v) : e.v); // as the runtime converts: saturating
  }
  return op(`${e.t}.to_${to}` as Op, e);
}

export const scalarValue = (e: Expr): Value => ({ type: e.t === 'f32' ? F32 : e.t === 'i32' ? I32 : BOOL, comps: [e] });
