// A thumbnail made in WebAssembly (src/main/linear-box-simd.ts) is the JavaScript path's, bit for
// bit, on planes in a real engine memory: the reduced floats are linear-box.ts's, and the bytes
// image.ts's mapping of them, for values spread over [0, 1], the ones a clamp must handle (NaN,
// negatives, -0, past 1, infinities, subnormals), the f32 values either side of every sRGB byte
// boundary, rows padded past the width, 1 to 4 components, transparent pictures (colours weighted
// by alpha, wholly clear blocks), and (opaque) sizes no whole factor smaller, resampled by area.

import t from 'tap';
import { FieldMemory } from '../src/main/memory.js';
import { boxReduceLinear, resampleLinear, type PlaneRows } from '../src/main/linear-box.js';
import { simdOpaque, simdReduce2, simdReducible, simdResamplable, simdResampleRgba, simdThumbnailRgba } from '../src/main/linear-box-simd.js';
import { planesToRgba } from '../src/main/image.js';
import { srgbToLinear } from '../src/main/srgb.js';
import { thumbnailPixels } from '../src/main/thumbnail.js';
import { xorshift } from './helpers.js';

const SPECIAL = [NaN, -1, -0, 0, 1e-45, 1e-39, 1.17549435e-38, 0.5, 0.99999994, 1, 1.0000001, 2, Infinity, -Infinity];

/** A plane of `width` x `height` in `memory`, rows `stride` apart, each value from `value(i)`. */
function plane(memory: FieldMemory, width: number, height: number, stride: number, value: (i: number) => number): PlaneRows {
  const offset = memory.alloc(stride * height * 4) / 4;
  const f32 = memory.f32;
  // The padding holds values a reduction must not read: NaN.
  f32.fill(NaN, offset, offset + stride * height);
  for (let y = 0, i = 0; y < height; y++) for (let x = 0; x < width; x++, i++) f32[offset + y * stride + x] = value(i);
  return { data: f32, offset, stride };
}

/** The bits of each float: NaN payloads and the sign of zero compared too. */
const bits = (planes: Float32Array[]) => planes.map((p) => Array.from(new Uint32Array(p.buffer, p.byteOffset, p.length)));
/** Where two byte arrays differ (the first few). */
const differences = (a: Uint8Array | undefined, b: Uint8Array) => [...b].flatMap((x, i) => (a?.[i] === x ? [] : [`${i}: ${a?.[i]} != ${x}`])).slice(0, 4);

const SIZES = [[256, 256, 256], [12, 6, 16], [4, 2, 4]];

t.test('the reduction gives linear-box.ts\'s floats, bit for bit', async (t) => {
  const memory = new FieldMemory();
  const random = xorshift(21);
  for (const [width, height, stride] of SIZES) {
    const planes = [
      plane(memory, width, height, stride, () => random()),
      plane(memory, width, height, stride, (i) => SPECIAL[i % SPECIAL.length]),
      plane(memory, width, height, stride, (i) => (i % 3 === 0 ? random() * 3 - 1 : Math.fround(random() * 1e-6))),
    ];
    t.ok(simdReducible(memory, planes, width, height), `${width} x ${height} (stride ${stride}) can be`);
    t.same(bits(simdReduce2(memory, planes, width, height)), bits(boxReduceLinear(planes, width, height, 2)), `${width} x ${height}, stride ${stride}: the same floats`);
  }
  t.notOk(simdReducible(memory, [{ data: new Float32Array(16), offset: 0, stride: 4 }], 4, 4), 'planes outside the memory cannot');
  t.notOk(simdReducible(memory, [plane(memory, 6, 2, 8, () => 0)], 6, 2), 'nor an odd number of thumbnail elements a row');
});

t.test('the four values of a block are added in linear-box.ts\'s order: blocks whose f32 average no other order gives', async (t) => {
  const memory = new FieldMemory();
  // Each block [row 0: a0, a1; row 1: c0, c1]; together they tell ((a0 + a1) + c0) + c1 from every
  // other order but (a1 + a0) + ... (found by trying all 24 orders of these values).
  const [one, tiny, half] = [1, 2 ** -53, 2 ** -24];
  const blocks = [[one, tiny, tiny, half], [one, tiny, half, tiny], [one, half, tiny, tiny], [tiny, one, tiny, half], [tiny, one, half, tiny], [tiny, half, one, tiny]];
  const p = plane(memory, 12, 2, 12, (i) => blocks[Math.floor((i % 12) / 2)][(i >= 12 ? 2 : 0) + (i % 2)]);
  const order = (v: number[]) => Math.fround((v[0] + v[1] + v[2] + v[3]) / 4);
  t.same(Array.from(simdReduce2(memory, [p], 12, 2)[0]), blocks.map(order), 'each block\'s average as that order makes it');
  t.same(Array.from(boxReduceLinear([p], 12, 2, 2)[0]), blocks.map(order), 'as linear-box.ts makes it');
});

t.test('the bytes are image.ts\'s mapping of linear-box.ts\'s floats, 1 to 4 components', async (t) => {
  const memory = new FieldMemory();
  const random = xorshift(5);
  for (const [width, height, stride] of SIZES)
    for (let comps = 1; comps <= 4; comps++) {
      const planes = Array.from({ length: comps }, (_, c) => plane(memory, width, height, stride, (i) => (c === 3 ? 1 + (i % 2) : i % 7 === 0 ? SPECIAL[i % SPECIAL.length] : random())));
      const js = planesToRgba(new Array(comps).fill('f32'), boxReduceLinear(planes, width, height, 2), (width / 2) * (height / 2));
      t.same(differences(simdThumbnailRgba(memory, planes, width, height), js), [], `${comps} component${comps > 1 ? 's' : ''}, ${width} x ${height}`);
    }
});

t.test('every sRGB byte boundary: the f32 values either side of each give the exact byte', async (t) => {
  const memory = new FieldMemory();
  // Each value fills a 2 x 2 block, so the block's average is the value itself.
  const f = new Float32Array(1);
  const u = new Int32Array(f.buffer);
  const values: number[] = [];
  for (let b = 1; b <= 255; b++) {
    f[0] = srgbToLinear((b - 0.5) / 255);
    const at = u[0];
    for (let d = -8; d <= 8; d++) {
      u[0] = at + d;
      values.push(f[0]);
    }
  }
  while (values.length % 2) values.push(0.25);
  const width = values.length * 2;
  const p = plane(memory, width, 2, width, (i) => values[Math.floor((i % width) / 2)]);
  const js = planesToRgba(['f32'], boxReduceLinear([p], width, 2, 2), values.length);
  t.same(differences(simdThumbnailRgba(memory, [p], width, 2), js), [], `${values.length} values`);
});

t.test('by area (any other size): the bytes image.ts makes of resampleLinear\'s floats', async (t) => {
  // Room for every plane below at once (a memory that grows renews its views: planes made before would be outside them).
  const memory = new FieldMemory(undefined, 512);
  const random = xorshift(3);
  for (const [width, height, stride, outWidth, outHeight] of [[320, 240, 320, 128, 96], [240, 160, 240, 128, 85], [13, 7, 16, 6, 3], [10, 10, 12, 4, 3], [9, 5, 12, 8, 4]])
    for (let comps = 1; comps <= 4; comps++) {
      const planes = Array.from({ length: comps }, (_, c) => plane(memory, width, height, stride, (i) => (c === 3 ? 1 : i % 11 === 0 ? SPECIAL[i % SPECIAL.length] : random())));
      const ok = simdResamplable(memory, planes, width, height, outWidth);
      t.equal(ok, comps < 4 || width % 4 === 0, `${width} x ${height} -> ${outWidth} x ${outHeight}, ${comps}: resampled here ${ok ? '' : 'not '}(an alpha is checked in SIMD only at widths of 4)`);
      if (!ok) continue;
      const js = planesToRgba(new Array(comps).fill('f32'), resampleLinear(planes, width, height, outWidth, outHeight), outWidth * outHeight);
      t.same(differences(simdResampleRgba(memory, planes, width, height, outWidth, outHeight), js), [], `${width} x ${height} -> ${outWidth} x ${outHeight}, ${comps} component${comps > 1 ? 's' : ''}: the same bytes`);
    }
  const transparent = [0, 1, 2, 3].map((c) => plane(memory, 320, 240, 320, () => (c === 3 ? 0.5 : random())));
  t.notOk(simdResamplable(memory, transparent, 320, 240, 128), 'a transparent picture is not (the JavaScript path weighs its colours)');
  const pixels = (m?: FieldMemory) => thumbnailPixels(['f32', 'f32', 'f32'], transparent.slice(0, 3), 320, 240, 128, () => new Uint8Array(0), m);
  t.same(differences(pixels(memory).rgba, pixels().rgba), [], 'thumbnailPixels: the same bytes with the memory and without');
});

t.test('transparent pictures: the alpha-weighted reduction gives the bytes image.ts makes of linear-box.ts\'s floats', async (t) => {
  const memory = new FieldMemory();
  const random = xorshift(11);
  for (const [width, height, stride] of SIZES) {
    // Alpha: random, special values, and whole blocks wholly clear (their colours the plain average).
    const alpha = plane(memory, width, height, stride, (i) => (Math.floor((i % width) / 2) % 5 === 0 ? 0 : i % 9 === 0 ? SPECIAL[i % SPECIAL.length] : random()));
    const colours = [0, 1, 2].map((c) => plane(memory, width, height, stride, (i) => (i % (5 + c) === 0 ? SPECIAL[(i + c) % SPECIAL.length] : random())));
    const planes = [...colours, alpha];
    t.notOk(simdOpaque(memory, alpha, width, height), 'transparent');
    const js = boxReduceLinear(planes, width, height, 2);
    t.same(differences(simdThumbnailRgba(memory, planes, width, height), planesToRgba(['f32', 'f32', 'f32', 'f32'], js, (width / 2) * (height / 2))), [], `${width} x ${height}, stride ${stride}: the same bytes`);
  }
});

t.test('opacity: every alpha at least 1 (NaN not); a transparent picture weighted by alpha, as linear-box.ts weighs it', async (t) => {
  const memory = new FieldMemory();
  const random = xorshift(7);
  const check = (alpha: (i: number) => number) => {
    const planes = [...[0, 1, 2].map(() => plane(memory, 12, 4, 16, () => random())), plane(memory, 12, 4, 16, alpha)];
    const opaque = simdOpaque(memory, planes[3], 12, 4);
    const js = planesToRgba(['f32', 'f32', 'f32', 'f32'], boxReduceLinear(planes, 12, 4, 2), 12);
    t.same(differences(simdThumbnailRgba(memory, planes, 12, 4), js), [], `${opaque ? 'opaque' : 'transparent: colours weighted by alpha'}, the same bytes`);
    // thumbnailPixels with the memory (this path) and without it (the JavaScript one): the same bytes.
    const pixels = (m?: FieldMemory) => thumbnailPixels(['f32', 'f32', 'f32', 'f32'], planes, 12, 4, 6, () => new Uint8Array(0), m).rgba;
    t.same(differences(pixels(memory), pixels()), [], 'thumbnailPixels gives the same bytes either way');
    return opaque;
  };
  t.equal(check(() => 1), true, 'all 1');
  t.equal(check((i) => (i === 47 ? 0.99999994 : 1 + i)), false, 'one just under 1, in the last element');
  t.equal(check((i) => (i === 13 ? NaN : 1)), false, 'one NaN');
  t.equal(check(() => Infinity), true, 'infinities are at least 1');
});
