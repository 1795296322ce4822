// Thumbnails of fields (src/main/thumbnail.ts, linear-box.ts, thumbnail-cache.ts): reduced on the
// linear values before the sRGB mapping, checked against averages worked out here independently
// (clamp, average the light, then encode with the exact transfer function); the sRGB lookup
// checked at every byte boundary against the exact function; and the per-frame cache never
// serving a picture of another frame or another world, through `evaluate` on real sessions.

import t from 'tap';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { decodePng } from '../src/main/image.js';
import { linearToByte, linearToSrgb, srgbToLinear } from '../src/main/srgb.js';
import { packedPlanes, thumbnail, thumbnailPixels } from '../src/main/thumbnail.js';
import { thumbnailsMade } from '../src/main/thumbnail-cache.js';
import { simdThumbnailsMade } from '../src/main/linear-box-simd.js';
import { outputField, readPlanes } from '../src/main/world-fields.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import type { Scalar } from '../src/ir/ir.js';
import { ROOT, sameBytes, xorshift } from './helpers.js';
import { scratchDir } from './scratch.js';

/** What a picture shows of a value: clamped to [0, 1], NaN as 0. */
const clamp = (v: number) => (Number.isNaN(v) ? 0 : Math.min(1, Math.max(0, v)));
/** A colour's byte by the exact transfer function; an alpha's byte, linear. */
const colourByte = (v: number) => Math.round(linearToSrgb(v) * 255);
const alphaByte = (v: number) => Math.round(v * 255);

/**
 * The thumbnail's pixels worked out plainly: per block, the clamped values averaged (colours
 * weighted by alpha when there are four components, unless the block is wholly transparent), the
 * average held as f32 (as the reduced planes hold it), then mapped to bytes.
 */
function expected(planes: Float32Array[], width: number, height: number, k: number): Uint8Array {
  const out: number[] = [];
  for (let by = 0; by < height / k; by++)
    for (let bx = 0; bx < width / k; bx++) {
      const block = (c: number) => {
        const vs: number[] = [];
        for (let y = by * k; y < (by + 1) * k; y++) for (let x = bx * k; x < (bx + 1) * k; x++) vs.push(clamp(planes[c][y * width + x]));
        return vs;
      };
      const mean = (vs: number[]) => Math.fround(vs.reduce((a, b) => a + b, 0) / vs.length);
      if (planes.length === 1) {
        const g = colourByte(mean(block(0)));
        out.push(g, g, g, 255);
      } else if (planes.length < 4) {
        for (let c = 0; c < 3; c++) out.push(c < planes.length ? colourByte(mean(block(c))) : 0);
        out.push(255);
      } else {
        const a = block(3);
        const weight = a.reduce((x, y) => x + y, 0);
        for (let c = 0; c < 3; c++) {
          const vs = block(c);
          out.push(colourByte(weight > 0 ? Math.fround(vs.reduce((s, v, i) => s + v * a[i], 0) / weight) : mean(vs)));
        }
        out.push(alphaByte(mean(a)));
      }
    }
  return Uint8Array.from(out);
}

/**
 * The same for a size that is no whole factor smaller: each thumbnail pixel a cell of the field,
 * each element weighted by how much of it the cell covers (the overlap of [x, x + 1) with the
 * cell), summed across each row first, then down; colours weighted by alpha unless every alpha is
 * 1 (then the weights change nothing, and the plain sum over the cell's area is taken).
 */
function expectedArea(planes: Float32Array[], width: number, height: number, outWidth: number, outHeight: number): Uint8Array {
  const sx = width / outWidth;
  const sy = height / outHeight;
  const area = sx * sy;
  const alpha = planes.length === 4 ? planes[3] : undefined;
  const weighted = alpha !== undefined && alpha.some((a) => !(a >= 1));
  const colours = Math.min(planes.length, 3);
  const out: number[] = [];
  const overlap = (i: number, lo: number, hi: number) => Math.min(i + 1, hi) - Math.max(i, lo);
  for (let oy = 0; oy < outHeight; oy++)
    for (let ox = 0; ox < outWidth; ox++) {
      const plain = [0, 0, 0];
      const times = [0, 0, 0];
      let alphas = 0;
      for (let y = Math.floor(oy * sy); y < Math.min(height, Math.ceil((oy + 1) * sy)); y++) {
        const wy = overlap(y, oy * sy, (oy + 1) * sy);
        let ha = 0;
        for (let c = 0; c < colours; c++) {
          let h = 0;
          let hw = 0;
          for (let x = Math.floor(ox * sx); x < Math.min(width, Math.ceil((ox + 1) * sx)); x++) {
            const wx = overlap(x, ox * sx, (ox + 1) * sx);
            const v = clamp(planes[c][y * width + x]);
            h += wx * v;
            if (weighted) hw += wx * v * clamp(alpha![y * width + x]);
          }
          plain[c] += wy * h;
          times[c] += wy * hw;
        }
        if (weighted) {
          for (let x = Math.floor(ox * sx); x < Math.min(width, Math.ceil((ox + 1) * sx)); x++) ha += overlap(x, ox * sx, (ox + 1) * sx) * clamp(alpha![y * width + x]);
          alphas += wy * ha;
        }
      }
      const value = (c: number) => Math.fround(weighted && alphas > 0 ? times[c] / alphas : plain[c] / area);
      if (planes.length === 1) out.push(colourByte(value(0)), colourByte(value(0)), colourByte(value(0)), 255);
      else {
        for (let c = 0; c < 3; c++) out.push(c < colours ? colourByte(value(c)) : 0);
        out.push(alpha ? (weighted ? alphaByte(Math.fround(alphas / area)) : 255) : 255);
      }
    }
  return Uint8Array.from(out);
}

/** Where two pictures' bytes first differ, or undefined (compared whole: tap's deep compare is slow on large arrays). */
function differs(got: Uint8Array, want: Uint8Array): string | undefined {
  if (sameBytes(got, want)) return undefined;
  const i = got.findIndex((v, j) => v !== want[j]);
  return `${got.length} bytes against ${want.length}; first difference at byte ${i}: ${got[i]}, expected ${want[i]}`;
}

t.test('a thumbnail of a field is the average of the light of each block, then encoded', async (t) => {
  const next = xorshift(21);
  // Values mostly in [0, 1], some past either end, a NaN now and then; alpha 0 or 1 often.
  const value = (alpha: boolean) => {
    const r = next();
    if (r < 0.02) return NaN;
    if (r < 0.1) return alpha ? [0, 1][Math.floor(next() * 2)] : next() * 3 - 1;
    return Math.fround(next());
  };
  const cases = [[4, 256, 256, 128], [4, 64, 48, 16], [3, 30, 21, 10], [1, 16, 16, 4], [2, 12, 6, 4], [4, 50, 30, 20], [3, 37, 23, 16], [1, 30, 21, 8], [4, 320, 240, 128]] as const;
  for (const [comps, width, height, side] of cases) {
    for (const transparent of comps === 4 ? [true, false, 'left half clear'] : [false]) {
      const planes = Array.from({ length: comps }, (_, c) => Float32Array.from({ length: width * height }, (_, i) => (c !== 3 ? value(false) : transparent === 'left half clear' && i % width < width / 2 ? 0 : transparent ? value(true) : 1)));
      const types: Scalar[] = new Array(comps).fill('f32');
      const k = Math.max(width, height) / side;
      const size = [Math.round(width / k), Math.round(height / k)];
      const whole = Number.isInteger(k) && width % k === 0 && height % k === 0;
      const got = thumbnailPixels(types, packedPlanes(planes, width), width, height, side, () => t.fail('the whole picture is not wanted') as never);
      t.same([got.width, got.height], size, `${comps} components ${width} x ${height}: the size`);
      const want = whole ? expected(planes, width, height, k) : expectedArea(planes, width, height, size[0], size[1]);
      t.equal(differs(got.rgba, want), undefined, `${comps} components ${width} x ${height} to ${size.join(' x ')}${whole ? '' : ' (by area)'}${transparent === true ? ', with transparency' : transparent ? `, ${transparent}` : ''}`);
      if (width === 256) {
        // Through the PNG, as `evaluate` answers it.
        const png = decodePng(Buffer.from((await thumbnail(got.rgba, got.width, got.height, side)).data, 'base64'));
        t.equal(differs(png.rgba, got.rgba), undefined, 'the PNG holds those pixels');
      }
    }
  }
  // Black and white elements average to half the light, byte 188, where averaging the bytes gives 128.
  const checker = Float32Array.from({ length: 4 }, (_, i) => i % 2);
  t.same([...thumbnailPixels(['f32'], packedPlanes([checker], 2), 2, 2, 1, () => new Uint8Array()).rgba], [188, 188, 188, 255]);
  // i32 components shown are bytes, not light: the whole picture is mapped, and reduced as bytes.
  let whole = 0;
  thumbnailPixels(['f32', 'i32', 'f32'], packedPlanes([checker, checker, checker], 2), 2, 2, 1, () => (whole++, new Uint8Array(16)));
  t.equal(whole, 1, 'a field with an i32 component is mapped whole');
});

t.test('the sRGB lookup gives the exact function\'s byte at every byte boundary, f32 by f32', async (t) => {
  // Each boundary's nearest f32 values: 8 below and 8 above the exact threshold, step by step.
  const f = new Float32Array(1);
  const bits = new Int32Array(f.buffer);
  let checked = 0;
  const wrong: string[] = [];
  for (let b = 1; b <= 255; b++) {
    f[0] = srgbToLinear((b - 0.5) / 255);
    const at = bits[0];
    for (let d = -8; d <= 8; d++) {
      bits[0] = at + d;
      const v = f[0];
      const exact = colourByte(v);
      if (linearToByte(v) !== exact) wrong.push(`${v} (boundary ${b}): ${linearToByte(v)}, exact ${exact}`);
      checked++;
    }
    // The boundary really is there: the byte changes within those values.
    bits[0] = at - 8;
    const below = linearToByte(f[0]);
    bits[0] = at + 8;
    if (linearToByte(f[0]) !== below + 1) wrong.push(`boundary ${b} not crossed`);
  }
  t.same(wrong, [], `${checked} values around the 255 boundaries`);
});

async function openExample(name: string, edit?: (text: string) => string) {
  const dir = scratchDir('entelechy-thumb-');
  cpSync(join(ROOT, 'examples', name), dir, { recursive: true });
  if (edit) writeFileSync(join(dir, 'scene.esn'), edit(readFileSync(join(dir, 'scene.esn'), 'utf8')));
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  const ask = async (req: object) => {
    const a = JSON.parse(await dispatch(s, JSON.stringify(req)));
    if (a.error) throw new Error(a.error.message);
    return a.ok;
  };
  return { s, ask, close: () => s.close() };
}

/** The thumbnail `evaluate` answered, as pixels. */
const pixelsOf = (answer: { outputs: { thumbnail: { data: string } }[] }) => decodePng(Buffer.from(answer.outputs[0].thumbnail.data, 'base64')).rgba;

/** The thumbnail the output's field holds now, worked out here from its values read back. */
async function truth(s: Session, side: number): Promise<Uint8Array> {
  const { planes, width, height } = await s.read((w) => {
    const field = outputField(w, 'result')!;
    return { planes: readPlanes(w, field), width: field.width, height: field.height };
  });
  return expected(planes.slice(0, 4), width, height, width / side);
}

t.test('evaluate\'s thumbnails: made once per frame, never another frame\'s or another world\'s', async (t) => {
  const a = await openExample('rings');
  // The same scene, warmer: the same frame numbers and versions, other pixels.
  const b = await openExample('rings', (text) => text.replace('param warmth: f32 = 0.5', 'param warmth: f32 = 0.9'));
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const made = thumbnailsMade();
  const first = await a.ask({ op: 'evaluate', time: 1, thumbnail: 64 });
  t.equal(differs(pixelsOf(first), await truth(a.s, 64)), undefined, 'the first frame\'s thumbnail');
  // The same inputs: the frame repeats (Engine.repeats) and its thumbnail is served, not made again.
  const again = await a.ask({ op: 'evaluate', time: 1, thumbnail: 64 });
  t.equal(again.frame, first.frame, 'a repeated frame keeps its number');
  t.equal(differs(pixelsOf(again), pixelsOf(first)), undefined, 'the same picture');
  t.equal(thumbnailsMade() - made, 1, 'one thumbnail made for two requests of the same frame');
  // Another side of the same frame is another picture.
  const small = await a.ask({ op: 'evaluate', time: 1, thumbnail: 32 });
  t.equal(differs(pixelsOf(small), await truth(a.s, 32)), undefined, 'another side: its own thumbnail');
  // A new frame: its own pixels, not the last frame's.
  const later = await a.ask({ op: 'evaluate', time: 1.25, thumbnail: 64 });
  t.not(later.frame, first.frame);
  t.ok(differs(pixelsOf(later), pixelsOf(first)), 'the rings moved');
  t.equal(differs(pixelsOf(later), await truth(a.s, 64)), undefined, 'the new frame\'s thumbnail');
  // Another world at the same frame number and version: its own pixels.
  await b.ask({ op: 'evaluate', time: 1 });
  const other = await b.ask({ op: 'evaluate', time: 1.25, thumbnail: 64 });
  t.equal(other.frame, later.frame, 'the same frame number in both sessions');
  t.equal(b.s.engine.version, a.s.engine.version, 'and the same version');
  t.ok(differs(pixelsOf(other), pixelsOf(later)), 'the warmer scene differs');
  t.equal(differs(pixelsOf(other), await truth(b.s, 64)), undefined, 'the other world\'s thumbnail');
  // A reset starts the frame counter again on the same world: the same frame number again, at another time.
  await a.ask({ op: 'reset' });
  while ((await a.ask({ op: 'evaluate', time: 1.5 })).frame < later.frame - 1);
  const restarted = await a.ask({ op: 'evaluate', time: 1.75, thumbnail: 64 });
  t.equal(restarted.frame, later.frame, 'the frame number of a thumbnail made before the reset');
  t.equal(differs(pixelsOf(restarted), await truth(a.s, 64)), undefined, 'after a reset, the new frame\'s thumbnail');
  t.equal(thumbnailsMade() - made, 5, 'each other frame, side or world made its own');
});

t.test('evaluate\'s thumbnails halved or resampled by area in WebAssembly: the thumbnail worked out here, and the JavaScript path\'s', async (t) => {
  const a = await openExample('rings');
  t.teardown(() => a.close());
  const made = simdThumbnailsMade();
  const half = await a.ask({ op: 'evaluate', time: 2, thumbnail: 128 });
  t.equal(differs(pixelsOf(half), await truth(a.s, 128)), undefined, '256 -> 128: the average of the light, worked out here');
  const area = await a.ask({ op: 'evaluate', time: 2, thumbnail: 100 });
  const js = await a.s.read((w) => {
    const f = outputField(w, 'result')!;
    return thumbnailPixels(f.comps, packedPlanes(readPlanes(w, f), f.width), f.width, f.height, 100, () => new Uint8Array(0));
  });
  t.same([js.width, js.height], [100, 100]);
  t.equal(differs(pixelsOf(area), js.rgba), undefined, '256 -> 100 by area: the JavaScript path\'s bytes');
  t.equal(simdThumbnailsMade() - made, 2, 'both made in WebAssembly');
});
