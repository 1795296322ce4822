// linear-box.ts's resampling by area (resampleLinear's plain case: each thumbnail element the
// average of the clamped values under its cell, each weighted by how much of it the cell covers)
// as two WebAssembly functions for linear-box-simd.ts's module, the same f64 operations in the
// same order, so the same floats: `across` sums each row into the cells' columns (scalar: each
// cell's taps are a run of its own), `down` sums those rows into the cells, two cells at a time
// (f64x2), and divides by the cell's area.

import { f32, f64, get, i32, I32, memarg, op, set, tee, v, V128, VOID, type Func } from '../codegen/wasm-asm.js';

/**
 * across(src, stride, height, outWidth, start, count, at, weights, out): for each of the height
 * rows of the plane at src (stride bytes apart), out[y][ox] (f64) = the sum, in increasing x, of
 * weights[at[ox] + d] times the clamped value at x = start[ox] + d, d < count[ox] (the i32
 * arrays start, count, at and the f64 weights are footprints' columns).
 */
export function across(): Func {
  const [src, stride, height, outWidth, start, count, at, weights, out] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const [ox, x, w, d, o] = [9, 10, 11, 12, 13];
  const [h] = [14];
  const [value] = [15];
  const entry = (array: number) => [...get(array), ...get(ox), ...i32(2), op.i32Shl, op.i32Add, op.i32Load, ...memarg];
  const body = [
    ...get(out), ...set(o),
    op.loop, VOID,
    ...i32(0), ...set(ox),
    op.loop, VOID,
    ...f64(0), ...set(h),
    ...get(src), ...entry(start), ...i32(2), op.i32Shl, op.i32Add, ...set(x),
    ...get(weights), ...entry(at), ...i32(3), op.i32Shl, op.i32Add, ...set(w),
    ...entry(count), ...set(d),
    op.loop, VOID,
    ...get(x), op.f32Load, ...memarg, ...set(value),
    // h + weight * shown(value): shown is clamped to [0, 1], NaN as 0, as linear-box.ts's.
    ...get(h), ...get(w), op.f64Load, ...memarg,
    ...get(value), ...f32(1), ...get(value), ...f32(1), op.f32Lt, op.select, ...f32(0), ...get(value), ...f32(0), op.f32Gt, op.select, op.f64PromoteF32,
    op.f64Mul, op.f64Add, ...set(h),
    ...get(x), ...i32(4), op.i32Add, ...set(x),
    ...get(w), ...i32(8), op.i32Add, ...set(w),
    ...get(d), ...i32(1), op.i32Sub, ...tee(d), op.brIf, 0,
    op.end,
    ...get(o), ...get(h), op.f64Store, ...memarg,
    ...get(o), ...i32(8), op.i32Add, ...set(o),
    ...get(ox), ...i32(1), op.i32Add, ...tee(ox), ...get(outWidth), op.i32LtU, op.brIf, 0,
    op.end,
    ...get(src), ...get(stride), op.i32Add, ...set(src),
    ...get(height), ...i32(1), op.i32Sub, ...tee(height), op.brIf, 0,
    op.end,
    op.end,
  ];
  return { name: 'across', params: 9, result: false, locals: [[5, I32], [1, 0x7c], [1, 0x7d]], body };
}

/**
 * down(rows, outWidth, outHeight, start, count, at, weights, out, area): out[oy][ox] (f32) = the
 * sum, in increasing y, of weights[at[oy] + d] times rows[start[oy] + d][ox] (across's f64
 * rows), d < count[oy], divided by the f64 at `area`; outWidth even.
 */
export function down(): Func {
  const [rows, outWidth, outHeight, start, count, at, weights, out, area] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const [oy, ox, r, w, d, first, taps, q] = [9, 10, 11, 12, 13, 14, 15, 16];
  const [sum, cell] = [17, 18];
  const entry = (array: number) => [...get(array), ...get(oy), ...i32(2), op.i32Shl, op.i32Add, op.i32Load, ...memarg];
  const rowBytes = [...get(outWidth), ...i32(8), op.i32Mul];
  const body = [
    ...get(area), op.f64Load, ...memarg, ...v.f64x2Splat, ...set(cell),
    ...get(out), ...set(q),
    op.loop, VOID,
    ...get(rows), ...entry(start), ...rowBytes, op.i32Mul, op.i32Add, ...set(first),
    ...i32(0), ...set(ox),
    op.loop, VOID,
    ...v.const, ...new Array(16).fill(0), ...set(sum),
    ...get(first), ...get(ox), op.i32Add, ...set(r),
    ...get(weights), ...entry(at), ...i32(3), op.i32Shl, op.i32Add, ...set(w),
    ...entry(count), ...set(taps), ...get(taps), ...set(d),
    op.loop, VOID,
    ...get(sum), ...get(w), op.f64Load, ...memarg, ...v.f64x2Splat, ...get(r), ...v.load, ...memarg, ...v.f64x2Mul, ...v.f64x2Add, ...set(sum),
    ...get(r), ...rowBytes, op.i32Add, ...set(r),
    ...get(w), ...i32(8), op.i32Add, ...set(w),
    ...get(d), ...i32(1), op.i32Sub, ...tee(d), op.brIf, 0,
    op.end,
    ...get(q), ...get(sum), ...get(cell), ...v.f64x2Div, ...v.demote, ...v.store64Lane, ...memarg, 0,
    ...get(q), ...i32(8), op.i32Add, ...set(q),
    ...get(ox), ...i32(16), op.i32Add, ...tee(ox), ...rowBytes, op.i32LtU, op.brIf, 0,
    op.end,
    ...get(oy), ...i32(1), op.i32Add, ...tee(oy), ...get(outHeight), op.i32LtU, op.brIf, 0,
    op.end,
    op.end,
  ];
  return { name: 'down', params: 9, result: false, locals: [[8, I32], [2, V128]], body };
}
