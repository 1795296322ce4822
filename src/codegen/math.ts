// The transcendental functions for compiled kernels: WebAssembly has no sin, exp, ...; each is
// generated here as an internal function on f32x4 lanes, from the kernels in src/ir/mathref.ts
// (which the IR interpreter runs too, one lane at a time, with bit-identical results). The
// reductions, polynomials and accuracy are documented there (MATH_KERNELS, MATH_ACCURACY).
import binaryen from 'binaryen';
import { MATH_ARITY, MATH_KERNELS, type Lanes, type MathName } from '../ir/mathref.js';

export type { MathName };

/** A v128 value under construction: each call builds a fresh expression (binaryen must never
 * see one expression object twice in a tree). */
type V = () => binaryen.ExpressionRef;

const v128 = binaryen.v128;

function splat(array: Float32Array | Int32Array): number[] {
  return Array.from(new Uint8Array(array.buffer));
}

/** Lanes as SIMD128 instructions; `let` appends a local.set to `sets`. */
class WasmLanes implements Lanes<V, V, V> {
  readonly sets: binaryen.ExpressionRef[] = [];
  readonly vars: binaryen.Type[] = [];

  constructor(private readonly m: binaryen.Module, private readonly params: number) {}

  param(index: number): V {
    return () => this.m.local.get(index, v128);
  }

  let<T extends V>(v: T): T {
    const index = this.params + this.vars.length;
    this.vars.push(v128);
    this.sets.push(this.m.local.set(index, v()));
    return this.param(index) as T;
  }

  f(v: number): V {
    const bytes = splat(new Float32Array([v, v, v, v]));
    return () => this.m.v128.const(bytes);
  }

  i(v: number): V {
    const bytes = splat(new Int32Array([v, v, v, v]));
    return () => this.m.v128.const(bytes);
  }

  private op1(make: (a: binaryen.ExpressionRef) => binaryen.ExpressionRef, a: V): V {
    return () => make(a());
  }

  private op2(make: (a: binaryen.ExpressionRef, b: binaryen.ExpressionRef) => binaryen.ExpressionRef, a: V, b: V): V {
    return () => make(a(), b());
  }

  add(a: V, b: V): V { return this.op2(this.m.f32x4.add, a, b); }
  sub(a: V, b: V): V { return this.op2(this.m.f32x4.sub, a, b); }
  mul(a: V, b: V): V { return this.op2(this.m.f32x4.mul, a, b); }
  div(a: V, b: V): V { return this.op2(this.m.f32x4.div, a, b); }
  min(a: V, b: V): V { return this.op2(this.m.f32x4.min, a, b); }
  max(a: V, b: V): V { return this.op2(this.m.f32x4.max, a, b); }
  pmin(a: V, b: V): V { return this.op2(this.m.f32x4.pmin, a, b); }
  abs(a: V): V { return this.op1(this.m.f32x4.abs, a); }
  sqrt(a: V): V { return this.op1(this.m.f32x4.sqrt, a); }
  trunc(a: V): V { return this.op1(this.m.f32x4.trunc, a); }
  nearest(a: V): V { return this.op1(this.m.f32x4.nearest, a); }
  eq(a: V, b: V): V { return this.op2(this.m.f32x4.eq, a, b); }
  ne(a: V, b: V): V { return this.op2(this.m.f32x4.ne, a, b); }
  lt(a: V, b: V): V { return this.op2(this.m.f32x4.lt, a, b); }
  gt(a: V, b: V): V { return this.op2(this.m.f32x4.gt, a, b); }
  ge(a: V, b: V): V { return this.op2(this.m.f32x4.ge, a, b); }
  select(m: V, a: V, b: V): V { return () => this.m.v128.bitselect(a(), b(), m()); }
  and(a: V, b: V): V { return this.op2(this.m.v128.and, a, b); }
  xor(a: V, b: V): V { return this.op2(this.m.v128.xor, a, b); }
  not(a: V): V { return this.op1(this.m.v128.not, a); }
  bits(a: V): V { return a; }
  float(a: V): V { return a; }
  toInt(a: V): V { return this.op1(this.m.i32x4.trunc_sat_f32x4_s, a); }
  toFloat(a: V): V { return this.op1(this.m.f32x4.convert_i32x4_s, a); }
  iadd(a: V, b: V): V { return this.op2(this.m.i32x4.add, a, b); }
  isub(a: V, b: V): V { return this.op2(this.m.i32x4.sub, a, b); }
  iand(a: V, b: V): V { return this.op2(this.m.v128.and, a, b); }
  ixor(a: V, b: V): V { return this.op2(this.m.v128.xor, a, b); }
  shl(a: V, n: number): V { return () => this.m.i32x4.shl(a(), this.m.i32.const(n)); }
  shr(a: V, n: number): V { return () => this.m.i32x4.shr_s(a(), this.m.i32.const(n)); }
  ieq(a: V, b: V): V { return this.op2(this.m.i32x4.eq, a, b); }
  ilt(a: V, b: V): V { return this.op2(this.m.i32x4.lt_s, a, b); }
  imask(m: V, a: V): V { return this.op2(this.m.v128.and, a, m); }
}

/**
 * Adds to `module` (once; later calls return the same name) an internal function computing
 * `name` on f32x4 lanes: (v128) -> v128, or (v128, v128) -> v128 for atan2 (y, x) and pow (a, b).
 * Call it with `module.call(name, args, binaryen.v128)`. Enables SIMD128 on the module.
 */
export function mathFunction(module: binaryen.Module, name: MathName): string {
  const fname = `entelechy.math.${name}`;
  if (module.getFunction(fname)) return fname;
  module.setFeatures(module.getFeatures() | binaryen.Features.SIMD128);
  const arity = MATH_ARITY[name];
  const o = new WasmLanes(module, arity);
  const result = MATH_KERNELS[name](o, o.param(0), o.param(arity - 1));
  const body = module.block(null, [...o.sets, result()], v128);
  const params = binaryen.createType(new Array<binaryen.Type>(arity).fill(v128));
  module.addFunction(fname, params, v128, o.vars, body);
  return fname;
}
