// Every builtin function of the language (src/ir/builtins.ts), written in a kernel and run on
// both backends, against a value computed another way: JavaScript's Math in double precision, an
// exact formula, or integer arithmetic with Math.imul (hash, noise). On edge values and seeded
// random inputs, within the tolerances of docs/testing.md. The backends are compared with the
// reference, not only with each other: a formula they share (mix with its endpoints swapped,
// say) fails here. (test/builtins.test.ts checks the same on the interpreter, with every
// builtin's argument errors; this file adds the compiled backend, vectors and saturation.)

import t from 'tap';
import { BUILTIN_FUNCTIONS } from '../src/ir/builtins.js';
import { MATH_ACCURACY } from '../src/ir/mathref.js';
import { Engine, type Backend } from '../src/main/engine.js';
import { textScene, xorshift } from './helpers.js';
import { hash, noise } from './references.js';

const fr = Math.fround;
const EPS = 2 ** -24; // half an ulp of 1 in f32: one rounding's relative error

// ---- inputs -------------------------------------------------------------------------------

const rnd = xorshift(0x9e3779b9);
const uniform = (lo: number, hi: number) => fr(lo + (hi - lo) * rnd());
const RANDOM = 1500;

/** Edge values every float argument sees, then seeded random ones. */
const EDGES = [0, -0, 1, -1, 0.5, -0.5, 0.25, 0.75, 2, -2, 3, 1.5, -1.5, 2.5, -2.5, 0.49999997, 1e-7, -1e-7, 100, -100, 12345.5, fr(Math.PI), 8388607.5, 8388608, -8388609];

/** Inputs of one case: up to 3 float args (scalars) or vec3 args, or i32 args. */
interface Args {
  a: number[];
  b: number[];
  c: number[];
}

function args(n: number, gen: () => [number, number, number], edges: [number, number, number][] = [], round: (x: number) => number = fr): Args {
  const out: Args = { a: [], b: [], c: [] };
  for (const [a, b, c] of [...edges, ...Array.from({ length: n }, gen)]) {
    out.a.push(round(a));
    out.b.push(round(b));
    out.c.push(round(c));
  }
  return out;
}

const edgeTriples = (f: (x: number) => [number, number, number]) => EDGES.map(f);
/** Scalars in [lo, hi]: the edge values there, then random ones. */
const scalar = (lo: number, hi: number) =>
  args(RANDOM, () => [uniform(lo, hi), uniform(lo, hi), uniform(0, 1)], edgeTriples((x) => [x, -x * 0.75, 0.25]).filter(([a, b]) => a >= lo && a <= hi && b >= lo && b <= hi));

// ---- the cases ----------------------------------------------------------------------------

/** A builtin written in a kernel body and its reference: `want(a, b, c)` and the error allowed there. */
interface Case {
  name: string;
  /** The body's expression over `a`, `b`, `c` (f32, or vec3 with `vec`, or i32 with `int`). */
  expr: string;
  kind?: 'vec' | 'int';
  /** The result: f32 (default), i32, or vec3 (3 planes). */
  out?: 'f32' | 'i32' | 'vec3' | 'bool';
  inputs: Args;
  want: (a: number, b: number, c: number) => number | number[];
  /** The error allowed; 0 by default: exactly the reference's f32. */
  tol?: (a: number, b: number, c: number, want: number) => number;
}

const math = (name: keyof typeof MATH_ACCURACY) => (_a: number, _b: number, _c: number, want: number) => {
  const { bound, kind } = MATH_ACCURACY[name];
  return (kind === 'abs' ? bound : bound * Math.abs(want)) + EPS * Math.abs(want);
};
/** k roundings of values of the size of `scale`. */
const roundings = (k: number, scale: (a: number, b: number, c: number) => number) => (a: number, b: number, c: number) => k * EPS * scale(a, b, c);
/** vec3 inputs: components of `a` are (a, b, c); of `b` the same rotated and scaled. */
const vecA = (a: number, b: number, c: number) => [a, b, c];
const vecB = (a: number, b: number, c: number) => [fr(b * 0.5 - 1), fr(c * 2), fr(a - 0.25)];
const roundTiesEven = (x: number) => {
  const f = Math.floor(x);
  const d = x - f;
  const r = d > 0.5 ? f + 1 : d < 0.5 ? f : f % 2 === 0 ? f : f + 1;
  return r === 0 && (x < 0 || Object.is(x, -0)) ? -0 : r; // the sign of a zero result is x's
};
const INT_EDGES: [number, number, number][] = [[0, 0, 0], [-1, 1, 0], [2147483647, -2147483648, 0], [-2147483648, 2147483647, 0], [-2147483647, 5, 0], [7, -7, 0]];
const ints = () => args(RANDOM, () => [((rnd() * 2 ** 32) | 0), ((rnd() * 2 ** 32) | 0), 0], INT_EDGES, (x) => x | 0);

const i32sat = (x: number) => (Number.isNaN(x) ? 0 : x >= 2 ** 31 ? 2147483647 : x <= -(2 ** 31) ? -2147483648 : Math.trunc(x));

const CASES: Case[] = [
  { name: 'sin', expr: 'sin(a)', inputs: scalar(-1e4, 1e4), want: Math.sin, tol: math('sin') },
  { name: 'cos', expr: 'cos(a)', inputs: scalar(-1e4, 1e4), want: Math.cos, tol: math('cos') },
  { name: 'sin (turns)', expr: 'sin(a * TAU)', inputs: scalar(-50, 50), want: (a) => Math.sin(2 * Math.PI * (a - Math.round(a))), tol: math('sin_turns') },
  { name: 'cos (turns)', expr: 'cos(TAU * a)', inputs: scalar(-50, 50), want: (a) => Math.cos(2 * Math.PI * (a - Math.round(a))), tol: math('cos_turns') },
  { name: 'tan', expr: 'tan(a)', inputs: scalar(-1.5, 1.5), want: Math.tan, tol: math('tan') },
  { name: 'asin', expr: 'asin(a)', inputs: args(RANDOM, () => [uniform(-1, 1), 0, 0], [[0, 0, 0], [1, 0, 0], [-1, 0, 0], [0.5, 0, 0]]), want: Math.asin, tol: math('asin') },
  { name: 'acos', expr: 'acos(a)', inputs: args(RANDOM, () => [uniform(-1, 1), 0, 0], [[0, 0, 0], [1, 0, 0], [-1, 0, 0], [0.5, 0, 0]]), want: Math.acos, tol: math('acos') },
  { name: 'atan', expr: 'atan(a)', inputs: scalar(-1e3, 1e3), want: Math.atan, tol: math('atan') },
  { name: 'atan2', expr: 'atan2(a, b)', inputs: scalar(-100, 100), want: (a, b) => Math.atan2(a, b), tol: math('atan2') },
  { name: 'exp', expr: 'exp(a)', inputs: scalar(-87, 88), want: Math.exp, tol: math('exp') },
  { name: 'exp2', expr: 'exp2(a)', inputs: scalar(-126, 127), want: (a) => 2 ** a, tol: math('exp2') },
  { name: 'log', expr: 'log(a)', inputs: args(RANDOM, () => [fr(Math.exp(uniform(-80, 80))), 0, 0], [[1, 0, 0], [2, 0, 0], [0.5, 0, 0], [fr(Math.E), 0, 0]]), want: Math.log, tol: math('log') },
  { name: 'log2', expr: 'log2(a)', inputs: args(RANDOM, () => [fr(Math.exp(uniform(-80, 80))), 0, 0], [[1, 0, 0], [2, 0, 0], [1024, 0, 0], [0.125, 0, 0]]), want: Math.log2, tol: math('log2') },
  { name: 'pow', expr: 'pow(a, b)', inputs: args(RANDOM, () => [uniform(0.01, 10), uniform(-8, 8), 0], [[2, 10, 0], [9, 0.5, 0], [1, 100, 0], [10, -3, 0]]), want: (a, b) => a ** b, tol: math('pow') },
  { name: 'sqrt', expr: 'sqrt(a)', inputs: scalar(0, 1e6), want: (a) => (a < 0 ? NaN : Math.sqrt(a)), tol: roundings(1, (a) => Math.sqrt(Math.abs(a))) },
  { name: 'abs', expr: 'abs(a)', inputs: scalar(-1e6, 1e6), want: Math.abs },
  { name: 'abs (i32)', expr: 'abs(a)', kind: 'int', out: 'i32', inputs: ints(), want: (a) => Math.abs(a) | 0 },
  { name: 'floor', expr: 'floor(a)', inputs: scalar(-1e4, 1e4), want: Math.floor },
  { name: 'ceil', expr: 'ceil(a)', inputs: scalar(-1e4, 1e4), want: Math.ceil },
  { name: 'round', expr: 'round(a)', inputs: scalar(-1e4, 1e4), want: roundTiesEven },
  { name: 'trunc', expr: 'trunc(a)', inputs: scalar(-1e4, 1e4), want: Math.trunc },
  { name: 'fract', expr: 'fract(a)', inputs: scalar(-1e4, 1e4), want: (a) => a - Math.floor(a) },
  { name: 'sign', expr: 'sign(a)', inputs: scalar(-10, 10), want: (a) => (a > 0 ? 1 : a < 0 ? -1 : a) },
  {
    name: 'mod', expr: 'mod(a, b)',
    // Away from quotients within rounding of an integer, where f32 and f64 may floor differently.
    inputs: args(RANDOM, () => { for (;;) { const a = uniform(-100, 100), b = uniform(0.5, 10) * (rnd() < 0.5 ? -1 : 1); if (Math.abs(a / b - Math.round(a / b)) > 1e-4) return [a, b, 0]; } }, [[5.5, 2, 0], [-5.5, 2, 0], [7, -3, 0], [-7, -3, 0]]),
    want: (a, b) => a - b * Math.floor(a / b), tol: roundings(4, (a, b) => Math.abs(a) + Math.abs(b)),
  },
  { name: 'min', expr: 'min(a, b)', inputs: scalar(-100, 100), want: (a, b) => Math.min(a, b) },
  { name: 'max', expr: 'max(a, b)', inputs: scalar(-100, 100), want: (a, b) => Math.max(a, b) },
  { name: 'min (i32)', expr: 'min(a, b)', kind: 'int', out: 'i32', inputs: ints(), want: (a, b) => Math.min(a, b) },
  { name: 'max (i32)', expr: 'max(a, b)', kind: 'int', out: 'i32', inputs: ints(), want: (a, b) => Math.max(a, b) },
  { name: 'clamp', expr: 'clamp(a, b, c)', inputs: args(RANDOM, () => [uniform(-2, 2), uniform(-1, 0), uniform(0, 1)], [[-5, -1, 1], [5, -1, 1], [0.5, 0, 1]]), want: (a, b, c) => Math.min(Math.max(a, b), c) },
  {
    name: 'mix', expr: 'mix(a, b, c)',
    inputs: args(RANDOM, () => [uniform(-10, 10), uniform(-10, 10), uniform(-0.5, 1.5)], [[0, 1, 0.25], [0, 1, 0], [0, 1, 1], [2, 4, 0.5], [-3, 5, 0.75], [1, 1, 0.3]]),
    want: (a, b, c) => a + (b - a) * c, tol: roundings(3, (a, b, c) => Math.abs(a) + Math.abs(b - a) * Math.abs(c) + Math.abs(b - a)),
  },
  { name: 'step', expr: 'step(a, b)', inputs: scalar(-2, 2), want: (a, b) => (b < a ? 0 : 1) },
  {
    name: 'smoothstep', expr: 'smoothstep(a, b, c)',
    inputs: args(RANDOM, () => [uniform(-1, 0), uniform(0.1, 1), uniform(-1.5, 1.5)], [[0, 1, 0.5], [0, 1, 0.25], [0, 1, -1], [0, 1, 2], [-1, 1, 0]]),
    want: (a, b, c) => { const t = Math.min(Math.max((c - a) / (b - a), 0), 1); return t * t * (3 - 2 * t); }, tol: () => 8 * EPS,
  },
  { name: 'length', expr: 'length(a)', kind: 'vec', inputs: scalar(-100, 100), want: (a, b, c) => Math.hypot(a, b, c), tol: roundings(4, (a, b, c) => Math.hypot(a, b, c)) },
  {
    name: 'distance', expr: 'distance(a, b)', kind: 'vec', inputs: scalar(-100, 100),
    want: (a, b, c) => { const p = vecA(a, b, c), q = vecB(a, b, c); return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]); },
    tol: roundings(5, (a, b, c) => Math.hypot(...vecA(a, b, c)) + Math.hypot(...vecB(a, b, c))),
  },
  {
    name: 'dot', expr: 'dot(a, b)', kind: 'vec', inputs: scalar(-100, 100),
    want: (a, b, c) => { const p = vecA(a, b, c), q = vecB(a, b, c); return p[0] * q[0] + p[1] * q[1] + p[2] * q[2]; },
    tol: roundings(4, (a, b, c) => { const p = vecA(a, b, c), q = vecB(a, b, c); return Math.abs(p[0] * q[0]) + Math.abs(p[1] * q[1]) + Math.abs(p[2] * q[2]); }),
  },
  {
    name: 'cross', expr: 'cross(a, b)', kind: 'vec', out: 'vec3', inputs: scalar(-100, 100),
    want: (a, b, c) => { const p = vecA(a, b, c), q = vecB(a, b, c); return [p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0]]; },
    tol: roundings(3, (a, b, c) => 2 * Math.hypot(...vecA(a, b, c)) * Math.hypot(...vecB(a, b, c))),
  },
  {
    name: 'normalize', expr: 'normalize(a)', kind: 'vec', out: 'vec3', inputs: args(RANDOM, () => [uniform(-100, 100), uniform(-100, 100), uniform(1, 100)], [[3, 4, 12], [1, 0, 0], [0, 0, 2]]),
    want: (a, b, c) => { const l = Math.hypot(a, b, c); return [a / l, b / l, c / l]; }, tol: () => 8 * EPS,
  },
  { name: 'hash', expr: 'hash(a)', kind: 'int', inputs: ints(), want: (a) => hash(a) },
  { name: 'hash (3)', expr: 'hash(a, b, 7)', kind: 'int', inputs: ints(), want: (a, b) => hash(a, b, 7) },
  { name: 'noise (f32)', expr: 'noise(a)', inputs: scalar(-100, 100), want: (a) => noise([a]), tol: () => 8 * EPS },
  { name: 'noise (vec2)', expr: 'noise(vec2(a, b))', inputs: scalar(-100, 100), want: (a, b) => noise([a, b]), tol: () => 16 * EPS },
  { name: 'noise (vec3)', expr: 'noise(a)', kind: 'vec', inputs: scalar(-100, 100), want: (a, b, c) => noise([a, b, c]), tol: () => 32 * EPS },
  { name: 'vec2', expr: 'vec2(a, b).y + vec2(c).x', inputs: scalar(-10, 10), want: (_a, b, c) => b + c, tol: roundings(1, (_a, b, c) => Math.abs(b + c)) },
  { name: 'vec3', expr: 'vec3(vec2(a, b), c)', out: 'vec3', inputs: scalar(-10, 10), want: (a, b, c) => [a, b, c] },
  { name: 'vec4', expr: 'vec4(vec3(a), b).xyw', out: 'vec3', inputs: scalar(-10, 10), want: (a, b) => [a, a, b] },
  { name: 'f32', expr: 'f32(a)', kind: 'int', inputs: ints(), want: (a) => fr(a) },
  {
    name: 'i32', expr: 'i32(a)', out: 'i32',
    inputs: args(RANDOM, () => [uniform(-3e9, 3e9), 0, 0], [[2147483648, 0, 0], [-2147483904, 0, 0], [1e30, 0, 0], [-1e30, 0, 0], [-0.75, 0, 0], [2.9, 0, 0], [Infinity, 0, 0], [NaN, 0, 0]]),
    want: i32sat,
  },
  { name: 'bool', expr: 'bool(a)', out: 'bool', inputs: args(RANDOM, () => [rnd() < 0.3 ? 0 : uniform(-2, 2), 0, 0], [[0, 0, 0], [-0, 0, 0], [1e-30, 0, 0], [NaN, 0, 0]]), want: (a) => (a !== 0 ? 1 : 0) },
];

// ---- the scene and its runs ---------------------------------------------------------------

/** One node per case, reading inputs of its own (`a3`, `b3`, `c3`) pointwise. */
function sceneText(): string {
  return CASES.map((c, i) => {
    const n = c.inputs.a.length;
    const ty = c.kind === 'vec' ? 'vec3' : c.kind === 'int' ? 'i32' : 'f32';
    const zero = ty === 'i32' ? '0' : '0.0';
    return `input a${i}: field1<${ty}> = ${zero} size ${n};
input b${i}: field1<${ty}> = ${zero} size ${n};
input c${i}: field1<f32> = 0.0 size ${n};
kernel t.k${i}@1 {
  in a: field1<${ty}>;
  in b: field1<${ty}>;
  in c: field1<f32>;
  out r: field1<${c.out ?? 'f32'}>;
  each (x) { r = ${c.expr}; }
}
node n${i}: t.k${i}@1 { a <- a${i}; b <- b${i}; c <- c${i}; }
output o${i} <- n${i}.r;`;
  }).join('\n');
}

/** Writes each case's inputs into its input fields. */
function writeInputs(e: Engine): void {
  const put = (name: string, comp: number, values: number[], int: boolean) => {
    const f = e.fields.input(name)!;
    const base = (f.ptr + comp * f.planeBytes) / 4;
    values.forEach((v, x) => {
      if (int) e.memory.i32[base + x] = v;
      else e.memory.f32[base + x] = v;
    });
  };
  CASES.forEach((c, i) => {
    const { a, b, c: cs } = c.inputs;
    if (c.kind === 'vec') {
      [a, b, cs].forEach((values, k) => put(`a${i}`, k, values, false));
      const q = a.map((_, x) => vecB(a[x], b[x], cs[x]));
      for (let k = 0; k < 3; k++) put(`b${i}`, k, q.map((v) => v[k]), false);
    } else {
      put(`a${i}`, 0, a, c.kind === 'int');
      put(`b${i}`, 0, b, c.kind === 'int');
    }
    put(`c${i}`, 0, cs, false);
  });
  e.version++;
}

/** Each element's planes as numbers (i32 and bool read as integers). */
function outputOf(e: Engine, i: number): number[][] {
  const f = e.outputField(`o${i}`)!;
  return f.comps.map((ty, k) => {
    const base = (f.ptr + k * f.planeBytes) / 4;
    const view = ty === 'f32' ? e.memory.f32 : e.memory.i32;
    return Array.from({ length: f.width }, (_, x) => view[base + x]);
  });
}

const show = (x: number) => (Object.is(x, -0) ? '-0' : String(x));

t.test('the scene of every builtin checks, and every builtin function has a case', async (t) => {
  const sc = textScene({ 'scene.esn': sceneText() });
  t.same(sc.diagnostics.map((d) => `${d.line}:${d.column}: ${d.message}`), []);
  const names = new Set(CASES.map((c) => c.name.split(' ')[0]));
  t.same(BUILTIN_FUNCTIONS.map((b) => b.name).filter((n) => !names.has(n)), [], 'builtins without a case');
});

for (const backend of ['jit', 'interp'] as Backend[]) {
  t.test(`${backend}: every builtin against its reference, on edge values and ${RANDOM} seeded random inputs`, async (t) => {
    const e = new Engine(textScene({ 'scene.esn': sceneText() }), { backend });
    t.teardown(() => e.dispose());
    writeInputs(e);
    await e.evaluate();
    CASES.forEach((c, i) => {
      const planes = outputOf(e, i);
      let bad = 0;
      let first = '';
      let worst = 0;
      for (let x = 0; x < c.inputs.a.length; x++) {
        const [a, b, cc] = [c.inputs.a[x], c.inputs.b[x], c.inputs.c[x]];
        const want = c.want(a, b, cc);
        const wants = Array.isArray(want) ? want : [want];
        wants.forEach((w, k) => {
          const got = planes[k][x];
          const ok = Number.isNaN(w) ? Number.isNaN(got) : c.tol ? Math.abs(got - w) <= c.tol(a, b, cc, w) : (c.out === 'i32' || c.out === 'bool' ? got === w : Object.is(got, fr(w))) || (got === 0 && w === 0 && !Object.is(w, -0) && !Object.is(got, -0));
          if (!Number.isNaN(w) && c.tol) worst = Math.max(worst, Math.abs(got - w) / Math.max(c.tol(a, b, cc, w), Number.MIN_VALUE));
          if (!ok && bad++ === 0) first = `: ${c.expr} at (${show(a)}, ${show(b)}, ${show(cc)})${wants.length > 1 ? ` component ${k}` : ''} gave ${show(got)}, the reference ${show(w)}`;
        });
      }
      t.equal(bad, 0, `${c.name}: ${c.inputs.a.length} inputs within tolerance${c.tol ? ` (worst ${worst.toFixed(2)} of it)` : ' (exact)'}${first}`);
    });
  });
}
