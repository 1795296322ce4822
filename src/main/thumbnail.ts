// Small pictures of outputs: a thumbnail is the output's RGBA (image.ts's mapping) made smaller,
// its longest side at most the size asked for, and encoded by the engine's own PNG encoder
// (png.ts). `evaluate` answers one per output when asked, and so does a dry run (fork.ts) for the
// change, its diff and each state as the change carried it.
//
// RGBA bytes (a field with i32 or bool components) reduced by a
// whole factor in both directions (256 x 256 to 128 x 128: 2) take an exact box filter here, in
// plain JavaScript: each pixel the average of its k x k block. Any other size goes to the
// resampling images read into inputs take (image-input.ts, sharp), whose fixed cost per call
// (~4 ms on this machine, 2026-12-03) was most of a thumbnail's (bench/RESULTS.md).
//
// A thumbnail of a field (thumbnailPixels) is reduced before the sRGB mapping when it can be: on
// the field's linear values (linear-box.ts), only the smaller picture's elements then mapped by
// image.ts's mapping, the one `read` and the Player use. That is the right average of light and a
// quarter of the mapping for 256 -> 128; a whole factor by boxReduceLinear, any other by area
// (resampleLinear: each element weighted by how much of it a thumbnail pixel covers). A field with
// i32 or bool components shown (their bytes are not light) is mapped whole and reduced as bytes.

import type { Scalar } from '../ir/ir.js';
import type { Field } from './field.js';
import type { FieldMemory } from './memory.js';
import { fitInside } from './image-diff.js';
import { resizeRgba } from './image-input.js';
import { planesToRgba } from './image.js';
import { boxReduceLinear, resampleLinear, type PlaneRows } from './linear-box.js';
import { simdResamplable, simdResampleRgba, simdReducible, simdThumbnailRgba } from './linear-box-simd.js';
import { asWords, encodePng, type RowFilterType } from './png.js';

/** A PNG in base64 and its size. */
export interface PngPicture {
  width: number;
  height: number;
  data: string;
}

/** The longest side of a thumbnail unless asked otherwise, and the largest one may ask for. */
export const THUMBNAIL_SIDE = 128;
export const THUMBNAIL_MAX_SIDE = 1024;

/** `rgba` (width x height) as a PNG whose longest side is at most `side` (a smaller picture is not enlarged). */
export async function thumbnail(rgba: Uint8Array, width: number, height: number, side = THUMBNAIL_SIDE): Promise<PngPicture> {
  const size = fitInside(width, height, side);
  return pngPicture(await shrink(rgba, { width, height }, size), size.width, size.height, 'none');
}

/** RGBA pixels and their size. */
export interface RgbaPicture {
  width: number;
  height: number;
  rgba: Uint8Array;
}

/**
 * The pixels a thumbnail (longest side at most `side`) of a 2-D field is made from: already
 * reduced, on the linear values, when every shown component is f32; otherwise, or when the field
 * is no larger than the thumbnail, the whole field's RGBA (`whole()`), which `thumbnail` reduces.
 * Synchronous: a field in the engine's memory is read in the frame slot, and only this part need
 * be there. With `memory` (the engine's, holding the planes), a field halved both ways is reduced
 * and mapped there (linear-box-simd.ts).
 */
export function thumbnailPixels(comps: readonly Scalar[], planes: PlaneRows[], width: number, height: number, side: number, whole: () => Uint8Array, memory?: FieldMemory): RgbaPicture {
  const size = fitInside(width, height, side);
  const k = width / size.width;
  const shown = comps.slice(0, Math.min(4, comps.length));
  const smaller = size.width < width || size.height < height;
  if (!smaller || !shown.every((t) => t === 'f32')) return { width, height, rgba: whole() };
  const wholeFactor = Number.isInteger(k) && height / size.height === k;
  const used = planes.slice(0, shown.length);
  // Halved, in the engine's memory: reduced and mapped there in WebAssembly (the same bytes).
  const simd = wholeFactor && k === 2 && simdReducible(memory, used, width, height) ? simdThumbnailRgba(memory, used, width, height) : undefined;
  if (simd) return { ...size, rgba: simd };
  // Any other size, by area, opaque, in the engine's memory: in WebAssembly too (the same bytes).
  const area = !wholeFactor && simdResamplable(memory, used, width, height, size.width) ? simdResampleRgba(memory, used, width, height, size.width, size.height) : undefined;
  if (area) return { ...size, rgba: area };
  const reduced = wholeFactor ? boxReduceLinear(used, width, height, k) : resampleLinear(used, width, height, size.width, size.height);
  return { ...size, rgba: planesToRgba(shown, reduced, size.width * size.height) };
}

/** A field's components where the engine's memory holds them (f32 views; only f32 ones are read as such). */
export function memoryPlanes(memory: Pick<FieldMemory, 'f32'>, f: Field): PlaneRows[] {
  return f.comps.map((_, c) => ({ data: memory.f32, offset: (f.ptr + c * f.planeBytes) / 4, stride: f.stride }));
}

/** Packed planes (a field read back, width elements a row). */
export function packedPlanes(planes: Float32Array[], width: number): PlaneRows[] {
  return planes.map((data) => ({ data, offset: 0, stride: width }));
}

/** `rgba` made `to`'s size: the box filter for a whole factor both ways, sharp otherwise. */
export async function shrink(rgba: Uint8Array, from: { width: number; height: number }, to: { width: number; height: number }): Promise<Uint8Array> {
  const k = from.width / to.width;
  if (Number.isInteger(k) && from.height / to.height === k) return boxReduce(rgba, from.width, from.height, k);
  return resizeRgba(rgba, from, to);
}

/**
 * `rgba` (width x height, both multiples of k) reduced k times both ways: each pixel the exact
 * average of its k x k block, rounded to the nearest byte (halves up). Colours are weighted by
 * alpha, as a resampler premultiplies, so a transparent pixel's colour does not bleed into its
 * neighbours'; a block wholly transparent keeps the plain average of its colours. For opaque
 * pictures (every output's alpha is 1 unless a kernel says otherwise) this is the plain average.
 */
export function boxReduce(rgba: Uint8Array, width: number, height: number, k: number): Uint8Array {
  if (!(Number.isInteger(k) && k >= 1 && width % k === 0 && height % k === 0)) throw new Error(`boxReduce: ${width} x ${height} is not reduced by a whole ${k}`);
  if (k === 1) return rgba;
  return k <= PACKED_MAX && opaque(rgba) ? boxReduceOpaque(rgba, width, height, k) : boxReduceWeighted(rgba, width, height, k);
}

/** Whether every pixel's alpha is 255 (then the weighted average is the plain one). */
function opaque(rgba: Uint8Array): boolean {
  for (let i = 3; i < rgba.length; i += 4) if (rgba[i] !== 255) return false;
  return true;
}

/** The largest factor whose block sums (at most 255 k^2) fit the 16-bit halves of a word. */
const PACKED_MAX = 16;
const EVEN = 0x00ff00ff;

/**
 * The plain average, four bytes at a time: each pixel read as one word, its red and blue bytes
 * (even) summed in one word's two 16-bit halves and its green and alpha (odd) in another's.
 */
function boxReduceOpaque(rgba: Uint8Array, width: number, height: number, k: number): Uint8Array {
  const words = asWords(rgba);
  const outWidth = width / k;
  const out = new Uint8Array(outWidth * (height / k) * 4);
  const even = new Uint32Array(outWidth);
  const odd = new Uint32Array(outWidth);
  const n = k * k;
  for (let oy = 0, o = 0; oy < height / k; oy++) {
    even.fill(0);
    odd.fill(0);
    for (let y = oy * k, end = (oy + 1) * k; y < end; y++)
      for (let ox = 0, i = y * width; ox < outWidth; ox++)
        for (let dx = 0; dx < k; dx++, i++) {
          const w = words[i];
          even[ox] += w & EVEN;
          odd[ox] += (w >>> 8) & EVEN;
        }
    for (let ox = 0; ox < outWidth; ox++, o += 4) {
      // Integer sums, so round-half-up is exact: floor((2 sum + n) / 2n).
      out[o] = Math.floor((2 * (even[ox] & 0xffff) + n) / (2 * n));
      out[o + 1] = Math.floor((2 * (odd[ox] & 0xffff) + n) / (2 * n));
      out[o + 2] = Math.floor((2 * (even[ox] >>> 16) + n) / (2 * n));
      out[o + 3] = 255;
    }
  }
  return out;
}

/** The average with colours weighted by alpha (see boxReduce), any factor. */
function boxReduceWeighted(rgba: Uint8Array, width: number, height: number, k: number): Uint8Array {
  const outWidth = width / k;
  const outHeight = height / k;
  const n = k * k;
  const out = new Uint8Array(outWidth * outHeight * 4);
  // Per output pixel of the row of blocks being summed: alpha, colours times alpha, plain colours.
  const sums = new Float64Array(outWidth * 7);
  for (let oy = 0; oy < outHeight; oy++) {
    sums.fill(0);
    for (let y = oy * k; y < (oy + 1) * k; y++) {
      let i = y * width * 4;
      for (let ox = 0, s = 0; ox < outWidth; ox++, s += 7)
        for (let dx = 0; dx < k; dx++, i += 4) {
          const a = rgba[i + 3];
          sums[s] += a;
          sums[s + 1] += rgba[i] * a;
          sums[s + 2] += rgba[i + 1] * a;
          sums[s + 3] += rgba[i + 2] * a;
          sums[s + 4] += rgba[i];
          sums[s + 5] += rgba[i + 1];
          sums[s + 6] += rgba[i + 2];
        }
    }
    for (let ox = 0, s = 0, o = oy * outWidth * 4; ox < outWidth; ox++, s += 7, o += 4) {
      const a = sums[s];
      if (a > 0) for (let c = 0; c < 3; c++) out[o + c] = Math.floor((2 * sums[s + 1 + c] + a) / (2 * a));
      else for (let c = 0; c < 3; c++) out[o + c] = Math.floor((2 * sums[s + 4 + c] + n) / (2 * n));
      out[o + 3] = Math.floor((2 * a + n) / (2 * n));
    }
  }
  return out;
}

/** RGBA pixels as a PNG picture, in base64 (a thumbnail's rows unfiltered: png.ts, RowFilterType). */
export async function pngPicture(rgba: Uint8Array, width: number, height: number, filter: RowFilterType = 'sub'): Promise<PngPicture> {
  return { width, height, data: (await encodePng(width, height, rgba, filter)).toString('base64') };
}
