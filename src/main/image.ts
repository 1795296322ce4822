// Fields to pictures: 8-bit RGBA pixels and PNG files.

import { PNG } from 'pngjs';
import { encodePng, stripRows, type Pixels } from './png.js';
import { PngFile, PngWriteError } from './png-file.js';
import { linearToByte } from './srgb.js';
import type { Field } from './field.js';
import { throwIfCancelled } from './cancel.js';
import type { FieldMemory } from './memory.js';
import type { Scalar } from '../ir/ir.js';
import { UserError } from './user-error.js';

export { encodePng };

export class ImageError extends UserError {
  override name = 'ImageError';
}

/**
 * RGBA bytes of a 2-D field: vec4 is RGBA, vec3 RGB, vec2 RG, one component gray; f32 colour
 * values are linear, in [0, 1], and are encoded with sRGB's transfer function to 0..255 (clamped,
 * rounded; NaN is 0), an f32 alpha is 0..255 as it is (alpha is not encoded); bools map to 0 or
 * 255; i32 values are bytes, clamped to 0..255. Read from the field's rows in memory, without
 * copying the field first.
 */
export function fieldToRgba(memory: FieldMemory, f: Field, name: string): Uint8Array {
  return fieldRgbaRows(memory, f, name)(0, f.height); // (its buffer: no other call reuses it)
}

/**
 * Rows [y0, y1) of a 2-D field as RGBA bytes (fieldToRgba's mapping), made when asked, in one
 * buffer that the next call reuses: a PNG encoder takes a large field's rows strip by strip
 * without an image-sized buffer (8192 x 8192: 256 MiB, and 0.65 s of first-touch page faults).
 */
export function fieldRgbaRows(memory: Pick<FieldMemory, 'f32' | 'i32'>, f: Field, name: string): (y0: number, y1: number) => Uint8Array {
  if (f.dims === 3) throw new ImageError(`\`${name}\` is a 3-D field: an image needs a 2-D one (read it as f32, or add a view kernel that renders it)`);
  const rows: RowSource[] = f.comps.map((t, c) => ({
    data: t === 'f32' ? memory.f32 : memory.i32,
    at: (y) => (f.ptr + c * f.planeBytes) / 4 + y * f.stride,
  }));
  let out = new Uint8ClampedArray(0);
  return (y0, y1) => {
    if (out.length < (y1 - y0) * f.width * 4) out = new Uint8ClampedArray((y1 - y0) * f.width * 4);
    toRgba(f.comps, rows, f.width, y0, y1, out);
    return new Uint8Array(out.buffer, 0, (y1 - y0) * f.width * 4);
  };
}

/** RGBA bytes of `n` elements given as packed component planes (the mapping above). */
export function planesToRgba(comps: readonly Scalar[], planes: Float32Array[], n: number): Uint8Array {
  const out = new Uint8ClampedArray(n * 4);
  toRgba(comps, planes.map((data) => ({ data, at: () => 0 })), n, 0, 1, out);
  return new Uint8Array(out.buffer);
}

/** Where a component's rows are: an array and the index of row y's first element. */
interface RowSource {
  data: Float32Array | Int32Array;
  at: (y: number) => number;
}

/**
 * Rows [y0, y1) into `out` from its start, in one pass over the pixels, the four bytes of each
 * written together. f32 colours go through linearToByte (srgb.ts); otherwise a Uint8ClampedArray
 * store rounds and clamps like Math.round(clamp(v * 255, 0, 255)) with NaN as 0 (it rounds a tie
 * to even, and the only tie an f32 in [0, 1] makes is 0.5 * 255, which rounds to 128 either way).
 * A 4096 x 4096 vec4 field takes 0.3 s, most of it the first touch of the new buffer; copying the
 * field out first and writing every 4th byte per component took 1.4 s.
 */
function toRgba(comps: readonly Scalar[], rows: RowSource[], width: number, y0: number, y1: number, out: Uint8ClampedArray): void {
  const k = Math.min(4, comps.length);
  if (comps.slice(0, k).every((t) => t === 'f32')) return floatsToRgba(k, rows, width, y0, y1, out);
  const zeros = new Float32Array(width);
  const ones = new Float32Array(width).fill(1);
  const bools = comps.map((t) => (t === 'bool' ? new Float32Array(width) : null));
  // The component each byte shows: gray repeats component 0; a missing colour is 0, alpha 1.
  const shown = [0, 1, 2, 3].map((c) => (k === 1 ? (c < 3 ? 0 : -1) : c < k ? c : -1));
  const src: (Float32Array | Int32Array)[] = [zeros, zeros, zeros, ones];
  const from = [0, 0, 0, 0];
  const scale = [255, 255, 255, 255];
  // The colour bytes of f32 components are sRGB-encoded; alpha, bools and i32 bytes are not.
  const [er, eg, eb] = [0, 1, 2].map((c) => shown[c] >= 0 && comps[shown[c]] === 'f32');
  for (let y = y0; y < y1; y++) {
    for (let c = 0; c < 4; c++) {
      const comp = shown[c];
      if (comp < 0) continue;
      const row = rows[comp];
      const bool = bools[comp];
      if (bool) {
        // Any nonzero bool is 255: as 0 or 1 first.
        if (c === 0 || shown[c - 1] !== comp) for (let x = 0, i = row.at(y); x < width; x++, i++) bool[x] = row.data[i] ? 1 : 0;
        src[c] = bool;
        from[c] = 0;
        scale[c] = 255;
      } else {
        src[c] = row.data;
        from[c] = row.at(y);
        scale[c] = comps[comp] === 'f32' ? 255 : 1;
      }
    }
    const [r, g, b, a] = src;
    const [fr, fg, fb, fa] = from;
    const [sr, sg, sb, sa] = scale;
    for (let x = 0, o = (y - y0) * width * 4; x < width; x++, o += 4) {
      out[o] = er ? linearToByte(r[fr + x]) : r[fr + x] * sr;
      out[o + 1] = eg ? linearToByte(g[fg + x]) : g[fg + x] * sg;
      out[o + 2] = eb ? linearToByte(b[fb + x]) : b[fb + x] * sb;
      out[o + 3] = a[fa + x] * sa;
    }
  }
}

/**
 * toRgba for fields whose shown components are all f32 (nearly every output): each pixel's four
 * bytes made as one word and stored at once, alpha rounded and clamped by hand as the clamped
 * store would (NaN as 0), the same bytes as the general loop; about twice as fast per pixel
 * (bench/RESULTS.md, "Thumbnails").
 */
function floatsToRgba(k: number, rows: RowSource[], width: number, y0: number, y1: number, out: Uint8ClampedArray): void {
  const words = new Uint32Array(out.buffer, out.byteOffset, out.length >> 2);
  for (let y = y0; y < y1; y++) {
    const o = (y - y0) * width;
    const r = rows[0].data;
    const fr = rows[0].at(y);
    if (k === 1) {
      for (let x = 0; x < width; x++) words[o + x] = (linearToByte(r[fr + x]) * 0x010101 + 0xff000000) >>> 0;
      continue;
    }
    const g = rows[1].data;
    const fg = rows[1].at(y);
    if (k === 2) {
      for (let x = 0; x < width; x++) words[o + x] = (linearToByte(r[fr + x]) | (linearToByte(g[fg + x]) << 8) | 0xff000000) >>> 0;
      continue;
    }
    const b = rows[2].data;
    const fb = rows[2].at(y);
    if (k === 3) {
      for (let x = 0; x < width; x++) words[o + x] = (linearToByte(r[fr + x]) | (linearToByte(g[fg + x]) << 8) | (linearToByte(b[fb + x]) << 16) | 0xff000000) >>> 0;
      continue;
    }
    const a = rows[3].data;
    const fa = rows[3].at(y);
    for (let x = 0; x < width; x++) words[o + x] = (linearToByte(r[fr + x]) | (linearToByte(g[fg + x]) << 8) | (linearToByte(b[fb + x]) << 16) | (alphaByte(a[fa + x]) << 24)) >>> 0;
  }
}

/** An alpha value's byte: round(v * 255) clamped to 0..255, NaN as 0 (v * 255 is exact for an f32 v; the only tie, 127.5, rounds up as to even). */
function alphaByte(v: number): number {
  if (!(v > 0)) return 0;
  if (v >= 1) return 255;
  return (v * 255 + 0.5) | 0;
}

/**
 * Encode and write a PNG whole or not at all, creating its folder, its chunks written as they are
 * made (png-file.ts). A file that cannot be written is an ImageError naming it and why. Returns
 * the file's size in bytes.
 */
export async function savePng(file: string, width: number, height: number, pixels: Pixels, signal?: AbortSignal): Promise<number> {
  if (typeof pixels !== 'function' && pixels.length !== width * height * 4) throw new Error(`savePng: ${pixels.length} bytes for ${width} x ${height} RGBA pixels`);
  let png: PngFile;
  try {
    png = await PngFile.create(file, width, height);
  } catch (e) {
    throw e instanceof PngWriteError ? new ImageError(e.message) : e;
  }
  try {
    const rowsOf = typeof pixels === 'function' ? pixels : (y0: number, y1: number) => pixels.subarray(y0 * width * 4, y1 * width * 4);
    const step = stripRows(width);
    for (let y0 = 0; y0 < height; y0 += step) {
      throwIfCancelled(signal); // a render stopped (Ctrl-C): the file is not written
      await png.rows(rowsOf(y0, Math.min(height, y0 + step)));
    }
    return await png.finish();
  } catch (e) {
    await png.abort();
    throw e instanceof PngWriteError ? new ImageError(e.message) : e;
  }
}

export function decodePng(bytes: Buffer): { width: number; height: number; rgba: Uint8Array } {
  const png = PNG.sync.read(bytes);
  return { width: png.width, height: png.height, rgba: new Uint8Array(png.data) };
}
