// Field access: pointwise loads and stores (one v128 per component plane at the element's row
// address, hoisted per row) and gathers (clamped or wrapped coordinates, per lane; with a fast
// path that loads 4 neighbours at once when the x coordinate is `x + uniform`).

import binaryen from 'binaryen';
import type { Expr, Scalar } from '../ir/ir.js';
import { unreachable } from '../ir/walk.js';
import type { Gen, Ref } from './context.js';
import { alignedTap, directGather, directLimit, interiorTap, xPlusUniform } from './interior.js';
import { lane, scalarI32, vector } from './lanes.js';

type Load = Extract<Expr, { k: 'load' }>;

const v128 = binaryen.v128;
const i32 = binaryen.i32;

/** Byte address of the element (0, y, z) in component plane (f, c), per row. */
function rowAddress(g: Gen, f: number, c: number): number {
  return g.rowValue(`addr${f}.${c}`, i32, () => {
    const m = g.m;
    const plane = g.get(g.planeAddress(f, c), i32);
    // y * stride + z * stride * height, whatever fn.dims says (as the interpreter does).
    const index = m.i32.add(
      m.i32.mul(g.get(g.y, i32), g.get(g.fieldWord(f, 'stride'), i32)),
      m.i32.mul(g.get(g.z, i32), g.get(g.fieldSlice(f), i32)),
    );
    return m.i32.add(plane, m.i32.shl(index, g.i32(2)));
  });
}

/** The address of the vector's 4 elements in plane (f, c). */
function elementAddress(g: Gen, f: number, c: number): Ref {
  return g.m.i32.add(g.get(rowAddress(g, f, c), i32), g.m.i32.shl(g.get(g.x0, i32), g.i32(2)));
}

/** Raw 32-bit lanes as the IR type: bool fields hold 0/1, bool values are lane masks. */
export function fromMemory(g: Gen, t: Scalar, raw: Ref): Ref {
  return t === 'bool' ? g.m.i32x4.ne(raw, g.zero()) : raw;
}

export function storeCode(g: Gen): Ref[] {
  const m = g.m;
  return g.fn.stores.map((s) => {
    const t = g.fn.fields[s.field].comps[s.comp];
    let value = g.get(g.irLocal[s.local]);
    if (t === 'bool') value = m.i32x4.shr_u(value, g.i32(31));
    return m.v128.store(0, 16, elementAddress(g, s.field, s.comp), value);
  });
}

export function compileLoad(g: Gen, e: Load, pre: Ref[]): Ref {
  if (!e.at) return fromMemory(g, e.t, g.m.v128.load(0, 16, elementAddress(g, e.field, e.comp)));
  return fromMemory(g, e.t, gather(g, e, pre));
}

// ---------------------------------------------------------------------------------------------
// Gathers

/** Elements per step along an axis of field f (1, stride, stride * height). */
export function axisStep(g: Gen, f: number, axis: number): number | null {
  if (axis === 0) return null;
  return axis === 1 ? g.fieldWord(f, 'stride') : g.fieldSlice(f);
}

/** max(extent, 1): the coordinate range is [0, n). */
function extentAtLeast1(g: Gen, f: number, axis: 0 | 1 | 2): number {
  return g.callValue(`n${f}.${axis}`, i32, () => {
    const n = g.fieldExtent(f, axis);
    return g.m.select(g.m.i32.gt_s(g.get(n, i32), g.i32(1)), g.get(n, i32), g.i32(1));
  });
}

export function lastIndex(g: Gen, f: number, axis: 0 | 1 | 2): number {
  return g.callValue(`hi${f}.${axis}`, i32, () => g.m.i32.sub(g.get(extentAtLeast1(g, f, axis), i32), g.i32(1)));
}

/** Clamp or wrap a scalar coordinate into [0, n). */
function fixScalar(g: Gen, f: number, axis: 0 | 1 | 2, mode: 'clamp' | 'wrap', value: Ref, pre: Ref[]): Ref {
  const m = g.m;
  const v = g.temp(i32, value, pre);
  const n = extentAtLeast1(g, f, axis);
  const inside = m.i32.lt_u(g.get(v, i32), g.get(n, i32));
  if (mode === 'clamp') {
    const edge = m.select(m.i32.lt_s(g.get(v, i32), g.i32(0)), g.i32(0), g.get(lastIndex(g, f, axis), i32));
    return m.select(inside, g.get(v, i32), edge);
  }
  return m.if(inside, g.get(v, i32), wrapSlow(g, g.get(v, i32), n));
}

/** ((v % n) + n) % n for n >= 1, as rem then add n when negative. */
function wrapSlow(g: Gen, v: Ref, n: number): Ref {
  const m = g.m;
  const r = g.local(i32);
  return m.block(null, [
    g.set(r, m.i32.rem_s(v, g.get(n, i32))),
    m.i32.add(g.get(r, i32), m.i32.and(g.get(n, i32), m.i32.shr_s(g.get(r, i32), g.i32(31)))),
  ], i32);
}

/** Clamp a vector of coordinates into [0, hi] (hi >= 0, an i32 call value). */
export function clampVector(g: Gen, value: Ref, hi: number): Ref {
  return g.m.i32x4.max_s(g.m.i32x4.min_s(value, g.get(g.splatOf(hi))), g.zero());
}

/** Clamp or wrap a vector of coordinates into [0, n). */
function fixVector(g: Gen, f: number, axis: 0 | 1 | 2, mode: 'clamp' | 'wrap', value: Ref, pre: Ref[]): Ref {
  const m = g.m;
  if (mode === 'clamp') return clampVector(g, value, lastIndex(g, f, axis));
  const n = extentAtLeast1(g, f, axis);
  const v = g.temp(v128, value, pre);
  const allInside = m.i32x4.all_true(m.i32x4.lt_u(g.get(v), g.get(g.splatOf(n))));
  let slow = g.get(v);
  for (let i = 0; i < 4; i++) {
    const e = g.local(i32);
    const wrapped = m.block(null, [
      g.set(e, m.i32x4.extract_lane(g.get(v), lane(i))),
      m.if(m.i32.lt_u(g.get(e, i32), g.get(n, i32)), g.get(e, i32), wrapSlow(g, g.get(e, i32), n)),
    ], i32);
    slow = m.i32x4.replace_lane(slow, lane(i), wrapped);
  }
  return m.if(allInside, g.get(v), slow);
}

/** Load 32-bit lane i from `base + 4 * index[i]` for each lane. */
function loadLanes(g: Gen, base: number, index: number): Ref {
  const m = g.m;
  let out = g.zero();
  for (let i = 0; i < 4; i++) {
    const at = m.i32.add(g.get(base, i32), m.i32.shl(m.i32x4.extract_lane(g.get(index), lane(i)), g.i32(2)));
    out = m.v128.load32_lane(0, 4, i, at, out);
  }
  return out;
}

/** Is the expression the same for every element of a row (so its use can be hoisted per row)? */
function rowInvariant(g: Gen, e: Expr): boolean {
  switch (e.k) {
    case 'const': case 'uniform': case 'extent': return true;
    case 'local': return g.subst.has(e.i);
    case 'coord': return e.axis !== 0;
    case 'op': return e.args.every((a) => rowInvariant(g, a));
    case 'select': return rowInvariant(g, e.c) && rowInvariant(g, e.a) && rowInvariant(g, e.b);
    case 'load': return false;
    default: return unreachable(e);
  }
}

/** A key for a row-invariant expression (substituted locals written as their constants). */
function exprKey(g: Gen, e: unknown): string {
  return JSON.stringify(e, (_key, value: unknown) => {
    const x = value as Expr;
    if (x && typeof x === 'object' && x.k === 'local' && g.subst.has(x.i)) return { k: 'const', v: g.subst.get(x.i) };
    return value;
  });
}

/**
 * The byte address of the start of the gathered row: the plane plus the clamped/wrapped uniform
 * coordinates of axes `from`.. times their steps. Hoisted per row when the coordinates allow.
 */
function uniformRowBase(g: Gen, e: Load, from: number, pre: Ref[]): { ref: Ref; local?: number } {
  const m = g.m;
  const at = e.at!;
  const build = (into: Ref[]): Ref => {
    let offset: Ref | null = null;
    for (let axis = from; axis < at.coords.length; axis++) {
      const a = axis as 0 | 1 | 2;
      let c = fixScalar(g, e.field, a, at.mode, scalarI32(g, at.coords[axis], into), into);
      const step = axisStep(g, e.field, axis);
      if (step !== null) c = m.i32.mul(c, g.get(step, i32));
      offset = offset ? m.i32.add(offset, c) : c;
    }
    const plane = g.get(g.planeAddress(e.field, e.comp), i32);
    return offset ? m.i32.add(plane, m.i32.shl(offset, g.i32(2))) : plane;
  };
  const coords = at.coords.slice(from);
  if (coords.every((c) => rowInvariant(g, c))) {
    const key = `gather${e.field}.${e.comp}.${at.mode}.${from}:${exprKey(g, coords)}`;
    const local = g.rowValue(key, i32, () => {
      const into: Ref[] = [];
      const value = build(into);
      return into.length ? m.block(null, [...into, value], i32) : value;
    });
    return { ref: g.get(local, i32), local };
  }
  return { ref: build(pre) };
}

function gather(g: Gen, e: Load, pre: Ref[]): Ref {
  const m = g.m;
  const at = e.at!;
  const f = e.field;
  const uniform = at.coords.map((c) => g.analysis.uniformExpr(c));

  // All coordinates uniform: one scalar load for the 4 lanes.
  if (uniform.every((u) => u)) {
    return m.v128.load32_splat(0, 4, uniformRowBase(g, e, 0, pre).ref);
  }

  // Fast path: x + uniform along x, the other axes uniform.
  const fast = xPlusUniform(g, at.coords[0]);
  if (fast && uniform.slice(1).every((u) => u)) {
    const base = uniformRowBase(g, e, 1, pre);
    // The interior version (interior.ts) runs only where the gather needs no test.
    const d = g.interior ? directGather(g, g.subst, e) : undefined;
    const interior = d !== undefined;
    if (interior) g.interior!.note(f, d);
    if (interior && base.local !== undefined) {
      return g.interior!.alignedBlocks(f) ? alignedTap(g, f, base.local, d, pre) : interiorTap(g, f, base.local, d);
    }
    const rowBase = g.temp(i32, base.ref, pre);
    let sxValue: Ref = g.get(g.x0, i32);
    if (fast.d) {
      const d = scalarI32(g, fast.d, pre);
      sxValue = fast.negate ? m.i32.sub(sxValue, d) : m.i32.add(sxValue, d);
    }
    const sx = g.temp(i32, sxValue, pre);
    // x0 + d .. x0 + d + 3 all inside [0, width - 1]: sx <u max(width - 3, 0).
    const limit = directLimit(g, f);
    const direct = m.v128.load(0, 4, m.i32.add(g.get(rowBase, i32), m.i32.shl(g.get(sx, i32), g.i32(2))));
    if (interior) return direct;
    // The edge case is inline: as a call it made V8 spill the loop's vectors (life ran 1.6x slower).
    const slow: Ref[] = [];
    const xs = m.i32x4.add(m.i32x4.splat(g.get(sx, i32)), g.lanesI32(0, 1, 2, 3));
    const index = g.temp(v128, fixVector(g, f, 0, at.mode, xs, slow), slow);
    const perLane = m.block(null, [...slow, loadLanes(g, rowBase, index)], v128);
    return m.if(m.i32.lt_u(g.get(sx, i32), g.get(limit, i32)), direct, perLane);
  }

  // General case: per-lane coordinates.
  let scalarOffset: Ref | null = null;
  let vectorIndex: Ref | null = null;
  for (let axis = 0; axis < at.coords.length; axis++) {
    const a = axis as 0 | 1 | 2;
    const step = axisStep(g, f, axis);
    if (uniform[axis]) {
      let c = fixScalar(g, f, a, at.mode, scalarI32(g, at.coords[axis], pre), pre);
      if (step !== null) c = m.i32.mul(c, g.get(step, i32));
      scalarOffset = scalarOffset ? m.i32.add(scalarOffset, c) : c;
    } else {
      let c = fixVector(g, f, a, at.mode, vector(g, at.coords[axis], pre), pre);
      if (step !== null) c = m.i32x4.mul(c, g.get(g.splatOf(step)));
      vectorIndex = vectorIndex ? m.i32x4.add(vectorIndex, c) : c;
    }
  }
  const plane = g.get(g.planeAddress(f, e.comp), i32);
  const base = g.temp(i32, scalarOffset ? m.i32.add(plane, m.i32.shl(scalarOffset, g.i32(2))) : plane, pre);
  const index = g.temp(v128, vectorIndex!, pre);
  return loadLanes(g, base, index);
}
