/**
 * Plain, single-threaded JavaScript implementations of the benchmark pipelines
 * P1-P4 (/work/shared/bench/PIPELINES.md), the way a competent JS programmer
 * would write them: Float32Array fields, Math.sin / Math.sqrt in double
 * precision, no SIMD, no workers, no WASM. Layout and checksum conventions:
 * ../reference/measurement.ts (row-major, rgba interleaved).
 */
import { performance } from 'node:perf_hooks';
import {
  type Measurement,
  type PipelineName,
  BLUR_RADIUS,
  P3_STEPS,
  P4_MAX_ITER,
  RINGS_COUNT,
  RINGS_TIME,
  TAU,
  TINT_WARMTH,
  median,
  mpixPerSecond,
  p3InitialCell,
} from '../reference/measurement.js';

/** P1: rings + tint, fused (rings never materialised). out: rgba, 4 * w * h floats. */
export function p1(out: Float32Array, w: number, h: number): void {
  const count = RINGS_COUNT, time = RINGS_TIME, tau = TAU;
  const kr = 0.5 + TINT_WARMTH, kb = 1.5 - TINT_WARMTH;
  let i = 0;
  for (let y = 0; y < h; y++) {
    const py = (y + 0.5) / h - 0.5;
    for (let x = 0; x < w; x++) {
      const px = (x + 0.5) / w - 0.5;
      const r = Math.sqrt(px * px + py * py) * count + time;
      const v = 0.5 + 0.5 * Math.sin(r * tau);
      out[i] = v * kr;
      out[i + 1] = 0.8 * v;
      out[i + 2] = 0.6 * v * kb;
      out[i + 3] = 1;
      i += 4;
    }
  }
}

/** rings alone, materialised into an rgba field. */
export function rings(out: Float32Array, w: number, h: number): void {
  const count = RINGS_COUNT, time = RINGS_TIME, tau = TAU;
  let i = 0;
  for (let y = 0; y < h; y++) {
    const py = (y + 0.5) / h - 0.5;
    for (let x = 0; x < w; x++) {
      const px = (x + 0.5) / w - 0.5;
      const r = Math.sqrt(px * px + py * py) * count + time;
      const v = 0.5 + 0.5 * Math.sin(r * tau);
      out[i] = v;
      out[i + 1] = 0.8 * v;
      out[i + 2] = 0.6 * v;
      out[i + 3] = 1;
      i += 4;
    }
  }
}

/** 5x5 mean, coordinates clamped to the edge; rgba in, rgba out (direct 25-tap gather). */
export function blur5(src: Float32Array, dst: Float32Array, w: number, h: number): void {
  const rad = BLUR_RADIUS;
  const inv = 1 / ((2 * rad + 1) * (2 * rad + 1));
  const xmax = w - 1, ymax = h - 1;
  let o = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let dy = -rad; dy <= rad; dy++) {
        let yy = y + dy;
        yy = yy < 0 ? 0 : yy > ymax ? ymax : yy;
        const row = yy * w;
        for (let dx = -rad; dx <= rad; dx++) {
          let xx = x + dx;
          xx = xx < 0 ? 0 : xx > xmax ? xmax : xx;
          const k = (row + xx) * 4;
          s0 += src[k]!;
          s1 += src[k + 1]!;
          s2 += src[k + 2]!;
          s3 += src[k + 3]!;
        }
      }
      dst[o] = s0 * inv;
      dst[o + 1] = s1 * inv;
      dst[o + 2] = s2 * inv;
      dst[o + 3] = s3 * inv;
      o += 4;
    }
  }
}

/** P2: rings materialised into tmp, then blurred into out. */
export function p2(out: Float32Array, tmp: Float32Array, w: number, h: number): void {
  rings(tmp, w, h);
  blur5(tmp, out, w, h);
}

/** P3 initial state (cell = 1 if hash(x, y) % 3 == 0). */
export function p3Init(cells: Float32Array, w: number, h: number): void {
  let i = 0;
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) cells[i++] = p3InitialCell(x, y);
}

/** One Life step with wrap-around edges. */
export function p3Step(src: Float32Array, dst: Float32Array, w: number, h: number): void {
  for (let y = 0; y < h; y++) {
    const a = (y === 0 ? h - 1 : y - 1) * w;
    const b = y * w;
    const c = (y === h - 1 ? 0 : y + 1) * w;
    for (let x = 0; x < w; x++) {
      const xm = x === 0 ? w - 1 : x - 1;
      const xp = x === w - 1 ? 0 : x + 1;
      const n =
        src[a + xm]! + src[a + x]! + src[a + xp]! +
        src[b + xm]! + src[b + xp]! +
        src[c + xm]! + src[c + x]! + src[c + xp]!;
      dst[b + x] = n === 3 || (src[b + x] === 1 && n === 2) ? 1 : 0;
    }
  }
}

/**
 * `steps` double-buffered Life steps starting from the contents of `a`;
 * returns the buffer holding the result (a for even step counts, else b).
 */
export function p3(a: Float32Array, b: Float32Array, w: number, h: number, steps: number = P3_STEPS): Float32Array {
  let s = a, d = b;
  for (let k = 0; k < steps; k++) {
    p3Step(s, d, w, h);
    const t = s;
    s = d;
    d = t;
  }
  return s;
}

/** P4: Mandelbrot, double precision, early exit per pixel. out: rgba. */
export function p4(out: Float32Array, w: number, h: number): void {
  const maxIter = P4_MAX_ITER;
  let o = 0;
  for (let y = 0; y < h; y++) {
    const cy = -1.5 + (3.0 * (y + 0.5)) / h;
    for (let x = 0; x < w; x++) {
      const cx = -2.0 + (3.0 * (x + 0.5)) / w;
      let zr = 0, zi = 0, i = 0;
      while (i < maxIter && zr * zr + zi * zi <= 4) {
        const t = zr * zr - zi * zi + cx;
        zi = 2 * zr * zi + cy;
        zr = t;
        i++;
      }
      const v = i / maxIter;
      out[o] = v;
      out[o + 1] = v * v;
      out[o + 2] = Math.sqrt(v);
      out[o + 3] = 1;
      o += 4;
    }
  }
}

/** Sum of all floats in double, in index order (the shared checksum definition). */
export function checksumOf(field: Float32Array): number {
  let s = 0;
  for (let i = 0; i < field.length; i++) s += field[i]!;
  return s;
}

/** A prepared pipeline: `run()` does one run (P3: re-initialises outside, see `reset`). */
interface Prepared {
  reset(): void;
  run(): void;
  output(): Float32Array;
}

function prepare(pipeline: PipelineName, w: number, h: number, steps: number): Prepared {
  const n = w * h;
  switch (pipeline) {
    case 'P1': {
      const out = new Float32Array(4 * n);
      return { reset() {}, run: () => p1(out, w, h), output: () => out };
    }
    case 'P2': {
      const out = new Float32Array(4 * n), tmp = new Float32Array(4 * n);
      return { reset() {}, run: () => p2(out, tmp, w, h), output: () => out };
    }
    case 'P3': {
      const init = new Float32Array(n), a = new Float32Array(n), b = new Float32Array(n);
      p3Init(init, w, h);
      let result: Float32Array = a;
      return {
        reset: () => a.set(init),
        run: () => { result = p3(a, b, w, h, steps); },
        output: () => result,
      };
    }
    case 'P4': {
      const out = new Float32Array(4 * n);
      return { reset() {}, run: () => p4(out, w, h), output: () => out };
    }
  }
}

function checkSize(width: number, height: number): void {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
    throw new RangeError(`bad size ${width}x${height}`);
}

/** The output field of one run (P3: the cells after `steps` steps, default 10). For tests. */
export function computeJs(pipeline: PipelineName, width: number, height: number, steps: number = P3_STEPS): Float32Array {
  checkSize(width, height);
  const p = prepare(pipeline, width, height, steps);
  p.reset();
  p.run();
  return p.output();
}

/**
 * One warm-up run and `runs` timed runs (performance.now()) of `pipeline` at
 * width x height on the calling thread. P3: the cells are re-initialised before
 * every run outside the timed region; one run = 10 steps; mpix_s is per step.
 */
export function runJs(pipeline: PipelineName, width: number, height: number, runs: number): Measurement {
  checkSize(width, height);
  if (!Number.isInteger(runs) || runs < 1) throw new RangeError(`runs must be >= 1, got ${runs}`);
  const p = prepare(pipeline, width, height, P3_STEPS);
  p.reset();
  p.run(); // warm-up (also lets V8 optimise the loops)
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    p.reset();
    const t0 = performance.now();
    p.run();
    times.push(performance.now() - t0);
  }
  const median_ms = median(times);
  return {
    pipeline,
    width,
    height,
    system: 'js',
    workers: 1,
    runs: times,
    median_ms,
    mpix_s: mpixPerSecond(pipeline, width, height, median_ms),
    checksum: checksumOf(p.output()),
  };
}
