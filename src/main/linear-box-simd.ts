// The common cases of a thumbnail (thumbnail.ts) in WebAssembly: a field in the engine's memory
// halved both ways (256 x 256 -> 128 x 128), or opaque and made any other size by area
// (resample-wasm.ts), read where it is with no copy, and its thumbnail's sRGB bytes made there too. The same floats and bytes as the JavaScript path (linear-box.ts's
// reduction, image.ts's mapping), bit for bit (test/thumbnail-simd.test.ts), at a fraction of its
// time (bench/RESULTS.md, "Dry runs (issue 21)").
//
// - reduce2: each pair of thumbnail elements takes one v128 load from each of the block's two
//   rows; the values are clamped as linear-box.ts clamps them (f32x4.pmax against 0, then pmin
//   against 1: NaN and negatives 0, past 1 is 1), summed in f64 in the same order as there (row
//   0's two, then row 1's), times 0.25 and rounded to f32.
// - opaque: every alpha at least 1 (NaN is not), four at a time; a picture that is not takes
//   weighted2, linear-box.ts's alpha-weighted average (the colours times alpha summed, over the
//   alphas' sum; a wholly clear block's plain average), in f64 in its order too.
// - rgba: each reduced colour's sRGB byte by the top 16 bits of its f32 (srgb.ts topBitsTable, made
//   from linearToByte) and one integer comparison, alpha's as image.ts makes it; a pixel's four
//   bytes stored as one word.
//
// One instance per engine memory (it imports the shared memory); each call's output, and the
// table, go to a block allocated in that memory for the call and released after (only from free
// room: a thumbnail never grows the memory; without room, the JavaScript path).

import type { FieldMemory } from './memory.js';
import { footprints, type PlaneRows } from './linear-box.js';
import { across, down } from './resample-wasm.js';
import { topBitsTable, TOP_INDICES } from './srgb.js';
import { f32, f64, get, i32, I32, memarg, moduleBytes, op, set, tee, v, V128, VOID, type Func } from '../codegen/wasm-asm.js';

/** f32 lanes [a, b] of a vector shuffled with itself, into lanes 0 and 1. */
const lanes = (a: number, b: number) => [...v.shuffle, ...[a, b, a, b].flatMap((l) => [4 * l, 4 * l + 1, 4 * l + 2, 4 * l + 3])];

/** reduce2(src, stride, out, outWidth, outHeight): byte addresses, stride in bytes; outWidth even, at least 2. */
function reduce2(): Func {
  const [src, stride, out, outWidth, outHeight, p, q, end, a, c, zero, one, quarter] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  /** pmin(1, pmax(0, load(address))): the clamp, NaN as 0. */
  const clamped = (address: number[]) => [...get(one), ...get(zero), ...address, ...v.load, ...memarg, ...v.f32x4Pmax, ...v.f32x4Pmin];
  /** Lanes `first` and `first + 2` of vector `x`, as f64. */
  const pair = (x: number, first: number) => [...get(x), ...get(x), ...lanes(first, first + 2), ...v.promoteLow];
  const body = [
    ...v.const, ...new Array(16).fill(0), ...set(zero),
    ...f32(1), ...v.f32x4Splat, ...set(one),
    ...f64(0.25), ...v.f64x2Splat, ...set(quarter),
    ...get(out), ...set(q),
    op.loop, VOID,
    ...get(src), ...set(p),
    ...get(q), ...get(outWidth), ...i32(4), op.i32Mul, op.i32Add, ...set(end),
    op.loop, VOID,
    ...clamped(get(p)), ...set(a),
    ...clamped([...get(p), ...get(stride), op.i32Add]), ...set(c),
    // ((a0 + a1) + c0) + c1 for each of the two: the order linear-box.ts adds them in.
    ...get(q),
    ...pair(a, 0), ...pair(a, 1), ...v.f64x2Add, ...pair(c, 0), ...v.f64x2Add, ...pair(c, 1), ...v.f64x2Add,
    ...get(quarter), ...v.f64x2Mul, ...v.demote,
    ...v.store64Lane, ...memarg, 0,
    ...get(p), ...i32(16), op.i32Add, ...set(p),
    ...get(q), ...i32(8), op.i32Add, ...tee(q), ...get(end), op.i32LtU, op.brIf, 0,
    op.end,
    ...get(src), ...get(stride), ...i32(2), op.i32Mul, op.i32Add, ...set(src),
    ...get(outHeight), ...i32(1), op.i32Sub, ...tee(outHeight), ...i32(0), op.i32Ne, op.brIf, 0,
    op.end,
    op.end,
  ];
  return { name: 'reduce2', params: 5, result: false, locals: [[3, I32], [5, V128]], body };
}

/** opaque(src, stride, width, height) -> 1 when every element is at least 1; width a multiple of 4. */
function opaque(): Func {
  const [src, stride, width, height, p, end, all, one] = [0, 1, 2, 3, 4, 5, 6, 7];
  const body = [
    ...v.const, ...new Array(16).fill(0xff), ...set(all),
    ...f32(1), ...v.f32x4Splat, ...set(one),
    op.loop, VOID,
    ...get(src), ...set(p),
    ...get(src), ...get(width), ...i32(4), op.i32Mul, op.i32Add, ...set(end),
    op.loop, VOID,
    ...get(all), ...get(p), ...v.load, ...memarg, ...get(one), ...v.f32x4Ge, ...v.and, ...set(all),
    ...get(p), ...i32(16), op.i32Add, ...tee(p), ...get(end), op.i32LtU, op.brIf, 0,
    op.end,
    ...get(src), ...get(stride), op.i32Add, ...set(src),
    ...get(height), ...i32(1), op.i32Sub, ...tee(height), ...i32(0), op.i32Ne, op.brIf, 0,
    op.end,
    ...get(all), ...v.i32x4AllTrue,
    op.end,
  ];
  return { name: 'opaque', params: 4, result: true, locals: [[2, I32], [2, V128]], body };
}

/**
 * weighted2(r, g, b, a, stride, out, outWidth, outHeight, planeBytes): four planes (colours and
 * alpha) halved as linear-box.ts's `weighted` does it: per 2 x 2 block, in f64 and in its order,
 * w = the alphas' sum, each colour the sum of colour times alpha over w (the plain sum over 4
 * where w is 0), alpha w / 4; plane c of the output at out + c planeBytes.
 */
function weighted2(): Func {
  const [r, g, b, a, stride, out, outWidth, outHeight, planeBytes] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const [p, q, end] = [9, 10, 11];
  const [a0, a1, w, zero, one, quarter, ae0, ao0, ae1, ao1] = [12, 13, 14, 15, 16, 17, 18, 19, 20, 21];
  const [c0, c1] = [22, 23];
  const clamped = (address: number[]) => [...get(one), ...get(zero), ...address, ...v.load, ...memarg, ...v.f32x4Pmax, ...v.f32x4Pmin];
  const pair = (x: number, first: number) => [...get(x), ...get(x), ...lanes(first, first + 2), ...v.promoteLow];
  /** Rows 0 and 1 of plane `plane` at this pair of blocks, clamped, into locals x0 and x1. */
  const rows = (plane: number, x0: number, x1: number) => [
    ...clamped([...get(plane), ...get(p), op.i32Add]), ...set(x0),
    ...clamped([...get(plane), ...get(p), op.i32Add, ...get(stride), op.i32Add]), ...set(x1),
  ];
  /** Store the f64x2 on the stack, as f32, to output plane `c` at this pair. */
  const store = (c: number, value: number[]) => [...get(out), ...i32(c), ...get(planeBytes), op.i32Mul, op.i32Add, ...get(q), op.i32Add, ...value, ...v.demote, ...v.store64Lane, ...memarg, 0];
  /** Colour plane `plane`, channel c: bitselect(weighted sum / w, plain sum / 4, w > 0). */
  const colour = (plane: number, c: number) => [
    ...rows(plane, c0, c1),
    ...store(c, [
      ...pair(c0, 0), ...get(ae0), ...v.f64x2Mul, ...pair(c0, 1), ...get(ao0), ...v.f64x2Mul, ...v.f64x2Add,
      ...pair(c1, 0), ...get(ae1), ...v.f64x2Mul, ...v.f64x2Add, ...pair(c1, 1), ...get(ao1), ...v.f64x2Mul, ...v.f64x2Add,
      ...get(w), ...v.f64x2Div,
      ...pair(c0, 0), ...pair(c0, 1), ...v.f64x2Add, ...pair(c1, 0), ...v.f64x2Add, ...pair(c1, 1), ...v.f64x2Add, ...get(quarter), ...v.f64x2Mul,
      ...get(w), ...v.const, ...new Array(16).fill(0), ...v.f64x2Gt, ...v.bitselect,
    ]),
  ];
  const body = [
    ...v.const, ...new Array(16).fill(0), ...set(zero),
    ...f32(1), ...v.f32x4Splat, ...set(one),
    ...f64(0.25), ...v.f64x2Splat, ...set(quarter),
    // p: the byte offset of this pair's blocks in each plane's row 0; q: of its pair in each output plane.
    ...i32(0), ...set(q),
    op.loop, VOID,
    ...get(q), ...get(outWidth), ...i32(4), op.i32Mul, op.i32Add, ...set(end),
    op.loop, VOID,
    ...rows(a, a0, a1),
    ...pair(a0, 0), ...set(ae0), ...pair(a0, 1), ...set(ao0), ...pair(a1, 0), ...set(ae1), ...pair(a1, 1), ...set(ao1),
    ...get(ae0), ...get(ao0), ...v.f64x2Add, ...get(ae1), ...v.f64x2Add, ...get(ao1), ...v.f64x2Add, ...set(w),
    ...colour(r, 0), ...colour(g, 1), ...colour(b, 2),
    ...store(3, [...get(w), ...get(quarter), ...v.f64x2Mul]),
    ...get(p), ...i32(16), op.i32Add, ...set(p),
    ...get(q), ...i32(8), op.i32Add, ...tee(q), ...get(end), op.i32LtU, op.brIf, 0,
    op.end,
    // The next pair of rows: p from row 0 of the block row below (outWidth pairs of 16 bytes read).
    ...get(p), ...get(outWidth), ...i32(8), op.i32Mul, op.i32Sub, ...get(stride), ...i32(2), op.i32Mul, op.i32Add, ...set(p),
    ...get(outHeight), ...i32(1), op.i32Sub, ...tee(outHeight), ...i32(0), op.i32Ne, op.brIf, 0,
    op.end,
    op.end,
  ];
  return { name: 'weighted2', params: 9, result: false, locals: [[3, I32], [12, V128]], body };
}

/**
 * rgba(r, g, b, blueMask, alpha, n, out, bytes, next): n pixels, each the word byte(r) | byte(g)
 * << 8 | (byte(b) & blueMask) << 16 | alphaByte << 24 from the f32 planes at r, g, b (gray: all
 * three the same; two components: blueMask 0) and alpha (0: none, 255), to out, as image.ts maps
 * them; bytes and next are topBitsTable's (srgb.ts).
 */
function rgba(): Func {
  const [r, g, b, blueMask, alpha, n, out, bytes, next, i, bits, index] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
  /** Leave 0 for NaN and up to 0, 255 from 1 (infinity too), else `between`, of the f32 at `plane` + i. */
  const bytesOf = (plane: number, between: number[]) => [
    ...get(plane), ...get(i), op.i32Add, op.i32Load, ...memarg, ...tee(bits),
    ...i32(0), op.i32LeS, op.if, I32, ...i32(0),
    op.else, ...get(bits), ...i32(0x3f800000), op.i32GeS, op.if, I32,
    ...get(bits), ...i32(0x7f800000), op.i32LeS, ...i32(255), op.i32Mul,
    op.else, ...between,
    op.end, op.end,
  ];
  /** A colour's sRGB byte (linearToByte): the table's byte at its top 16 bits, one more past the next boundary. */
  const byteAt = (plane: number) => bytesOf(plane, [
    ...get(bytes), ...get(bits), ...i32(16), op.i32ShrU, ...tee(index), op.i32Add, op.i32Load8U, ...memarg,
    ...get(bits), ...get(next), ...get(index), ...i32(2), op.i32Shl, op.i32Add, op.i32Load, ...memarg, op.i32GeU, op.i32Add,
  ]);
  /** An alpha's byte (image.ts alphaByte): v * 255 + 0.5, truncated. */
  const alphaAt = bytesOf(alpha, [...get(alpha), ...get(i), op.i32Add, op.f32Load, ...memarg, op.f64PromoteF32, ...f64(255), op.f64Mul, ...f64(0.5), op.f64Add, op.i32TruncF64U]);
  const body = [
    ...i32(0), ...set(i),
    op.loop, VOID,
    ...get(out), ...get(i), op.i32Add,
    ...byteAt(r),
    ...byteAt(g), ...i32(8), op.i32Shl, op.i32Or,
    ...byteAt(b), ...get(blueMask), op.i32And, ...i32(16), op.i32Shl, op.i32Or,
    ...get(alpha), op.i32Eqz, op.if, I32, ...i32(255), op.else, ...alphaAt, op.end, ...i32(24), op.i32Shl, op.i32Or,
    op.i32Store, ...memarg,
    ...get(i), ...i32(4), op.i32Add, ...tee(i), ...get(n), ...i32(4), op.i32Mul, op.i32LtU, op.brIf, 0,
    op.end,
    op.end,
  ];
  return { name: 'rgba', params: 9, result: false, locals: [[3, I32]], body };
}

interface Exports {
  reduce2(src: number, stride: number, out: number, outWidth: number, outHeight: number): void;
  opaque(src: number, stride: number, width: number, height: number): number;
  rgba(r: number, g: number, b: number, blueMask: number, alpha: number, n: number, out: number, bytes: number, next: number): void;
  weighted2(r: number, g: number, b: number, a: number, stride: number, out: number, outWidth: number, outHeight: number, planeBytes: number): void;
  across(src: number, stride: number, height: number, outWidth: number, start: number, count: number, at: number, weights: number, out: number): void;
  down(rows: number, outWidth: number, outHeight: number, start: number, count: number, at: number, weights: number, out: number, area: number): void;
}

let compiled: WebAssembly.Module | undefined;
const instances = new WeakMap<WebAssembly.Memory, Exports>();

function exportsFor(memory: WebAssembly.Memory): Exports {
  let e = instances.get(memory);
  if (!e) {
    compiled ??= new WebAssembly.Module(moduleBytes([reduce2(), opaque(), rgba(), weighted2(), across(), down()]));
    e = new WebAssembly.Instance(compiled, { env: { memory } }).exports as unknown as Exports;
    instances.set(memory, e);
  }
  return e;
}

/** Whether these planes can be halved here: in `memory`, an even number of thumbnail elements a row. */
export function simdReducible(memory: FieldMemory | undefined, planes: PlaneRows[], width: number, height: number): memory is FieldMemory {
  if (!memory || width % 4 !== 0 || height % 2 !== 0 || width < 4) return false;
  const f32 = memory.f32;
  return planes.every((p) => p.data === f32 && p.stride === planes[0].stride);
}

/** Every element of the plane at least 1 (linear-box.ts's opacity check), the plane in `memory`. */
export function simdOpaque(memory: FieldMemory, plane: PlaneRows, width: number, height: number): boolean {
  return exportsFor(memory.memory).opaque(plane.offset * 4, plane.stride * 4, width, height) === 1;
}

/** Each plane halved both ways (linear-box.ts's plain average, the same floats), the planes in `memory`. */
export function simdReduce2(memory: FieldMemory, planes: PlaneRows[], width: number, height: number): Float32Array[] {
  const n = (width / 2) * (height / 2);
  return scratch(memory, n * 4 * planes.length, (at) => {
    reduceInto(memory, planes, width, height, at);
    return planes.map((_, c) => memory.f32.slice(at / 4 + c * n, at / 4 + (c + 1) * n));
  });
}

/**
 * The RGBA bytes of the thumbnail of 1 to 4 f32 planes halved both ways, all made in `memory`:
 * what planesToRgba(boxReduceLinear(...)) gives. A 4th plane (alpha) not all at least 1 takes the
 * alpha-weighted reduction (weighted2). Undefined when the memory has no free block for it.
 */
export function simdThumbnailRgba(memory: FieldMemory, planes: PlaneRows[], width: number, height: number): Uint8Array | undefined {
  const transparent = planes.length === 4 && !simdOpaque(memory, planes[3], width, height);
  const reduced = transparent ? planes : planes.slice(0, 3);
  const n = (width / 2) * (height / 2);
  return mapped(memory, reduced.length, transparent, n, 0, (at) => {
    const e = exportsFor(memory.memory);
    if (!transparent) return reduceInto(memory, reduced, width, height, at);
    const [r, g, b, a] = planes;
    e.weighted2(r.offset * 4, g.offset * 4, b.offset * 4, a.offset * 4, r.stride * 4, at, width / 2, height / 2, n * 4);
  });
}

/** Whether these planes can be resampled by area here: in `memory`, one stride, an even output width, an alpha opaque (checked in SIMD: width a multiple of 4). */
export function simdResamplable(memory: FieldMemory | undefined, planes: PlaneRows[], width: number, height: number, outWidth: number): memory is FieldMemory {
  if (!memory || outWidth % 2 !== 0 || (planes.length === 4 && width % 4 !== 0)) return false;
  const f32 = memory.f32;
  return planes.every((p) => p.data === f32 && p.stride === planes[0].stride) && (planes.length < 4 || simdOpaque(memory, planes[3], width, height));
}

/**
 * The RGBA bytes of the thumbnail of 1 to 4 f32 planes (an alpha opaque: simdResamplable) made
 * outWidth x outHeight by area, all made in `memory` (resample-wasm.ts): what
 * planesToRgba(resampleLinear(...)) gives. Undefined when the memory has no free block for it.
 */
export function simdResampleRgba(memory: FieldMemory, planes: PlaneRows[], width: number, height: number, outWidth: number, outHeight: number): Uint8Array | undefined {
  const colours = planes.slice(0, 3);
  const cols = footprints(width, outWidth);
  const rows = footprints(height, outHeight);
  // f64 first (aligned): the area, both axes' weights, the rows summed across; then the i32 tables.
  const f64s = 2 + cols.weights.length + rows.weights.length + height * outWidth;
  const tables = 3 * (outWidth + outHeight);
  return mapped(memory, colours.length, false, outWidth * outHeight, f64s * 8 + tables * 4, (at, extra) => {
    const e = exportsFor(memory.memory);
    const f64 = new Float64Array(memory.memory.buffer, extra, f64s);
    f64[0] = (width / outWidth) * (height / outHeight);
    f64.set(cols.weights, 2);
    f64.set(rows.weights, 2 + cols.weights.length);
    const acrossAt = extra + (2 + cols.weights.length + rows.weights.length) * 8;
    const i32At = extra + f64s * 8;
    const i32s = new Int32Array(memory.memory.buffer, i32At, tables);
    [cols.start, cols.count, cols.at, rows.start, rows.count, rows.at].reduce((o, t) => (i32s.set(t, o), o + t.length), 0);
    const [colStart, colCount, colAt] = [0, 1, 2].map((k) => i32At + k * outWidth * 4);
    const [rowStart, rowCount, rowAt] = [0, 1, 2].map((k) => i32At + 3 * outWidth * 4 + k * outHeight * 4);
    colours.forEach((p, c) => {
      e.across(p.offset * 4, p.stride * 4, height, outWidth, colStart, colCount, colAt, extra + 16, acrossAt);
      e.down(acrossAt, outWidth, outHeight, rowStart, rowCount, rowAt, extra + 16 + cols.weights.length * 8, at + c * outWidth * outHeight * 4, extra);
    });
  });
}

/**
 * The RGBA bytes of `n` thumbnail pixels from `comps` f32 planes that `reduce` writes at `at`
 * (plane c at at + c n 4; the 4th alpha when `alpha`, else alpha 255), mapped by `rgba`; `extra`
 * more bytes (8-aligned) for `reduce` at its second argument. All in one block of the memory's
 * free room, or undefined without one.
 */
let made = 0;

/** How many thumbnails were made here since the process started: for tests. */
export function simdThumbnailsMade(): number {
  return made;
}

function mapped(memory: FieldMemory, comps: number, alpha: boolean, n: number, extra: number, reduce: (at: number, extraAt: number) => void): Uint8Array | undefined {
  const { byte, next } = topBitsTable();
  const planesBytes = Math.ceil((n * 4 * comps) / 8) * 8;
  const bytesNeeded = extra + planesBytes + n * 4 + TOP_INDICES * 5;
  // A thumbnail never grows the memory (which never shrinks): without a free block this size, the JavaScript path.
  if (!memory.fits(bytesNeeded)) return undefined;
  return scratch(memory, bytesNeeded, (block) => {
    const at = block + extra;
    reduce(at, block);
    const out = at + planesBytes;
    const bytes = out + n * 4;
    const nextAt = bytes + TOP_INDICES; // TOP_INDICES is a multiple of 4: the words are aligned
    memory.u8.set(byte, bytes);
    new Uint32Array(memory.memory.buffer, nextAt, TOP_INDICES).set(next);
    const plane = (c: number) => at + Math.min(c, comps - 1) * n * 4;
    const [r, g, b] = comps === 1 ? [plane(0), plane(0), plane(0)] : [plane(0), plane(1), plane(2)];
    exportsFor(memory.memory).rgba(r, g, b, comps === 2 ? 0 : 0xff, alpha ? plane(3) : 0, n, out, bytes, nextAt);
    made++;
    return memory.u8.slice(out, out + n * 4);
  });
}

/** The planes halved into `at` (plane c at at + c n 4). */
function reduceInto(memory: FieldMemory, planes: PlaneRows[], width: number, height: number, at: number): void {
  const e = exportsFor(memory.memory);
  const n = (width / 2) * (height / 2);
  planes.forEach((p, c) => e.reduce2(p.offset * 4, p.stride * 4, at + c * n * 4, width / 2, height / 2));
}

/** `f` given a block of `bytes` in `memory`, released after. */
function scratch<T>(memory: FieldMemory, bytes: number, f: (at: number) => T): T {
  const at = memory.alloc(bytes, 'a thumbnail');
  try {
    return f(at);
  } finally {
    memory.release(at);
  }
}
