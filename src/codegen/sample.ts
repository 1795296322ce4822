// Whole samples: the corners of one `f.sample(...)` (a run of sets, src/ir/sample.ts) loaded
// together. Each corner is a clamped gather; compiled one by one, a trilinear sample cost 8 x (3
// clamps, the index, 4 lane extracts, 4 lane loads) per component. Here each lane loads the
// corners of a row as one (x, x + 1) pair, a 64-bit load, and 2 shuffles deinterleave 4 lanes'
// pairs into the x and the x + 1 corners: a row of corners (2 rows in 2-D, 4 in 3-D) is 4 loads
// and 2 shuffles per component.
//
// - Inside: every lane of the mask has its base inside [0, n - 2] on every axis (one test per
//   sample). The clamps are identities: the element index is computed once, each lane's address
//   extracted once, and the rows are static offsets from it.
// - Elsewhere (a lane at or past an edge, a field 1 wide): the pair starts at the base clamped
//   into [0, max(n - 2, 0)], and the x and x + 1 corners each pick the pair's first or second
//   element (a bitselect); the y and z coordinates are clamped per row, and each row's addresses
//   extracted per lane. An element past a row's end is inside its padding (rows are 4-aligned).

import binaryen from 'binaryen';
import type { Stmt } from '../ir/ir.js';
import { sampleRunAt, type SampleRun } from '../ir/sample.js';
import type { Gen, Ref } from './context.js';
import { axisStep, clampVector, fromMemory, lastIndex } from './fields.js';
import { lane } from './lanes.js';

type Set = Extract<Stmt, { k: 'set' }>;

const i32 = binaryen.i32;
const v128 = binaryen.v128;

/** Bytes 0-3, 8-11 of a and 0-3, 8-11 of b, pairs (x, x + 1) of lanes 0, 1 and 2, 3: the x elements. */
const FIRST = [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27];
/** The x + 1 elements. */
const SECOND = FIRST.map((b) => b + 4);

/**
 * The sample run at stmts[i] when it takes this path: some base differs across the lanes (when
 * none does, each corner is one scalar load already), none is a constant of an unrolled loop, and
 * no corner is a uniform i32 local (set as a scalar).
 */
export function sampleAt(g: Gen, stmts: readonly Stmt[], i: number): SampleRun | null {
  const run = sampleRunAt(g.fn, stmts, i);
  if (!run || run.base.some((b) => g.subst.has(b)) || run.base.every((b) => g.analysis.uniformLocal[b])) return null;
  return run.sets.some((s) => g.scalarLocal[s.local] !== undefined) ? null : run;
}

/** The run's code under the mask in local `mask`. `write(s, value)`: the code that sets s's local to `value`. */
export function sampleCode(g: Gen, run: SampleRun, mask: number, write: (s: Set, value: Ref) => Ref[]): Ref[] {
  const m = g.m;
  const f = run.field;
  const base = (axis: number): Ref => g.get(g.irLocal[run.base[axis]]);
  const pre: Ref[] = [];
  // min_u(base, n - 2) = base on every axis: base in [0, n - 2] when n >= 2 (`wide`). (2 SSE
  // instructions where x64 has no unsigned compare: lt_u was 4.)
  const insideAxis = (axis: number) => m.i32x4.eq(m.i32x4.min_u(base(axis), g.get(g.splatOf(pairStart(g, f, axis)))), base(axis));
  let inside = insideAxis(0);
  for (let axis = 1; axis < run.base.length; axis++) inside = m.v128.and(inside, insideAxis(axis));
  const ok = g.temp(v128, inside, pre);
  // The lanes outside the mask may be anywhere (finished rays, the other branch of an `if`).
  // (With no lane in the mask, in a fused loop, the field must be 2 wide for element 0's pairs.)
  const test = m.i32.and(g.get(wide(g, f, run.base.length), i32), m.i32.eqz(m.v128.any_true(m.v128.andnot(g.get(mask), g.get(ok)))));
  const fast = interiorCorners(g, run, ok);
  const slow = clampedCorners(g, run);
  const sets = (corners: { code: Ref[]; values: Ref[] }) => [...corners.code, ...run.sets.flatMap((s, k) => write(s, fromMemory(g, s.e.t, corners.values[k])))];
  return [...pre, m.if(test, m.block(null, sets(fast)), m.block(null, sets(slow)))];
}

/**
 * Every lane of the mask inside: the element index once (0 in the lanes not `ok`, outside the
 * mask: element 0 and its pairs are inside the field, 2 wide along every axis), each lane's byte
 * address once, the rows at offsets fixed per call.
 */
function interiorCorners(g: Gen, run: SampleRun, ok: number): { code: Ref[]; values: Ref[] } {
  const m = g.m;
  const f = run.field;
  const code: Ref[] = [];
  let index = g.get(g.irLocal[run.base[0]]);
  for (let axis = 1; axis < run.base.length; axis++)
    index = m.i32x4.add(index, m.i32x4.mul(g.get(g.irLocal[run.base[axis]]), g.get(g.splatOf(axisStep(g, f, axis)!))));
  const bytes = g.temp(v128, m.i32x4.add(m.i32x4.shl(m.v128.and(index, g.get(ok)), g.i32(2)), g.get(g.splatOf(g.planeAddress(f, 0)))), code);
  const lanes = [0, 1, 2, 3].map((i) => g.temp(i32, m.i32x4.extract_lane(g.get(bytes), lane(i)), code));
  const pairs = pairLoads(g, run, code, (row, c, i) => {
    const offset = rowOffset(g, f, c, row);
    return offset === null ? g.get(lanes[i], i32) : m.i32.add(g.get(lanes[i], i32), g.get(offset, i32));
  });
  return { code, values: inRunOrder(pairs, (p, x) => (x ? p.second() : p.first())) };
}

/**
 * Anywhere: the pair at x clamped into [0, max(n - 2, 0)], each corner its first or second
 * element; the rows at y and z (and + 1) clamped, their addresses per lane. (The ray marcher ran
 * as fast with the per-corner gathers here instead, in a module 6 KB larger.)
 */
function clampedCorners(g: Gen, run: SampleRun): { code: Ref[]; values: Ref[] } {
  const m = g.m;
  const f = run.field;
  const code: Ref[] = [];
  const b0 = g.irLocal[run.base[0]];
  const x = g.temp(v128, clampVector(g, g.get(b0), pairStart(g, f, 0)), code);
  // The corner at clamp(b) (clamp(b + 1)) is the pair's second element when it lies past x.
  const hi0 = lastIndex(g, f, 0);
  const second0 = g.temp(v128, m.i32x4.gt_s(clampVector(g, g.get(b0), hi0), g.get(x)), code);
  const second1 = g.temp(v128, m.i32x4.gt_s(clampVector(g, m.i32x4.add(g.get(b0), g.splatI32(1)), hi0), g.get(x)), code);
  // Per axis past x: the clamped coordinate and the one after it, times the axis's step.
  const steps = run.base.slice(1).map((b, j) => {
    const axis = (j + 1) as 1 | 2;
    const step = g.splatOf(axisStep(g, f, axis)!);
    const at = (v: Ref) => g.temp(v128, m.i32x4.mul(clampVector(g, v, lastIndex(g, f, axis)), g.get(step)), code);
    return [at(g.get(g.irLocal[b])), at(m.i32x4.add(g.get(g.irLocal[b]), g.splatI32(1)))];
  });
  const plane = g.splatOf(g.planeAddress(f, 0));
  const rowLanes = Array.from({ length: 1 << steps.length }, (_, row) => {
    let index = g.get(x);
    steps.forEach((s, j) => (index = m.i32x4.add(index, g.get(s[(row >> j) & 1]))));
    const bytes = g.temp(v128, m.i32x4.add(m.i32x4.shl(index, g.i32(2)), g.get(plane)), code);
    return [0, 1, 2, 3].map((i) => g.temp(i32, m.i32x4.extract_lane(g.get(bytes), lane(i)), code));
  });
  const pairs = pairLoads(g, run, code, (row, c, i) => {
    const offset = rowOffset(g, f, c, 0);
    return offset === null ? g.get(rowLanes[row][i], i32) : m.i32.add(g.get(rowLanes[row][i], i32), g.get(offset, i32));
  });
  const picked = pairs.map((cs) => cs.map((p) => {
    const first = g.temp(v128, p.first(), code);
    const second = g.temp(v128, p.second(), code);
    return { first: () => m.v128.bitselect(g.get(second), g.get(first), g.get(second0)), second: () => m.v128.bitselect(g.get(second), g.get(first), g.get(second1)) };
  }));
  return { code, values: inRunOrder(picked, (p, x) => (x ? p.second() : p.first())) };
}

/** A row's pairs of one component: their first (x) and second (x + 1) elements, each to be asked once. */
interface Pairs {
  first: () => Ref;
  second: () => Ref;
}

/**
 * Per row of corners (bits along y and z), per component: the pairs' loads into `code`.
 * `address(row, c, i)`: lane i's byte address of its pair.
 */
function pairLoads(g: Gen, run: SampleRun, code: Ref[], address: (row: number, c: number, i: number) => Ref): Pairs[][] {
  const m = g.m;
  const comps = g.fn.fields[run.field].comps.length;
  return Array.from({ length: 1 << (run.base.length - 1) }, (_, row) =>
    Array.from({ length: comps }, (_, c) => {
      const pair = (i: number) => g.temp(v128, m.v128.load64_lane(0, 4, 1, address(row, c, i + 1), m.v128.load64_zero(0, 4, address(row, c, i))), code);
      const a = pair(0);
      const b = pair(2);
      return { first: () => m.i8x16.shuffle(g.get(a), g.get(b), FIRST), second: () => m.i8x16.shuffle(g.get(a), g.get(b), SECOND) };
    }),
  );
}

/** The corners in the run's order (corner bits x | row << 1, then component). */
function inRunOrder(pairs: Pairs[][], corner: (p: Pairs, x: 0 | 1) => Ref): Ref[] {
  return pairs.flatMap((cs) => ([0, 1] as const).flatMap((x) => cs.map((p) => corner(p, x))));
}

/** 1 when field f is at least 2 elements along each of its `dims` axes (per call). */
function wide(g: Gen, f: number, dims: number): number {
  return g.callValue(`wide${f}.${dims}`, i32, () => {
    let all: Ref = g.m.i32.gt_s(g.get(lastIndex(g, f, 0), i32), g.i32(0));
    for (let axis = 1; axis < dims; axis++) all = g.m.i32.and(all, g.m.i32.gt_s(g.get(lastIndex(g, f, axis as 1 | 2), i32), g.i32(0)));
    return all;
  });
}

/** max(n - 2, 0) along an axis: the last start of a pair (along x, x + 1 may be the row's padding). */
function pairStart(g: Gen, f: number, axis: number): number {
  const hi = lastIndex(g, f, axis as 0 | 1 | 2);
  return g.callValue(`pairStart${f}.${axis}`, i32, () =>
    g.m.select(g.m.i32.gt_s(g.get(hi, i32), g.i32(0)), g.m.i32.sub(g.get(hi, i32), g.i32(1)), g.i32(0)),
  );
}

/** Bytes from a lane's element in plane 0 to its row `row` (bit 0: y + 1, bit 1: z + 1) in plane c; null for 0. */
function rowOffset(g: Gen, f: number, c: number, row: number): number | null {
  if (c === 0 && row === 0) return null;
  return g.callValue(`sampleRow${f}.${c}.${row}`, i32, () => {
    const m = g.m;
    let elements: Ref = g.i32(0);
    if (row & 1) elements = g.get(axisStep(g, f, 1)!, i32);
    if (row & 2) elements = m.i32.add(elements, g.get(axisStep(g, f, 2)!, i32));
    const bytes = m.i32.shl(elements, g.i32(2));
    return c === 0 ? bytes : m.i32.add(bytes, m.i32.mul(g.i32(c), g.get(g.fieldWord(f, 'planeBytes'), i32)));
  });
}
