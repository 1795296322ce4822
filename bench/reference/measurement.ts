/**
 * Shared vocabulary of the benchmark (see /work/shared/bench/PIPELINES.md):
 * the Measurement record every system reports, a median helper, and the P3
 * initial pattern (hash + cell rule), defined once so that the engine, the plain
 * JavaScript implementations and the C reference agree bit for bit.
 *
 * Conventions shared by every system (the C reference follows them too):
 * - Fields are row-major, element (x, y) at index y * W + x.
 * - rgba fields are INTERLEAVED: 4 float32 per element, r g b a, so channel c of
 *   (x, y) is at 4 * (y * W + x) + c (16 bytes per element, as in PIPELINES.md).
 * - checksum = sum of every float of the output field (all 4 channels for rgba),
 *   accumulated in double, in index order. P3: sum of the cells after the steps
 *   (= number of live cells, exact).
 * - median_ms = median wall time of one whole run (P3: one run = P3_STEPS steps).
 * - mpix_s = W * H / (median_ms / 1000) / 1e6; for P3 it is per step, i.e.
 *   W * H * P3_STEPS / (median_ms / 1000) / 1e6.
 * - P4 loop: i = 0; zr = zi = 0;
 *            while (i < 256 && zr*zr + zi*zi <= 4) { z = z*z + c; i++; }
 *   (the test precedes the step; points inside the set end with i = 256.)
 *   Cross-checking P4 across systems: use an EVEN height. With an odd H the centre
 *   row has cy = -1.5 + 3 * (H/2) / H, exactly 0 when divided exactly (JS), but ~1e-7
 *   when a compiler turns / H into * (1 / H) (-ffast-math): on the real axis the orbits
 *   of c in [-2, -1.4] are chaotic, so that row's pixels escape or not depending on one
 *   ulp (67x45: checksums 6e-3 apart; 67x48: 5e-5; 4096x4096: 3.5e-6).
 */

export type PipelineName = 'P1' | 'P2' | 'P3' | 'P4';
export type SystemName = 'entelechy' | 'js' | 'c' | 'halide';

export const PIPELINES: readonly PipelineName[] = ['P1', 'P2', 'P3', 'P4'];

export interface Measurement {
  pipeline: PipelineName;
  width: number;
  height: number;
  system: SystemName;
  /** threads / workers that computed (1 for plain JS) */
  workers: number;
  /** wall time of each timed run, ms (the warm-up run is not included) */
  runs: number[];
  median_ms: number;
  /** megapixels per second of the whole pipeline (P3: per step) */
  mpix_s: number;
  /** sum of all output floats in double (P3: of the cells after the steps) */
  checksum: number;
  /** one-time compilation cost, reported separately (never inside runs) */
  compile_ms?: number;
  note?: string;
}

/** Number of Life steps in one P3 run. */
export const P3_STEPS = 10;
/** Iteration cap of P4. */
export const P4_MAX_ITER = 256;
export const TAU = 6.283185307179586;
/** P1/P2 ring parameters. */
export const RINGS_COUNT = 8;
export const RINGS_TIME = 0.5;
export const TINT_WARMTH = 0.9;
/** P2 blur window radius (5 x 5). */
export const BLUR_RADIUS = 2;

/** Median of a non-empty list (mean of the two middle values for even lengths). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * P3 hash: ((x * 73856093) ^ (y * 19349663)) & 0x7fffffff with 32-bit wrap-around
 * products. Math.imul gives the low 32 bits of the exact product (as C's uint32_t
 * arithmetic does); since ^ and & are bitwise and the mask keeps 31 bits, the
 * result equals the exact-integer formula too. Always in [0, 2^31).
 * (Plain `x * 73856093` in JS would round to a double above 2^53 / lose the low
 * bits before `^` truncates: wrong for x >= ~122M only, but do not rely on it.)
 */
export function p3Hash(x: number, y: number): number {
  return (Math.imul(x, 73856093) ^ Math.imul(y, 19349663)) & 0x7fffffff;
}

/** P3 initial cell rule: 1 if hash(x, y) % 3 == 0, else 0. */
export function p3InitialCell(x: number, y: number): 0 | 1 {
  return p3Hash(x, y) % 3 === 0 ? 1 : 0;
}

/** Megapixels per second for a run of `medianMs` (P3: per step). */
export function mpixPerSecond(pipeline: PipelineName, width: number, height: number, medianMs: number): number {
  const pixels = width * height * (pipeline === 'P3' ? P3_STEPS : 1);
  return pixels / (medianMs / 1000) / 1e6;
}

export function isPipelineName(s: string): s is PipelineName {
  return s === 'P1' || s === 'P2' || s === 'P3' || s === 'P4';
}
