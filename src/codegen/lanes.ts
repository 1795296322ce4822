// IR expressions -> v128 expressions: each scalar becomes 4 neighbouring elements along x
// (f32 -> f32x4, i32 -> i32x4, bool -> i32x4 lane mask: all ones or zero).
// Operations SIMD lacks (integer remainder, per-lane shift counts) run per lane.

import binaryen from 'binaryen';
import type { Expr, Op } from '../ir/ir.js';
import { unreachable } from '../ir/walk.js';
import type { Gen, Ref } from './context.js';
import { compileLoad } from './fields.js';
import { mathFunction } from './math.js';

type MathName = Parameters<typeof mathFunction>[1];

const v128 = binaryen.v128;
const i32 = binaryen.i32;

/** Compile an expression to a v128 value. Setup code (temporaries) goes to `pre`. */
export function vector(g: Gen, e: Expr, pre: Ref[]): Ref {
  switch (e.k) {
    case 'const':
      if (e.t === 'f32') return g.splatF32(e.v);
      if (e.t === 'i32') return g.splatI32(e.v);
      return e.v ? g.ones() : g.zero();
    case 'local': {
      const known = g.subst.get(e.i);
      return known === undefined ? g.get(g.irLocal[e.i]) : g.splatI32(known);
    }
    case 'coord':
      if (e.axis === 0) return g.xVector();
      return g.get(g.rowSplat(e.axis));
    case 'extent':
      return g.get(g.splatOf(extentScalar(g, e)));
    case 'uniform':
      return g.get(g.uniformVector(e.slot));
    case 'load':
      return compileLoad(g, e, pre);
    case 'select':
      return select(g, e, pre);
    case 'op':
      return op(g, e.op, e.args, pre);
  }
}

/** An operand whose every bit is zero: false, 0, 0.0 (not -0.0, whose sign bit is set). */
const zeroBits = (e: Expr): boolean => e.k === 'const' && Object.is(e.v, 0);

/**
 * c ? a : b, c a lane mask (all ones or all zeros per lane). Against a zero operand it is one
 * `and` (c & a) or `andnot` (b & ~c), the same bits as the bitselect, which V8 emits as three
 * instructions on x64: life's `... ? 1.0 : 0.0` per vector.
 */
function select(g: Gen, e: Extract<Expr, { k: 'select' }>, pre: Ref[]): Ref {
  const m = g.m;
  if (zeroBits(e.b)) return m.v128.and(vector(g, e.a, pre), vector(g, e.c, pre));
  if (zeroBits(e.a)) return m.v128.andnot(vector(g, e.b, pre), vector(g, e.c, pre));
  return m.v128.bitselect(vector(g, e.a, pre), vector(g, e.b, pre), vector(g, e.c, pre));
}

function extentScalar(g: Gen, e: Extract<Expr, { k: 'extent' }>): number {
  return e.field === undefined ? g.domainExtent(e.axis) : g.fieldExtent(e.field, e.axis);
}

/**
 * A uniform i32 expression as a scalar i32: directly for the simple forms, else lane 0 of its
 * vector (every lane that matters holds the same value).
 */
export function scalarI32(g: Gen, e: Expr, pre: Ref[]): Ref {
  const m = g.m;
  switch (e.k) {
    case 'const':
      return g.i32(e.v);
    case 'local': {
      const known = g.subst.get(e.i);
      if (known !== undefined) return g.i32(known);
      const shadow = g.shadows?.get(e.i);
      if (shadow !== undefined) return g.get(shadow, i32);
      const scalar = g.scalarLocal[e.i];
      if (scalar !== undefined) return g.get(scalar, i32);
      break;
    }
    case 'coord':
      if (e.axis === 1) return g.get(g.y, i32);
      if (e.axis === 2) return g.get(g.z, i32);
      break;
    case 'extent':
      return g.get(extentScalar(g, e), i32);
    case 'uniform':
      if (e.t === 'i32') return g.get(g.uniformScalar(e.slot), i32);
      break;
    case 'op':
      if (e.op === 'i32.add') return m.i32.add(scalarI32(g, e.args[0], pre), scalarI32(g, e.args[1], pre));
      if (e.op === 'i32.sub') return m.i32.sub(scalarI32(g, e.args[0], pre), scalarI32(g, e.args[1], pre));
      if (e.op === 'i32.mul') return m.i32.mul(scalarI32(g, e.args[0], pre), scalarI32(g, e.args[1], pre));
      if (e.op === 'i32.neg') return m.i32.sub(g.i32(0), scalarI32(g, e.args[0], pre));
      break;
    case 'load':
    case 'select':
      break;
    default:
      unreachable(e);
  }
  return m.i32x4.extract_lane(vector(g, e, pre), lane(0));
}

/**
 * A uniform bool expression as a scalar i32 0 or 1: comparisons of scalar i32s and their
 * combinations directly, else lane 0 of its vector.
 */
export function scalarCondition(g: Gen, e: Expr, pre: Ref[]): Ref {
  const m = g.m;
  if (e.k === 'const') return g.i32(e.v ? 1 : 0);
  if (e.k === 'op') {
    const [a, b] = e.args;
    const si = (x: Expr) => scalarI32(g, x, pre);
    const sb = (x: Expr) => scalarCondition(g, x, pre);
    switch (e.op) {
      case 'i32.eq': return m.i32.eq(si(a), si(b));
      case 'i32.ne': return m.i32.ne(si(a), si(b));
      case 'i32.lt': return m.i32.lt_s(si(a), si(b));
      case 'i32.le': return m.i32.le_s(si(a), si(b));
      case 'i32.gt': return m.i32.gt_s(si(a), si(b));
      case 'i32.ge': return m.i32.ge_s(si(a), si(b));
      case 'i32.to_bool': return m.i32.ne(si(a), g.i32(0));
      case 'bool.not': return m.i32.eqz(sb(a));
      case 'bool.and': return m.i32.and(sb(a), sb(b));
      case 'bool.or': return m.i32.or(sb(a), sb(b));
      case 'bool.xor': case 'bool.ne': return m.i32.xor(sb(a), sb(b));
      case 'bool.eq': return m.i32.eq(sb(a), sb(b));
      default: break;
    }
  }
  return m.i32.ne(m.i32x4.extract_lane(vector(g, e, pre), lane(0)), g.i32(0));
}

/** Lane index argument: binaryen takes a plain number although the .d.ts says ExpressionRef. */
export function lane(i: number): Ref {
  return i as unknown as Ref;
}

function op(g: Gen, name: Op, args: Expr[], pre: Ref[]): Ref {
  const m = g.m;
  const a = (): Ref => vector(g, args[0], pre);
  const b = (): Ref => vector(g, args[1], pre);
  switch (name) {
    case 'f32.add': return m.f32x4.add(a(), b());
    case 'f32.sub': return m.f32x4.sub(a(), b());
    case 'f32.mul': {
      // 2 * x as x + x (exact): no constant register (P4's 2 * zr * zi).
      const two = (e: Expr) => e.k === 'const' && e.v === 2;
      const other = two(args[0]) ? args[1] : two(args[1]) ? args[0] : null;
      if (other) {
        const t = g.temp(v128, vector(g, other, pre), pre);
        return m.f32x4.add(g.get(t), g.get(t));
      }
      return m.f32x4.mul(a(), b());
    }
    case 'f32.div': return m.f32x4.div(a(), b());
    case 'f32.rem': {
      // a - b * trunc(a / b), each step rounded to f32.
      const ta = g.temp(v128, a(), pre);
      const tb = g.temp(v128, b(), pre);
      const q = m.f32x4.trunc(m.f32x4.div(g.get(ta), g.get(tb)));
      return m.f32x4.sub(g.get(ta), m.f32x4.mul(g.get(tb), q));
    }
    case 'f32.min': return m.f32x4.min(a(), b()); // NaN-propagating, -0 < +0
    case 'f32.max': return m.f32x4.max(a(), b());
    case 'f32.neg': return m.f32x4.neg(a());
    case 'f32.abs': return m.f32x4.abs(a());
    case 'f32.floor': return m.f32x4.floor(a());
    case 'f32.ceil': return m.f32x4.ceil(a());
    case 'f32.trunc': return m.f32x4.trunc(a());
    case 'f32.nearest': return m.f32x4.nearest(a());
    case 'f32.sqrt': return m.f32x4.sqrt(a());
    case 'f32.pow': case 'f32.atan2':
      return m.call(mathFunction(m, name.slice(4) as MathName), [a(), b()], v128);
    case 'f32.sin': case 'f32.cos': case 'f32.tan': case 'f32.asin': case 'f32.acos':
    case 'f32.atan': case 'f32.exp': case 'f32.log': case 'f32.exp2': case 'f32.log2':
    case 'f32.sin_turns': case 'f32.cos_turns':
      return m.call(mathFunction(m, name.slice(4) as MathName), [a()], v128);
    case 'f32.eq': return m.f32x4.eq(a(), b());
    case 'f32.ne': return m.f32x4.ne(a(), b());
    case 'f32.lt': return m.f32x4.lt(a(), b());
    case 'f32.le': return m.f32x4.le(a(), b());
    case 'f32.gt': return m.f32x4.gt(a(), b());
    case 'f32.ge': return m.f32x4.ge(a(), b());
    case 'f32.to_i32': return m.i32x4.trunc_sat_f32x4_s(a());
    case 'f32.to_bool': return m.f32x4.ne(a(), g.zero()); // NaN != 0: true

    case 'i32.add': return m.i32x4.add(a(), b());
    case 'i32.sub': return m.i32x4.sub(a(), b());
    case 'i32.mul': return m.i32x4.mul(a(), b());
    case 'i32.rem': return remainder(g, a(), b(), pre);
    case 'i32.min': return m.i32x4.min_s(a(), b());
    case 'i32.max': return m.i32x4.max_s(a(), b());
    case 'i32.and': return m.v128.and(a(), b());
    case 'i32.or': return m.v128.or(a(), b());
    case 'i32.xor': return m.v128.xor(a(), b());
    case 'i32.shl': case 'i32.shr_s': case 'i32.shr_u':
      return shift(g, name, args, pre);
    case 'i32.neg': return m.i32x4.neg(a());
    case 'i32.abs': return m.i32x4.abs(a());
    case 'i32.not': return m.v128.not(a());
    case 'i32.eq': return m.i32x4.eq(a(), b());
    case 'i32.ne': return m.i32x4.ne(a(), b());
    case 'i32.lt': return m.i32x4.lt_s(a(), b());
    case 'i32.le': return m.i32x4.le_s(a(), b());
    case 'i32.gt': return m.i32x4.gt_s(a(), b());
    case 'i32.ge': return m.i32x4.ge_s(a(), b());
    case 'i32.to_f32': return m.f32x4.convert_i32x4_s(a());
    case 'i32.to_bool': return m.i32x4.ne(a(), g.zero());

    case 'bool.and': return m.v128.and(a(), b());
    case 'bool.or': return m.v128.or(a(), b());
    case 'bool.xor': return m.v128.xor(a(), b());
    case 'bool.ne': return m.v128.xor(a(), b());
    case 'bool.eq': return m.v128.not(m.v128.xor(a(), b()));
    case 'bool.not': return m.v128.not(a());
    case 'bool.to_i32': return m.i32x4.shr_u(a(), g.i32(31));
    case 'bool.to_f32': return m.v128.and(a(), g.splatF32(1));
  }
}

/** i32.rem per lane: truncated; 0 when b is 0 (and for b = -1, which would trap on INT_MIN). */
function remainder(g: Gen, a: Ref, b: Ref, pre: Ref[]): Ref {
  const m = g.m;
  const ta = g.temp(v128, a, pre);
  // b in {-1, 0} -> 1: a rem 1 = 0, which is the answer for both.
  const tb = g.temp(v128, b, pre);
  const bad = m.i32x4.le_u(m.i32x4.add(g.get(tb), g.splatI32(1)), g.splatI32(1));
  const safe = g.temp(v128, m.v128.bitselect(g.splatI32(1), g.get(tb), bad), pre);
  let out = g.zero();
  for (let i = 0; i < 4; i++) {
    const r = m.i32.rem_s(m.i32x4.extract_lane(g.get(ta), lane(i)), m.i32x4.extract_lane(g.get(safe), lane(i)));
    out = m.i32x4.replace_lane(out, lane(i), r);
  }
  return out;
}

/** Shifts: one SIMD shift when the count is uniform, else per lane (counts mod 32 either way). */
function shift(g: Gen, name: 'i32.shl' | 'i32.shr_s' | 'i32.shr_u', args: Expr[], pre: Ref[]): Ref {
  const m = g.m;
  const value = vector(g, args[0], pre);
  if (g.analysis.uniformExpr(args[1])) {
    const count = scalarI32(g, args[1], pre);
    if (name === 'i32.shl') return m.i32x4.shl(value, count);
    if (name === 'i32.shr_s') return m.i32x4.shr_s(value, count);
    return m.i32x4.shr_u(value, count);
  }
  const ta = g.temp(v128, value, pre);
  const tb = g.temp(v128, vector(g, args[1], pre), pre);
  const scalar = name === 'i32.shl' ? m.i32.shl : name === 'i32.shr_s' ? m.i32.shr_s : m.i32.shr_u;
  let out = g.zero();
  for (let i = 0; i < 4; i++) {
    const r = scalar(m.i32x4.extract_lane(g.get(ta), lane(i)), m.i32x4.extract_lane(g.get(tb), lane(i)));
    out = m.i32x4.replace_lane(out, lane(i), r);
  }
  return out;
}
