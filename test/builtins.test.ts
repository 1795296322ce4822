// The builtins of kernel bodies (src/ir/builtins.ts), each run in a kernel on the interpreter over
// edge values and random inputs, against a value computed another way: JavaScript's Math in
// double precision, or the plain formula the builtin documents. Transcendentals within
// MATH_ACCURACY (test/math.test.ts checks those bounds on 200k points each); the rest exactly,
// or within a few f32 roundings of the formula. The compiled code agrees with the interpreter
// bit for bit (test/random-kernels.test.ts, test/backends.test.ts).

import t, { type Test } from 'tap';
import { xorshift } from './helpers.js';
import { loadScene } from '../src/ir/check/scene.js';
import { BUILTIN_FUNCTIONS } from '../src/ir/builtins.js';
import { MATH_ACCURACY } from '../src/ir/mathref.js';
import { Engine } from '../src/main/engine.js';
import { readField, unpackField } from '../src/main/field.js';

const fr = Math.fround;

const rnd = xorshift(0x1b873593);

const EDGES = [0, -0, 1, -1, 0.5, -0.5, 0.25, 1.5, -1.5, 2.5, -2.5, 3, 0.1, -0.7, 10, -10, 100, 1e-3];

/** `n` f32 inputs: the edge values first, then uniform in [lo, hi]. */
function inputs(n: number, lo = -10, hi = 10): Float32Array {
  const v = new Float32Array(n);
  for (let i = 0; i < n; i++) v[i] = i < EDGES.length ? EDGES[i] : fr(lo + (hi - lo) * rnd());
  return v;
}

const N = 96;

/**
 * Evaluate `expr` (a vec4 or what vec4(...) takes) at every element, with `a`, `b`, `c` the
 * elements of three input fields; returns the 4 components per element.
 */
function run(expr: string, a: Float32Array, b: Float32Array = a, c: Float32Array = a): number[][] {
  return runBody(`r = vec4(${expr});`, a, b, c);
}

/** `run` of a whole body of statements that sets `r`. */
function runBody(body: string, a: Float32Array, b: Float32Array = a, c: Float32Array = a): number[][] {
  const text = `kernel t.f@1 {
  in a: field1<f32>;
  in b: field1<f32>;
  in c: field1<f32>;
  out r: field1<vec4>;
  each (x) {
    ${body}
  }
}
input a: field1<f32> = 0.0 size ${N};
input b: field1<f32> = 0.0 size ${N};
input c: field1<f32> = 0.0 size ${N};
node n: t.f@1 { a <- a; b <- b; c <- c; }
output o <- n.r;
`;
  const scene = loadScene('scene.esn', { read: (p) => (p === 'scene.esn' ? text : undefined) });
  if (scene.diagnostics.length) throw new Error(`${body}: ${scene.diagnostics.map((d) => d.message).join('; ')}`);
  const engine = new Engine(scene, { backend: 'interp' });
  try {
    for (const [name, v] of [['a', a], ['b', b], ['c', c]] as const) unpackField(engine.memory, engine.fields.input(name)!, new Uint8Array(v.buffer, v.byteOffset, N * 4));
    void engine.evaluate(); // the interpreter without a pool runs the frame before evaluate returns
    const planes = readField(engine.memory, engine.outputField('o')!);
    return Array.from({ length: N }, (_, i) => planes.map((p) => p[i]));
  } finally {
    engine.dispose();
  }
}

/** The diagnostic of a kernel body `expr` (one expected). */
function refusal(expr: string, declarations = ''): string {
  const text = `${declarations}kernel t.f@1 {\n  in a: field1<f32>;\n  out r: field1<vec4>;\n  each (x) {\n    r = vec4(${expr});\n  }\n}\n`;
  const scene = loadScene('scene.esn', { read: (p) => (p === 'scene.esn' ? text : undefined) });
  return scene.diagnostics.map((d) => d.message).join('; ');
}

const sameF32 = (got: number, want: number) => Object.is(got, fr(want)) || (Number.isNaN(got) && Number.isNaN(want)) || (got === 0 && want === 0);

/** Compare component 0 of each element with `want` (f64), within `tol` (absolute) or exactly. */
function agree(t: Test, what: string, got: number[][], want: (i: number) => number, tol = 0): void {
  const wrong: string[] = [];
  for (let i = 0; i < N; i++) {
    const w = want(i);
    const g = got[i][0];
    // Past f32's range the result is infinite, as fround(w) is.
    const ok = tol === 0 || !Number.isFinite(fr(w)) ? sameF32(g, w) : Math.abs(g - w) <= tol * Math.max(1, Math.abs(w));
    if (!ok) wrong.push(`element ${i}: ${g}, want ${w}`);
  }
  t.same(wrong.slice(0, 3), [], `${what}${tol ? ` within ${tol}` : ' exactly'}`);
}

const A = inputs(N);
const B = inputs(N, -3, 3).reverse();
const C = inputs(N, 0, 1).map((v, i) => (i % 3 === 0 ? 1 - v : v));
const POS = inputs(N, 1e-3, 50).map((v) => Math.abs(v) || 2);
const UNIT = inputs(N, -1, 1).map((v) => Math.max(-1, Math.min(1, v)));

t.test('transcendentals against Math.* in double precision, within MATH_ACCURACY', async (t) => {
  const bound = (name: keyof typeof MATH_ACCURACY) => MATH_ACCURACY[name].bound * 1.01;
  agree(t, 'sin', run('sin(a)', A), (i) => Math.sin(A[i]), bound('sin'));
  agree(t, 'cos', run('cos(a)', A), (i) => Math.cos(A[i]), bound('cos'));
  agree(t, 'tan', run('tan(a)', UNIT), (i) => Math.tan(UNIT[i]), bound('tan'));
  agree(t, 'asin', run('asin(a)', UNIT), (i) => Math.asin(UNIT[i]), bound('asin'));
  agree(t, 'acos', run('acos(a)', UNIT), (i) => Math.acos(UNIT[i]), bound('acos'));
  agree(t, 'atan', run('atan(a)', A), (i) => Math.atan(A[i]), bound('atan'));
  agree(t, 'atan2(y, x)', run('atan2(a, b)', A, B), (i) => Math.atan2(A[i], B[i]), bound('atan2'));
  agree(t, 'exp', run('exp(a)', A), (i) => Math.exp(A[i]), bound('exp'));
  agree(t, 'exp2', run('exp2(a)', A), (i) => 2 ** A[i], bound('exp2'));
  agree(t, 'log', run('log(a)', POS), (i) => Math.log(POS[i]), bound('log'));
  agree(t, 'log2', run('log2(a)', POS), (i) => Math.log2(POS[i]), bound('log2'));
  agree(t, 'pow(a, b)', run('pow(a, b)', POS, B), (i) => POS[i] ** B[i], bound('pow'));
  agree(t, 'sqrt', run('sqrt(a)', POS), (i) => Math.sqrt(POS[i]));
  // sin(a * TAU) and cos(TAU * a) reduce a in turns, exactly: accurate for large a too.
  const TURNS = A.map((v, i) => v * (i % 2 ? 1000 : 1));
  agree(t, 'sin(a * TAU)', run('sin(a * TAU)', TURNS), (i) => Math.sin(2 * Math.PI * TURNS[i]), bound('sin_turns'));
  agree(t, 'cos(TAU * a)', run('cos(TAU * a)', TURNS), (i) => Math.cos(2 * Math.PI * TURNS[i]), bound('cos_turns'));
  agree(t, 'sin(b * a) (not turns)', run('sin(b * a)', A, B), (i) => Math.sin(fr(B[i] * A[i])), bound('sin'));
  agree(t, 'cos(PI * a)', run('cos(PI * a)', UNIT), (i) => Math.cos(fr(fr(Math.PI) * UNIT[i])), bound('cos'));
});

t.test('rounding, sign and the GLSL functions against their formulas', async (t) => {
  agree(t, 'abs', run('abs(a)', A), (i) => Math.abs(A[i]));
  agree(t, 'floor', run('floor(a)', A), (i) => Math.floor(A[i]));
  agree(t, 'ceil', run('ceil(a)', A), (i) => Math.ceil(A[i]));
  agree(t, 'trunc', run('trunc(a)', A), (i) => Math.trunc(A[i]));
  // round: ties to even (2.5 -> 2, -2.5 -> -2, 0.5 -> 0, 1.5 -> 2).
  const even = (x: number) => (Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x));
  agree(t, 'round (ties to even)', run('round(a)', A), (i) => even(A[i]));
  t.same(run('round(a)', A).slice(4, 10).map((r) => r[0]), [0, -0, 0, 2, -2, 2], '0.5, -0.5, 0.25, 1.5, -1.5, 2.5');
  // Math's constants, Math.fround, and Math.min / Math.max of more than two (each was refused).
  t.same(run('Math.E, Math.SQRT2, Math.fround(a), Math.max(a, 1.0, 2.0, -3.0)', A).slice(0, 3), [[fr(Math.E), fr(Math.SQRT2), 0, 2], [fr(Math.E), fr(Math.SQRT2), -0, 2], [fr(Math.E), fr(Math.SQRT2), 1, 2]]);
  t.same(run('f32(Math.min(x, 5, 2)), Math.min(vec2(a, 3.0), 0.5, 1.0), 0.0', A)[2], [2, 0.5, 0.5, 0], 'i32s stay i32; vectors componentwise');
  t.match(refusal('atan(a, 1.0), 0.0, 0.0, 0.0'), /atan takes 1 argument: .*; got 2; the angle of \(x, y\) is atan2\(y, x\)/);
  // mod and clamp of i32s are exact i32s (they were f32: mod(2147483000 + x, 7) gave -128).
  t.same(run('f32(mod(123456789 + x, 1000)), f32(mod(2147483000 + x, 7)), f32(mod(-7 + x, 3)), f32(mod(7 + x, -3))', A).slice(0, 4), [[789, 5, 2, -2], [790, 6, 0, -1], [791, 0, 1, 0], [792, 1, 2, -2]]);
  t.same(run('f32(mod(x, 0)), f32(clamp(16777217 + x, 0, 100000000) - 16777217), f32(clamp(x, 1, 2)), mod(5.5, 2.0)', A).slice(0, 4), [[0, 0, 1, 1.5], [0, 1, 1, 1.5], [0, 2, 2, 1.5], [0, 3, 2, 1.5]]);
  // A decimal integer literal past i32 is a float (3000000000 wrapped to -1294967296); hex, octal
  // and binary ones of 32 bits are their bits.
  t.same(run('f32(3000000000), f32(0xFFFFFFFF), f32(2147483647), f32(-2147483648)', A)[0], [3000000000, -1, 2147483648, -2147483648]);
  t.same(run('f32(f32(x) < 3000000000), f32(2147483648 / 2), f32(0b11), 0.0', A)[0], [1, 1073741824, 3, 0]);
  // A variable first given a bool and then a number holds numbers (it kept a bool: m * 2.0 was 2).
  t.same(runBody('let m = false;\n    m = a * 0.5;\n    let n = true;\n    n = 3;\n    r = vec4(m * 2.0, n, 0.0, 0.0);', A).slice(0, 4).map((v) => v.slice(0, 2)), [[0, 3], [-0, 3], [1, 3], [-1, 3]]);
  // Math.round is JavaScript's: halves up (it was taken as round, so Math.round(2.5) gave 2).
  agree(t, 'Math.round (as JavaScript)', run('Math.round(a)', A), (i) => Math.round(A[i]));
  t.same(run('Math.round(a)', A).slice(4, 10).map((r) => r[0]), [1, 0, 0, 2, -1, 3], '0.5, -0.5, 0.25, 1.5, -1.5, 2.5');
  t.same(run('Math.round(vec2(-2.5, 0.49999997)), Math.floor(2.5), Math.abs(-1.0)', A)[0], [-2, 0, 2, 1], 'componentwise; the other Math.* are the builtins');
  agree(t, 'fract', run('fract(a)', A), (i) => fr(A[i] - Math.floor(A[i])));
  agree(t, 'sign', run('sign(a)', A), (i) => (A[i] > 0 ? 1 : A[i] < 0 ? -1 : A[i]));
  agree(t, 'mod (GLSL: a - b floor(a / b))', run('mod(a, b)', A, B), (i) => A[i] - B[i] * Math.floor(A[i] / B[i]), 1e-5);
  t.same(run('mod(a, b)', new Float32Array(N).fill(-1), new Float32Array(N).fill(3))[0][0], 2, 'mod(-1, 3) = 2, not -1');
  agree(t, 'min', run('min(a, b)', A, B), (i) => Math.min(A[i], B[i]));
  agree(t, 'max', run('max(a, b)', A, B), (i) => Math.max(A[i], B[i]));
  agree(t, 'clamp', run('clamp(a, b, c)', A, B, C), (i) => Math.min(Math.max(A[i], B[i]), C[i]));
  agree(t, 'mix: a + (b - a) t', run('mix(a, b, c)', A, B, C), (i) => A[i] + (B[i] - A[i]) * C[i], 1e-6);
  t.same(run('mix(0.0, 1.0, 0.25)', A)[0][0], 0.25, 'mix(0, 1, 0.25) = 0.25 (the issue\'s planted bug gave 0.75)');
  agree(t, 'step: 0 where x < edge', run('step(b, a)', A, B), (i) => (A[i] < B[i] ? 0 : 1));
  const smooth = (e0: number, e1: number, x: number) => {
    const u = Math.min(Math.max((x - e0) / (e1 - e0), 0), 1);
    return u * u * (3 - 2 * u);
  };
  agree(t, 'smoothstep', run('smoothstep(-2.0, 3.0, a)', A), (i) => smooth(-2, 3, A[i]), 1e-6);
  t.same(run('smoothstep(0.0, 1.0, a)', A).slice(0, 5).map((r) => r[0]), [0, 0, 1, 0, 0.5], 'at 0, -0, 1, -1, 0.5');
});

t.test('vectors: length, distance, dot, cross, normalize; scalars broadcast', async (t) => {
  const len3 = (i: number) => Math.hypot(A[i], B[i], C[i]);
  agree(t, 'length', run('length(vec3(a, b, c))', A, B, C), len3, 1e-6);
  agree(t, 'length of a scalar: |a|', run('length(a)', A), (i) => Math.abs(A[i]));
  agree(t, 'distance', run('distance(vec2(a, b), vec2(c, 1.0))', A, B, C), (i) => Math.hypot(A[i] - C[i], B[i] - 1), 1e-6);
  agree(t, 'dot', run('dot(vec3(a, b, c), vec3(c, a, 2.0))', A, B, C), (i) => A[i] * C[i] + B[i] * A[i] + C[i] * 2, 1e-6);
  const cross = run('cross(vec3(a, b, c), vec3(c, a, 2.0)), 0.0', A, B, C);
  const want = (i: number) => {
    const [p, q] = [[A[i], B[i], C[i]], [C[i], A[i], 2]];
    return [p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0]];
  };
  const bad = cross.flatMap((r, i) => want(i).some((w, k) => Math.abs(r[k] - w) > 1e-5 * Math.max(1, Math.abs(w))) ? [`${i}: ${r} vs ${want(i)}`] : []);
  t.same(bad.slice(0, 3), [], 'cross, componentwise');
  const n = run('normalize(vec3(a, b, c)), length(normalize(vec3(a, b, c)))', A, B, C);
  const badN = n.flatMap((r, i) => (len3(i) > 1e-3 && (Math.abs(r[3] - 1) > 1e-6 || Math.abs(r[0] - A[i] / len3(i)) > 1e-6) ? [`${i}: ${r}`] : []));
  t.same(badN.slice(0, 3), [], 'normalize: the direction, length 1');
  // A scalar argument repeats over the vector's components; min, max, clamp, mix componentwise.
  t.same(run('mix(vec4(0.0, 1.0, 2.0, 3.0), vec4(4.0), 0.5)', A)[0], [2, 2.5, 3, 3.5]);
  t.same(run('clamp(vec4(-1.0, 0.5, 2.0, 9.0), 0.0, vec4(1.0, 1.0, 1.0, 8.0))', A)[0], [0, 0.5, 1, 8]);
  t.same(run('max(vec4(-1.0, 0.5, 2.0, 9.0), 1.0)', A)[0], [1, 1, 2, 9]);
  t.same(run('min(vec4(-1.0, 0.5, 2.0, 9.0), vec4(0.0, 0.0, 3.0, 3.0))', A)[0], [-1, 0, 2, 3]);
  t.same(run('sin(vec4(0.0, 1.0, 2.0, 3.0) * TAU)', A)[0].map((v) => Math.round(v * 1e6) / 1e6), [0, 0, 0, 0]);
  t.same(run('atan2(vec2(1.0, -1.0), 0.0), step(vec2(1.0, 0.0), 0.5)', A)[0].map((v) => Math.round(v * 1e6) / 1e6), [1.570796, -1.570796, 0, 1]);
});

t.test('constructors and casts', async (t) => {
  t.same(run('vec2(a, b), vec2(c)', A, B, C)[7], [A[7], B[7], C[7], C[7]]);
  t.same(run('vec3(vec2(1.0, 2.0), 3.0), 4.0', A)[0], [1, 2, 3, 4]);
  t.same(run('vec4(vec3(1.0, 2.0, 3.0), 4.0)', A)[0], [1, 2, 3, 4]);
  t.same(run('vec4(vec2(1.0, 2.0), vec2(3.0, 4.0))', A)[0], [1, 2, 3, 4]);
  t.same(run('vec3(2.0), 1.0', A)[0], [2, 2, 2, 1]);
  // i32 truncates toward zero; bool is n != 0; f32 of an integer is exact.
  t.same(run('f32(i32(a)), f32(i32(-2.7)), f32(bool(a)) , f32(bool(0.0))', A)[9], [Math.trunc(A[9]), -2, 1, 0]);
  agree(t, 'i32 truncates toward zero', run('f32(i32(a))', A), (i) => Math.trunc(A[i]));
  t.same(run('f32(i32(3.9)), f32(i32(-0.5)), f32(bool(-0.25)), f32(bool(a))', A)[0], [3, 0, 1, 0]);
});

t.test('integers stay integers: min, max, abs of i32 wrap like i32', async (t) => {
  // 3 * 2^30 wraps to -2^30 in i32; in f32 it would be 3221225472.
  t.same(run('f32(max(i32(a), 3) * 1073741824), f32(min(i32(a), 3) * 1073741824), f32(abs(i32(a)) * 1073741824), 0.0', A)[2], [-1073741824, 1073741824, 1073741824, 0]);
  t.same(run('max(a, 3.0) * 1073741824.0', A)[2][0], 3221225472, 'min/max of floats stay floats');
  t.same(run('f32(abs(-7)), abs(-7.5), f32(min(-7, 2)), f32(max(-7, 2))', A)[0], [7, 7.5, -7, 2]);
  // abs of an i32 is exact past 2^24, where an f32 rounds (16777217 would become 16777216), and
  // wraps at the i32 minimum as i32 arithmetic does (an f32 abs would give +2^31).
  t.same(run('f32(abs(-16777217) - 16777216), f32(abs(16777219) - 16777216), f32(abs(-2147483647 - 1)), 0.0', A)[0], [1, 3, -2147483648, 0]);
});

t.test('length of a scalar is its absolute value, also where its square leaves the f32 range', async (t) => {
  // sqrt(x * x) would overflow to Infinity at 1e20 and underflow to 0 at 1e-30.
  t.same(run('length(a * 0.0 + 1e20), length(a * 0.0 - 1e-30), length(-1e20), length(3.0)', A)[0], [Math.fround(1e20), Math.fround(1e-30), Math.fround(1e20), 3]);
});

t.test('the helpers of the lowering: types of results, the turns rewrite only for `* TAU`, f32 min and max', async (t) => {
  // sin(x * TAU) is rewritten to turns; other products and sums holding TAU are not.
  agree(t, 'sin(a + TAU)', run('sin(a + TAU)', A), (i) => Math.sin(fr(A[i] + fr(2 * Math.PI))), MATH_ACCURACY.sin.bound * 1.01);
  agree(t, 'sin(a * 3.0)', run('sin(a * 3.0)', A), (i) => Math.sin(fr(3 * A[i])), MATH_ACCURACY.sin.bound * 1.01);
  // A scalar result is an f32 (a cast takes it), a vector one a vector (it has .yx).
  agree(t, 'f32(floor(a))', run('f32(floor(a))', A), (i) => Math.floor(A[i]));
  agree(t, 'fract(vec2(a, b)).yx', run('fract(vec2(a, b)).yx, 0.0, 0.0', A, B), (i) => B[i] - Math.floor(B[i]));
  // min and max of floats are floats: + 1 (an i32) adds as f32, without truncating.
  agree(t, 'min(a, b) + 1', run('min(a, b) + 1', A, B), (i) => Math.min(A[i], B[i]) + 1);
  agree(t, 'max(a, b) + 1', run('max(a, b) + 1', A, B), (i) => Math.max(A[i], B[i]) + 1);
  agree(t, 'min(i32(a), b) + 1', run('min(i32(a), b) + 1', A, B), (i) => Math.min(Math.trunc(A[i]), B[i]) + 1);
  t.equal(refusal('floor(true)'), 'floor takes numbers or vectors, not a bool', 'a unary function names itself, not its op');
});

/** The hash of up to 3 integers, written again from its description (a murmur-style mix). */
function hashRef(...coords: number[]): number {
  const primes = [0x27d4eb2d, 0x165667b1, 0x1b873593];
  let h = 0x9e3779b9 | 0;
  coords.forEach((c, i) => {
    h = (h ^ Math.imul(c | 0, primes[i])) | 0;
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
    h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
    h = h ^ (h >>> 15);
  });
  return (h >>> 8) / 16777216;
}

t.test('hash: repeatable, in [0, 1), the documented mix of up to 3 integers', async (t) => {
  const I = A.map((v) => Math.trunc(v * 7));
  const J = B.map((v) => Math.trunc(v * 5));
  const got = run('hash(i32(a)), hash(i32(a), i32(b)), hash(i32(a), i32(b), 7), hash(i32(b), i32(a))', I, J);
  const wrong: string[] = [];
  for (let i = 0; i < N; i++) {
    const want = [hashRef(I[i]), hashRef(I[i], J[i]), hashRef(I[i], J[i], 7), hashRef(J[i], I[i])];
    if (want.some((w, k) => got[i][k] !== w)) wrong.push(`${I[i]}, ${J[i]}: ${got[i]} vs ${want}`);
  }
  t.same(wrong.slice(0, 3), [], 'each element as the reference computes it');
  t.ok(got.every((r) => r.every((v) => v >= 0 && v < 1)), 'in [0, 1)');
  t.not(got[1][1], got[1][2], 'a third coordinate changes it');
  t.equal(new Set(got.map((r) => r[1])).size > N * 0.9, true, 'distinct inputs, distinct values');
});

/** Value noise written again from its description: corner hashes blended by smoothstep per axis. */
function noiseRef(p: number[]): number {
  const cell = p.map(Math.floor);
  const s = p.map((v, i) => {
    const f = v - cell[i];
    return f * f * (3 - 2 * f);
  });
  let sum = 0;
  for (let bits = 0; bits < 1 << p.length; bits++) {
    let w = 1;
    for (let i = 0; i < p.length; i++) w *= bits & (1 << i) ? s[i] : 1 - s[i];
    sum += w * hashRef(...cell.map((c, i) => (bits & (1 << i) ? c + 1 : c)));
  }
  return sum;
}

t.test('noise: the blend of its corner hashes, in 1, 2 and 3 dimensions', async (t) => {
  const got = run('noise(a), noise(vec2(a, b)), noise(vec3(a, b, c)), 0.0', A, B, C);
  const wrong: string[] = [];
  for (let i = 0; i < N; i++) {
    const want = [noiseRef([A[i]]), noiseRef([A[i], B[i]]), noiseRef([A[i], B[i], C[i]])];
    if (want.some((w, k) => Math.abs(got[i][k] - w) > 2e-6)) wrong.push(`${A[i]}, ${B[i]}, ${C[i]}: ${got[i].slice(0, 3)} vs ${want}`);
  }
  t.same(wrong.slice(0, 3), [], 'within 2e-6 of the double-precision blend');
  t.equal(got[2][0], hashRef(1), 'at a lattice point, the hash of the point');
});

t.test('each builtin checks its arguments, with a message that says what it takes', async (t) => {
  // One argument too many (or too few), for every builtin.
  for (const b of BUILTIN_FUNCTIONS) {
    const [, max] = b.arity;
    const args = new Array(max + 1).fill('a').join(', ');
    t.match(refusal(`${b.name}(${args})`), new RegExp(`^${b.name} takes [0-9 to]+ arguments?: ${b.signature.replace(/[()|[\]]/g, '\\$&')}; got ${max + 1}(; .*)?$`), `${b.name} with ${max + 1}`);
  }
  t.match(refusal('sin()'), /^sin takes 1 argument: sin\(T\) -> T; got 0$/);
  t.match(refusal('atan2(a)'), /^atan2 takes 2 arguments: .*; got 1$/);
  const refusals: [string, string][] = [
    ['sin(true)', 'sin takes numbers or vectors, not a bool'],
    // bool(n) is a bool, not the integer 0 or 1: a builtin taking numbers refuses it.
    ['sin(bool(a))', 'sin takes numbers or vectors, not a bool'],
    ['mix(vec2(a), vec3(a), 0.5), 1.0', 'mix: argument 1 is a vec2 but another is a vec3'],
    ['dot(vec2(a), vec3(a)), 0.0, 0.0, 0.0', 'dot takes two values of one type; got vec2, vec3'],
    ['cross(vec2(a), vec2(a)), 0.0, 0.0', 'cross takes two vec3; got vec2, vec2'],
    ['normalize(a)', 'normalize takes a vector'],
    ['vec3(vec2(a), vec2(a)), 0.0', 'vec3 needs 3 components (or one to repeat); got 4 from vec2, vec2'],
    ['hash(vec2(a))', 'hash takes a number, not a vec2'],
    ['f32(vec2(a))', 'f32 takes a number, not a vec2'],
  ];
  for (const [expr, message] of refusals) t.match(refusal(expr), message, expr);
  // A struct is not a list of numbers, even one whose fields are all f32.
  t.equal(refusal('sin(P(a, a)), 0.0, 0.0, 0.0', 'struct P { u: f32; v: f32; }\n'), 'sin takes numbers or vectors, not a P');
});
