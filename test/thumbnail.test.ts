// Thumbnails (src/main/thumbnail.ts): a reduction by a whole factor is an exact box filter in
// JavaScript, checked here against averages computed by hand and, on random pictures, block by
// block in a plain reference; any other size goes to sharp's resampler. The PNG is read back.

import t from 'tap';
import { inflateSync } from 'node:zlib';
import { decodePng } from '../src/main/image.js';
import { boxReduce, shrink, thumbnail } from '../src/main/thumbnail.js';
import { encodePng, PngEncoder } from '../src/main/png.js';

/** Pixels given as [r, g, b, a] rows. */
const picture = (rows: number[][][]) => Uint8Array.from(rows.flat(2));

t.test('a 2 x 2 block: averages worked out by hand', async (t) => {
  // Opaque: the plain average, halves rounded up ((0 + 255) / 2 = 127.5 -> 128; (10 + 20 + 30 + 41) / 4 = 25.25 -> 25).
  t.same([...boxReduce(picture([[[0, 10, 7, 255], [255, 20, 7, 255]], [[0, 30, 8, 255], [255, 41, 8, 255]]]), 2, 2, 2)], [128, 25, 8, 255]);
  // A transparent pixel's colour does not bleed: three blue pixels and a transparent red one give blue, alpha 765 / 4 = 191.25 -> 191.
  t.same([...boxReduce(picture([[[255, 0, 0, 0], [0, 0, 255, 255]], [[0, 0, 255, 255], [0, 0, 255, 255]]]), 2, 2, 2)], [0, 0, 255, 191]);
  // Colours weighted by alpha: (200 * 255 + 100 * 85) / (255 + 85) = 175; alpha (255 + 85) / 4 = 85.
  t.same([...boxReduce(picture([[[200, 0, 0, 255], [100, 0, 0, 85]], [[9, 9, 9, 0], [9, 9, 9, 0]]]), 2, 2, 2)], [175, 0, 0, 85]);
  // Wholly transparent: the plain average of the colours ((1 + 2 + 3 + 4) / 4 = 2.5 -> 3).
  t.same([...boxReduce(picture([[[1, 0, 0, 0], [2, 0, 0, 0]], [[3, 0, 0, 0], [4, 0, 0, 0]]]), 2, 2, 2)], [3, 0, 0, 0]);
  t.throws(() => boxReduce(new Uint8Array(3 * 2 * 4), 3, 2, 2), /3 x 2 is not reduced by a whole 2/);
});

/** A block's average as a plain reference: every pixel of the block visited in its own loop. */
function reference(rgba: Uint8Array, width: number, x0: number, y0: number, k: number): number[] {
  let a = 0;
  const weighted = [0, 0, 0];
  const plain = [0, 0, 0];
  for (let y = y0; y < y0 + k; y++)
    for (let x = x0; x < x0 + k; x++) {
      const p = rgba.subarray((y * width + x) * 4, (y * width + x) * 4 + 4);
      a += p[3];
      for (let c = 0; c < 3; c++) {
        weighted[c] += p[c] * p[3];
        plain[c] += p[c];
      }
    }
  const colour = a > 0 ? weighted.map((w) => Math.round(w / a)) : plain.map((v) => Math.round(v / (k * k)));
  return [...colour, Math.round(a / (k * k))];
}

/** A seeded generator, so a failure repeats. */
function random(seed: number): () => number {
  return () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) / (1 << 24);
}

t.test('random pictures: every block the reference average, with alpha (weighted) and opaque (four bytes at a time)', async (t) => {
  const next = random(21);
  const sizes = [[8, 6, 2], [12, 9, 3], [16, 8, 4], [32, 48, 16], [34, 17, 17]];
  for (const [[width, height, k], opaque] of [...sizes.map((s) => [s, false] as const), ...sizes.map((s) => [s, true] as const)]) {
    const rgba = new Uint8Array(width * height * 4).map((_, i) => (i % 4 === 3 ? (opaque ? 255 : next() < 0.3 ? [0, 255][Math.floor(next() * 2)] : Math.floor(next() * 256)) : Math.floor(next() * 256)));
    const out = boxReduce(rgba, width, height, k);
    const expected: number[] = [];
    for (let y = 0; y < height; y += k) for (let x = 0; x < width; x += k) expected.push(...reference(rgba, width, x, y, k));
    t.same([...out], expected, `${width} x ${height} by ${k}${opaque ? ', opaque' : ''}`);
  }
});

t.test('thumbnail: a whole factor is the box filter\'s, any other size sharp\'s, and the PNG reads back', async (t) => {
  const next = random(7);
  const rgba = new Uint8Array(256 * 256 * 4).map((_, i) => (i % 4 === 3 ? 255 : Math.floor(next() * 256)));
  const thumb = await thumbnail(rgba, 256, 256, 128);
  const back = decodePng(Buffer.from(thumb.data, 'base64'));
  t.same([thumb.width, thumb.height, back.width, back.height], [128, 128, 128, 128]);
  t.same(Buffer.from(back.rgba), Buffer.from(boxReduce(rgba, 256, 256, 2)), 'the PNG holds the box filter\'s pixels');
  t.same([...back.rgba.subarray(0, 4)], reference(rgba, 256, 0, 0, 2), 'its first pixel the average of the first block');
  // 256 x 192 to 64 x 48: by 4 both ways.
  t.same([...(await shrink(rgba.subarray(0, 256 * 192 * 4), { width: 256, height: 192 }, { width: 64, height: 48 })).subarray(0, 4)], reference(rgba, 256, 0, 0, 4));
  // White blocks of 16 x 16: the packed sums at their largest (255 x 256 in 16 bits) carry nothing over.
  t.same([...boxReduce(new Uint8Array(64 * 64 * 4).fill(255), 64, 64, 16)], new Array(4 * 4 * 4).fill(255));
  // 256 x 256 to 100 x 100 is no whole factor: sharp's resampler, the size asked for.
  const odd = await thumbnail(rgba, 256, 256, 100);
  t.same([odd.width, odd.height, decodePng(Buffer.from(odd.data, 'base64')).rgba.length], [100, 100, 100 * 100 * 4]);
});

t.test('a small PNG, deflated on the calling thread, is byte for byte what the streaming encoder makes, with either row filter', async (t) => {
  const next = random(3);
  const rgba = new Uint8Array(128 * 128 * 4).map(() => Math.floor(next() * 256));
  for (const filter of ['sub', 'none'] as const) {
    const pieces: Buffer[] = [];
    const encoder = new PngEncoder(128, 128, (b) => void pieces.push(b), filter);
    await encoder.rows(rgba);
    await encoder.end();
    const png = await encodePng(128, 128, rgba, filter);
    t.ok(png.equals(Buffer.concat(pieces)), `${filter}: the same bytes`);
    t.same(Buffer.from(decodePng(png).rgba), Buffer.from(rgba), `${filter}: decodes to the pixels`);
    // Each row led by the filter's number (None 0, Sub 1), read back from the inflated stream.
    const idat = Buffer.concat(chunksOf(png).filter((c) => c.type === 'IDAT').map((c) => c.data));
    const rows = inflateSync(idat);
    t.same([...new Set(Array.from({ length: 128 }, (_, y) => rows[y * (128 * 4 + 1)]))], [filter === 'none' ? 0 : 1], `${filter}: every row's filter byte`);
  }
  // A thumbnail's rows are unfiltered.
  const thumb = Buffer.from((await thumbnail(rgba, 128, 128, 128)).data, 'base64');
  t.equal(inflateSync(Buffer.concat(chunksOf(thumb).filter((c) => c.type === 'IDAT').map((c) => c.data)))[0], 0, 'a thumbnail is filtered with None');
});

/** A PNG's chunks, in order. */
function chunksOf(png: Buffer): { type: string; data: Buffer }[] {
  const out = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    out.push({ type: png.toString('latin1', at + 4, at + 8), data: png.subarray(at + 8, at + 8 + length) });
    at += 12 + length;
  }
  return out;
}
