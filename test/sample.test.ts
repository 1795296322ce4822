// `f.sample(u, v[, w])` against bilinear (trilinear) filtering computed independently in double
// precision: element centres at (i + 0.5) / extent, edges clamped. Coordinates run past [0, 1]
// on every side, on both backends.

import t from 'tap';
import { Engine, type Backend } from '../src/main/engine.js';
import { firstDifference, run, textScene } from './helpers.js';

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

// The corners of a sample load as (x, x + 1) pairs (src/codegen/sample.ts): inside the field by one
// test per sample, else clamped. Both compiled tiers against the interpreter, bit for bit, over
// fields 1, 2 and 3 wide along each axis (and a larger one), with coordinates from -0.3 to 1.3
// that vary along x and y in every vector (near 0, near 1, outside), in scalar, vector, i32 and
// bool fields; under a mask whose other lanes lie outside (an `if`), in an unrolled loop, and in a
// loop whose finished lanes keep their last coordinates. A corner loaded from the wrong place, or the inside path
// taken at an edge, changes bits.

const SIZES2 = [[1, 1], [1, 2], [2, 1], [2, 2], [2, 3], [3, 2], [3, 3], [1, 3], [3, 1], [7, 5]];
const SIZES3 = [[1, 1, 1], [2, 2, 2], [3, 3, 3], [1, 2, 3], [2, 3, 1], [3, 1, 2], [2, 1, 2], [7, 5, 4]];

/** A sampler of `f` (u, v[, w] in about [-0.3, 1.3], per lane): plain, under a mask, in a loop. */
function sampler(name: string, dims: 2 | 3, port: string, out: string): string {
  const each = dims === 2 ? 'each (x, y)' : 'each (x, y, z)';
  const uvw = (du: string) =>
    dims === 2 ? `u${du}, v` : `u${du}, v, (f32(z) + 0.3 * f32(x % 3)) / f32(depth - 1) * 1.6 - 0.3`;
  return `kernel t.${name}@1 {
  grants field.read;
  in f: ${port};
  out r: ${out};
  out m: ${out};
  out l: ${out};
  ${each} {
    const u = (f32(x) - 1.5) / f32(width - 4) * 1.6 - 0.3;
    const v = (f32(y) + 0.25 * f32(x % 4)) / f32(height - 1) * 1.6 - 0.3;
    r = f.sample(${uvw('')});
    m = r * 0.0;
    if (x % 3 != 1) {
      m = f.sample(${uvw(' * 0.5 + 0.25')});
    } else {
      m = f.sample(${uvw(' + 5.0')});
    }
    l = r * 0.0;
    for (let k = 0; k < 2; k++) {
      l += f.sample(${uvw(' + f32(k) * 0.7 - 0.35')});
    }
    let t = 0.0;
    while (t < f32(x % 5)) {
      l += f.sample(${uvw(' + t * 0.3 - 0.6')});
      t += 1.0;
    }
  }
}
`;
}

/** The sources and samplers, with a source of each size (2-D, 3-D). */
function samplers(sizes2: number[][], sizes3: number[][]): string {
  return `kernel t.src2@1 {
  out s: field2<f32>;
  out v: field2<vec3>;
  out i: field2<i32>;
  out b: field2<bool>;
  each (x, y) {
    s = f32((x * 73 + y * 151) % 101) / 101.0;
    v = vec3(s, s * 2.0 + 1.0, 0.5 - s);
    i = (x * 37 + y * 11) % 23 - 7;
    b = (x + 2 * y) % 3 == 0;
  }
}
kernel t.src3@1 {
  out s: field3<f32>;
  out v: field3<vec2>;
  each (x, y, z) {
    s = f32((x * 73 + y * 151 + z * 283) % 101) / 101.0;
    v = vec2(s * 3.0 - 1.0, 1.0 - s);
  }
}
${sampler('s2', 2, 'field2<f32>', 'field2<f32>')}
${sampler('v2', 2, 'field2<vec3>', 'field2<vec3>')}
${sampler('i2', 2, 'field2<i32>', 'field2<f32>')}
${sampler('b2', 2, 'field2<bool>', 'field2<f32>')}
${sampler('s3', 3, 'field3<f32>', 'field3<f32>')}
${sampler('v3', 3, 'field3<vec2>', 'field3<vec2>')}
${sizes2.map(([w, h], k) => `node a${k}: t.src2@1 { size = ${w} x ${h}; }
node s2_${k}: t.s2@1 { size = 13 x 11; f <- a${k}.s; }
node v2_${k}: t.v2@1 { size = 13 x 11; f <- a${k}.v; }
node i2_${k}: t.i2@1 { size = 13 x 11; f <- a${k}.i; }
node b2_${k}: t.b2@1 { size = 13 x 11; f <- a${k}.b; }
${['s2', 'v2', 'i2', 'b2'].flatMap((n) => ['r', 'm', 'l'].map((p) => `output ${n}_${k}_${p} <- ${n}_${k}.${p};`)).join('\n')}`).join('\n')}
${sizes3.map(([w, h, d], k) => `node b${k}: t.src3@1 { size = ${w} x ${h} x ${d}; }
node s3_${k}: t.s3@1 { size = 9 x 5 x 4; f <- b${k}.s; }
node v3_${k}: t.v3@1 { size = 9 x 5 x 4; f <- b${k}.v; }
${['s3', 'v3'].flatMap((n) => ['r', 'm', 'l'].map((p) => `output ${n}_${k}_${p} <- ${n}_${k}.${p};`)).join('\n')}`).join('\n')}
`;
}

t.test('sample\'s corners: fast tier = optimised tier = interpreter, bit for bit, at the edges of fields 1 to 3 wide', async (t) => {
  // Modules are per node: the optimised tier (binaryen -O3, ~0.3 s a module) on a few of the sizes.
  const few = samplers([[1, 2], [3, 3], [7, 5]], [[1, 2, 3], [2, 2, 2], [7, 5, 4]]);
  for (const [tier, scene] of [['fast', samplers(SIZES2, SIZES3)], ['optimised', few]] as const) {
    const s = textScene({ 'scene.esn': scene });
    const interp = await run(s, { backend: 'interp' });
    t.equal(firstDifference(await run(s, { backend: 'jit', tier }), interp), undefined, `${tier} tier = interpreter (${interp.size} outputs)`);
    // The outputs are not all alike (the sources reached the samplers).
    const planes = [...interp.values()].flat();
    t.ok(new Set(planes.map((p) => p.join())).size > planes.length / 2, 'the sampled planes differ from one another');
  }
});
