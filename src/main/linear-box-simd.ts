// The common case of a thumbnail (thumbnail.ts) in WebAssembly: a field in the engine's memory
// halved both ways (256 x 256 -> 128 x 128), read where it is with no copy, and its thumbnail's
// sRGB bytes made there too. The same floats and bytes as the JavaScript path (linear-box.ts's
// reduction, image.ts's mapping), bit for bit (test/thumbnail-simd.test.ts), at a fraction of its
// time (bench/RESULTS.md, "Dry runs (issue 21)").
//
// - reduce2: each pair of thumbnail elements takes one v128 load from each of the block's two
//   rows; the values are clamped as linear-box.ts clamps them (f32x4.pmax against 0, then pmin
//   against 1: NaN and negatives 0, past 1 is 1), summed in f64 in the same order as there (row
//   0's two, then row 1's), times 0.25 and rounded to f32.
// - opaque: every alpha at least 1 (NaN is not), four at a time.
// - rgba: each reduced value's sRGB byte by the top 16 bits of its f32 (srgb.ts topBitsTable, made
//   from linearToByte) and one integer comparison; a pixel's four bytes stored as one word.
//
// One instance per engine memory (it imports the shared memory); each call's output, and the
// table, go to a block allocated in that memory for the call and released after (only from free
// room: a thumbnail never grows the memory; without room, the JavaScript path).

import type { FieldMemory } from './memory.js';
import type { PlaneRows } from './linear-box.js';
import { topBitsTable, TOP_INDICES } from './srgb.js';
import { f32, f64, get, i32, I32, memarg, moduleBytes, op, set, tee, v, V128, VOID, type Func } from './wasm-asm.js';

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
 * rgba(r, g, b, blueMask, n, out, bytes, next): n pixels, each the word byte(r) | byte(g) << 8 |
 * (byte(b) & blueMask) << 16 | 0xff000000 from the f32 planes at r, g, b (gray: all three the
 * same; two components: blueMask 0), to out; bytes and next are topBitsTable's (srgb.ts).
 */
function rgba(): Func {
  const [r, g, b, blueMask, n, out, bytes, next, i, bits, index] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  /** The sRGB byte of the f32 at `plane` + i: 0 for NaN and up to 0, 255 from 1 (linearToByte). */
  const byteAt = (plane: number) => [
    ...get(plane), ...get(i), op.i32Add, op.i32Load, ...memarg, ...tee(bits),
    ...i32(0), op.i32LeS, op.if, I32, ...i32(0),
    op.else, ...get(bits), ...i32(0x3f800000), op.i32GeS, op.if, I32,
    // 1 and past it (infinity included) 255; NaN (bits past infinity's) 0.
    ...get(bits), ...i32(0x7f800000), op.i32LeS, ...i32(255), op.i32Mul,
    op.else,
    ...get(bytes), ...get(bits), ...i32(16), op.i32ShrU, ...tee(index), op.i32Add, op.i32Load8U, ...memarg,
    ...get(bits), ...get(next), ...get(index), ...i32(2), op.i32Shl, op.i32Add, op.i32Load, ...memarg, op.i32GeU, op.i32Add,
    op.end, op.end,
  ];
  const body = [
    ...i32(0), ...set(i),
    op.loop, VOID,
    ...get(out), ...get(i), op.i32Add,
    ...byteAt(r),
    ...byteAt(g), ...i32(8), op.i32Shl, op.i32Or,
    ...byteAt(b), ...get(blueMask), op.i32And, ...i32(16), op.i32Shl, op.i32Or,
    ...i32(0xff000000 | 0), op.i32Or,
    op.i32Store, ...memarg,
    ...get(i), ...i32(4), op.i32Add, ...tee(i), ...get(n), ...i32(4), op.i32Mul, op.i32LtU, op.brIf, 0,
    op.end,
    op.end,
  ];
  return { name: 'rgba', params: 8, result: false, locals: [[3, I32]], body };
}

interface Exports {
  reduce2(src: number, stride: number, out: number, outWidth: number, outHeight: number): void;
  opaque(src: number, stride: number, width: number, height: number): number;
  rgba(r: number, g: number, b: number, blueMask: number, n: number, out: number, bytes: number, next: number): void;
}

let compiled: WebAssembly.Module | undefined;
const instances = new WeakMap<WebAssembly.Memory, Exports>();

function exportsFor(memory: WebAssembly.Memory): Exports {
  let e = instances.get(memory);
  if (!e) {
    compiled ??= new WebAssembly.Module(moduleBytes([reduce2(), opaque(), rgba()]));
    e = new WebAssembly.Instance(compiled, { env: { memory } }).exports as unknown as Exports;
    instances.set(memory, e);
  }
  return e;
}

/** Whether these planes can be halved here: in `memory`, an even number of thumbnail elements a row. */
export function simdReducible(memory: FieldMemory | undefined, planes: PlaneRows[], width: number, height: number): memory is FieldMemory {
  if (!memory || width % 4 !== 0 || height % 2 !== 0 || width < 4) return false;
  const f32 = memory.f32;
  return planes.every((p) => p.data === f32);
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
 * what planesToRgba(boxReduceLinear(...)) gives, when the picture is opaque (no 4th plane, or
 * every alpha at least 1). Undefined when it is not (its colours are weighted by alpha: linear-box.ts).
 */
export function simdThumbnailRgba(memory: FieldMemory, planes: PlaneRows[], width: number, height: number): Uint8Array | undefined {
  if (planes.length === 4 && !simdOpaque(memory, planes[3], width, height)) return undefined;
  const colours = planes.slice(0, 3);
  const n = (width / 2) * (height / 2);
  const { byte, next } = topBitsTable();
  const tableBytes = TOP_INDICES * 5;
  const bytesNeeded = n * 4 * colours.length + n * 4 + tableBytes;
  // A thumbnail never grows the memory (which never shrinks): without a free block this size, the JavaScript path.
  if (!memory.fits(bytesNeeded)) return undefined;
  return scratch(memory, bytesNeeded, (at) => {
    reduceInto(memory, colours, width, height, at);
    const out = at + n * 4 * colours.length;
    const bytes = out + n * 4;
    const nextAt = bytes + TOP_INDICES; // TOP_INDICES is a multiple of 4: the words are aligned
    memory.u8.set(byte, bytes);
    new Uint32Array(memory.memory.buffer, nextAt, TOP_INDICES).set(next);
    const plane = (c: number) => at + Math.min(c, colours.length - 1) * n * 4;
    const [r, g, b] = colours.length === 1 ? [plane(0), plane(0), plane(0)] : [plane(0), plane(1), plane(2)];
    exportsFor(memory.memory).rgba(r, g, b, colours.length === 2 ? 0 : 0xff, n, out, bytes, nextAt);
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
