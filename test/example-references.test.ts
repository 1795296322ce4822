// Every example (examples/*/scene.esn) on both backends against an independent plain-JavaScript
// implementation of what it computes, written here in double precision from the scene's text,
// element by element within the tolerances of docs/testing.md — not only the compiled code
// against the interpreter (test/examples.test.ts does that, bit for bit). Small sizes keep the
// interpreter quick; 37 x 29 is neither square nor a multiple of 4.

import t, { type Test } from 'tap';
import { loadScene, type Scene } from '../src/ir/check/scene.js';
import { Engine, type Backend, type FrameInput } from '../src/main/engine.js';
import { readField, unpackField } from '../src/main/field.js';
import { ROOT, exampleScene, xorshift } from './helpers.js';
import { hash } from './references.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const W = 37;
const H = 29;
const TAU = 2 * Math.PI;
const BACKENDS: Backend[] = ['jit', 'interp'];

/** Planes of an output, component-major: [component][y * width + x]. */
type Planes = ArrayLike<number>[];

interface Tolerance {
  /** The largest |engine - reference| of an element. */
  abs: number;
  /** How many floats may differ by more (where f32 and f64 take different branches: escape counts, ray steps). */
  outliers: number;
}

/** Compares every float of `got` with `want`; one assertion, naming the first float over and the worst within. */
function compare(t: Test, what: string, got: Planes, want: Planes, tol: Tolerance): void {
  t.equal(got.length, want.length, `${what}: as many components`);
  let over = 0;
  let worst = 0;
  let first = '';
  let n = 0;
  for (let c = 0; c < want.length; c++) {
    t.equal(got[c].length, want[c].length, `${what}: component ${c} has as many elements`);
    for (let i = 0; i < want[c].length; i++, n++) {
      const d = Math.abs(got[c][i] - want[c][i]);
      if (!(d <= tol.abs)) {
        if (over++ === 0) first = `; first: component ${c} element ${i}: ${got[c][i]} vs ${want[c][i]}`;
      } else worst = Math.max(worst, d);
    }
  }
  t.ok(n > 0 && over <= tol.outliers, `${what}: ${over} of ${n} floats differ by more than ${tol.abs} (at most ${tol.outliers}); worst within ${worst.toExponential(2)}${first}`);
}

interface Run {
  params?: Record<string, number[]>;
  /** One entry per frame. */
  frames: FrameInput[];
  /** Called once the engine exists, before the first frame (fills inputs). */
  before?: (e: Engine) => void;
  /** Nodes whose out ports are kept (not fused away), to read them after the run. */
  pins?: string[];
}

/** Runs the scene and returns each frame's first output (and the engine's pinned fields after the last). */
async function runScene(scene: Scene, backend: Backend, r: Run, after?: (e: Engine) => void): Promise<Planes[]> {
  if (scene.diagnostics.length) throw new Error(scene.diagnostics[0].message);
  const e = new Engine(scene, { backend, pins: r.pins });
  try {
    for (const [k, v] of Object.entries(r.params ?? {})) e.params.set(k, v);
    r.before?.(e);
    const out: Planes[] = [];
    for (const input of r.frames) {
      await e.evaluate(input);
      out.push(readField(e.memory, e.outputField(scene.outputs[0].name)!));
    }
    after?.(e);
    return out;
  } finally {
    e.dispose();
  }
}

/** A picture of w x h vec4 elements from a function of (x, y), component-major. */
function picture(w: number, h: number, f: (x: number, y: number) => number[]): Float64Array[] {
  const planes = [0, 1, 2, 3].map(() => new Float64Array(w * h));
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const v = f(x, y);
      for (let c = 0; c < 4; c++) planes[c][y * w + x] = v[c];
    }
  return planes;
}

const clamp = (v: number, lo: number, hi: number) => Math.min(Math.max(v, lo), hi);
const mix = (a: number, b: number, s: number) => a + (b - a) * s;

// ---- rings: concentric rings, tinted -----------------------------------------------------------

function rings(w: number, h: number, time: number, warmth: number, count = 8): Float64Array[] {
  return picture(w, h, (x, y) => {
    const px = (x + 0.5) / w - 0.5;
    const py = (y + 0.5) / h - 0.5;
    const v = 0.5 + 0.5 * Math.sin((Math.hypot(px, py) * count + time) * TAU);
    return [v * (0.5 + warmth), 0.8 * v, 0.6 * v * (1.5 - warmth), 1];
  });
}

t.test('rings: sin in turns and the tint, at four times and two warmths', async (t) => {
  const scene = exampleScene('rings', [W, H]);
  const times = [0, 0.25, 1.7, 6.1];
  for (const backend of BACKENDS)
    for (const warmth of [0.5, 0.85]) {
      const got = await runScene(scene, backend, { params: { warmth: [warmth] }, frames: times.map((time) => ({ time })) });
      // sin of f32 turns against Math.sin of the double (of the time as the kernel sees it, an
      // f32); colours in [0, 1.35]. Past a time of ~16 the f32 sum length * count + time alone
      // rounds by more than this.
      times.forEach((time, i) => compare(t, `${backend}, warmth ${warmth}, time ${time}`, got[i], rings(W, H, Math.fround(time), warmth), { abs: 5e-6, outliers: 0 }));
    }
});

// ---- blur: a checkerboard, box-blurred with clamped coordinates -------------------------------

function checker(w: number, h: number, cells = 8): Float64Array[] {
  return picture(w, h, (x, y) => ((Math.floor((x * cells) / w) + Math.floor((y * cells) / h)) % 2 === 0 ? [0.95, 0.9, 0.8, 1] : [0.1, 0.2, 0.35, 1]));
}

function boxBlur(src: Float64Array[], w: number, h: number, radius: number): Float64Array[] {
  const n = (2 * radius + 1) ** 2;
  return picture(w, h, (x, y) => {
    const sum = [0, 0, 0, 0];
    for (let dy = -radius; dy <= radius; dy++)
      for (let dx = -radius; dx <= radius; dx++) {
        const i = clamp(y + dy, 0, h - 1) * w + clamp(x + dx, 0, w - 1);
        for (let c = 0; c < 4; c++) sum[c] += src[c][i];
      }
    return sum.map((s) => s / n);
  });
}

t.test('blur: a 5 x 5 box blur of the checkerboard, edges clamped', async (t) => {
  const scene = exampleScene('blur', [W, H]);
  const want = boxBlur(checker(W, H), W, H, 2);
  for (const backend of BACKENDS) {
    const [got] = await runScene(scene, backend, { frames: [{}] });
    compare(t, backend, got, want, { abs: 2e-6, outliers: 0 }); // 25 f32 sums against doubles
  }
});

// ---- life: seeded by hash, drawn on with the pointer, stepped with wrap-around ----------------

/** The life example's frames: the board after each, and its colours. */
function life(w: number, h: number, frames: FrameInput[]): Float64Array[][] {
  let cells = new Float64Array(w * h);
  return frames.map((input, frame) => {
    const next = new Float64Array(w * h);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        let n = 0;
        for (let dy = -1; dy <= 1; dy++)
          for (let dx = -1; dx <= 1; dx++) if (dx !== 0 || dy !== 0) n += cells[((y + dy + h) % h) * w + ((x + dx + w) % w)];
        let v = n === 3 || (cells[y * w + x] > 0.5 && n === 2) ? 1 : 0;
        if (frame === 0) v = hash(x, y) < 0.3 ? 1 : 0;
        const p = input.pointer;
        if (p?.down && Math.hypot(p.x - x, p.y - y) < 4) v = 1;
        next[y * w + x] = v;
      }
    cells = next;
    return picture(w, h, (x, y) => {
      const v = cells[y * w + x];
      return [v * 0.95, v * (0.35 + 0.65 * v), 0.25 + 0.6 * v, 1];
    });
  });
}

t.test('life: eight generations, the board seeded by hash and drawn on with the pointer', async (t) => {
  const scene = exampleScene('life', [W, H]);
  const up = { x: 0, y: 0, down: false };
  // Frame 0 seeds; a stroke at frames 2-3 (one across the wrap-around corner); then free steps.
  const frames: FrameInput[] = [{}, { pointer: up }, { pointer: { x: 10, y: 12, down: true } }, { pointer: { x: 1, y: 27, down: true } }, { pointer: up }, {}, {}, {}];
  const want = life(W, H, frames);
  const alive = want.map((f) => f[2].filter((b) => b > 0.5).length);
  t.ok(alive.every((n, i) => n > 0 && (i === 0 || n !== alive[i - 1] || i > 4)), `the board lives and changes: ${alive.join(', ')} live cells`);
  for (const backend of BACKENDS) {
    const got = await runScene(scene, backend, { frames });
    // The cells are exact (0 or 1); the colours are f32 products of them (one rounding).
    want.forEach((w, i) => compare(t, `${backend}, frame ${i}`, got[i], w, { abs: 1.2e-7, outliers: 0 }));
  }
});

// ---- mandelbrot: escape time with a smooth cosine palette -------------------------------------

function mandelbrot(w: number, h: number, center: number[], zoom: number, limit: number): Float64Array[] {
  const scale = 3 / (zoom * Math.min(w, h));
  const palette = (s: number) => [0, 0.15, 0.3].map((o) => 0.5 + 0.5 * Math.cos(TAU * (s + o)));
  return picture(w, h, (x, y) => {
    const cx = center[0] + (x + 0.5 - w * 0.5) * scale;
    const cy = center[1] + (y + 0.5 - h * 0.5) * scale;
    let zx = 0;
    let zy = 0;
    let i = 0;
    while (i < limit && zx * zx + zy * zy <= 16) {
      const tx = zx * zx - zy * zy + cx;
      zy = 2 * zx * zy + cy;
      zx = tx;
      i++;
    }
    if (i >= limit) return [0.02, 0, 0.05, 1];
    const s = i + 1 - Math.log2(Math.log2(zx * zx + zy * zy) * 0.5);
    return [...palette(s * 0.035), 1];
  });
}

t.test('mandelbrot: escape counts and the smooth palette, at the scene\'s view and a wider one', async (t) => {
  const scene = exampleScene('mandelbrot', [W, H]);
  // Near the set an f32 orbit leaves the f64 one (38 of the 1,073 elements at the scene's view,
  // 11 of them escaping at another step; 2 at the wide one): those floats may differ.
  for (const view of [{ center: [-0.745, 0.11], zoom: 6, outliers: 120 }, { center: [-0.5, 0], zoom: 1, outliers: 12 }])
    for (const backend of BACKENDS) {
      const [got] = await runScene(scene, backend, { params: { center: view.center, zoom: [view.zoom] }, frames: [{}] });
      compare(t, `${backend}, zoom ${view.zoom}`, got, mandelbrot(W, H, view.center, view.zoom, 512), { abs: 2e-5, outliers: view.outliers });
    }
});

// ---- photo: exposure, warmth and a vignette on an input ---------------------------------------

function grade(src: Float64Array[], w: number, h: number, exposure: number, warmth: number): Float64Array[] {
  const k = 2 ** exposure;
  return picture(w, h, (x, y) => {
    const i = y * w + x;
    const u = (x + 0.5) / w - 0.5;
    const v = (y + 0.5) / h - 0.5;
    const fall = 1 - 0.8 * (u * u + v * v);
    return [src[0][i] * k * (1 + 0.25 * warmth) * fall, src[1][i] * k * fall, src[2][i] * k * (1 - 0.25 * warmth) * fall, src[3][i]];
  });
}

t.test('photo: the grade of seeded random pixels, at three exposures', async (t) => {
  const root = join(ROOT, 'examples', 'photo');
  const scene = loadScene('scene.esn', { read: (p) => (existsSync(join(root, p)) ? readFileSync(join(root, p), 'utf8') : undefined) });
  const [w, h] = scene.inputs.get('photo')!.size;
  const rnd = xorshift(20261203);
  const src = [0, 1, 2, 3].map(() => Float64Array.from({ length: w * h }, () => Math.fround(rnd())));
  const fill = (e: Engine) => {
    unpackField(e.memory, e.fields.input('photo')!, new Uint8Array(Float32Array.from(src.flatMap((p) => [...p])).buffer));
    e.version++;
  };
  for (const backend of BACKENDS)
    for (const exposure of [0.5, -2.25, 3]) {
      const [got] = await runScene(scene, backend, { params: { exposure: [exposure], warmth: [0.3] }, frames: [{}], before: fill });
      // exp2 within MATH_ACCURACY and a few f32 products; values up to 8 * 1.075.
      compare(t, `${backend}, exposure ${exposure}`, got, grade(src, w, h, exposure, 0.3), { abs: 4e-6, outliers: 0 });
    }
});

// ---- castle: voxels built by one kernel, ray-marched by another -------------------------------

type Voxels = { w: number; h: number; d: number; planes: Float64Array[] };

function castleVoxels(w = 64, h = 64, d = 48): Voxels {
  const planes = [0, 1, 2, 3].map(() => new Float64Array(w * h * d));
  for (let z = 0; z < d; z++)
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const ax = Math.abs(x + 0.5 - w * 0.5);
        const ay = Math.abs(y + 0.5 - h * 0.5);
        const ring = Math.max(ax, ay);
        const tower = Math.hypot(ax - 20, ay - 20);
        let solid = false;
        let color = [0, 0, 0];
        const set = (c: number[]) => ((solid = true), (color = c));
        if (z < 3) set([0.28, 0.5 + 0.1 * hash(x, y), 0.22]);
        if (ring > 18 && ring < 21 && z < 16) set([0.62, 0.6, 0.56]);
        if (ring > 19.5 && ring < 21 && z >= 16 && z < 19 && (x + y) % 4 < 2) set([0.58, 0.56, 0.52]);
        if (tower < 5 && z < 26) set([0.55, 0.53, 0.5]);
        if (tower < 5.5 - (z - 26) * 0.45 && z >= 26 && z < 38) set([0.7, 0.18, 0.14]);
        if (ax < 8 && ay < 8 && z < 30) set([0.66, 0.63, 0.58]);
        if (ax < 6 && ay < 6 && z >= 30 && z < 30 + (6 - Math.max(ax, ay))) set([0.45, 0.28, 0.2]);
        if (y + 0.5 - h * 0.5 < -17 && ax < 3 && z >= 3 && z < 11) solid = false;
        const i = (z * h + y) * w + x;
        [...color, solid ? 1 : 0].forEach((v, c) => (planes[c][i] = v));
      }
  return { w, h, d, planes };
}

type V3 = [number, number, number];
const add = (a: V3, b: V3): V3 => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
const sub = (a: V3, b: V3): V3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const scale = (a: V3, s: number): V3 => [a[0] * s, a[1] * s, a[2] * s];
const dot = (a: V3, b: V3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a: V3, b: V3): V3 => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const normalize = (a: V3): V3 => scale(a, 1 / Math.hypot(...a));

function castleView(vox: Voxels, width: number, height: number, turn: number): Float64Array[] {
  const { w, h, d, planes } = vox;
  // `.at`: float coordinates round down, then clamp to the edge.
  const at = (p: V3, c: number) => {
    const [x, y, z] = [clamp(Math.floor(p[0]), 0, w - 1), clamp(Math.floor(p[1]), 0, h - 1), clamp(Math.floor(p[2]), 0, d - 1)];
    return planes[c][(z * h + y) * w + x];
  };
  const center: V3 = [w * 0.5, h * 0.5, d * 0.3];
  const eye = add(center, [Math.cos(turn) * 95, Math.sin(turn) * 95, 60]);
  const forward = normalize(sub(center, eye));
  const right = normalize(cross(forward, [0, 0, 1]));
  const up = cross(right, forward);
  const lightDir = normalize([-0.5, -0.3, 0.8]);
  return picture(width, height, (x, y) => {
    const u = (((x + 0.5) / width) * 2 - 1) * (width / height);
    const v = 1 - ((y + 0.5) / height) * 2;
    const dir = normalize(add(add(forward, scale(right, u * 0.55)), scale(up, v * 0.55)));
    const t0 = [0, 1, 2].map((i) => (0 - eye[i]) / dir[i]);
    const t1 = [0, 1, 2].map((i) => ([w, h, d][i] - eye[i]) / dir[i]);
    const near = Math.max(...t0.map((a, i) => Math.min(a, t1[i])));
    const far = Math.min(...t0.map((a, i) => Math.max(a, t1[i])));
    const s = clamp(v * 0.5 + 0.5, 0, 1);
    const sky: V3 = [mix(0.75, 0.35, s), mix(0.85, 0.55, s), mix(0.95, 0.85, s)];
    let color = sky;
    if (far > Math.max(near, 0))
      for (let tt = Math.max(near, 0) + 0.01; tt < far; tt += 0.35) {
        const p = add(eye, scale(dir, tt));
        if (at(p, 3) > 0.5) {
          const occ = (o: V3) => at(add(p, o), 3);
          const n = normalize([occ([-1, 0, 0]) - occ([1, 0, 0]), occ([0, -1, 0]) - occ([0, 1, 0]), occ([0, 0, -1]) - occ([0, 0, 1]) + 0.001]);
          const light = 0.35 + 0.65 * Math.max(dot(n, lightDir), 0);
          const fog = clamp((tt - 60) / 120, 0, 1);
          color = [0, 1, 2].map((c) => mix(at(p, c) * light, sky[c], fog * 0.5)) as V3;
          break;
        }
      }
    return [...color, 1];
  });
}

t.test('castle: the voxels exactly, and the ray-marched view at two angles', async (t) => {
  const scene = exampleScene('castle', [W, H]);
  const vox = castleVoxels();
  t.ok(vox.planes[3].some((s) => s === 1) && vox.planes[3].some((s) => s === 0), 'the reference castle has solid and empty voxels');
  for (const backend of BACKENDS)
    for (const turn of [0.6, 3.9]) {
      let voxels: Planes = [];
      const [got] = await runScene(scene, backend, { params: { turn: [turn] }, frames: [{}], pins: ['build'] }, (e) => {
        voxels = readField(e.memory, e.fields.out('build', 'voxels')!);
      });
      // Every voxel is a constant or 0.5 + 0.1 * hash: one f32 rounding.
      if (turn === 0.6) compare(t, `${backend}: the voxels`, voxels, vox.planes, { abs: 6e-8, outliers: 0 });
      // Rays stepped in f32 against f64: at this size none crosses a voxel's face a step apart.
      compare(t, `${backend}, turn ${turn}: the view`, got, castleView(vox, W, H, turn), { abs: 2e-6, outliers: 0 });
    }
});
