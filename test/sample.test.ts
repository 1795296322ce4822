// `f.sample(u, v[, w])` against bilinear (trilinear) filtering computed independently in double
// precision: element centres at (i + 0.5) / extent, edges clamped. Coordinates run past [0, 1]
// on every side, on both backends.

import t from 'tap';
import { Engine, type Backend } from '../src/main/engine.js';
import { textScene } from './helpers.js';

const SRC = [7, 5, 3];
const DST = [23, 17, 4];

const SCENE = `input src2: field2<f32> = 0.0 size ${SRC[0]} x ${SRC[1]};
input src3: field3<f32> = 0.0 size ${SRC.join(' x ')};
kernel t.s2@1 {
  grants field.read;
  in f: field2<f32>;
  out r: field2<f32>;
  each (x, y) { r = f.sample((f32(x) - 4.0) / 15.0, (f32(y) - 3.0) / 11.0); }
}
kernel t.s3@1 {
  grants field.read;
  in f: field3<f32>;
  out r: field3<f32>;
  each (x, y, z) { r = f.sample((f32(x) - 4.0) / 15.0, (f32(y) - 3.0) / 11.0, (f32(z) - 0.5) / 2.0); }
}
node a: t.s2@1 { size = ${DST[0]} x ${DST[1]}; f <- src2; }
node b: t.s3@1 { size = ${DST.join(' x ')}; f <- src3; }
output r2 <- a.r;
output r3 <- b.r;
`;

let seed = 12345;
const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296) * 2 - 1;
const values = Array.from({ length: SRC[0] * SRC[1] * SRC[2] }, () => Math.fround(rnd()));
const at = (x: number, y: number, z: number) => {
  const c = (v: number, n: number) => Math.min(Math.max(v, 0), n - 1);
  return values[c(x, SRC[0]) + c(y, SRC[1]) * SRC[0] + c(z, SRC[2]) * SRC[0] * SRC[1]];
};

/** Bilinear or trilinear filtering in double precision at normalised (u, v, w). */
function filtered(coords: number[]): number {
  const p = coords.map((c, i) => c * SRC[i] - 0.5);
  const base = p.map(Math.floor);
  const frac = p.map((v, i) => v - base[i]);
  let sum = 0;
  for (let bits = 0; bits < 1 << coords.length; bits++) {
    let weight = 1;
    const idx = [0, 0, 0];
    coords.forEach((_, i) => {
      const hi = (bits >> i) & 1;
      idx[i] = base[i] + hi;
      weight *= hi ? frac[i] : 1 - frac[i];
    });
    sum += weight * at(idx[0], idx[1], idx[2]);
  }
  return sum;
}

for (const backend of ['jit', 'interp'] as Backend[]) {
  t.test(`${backend}: sample filters bilinearly and trilinearly, clamped at the edges`, async (t) => {
    const e = new Engine(textScene({ 'scene.esn': SCENE }), { backend });
    t.teardown(() => e.dispose());
    for (const [name, dims] of [['src2', 2], ['src3', 3]] as const) {
      const f = e.fields.input(name)!;
      for (let z = 0; z < (dims === 3 ? SRC[2] : 1); z++)
        for (let y = 0; y < SRC[1]; y++)
          for (let x = 0; x < SRC[0]; x++) e.memory.f32[f.ptr / 4 + x + y * f.stride + z * f.stride * f.height] = at(x, y, z);
    }
    e.version++;
    await e.evaluate();
    for (const [out, dims] of [['r2', 2], ['r3', 3]] as const) {
      const f = e.outputField(out)!;
      let bad = 0;
      let worst = 0;
      let first = '';
      for (let z = 0; z < (dims === 3 ? DST[2] : 1); z++)
        for (let y = 0; y < DST[1]; y++)
          for (let x = 0; x < DST[0]; x++) {
            const coords = [Math.fround((x - 4) / 15), Math.fround((y - 3) / 11), Math.fround((z - 0.5) / 2)].slice(0, dims);
            const want = filtered(coords);
            const got = e.memory.f32[f.ptr / 4 + x + y * f.stride + z * f.stride * f.height];
            const d = Math.abs(got - want);
            worst = Math.max(worst, d);
            // Each coordinate is rounded to f32 twice (u * extent - 0.5, its fraction) and each blend once.
            if (!(d <= 2e-6) && bad++ === 0) first = `; first at (${x}, ${y}${dims === 3 ? `, ${z}` : ''}): ${got} vs ${want}`;
          }
      t.equal(bad, 0, `${out}: every element within 2e-6 of the ${dims === 3 ? 'trilinear' : 'bilinear'} value (worst ${worst.toExponential(2)})${first}`);
    }
  });
}
