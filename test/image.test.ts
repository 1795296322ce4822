// Fields to pictures: the RGBA mapping of every component count and type, read straight from a
// field's padded rows in memory, and PNG round trips.

import t from 'tap';
import { allocField, type Field } from '../src/main/field.js';
import { decodePng, encodePng, fieldRgbaRows, fieldToRgba, planesToRgba } from '../src/main/image.js';
import { filteredRows } from '../src/main/png.js';
import { inflateSync } from 'node:zlib';
import { FieldMemory } from '../src/main/memory.js';
import type { Scalar } from '../src/ir/ir.js';
import { BYTE_TO_LINEAR, linearToByte, linearToSrgb, srgbToLinear } from '../src/main/srgb.js';

/** The mapping as the docs state it, one byte at a time: f32 colours sRGB-encoded, alpha not. */
function expectedByte(t: Scalar, v: number, alpha = false): number {
  if (t === 'bool') return v ? 255 : 0;
  if (t === 'i32') return Math.max(0, Math.min(255, v));
  const clamped = Math.max(0, Math.min(1, v || 0));
  return Math.round((alpha ? clamped : linearToSrgb(clamped)) * 255);
}

function expectedRgba(comps: Scalar[], values: number[][], n: number): number[] {
  const out: number[] = [];
  const k = Math.min(4, comps.length);
  for (let i = 0; i < n; i++) {
    const byte = (c: number) => expectedByte(comps[c], values[c][i], c === 3);
    if (k === 1) out.push(byte(0), byte(0), byte(0), 255);
    else for (let c = 0; c < 4; c++) out.push(c < k ? byte(c) : c === 3 ? 255 : 0);
  }
  return out;
}

const F32_SPECIAL = [0, -0, 1, -1, NaN, Infinity, -Infinity, 0.5, 0.5 / 255, 1.5 / 255, 254.5 / 255, 1e-30, 0.99999994, 2];

/** Values of component c at element i (as the field holds them): special f32 values first, then a spread. */
function value(t: Scalar, c: number, i: number): number {
  if (t === 'bool') return (i + c) % 3 === 0 ? 1 : 0;
  if (t === 'i32') return ((i * 37 + c * 11) % 700) - 200;
  if (i < F32_SPECIAL.length) return Math.fround(F32_SPECIAL[(i + c) % F32_SPECIAL.length]);
  return Math.fround((((i * 7919 + c * 104729) % 1300) - 100) / 1000);
}

function fill(memory: FieldMemory, f: Field): number[][] {
  const values: number[][] = [];
  f.comps.forEach((t, c) => {
    const plane: number[] = [];
    const base = (f.ptr + c * f.planeBytes) / 4;
    for (let y = 0; y < f.height; y++)
      for (let x = 0; x < f.width; x++) {
        const v = value(t, c, y * f.width + x);
        plane.push(v);
        if (t === 'f32') memory.f32[base + y * f.stride + x] = v;
        else memory.i32[base + y * f.stride + x] = v;
      }
    // Padding past each row's end holds garbage that must not show.
    for (let y = 0; y < f.height; y++) for (let x = f.width; x < f.stride; x++) memory.i32[base + y * f.stride + x] = 0x7f7f7f7f;
    values.push(plane);
  });
  return values;
}

t.test('sRGB: the byte of a linear value is round(encode(v) * 255) exactly, and bytes survive decoding and encoding', async (t) => {
  let wrong = 0;
  // Every f32 near each byte's threshold, and a spread between.
  const values: number[] = [];
  for (let b = 0; b < 256; b++) {
    const at = srgbToLinear((b - 0.5) / 255);
    for (const d of [-2e-7, -1e-9, 0, 1e-9, 2e-7]) values.push(Math.fround(at + d));
  }
  for (let i = 0; i <= 100000; i++) values.push(Math.fround(i / 100000));
  for (const v of values) if (linearToByte(v) !== Math.round(linearToSrgb(Math.max(0, Math.min(1, v))) * 255)) wrong++;
  t.equal(wrong, 0, `every value's byte (${values.length} values)`);
  t.same([linearToByte(NaN), linearToByte(-1), linearToByte(2), linearToByte(0.5)], [0, 0, 255, 188], 'NaN, out of range, and middle grey (0.5 linear is byte 188)');
  t.ok(Array.from(BYTE_TO_LINEAR).every((v, b) => linearToByte(v) === b), 'each byte decoded to f32 and encoded again is itself');
  t.equal(BYTE_TO_LINEAR[128], Math.fround(srgbToLinear(128 / 255)), 'decoding is the exact function');
});

const CASES: Scalar[][] = [['f32', 'f32', 'f32', 'f32'], ['f32', 'f32', 'f32'], ['f32', 'f32'], ['f32'], ['bool'], ['i32'], ['f32', 'i32', 'bool', 'f32'], ['f32', 'f32', 'f32', 'f32', 'f32']];

t.test('fields map to RGBA bytes from their padded rows, every component count and type', async (t) => {
  const memory = new FieldMemory();
  for (const comps of CASES) {
    // Widths that are and are not a multiple of 4 (rows padded to 4 elements).
    for (const [w, h] of [[7, 5], [16, 3], [1, 1], [33, 4]]) {
      const f = allocField(memory, [w, h], comps, 'a test field');
      const values = fill(memory, f);
      const got = [...fieldToRgba(memory, f, 'img')];
      t.same(got, expectedRgba(comps, values, w * h), `${comps.join(',')} ${w} x ${h}`);
      const fromPlanes = [...planesToRgba(comps, values.map((p) => new Float32Array(p)), w * h)];
      t.same(fromPlanes, got, `${comps.join(',')} ${w} x ${h}: packed planes the same`);
      // Rows made when asked, in ranges of 2 (the last shorter), into a buffer each call reuses.
      const rows = fieldRgbaRows(memory, f, 'img');
      const ranged: number[] = [];
      for (let y = 0; y < h; y += 2) ranged.push(...rows(y, Math.min(h, y + 2)));
      t.same(ranged, got, `${comps.join(',')} ${w} x ${h}: rows in ranges the same`);
      memory.release(f.ptr);
    }
  }
});

t.test('a 3-D field is refused with a clear error', async (t) => {
  const memory = new FieldMemory();
  const f = allocField(memory, [4, 4, 2], ['f32'], 'a volume');
  t.throws(() => fieldToRgba(memory, f, 'vol'), /`vol` is a 3-D field: an image needs a 2-D one/);
});

t.test('PNG bytes decode to the same pixels', async (t) => {
  const w = 37;
  const h = 11;
  const rgba = new Uint8Array(w * h * 4).map((_, i) => (i * 131 + (i >> 7)) & 255);
  const png = await encodePng(w, h, rgba);
  const back = decodePng(png);
  t.equal(back.width, w);
  t.equal(back.height, h);
  t.same([...back.rgba], [...rgba]);
});

t.test('the Sub filter subtracts every byte from the pixel before it, modulo 256', async (t) => {
  // Bytes chosen to cross every borrow a word-wide subtraction could leak between bytes.
  const edges = [0, 1, 0x7f, 0x80, 0x81, 0xfe, 0xff];
  const w = edges.length ** 2;
  const rgba = new Uint8Array(w * 2 * 4);
  edges.forEach((a, i) => edges.forEach((b, j) => {
    const x = i * edges.length + j;
    rgba.set([a, b, 255 - a, b ^ a], x * 4);
    rgba.set([b, a, a ^ 0x80, 255 - b], (w + x) * 4);
  }));
  const f = Buffer.concat([...filteredRows(rgba, w, 2)].map((s) => s.bytes));
  t.equal(f.length, (w * 4 + 1) * 2);
  let wrong = 0;
  for (let y = 0; y < 2; y++) {
    t.equal(f[y * (w * 4 + 1)], 1, 'each row is led by the Sub filter byte');
    for (let i = 0; i < w * 4; i++) {
      const cur = rgba[y * w * 4 + i];
      const left = i >= 4 ? rgba[y * w * 4 + i - 4] : 0;
      if (f[y * (w * 4 + 1) + 1 + i] !== ((cur - left) & 255)) wrong++;
    }
  }
  t.equal(wrong, 0, 'no byte borrows from its neighbour');
});

t.test('PNGs of any size and of pixels anywhere in a buffer decode to the same pixels', async (t) => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 255;
  for (const [w, h] of [[1, 1], [1, 9], [300, 2], [64, 64]]) {
    const buffer = new Uint8Array(w * h * 4 + 3).map(random);
    const rgba = buffer.subarray(3); // not word-aligned
    const back = decodePng(await encodePng(w, h, rgba));
    t.same([back.width, back.height], [w, h]);
    t.ok(Buffer.from(back.rgba).equals(Buffer.from(rgba)), `${w} x ${h}: the same pixels`);
  }
  await t.rejects(encodePng(2, 2, new Uint8Array(15)), /15 bytes for 2 x 2 RGBA pixels/);
});

t.test('a PNG encoded from rows made strip by strip is the PNG of the whole image', async (t) => {
  const memory = new FieldMemory();
  const f = allocField(memory, [700, 3000], ['f32', 'f32', 'f32'], 'a test field'); // 2 strips
  fill(memory, f);
  const calls: number[][] = [];
  const rows = fieldRgbaRows(memory, f, 'img');
  const strips = await encodePng(f.width, f.height, (y0, y1) => (calls.push([y0, y1]), rows(y0, y1)));
  const whole = await encodePng(f.width, f.height, fieldToRgba(memory, f, 'img'));
  t.ok(calls.length >= 2 && calls[0][0] === 0 && calls[calls.length - 1][1] === f.height, `rows asked in ${calls.length} strips, all of them`);
  t.ok(strips.equals(whole), 'the same bytes');
  memory.release(f.ptr);
});

t.test('a large PNG, deflated in strips on several threads, is one zlib stream with its checksum', async (t) => {
  const [w, h] = [1024, 2100]; // 3 strips of about 4 MiB
  let seed = 11;
  const rgba = new Uint8Array(w * h * 4).map((_, i) => (i % 4096 < 2048 ? (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24 : i & 255));
  const png = await encodePng(w, h, rgba);
  // The IDAT chunks joined are a zlib stream whose Adler-32 inflate checks.
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    if (png.toString('latin1', at + 4, at + 8) === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  t.ok(idat.length >= 4, `${idat.length} IDAT chunks: the header, a chunk per strip, the checksum`);
  const raw = inflateSync(Buffer.concat(idat));
  t.equal(raw.length, (w * 4 + 1) * h, 'the filtered rows, whole');
  const back = decodePng(png);
  t.ok(Buffer.from(back.rgba).equals(Buffer.from(rgba)), 'the same pixels');
});
