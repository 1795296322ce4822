// The math functions (src/codegen/math.ts, src/ir/mathref.ts):
// (1) the compiled f32x4 functions agree bit for bit with MATH_REF (any NaN matching any NaN),
//     before and after binaryen's -O3;
// (2) MATH_REF meets MATH_ACCURACY against Math.* (f64, on the same f32 inputs) and follows
//     Math.*'s special cases.
import t, { type Test } from 'tap';
import { xorshift } from './helpers.js';
import binaryen from 'binaryen';
import { mathFunction, type MathName } from '../src/codegen/math.js';
import { MATH_ACCURACY, MATH_ARITY, MATH_REF } from '../src/ir/mathref.js';
import { BUILTIN_CONSTANTS, findBuiltin } from '../src/ir/builtins.js';
import type { Expr } from '../src/ir/ir.js';
import { cst, op } from '../src/ir/lower/build.js';
import { F32 } from '../src/ir/types.js';

const NAMES = Object.keys(MATH_ARITY) as MathName[];
const fr = Math.fround;
const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);
const bitsOf = (x: number): number => ((f32[0] = x), i32[0]);
const fromBits = (b: number): number => ((i32[0] = b), f32[0]);
/** The n-th f32 after x (n < 0: before), stepping through the bit patterns of x's sign. */
const ulps = (x: number, n: number): number => fromBits(bitsOf(x) + (x < 0 || Object.is(x, -0) ? -n : n));

const rnd = xorshift(0x2545f491);
const uniform = (lo: number, hi: number): number => fr(lo + (hi - lo) * rnd());
const logUniform = (lo: number, hi: number): number => fr(Math.exp(Math.log(lo) + Math.log(hi / lo) * rnd()));
const signed = (x: number): number => (rnd() < 0.5 ? -x : x);
const anyBits = (): number => fromBits((rnd() * 4294967296) | 0);
const positiveBits = (): number => fromBits(1 + Math.floor(rnd() * 0x7f7fffff));
const repeat = (n: number, gen: () => number): number[] => Array.from({ length: n }, gen);

const MAX = fr(3.4028234663852886e38);
const MIN_NORMAL = 2 ** -126;
const MIN_SUB = 2 ** -149;
const SPECIALS = [0, -0, Infinity, -Infinity, NaN, MIN_SUB, -MIN_SUB, fr(MIN_NORMAL - MIN_SUB),
  -fr(MIN_NORMAL - MIN_SUB), MIN_NORMAL, -MIN_NORMAL, MAX, -MAX, 1, -1, 0.5, -0.5, 2, -2, 3, -3,
  fr(1e-30), fr(-1e-30), fr(1e30), fr(-1e30), fr(Math.PI), fr(-Math.PI), 2 ** 24, -(2 ** 24),
  2 ** 31, -(2 ** 31), 2 ** 64, -(2 ** 64), 2 ** 100, -(2 ** 100)];

/** Values around the edges of each function's reductions and ranges (and their ulp neighbours). */
function boundaries(name: MathName): number[] {
  const edges: number[] = [];
  switch (name) {
    case 'sin': case 'cos': case 'tan':
      for (let k = 1; k < 70000; k += k < 64 ? 1 : 997) edges.push(fr(k * Math.PI / 4), fr(-k * Math.PI / 2));
      edges.push(102943, 102944, 1e5, 1e6, 2 ** 23, 2 ** 24, 1e10);
      break;
    case 'asin': case 'acos': edges.push(0.5, -0.5, 1, -1, fr(1e-20)); break;
    case 'atan': case 'atan2': edges.push(1, -1, fr(1e-20), 1e20); break;
    case 'exp':
      edges.push(fr(88.72283935546875), 89, 88, -87.33654, -103.972, -104, fr(Math.LN2 / 2), fr(-Math.LN2 / 2));
      break;
    case 'exp2': edges.push(128, 127.5, 129, -126, -149, -149.5, -150, -151, 0.5, -0.5); break;
    case 'sin_turns': case 'cos_turns':
      // Multiples of 1/8 turn (the quadrant edges and exact results), small and huge.
      for (let k = 1; k < 400; k++) edges.push(k / 8, -k / 8);
      for (const n of [1e3, 1e4, 2 ** 20, 2 ** 21, 2 ** 22, 2 ** 23, 2 ** 24])
        for (let k = 0; k < 8; k++) edges.push(fr(n + k / 8), -fr(n + k / 8));
      edges.push(fr(1e-7), fr(1e-20), 1e10);
      break;
    case 'log': case 'log2': case 'pow':
      for (let e = -149; e <= 127; e += 7) edges.push(fr(Math.SQRT1_2 * 2 ** e), 2 ** e);
      edges.push(MIN_NORMAL, fr(MIN_NORMAL - MIN_SUB), 1, 2);
      break;
  }
  return edges.flatMap((x) => [-2, -1, 0, 1, 2].map((n) => ulps(x, n)));
}

/** Inputs for the bit-exactness check: specials, boundaries, any bit patterns, relevant ranges. */
function exactInputs(name: MathName): number[][] {
  const one = [...SPECIALS, ...boundaries(name), ...repeat(100000, anyBits),
    ...repeat(100000, () => signed(logUniform(1e-6, 1e6))), ...repeat(50000, () => uniform(-1.5, 1.5)),
    ...repeat(50000, () => uniform(-200, 200)), ...repeat(50000, () => uniform(-1e5, 1e5))];
  if (MATH_ARITY[name] === 1) return [one];
  // Pairs: every special with every special, then random pairs (integers too, for pow's signs).
  const a: number[] = [];
  const b: number[] = [];
  const specials = [...SPECIALS, fr(1 / 3), 0.25, -0.25, 4];
  for (const x of specials) for (const y of specials) a.push(x), b.push(y);
  for (let j = 0; j < one.length; j++) {
    a.push(one[j]);
    b.push(j % 3 === 0 ? Math.round(uniform(-40, 40)) : j % 3 === 1 ? uniform(-70, 70) : one[(j * 7919) % one.length]);
  }
  return [a, b];
}

const CHUNK = 1 << 16; // elements per call
const PAGES = 64; // 3 arrays of CHUNK f32 fit in 4 MiB

/**
 * A module exporting, per function, `name(a, b, out, bytes)`: for i < bytes step 16,
 * out[i] = f(a[i]) (or f(a[i], b[i])) on v128s.
 */
function buildModule(t: Test): binaryen.Module {
  const m = new binaryen.Module();
  m.setFeatures(binaryen.Features.MVP | binaryen.Features.SIMD128);
  m.setMemory(PAGES, PAGES, 'memory');
  const i32t = binaryen.i32;
  for (const name of NAMES) {
    const fn = mathFunction(m, name);
    t.equal(mathFunction(m, name), fn, `${name}: added once`);
    const get = (i: number) => m.local.get(i, i32t);
    const load = (p: number) => m.v128.load(0, 16, m.i32.add(get(p), get(4)));
    const args = MATH_ARITY[name] === 1 ? [load(0)] : [load(0), load(1)];
    const body = m.block('done', [
      m.loop('next', m.block(null, [
        m.br('done', m.i32.ge_u(get(4), get(3))),
        m.v128.store(0, 16, m.i32.add(get(2), get(4)), m.call(fn, args, binaryen.v128)),
        m.local.set(4, m.i32.add(get(4), m.i32.const(16))),
        m.br('next'),
      ])),
    ]);
    m.addFunction(name, binaryen.createType([i32t, i32t, i32t, i32t]), binaryen.none, [i32t], body);
    m.addFunctionExport(name, name);
  }
  return m;
}

type Exports = Record<MathName, (a: number, b: number, out: number, bytes: number) => void> & { memory: WebAssembly.Memory };

function instantiate(m: binaryen.Module): Exports {
  const wasm = new WebAssembly.Module(new Uint8Array(m.emitBinary()));
  return new WebAssembly.Instance(wasm, {}).exports as unknown as Exports;
}

/** Runs the compiled `name` over the inputs, CHUNK elements at a time (padding with zeros). */
function runWasm(ex: Exports, name: MathName, inputs: number[][]): Float32Array {
  const n = inputs[0].length;
  const out = new Float32Array(n);
  const mem = new Float32Array(ex.memory.buffer, 0, 3 * CHUNK);
  for (let start = 0; start < n; start += CHUNK) {
    const len = Math.min(CHUNK, n - start);
    mem.fill(0);
    for (let k = 0; k < inputs.length; k++) for (let j = 0; j < len; j++) mem[k * CHUNK + j] = inputs[k][start + j];
    ex[name](0, 4 * CHUNK, 8 * CHUNK, 4 * Math.ceil(len / 4) * 4);
    out.set(mem.subarray(2 * CHUNK, 2 * CHUNK + len), start);
  }
  return out;
}

/** Counts lanes whose bits differ from MATH_REF (NaNs all alike), naming the first. */
function compare(name: MathName, inputs: number[][], got: Float32Array): { bad: number; first: string } {
  const ref = MATH_REF[name];
  const gotBits = new Int32Array(got.buffer);
  let bad = 0;
  let first = '';
  for (let j = 0; j < got.length; j++) {
    const want = ref(inputs[0][j], inputs[1]?.[j]);
    if (Number.isNaN(want) && Number.isNaN(got[j])) continue;
    if (gotBits[j] !== bitsOf(want)) {
      if (bad++ === 0) first = `${name}(${inputs.map((x) => x[j]).join(', ')}): wasm ${got[j]}, ref ${want}`;
    }
  }
  return { bad, first };
}

t.test('every function is tested: the arity table names each of MATH_REF and MATH_ACCURACY', async (t) => {
  // The tests below loop over NAMES: an empty or short table would make them assert nothing.
  t.equal(NAMES.length, 14);
  t.same([...NAMES].sort(), Object.keys(MATH_REF).sort());
  t.same([...NAMES].sort(), Object.keys(MATH_ACCURACY).sort());
  t.same(NAMES.filter((n) => MATH_ARITY[n] === 2).sort(), ['atan2', 'pow']);
});

t.test('compiled functions agree bit for bit with MATH_REF, before and after -O3', (t) => {
  const m = buildModule(t);
  t.ok(m.validate(), 'the module validates');
  const plain = instantiate(m);
  binaryen.setOptimizeLevel(3);
  binaryen.setShrinkLevel(0);
  m.optimize();
  t.ok(m.validate(), 'the optimised module validates');
  const optimised = instantiate(m);
  m.dispose();
  for (const name of NAMES) {
    const inputs = exactInputs(name);
    for (const [label, ex] of [['plain', plain], ['-O3', optimised]] as const) {
      const { bad, first } = compare(name, inputs, runWasm(ex, name, inputs));
      t.equal(bad, 0, `${name} ${label}: ${inputs[0].length} inputs bit-identical to MATH_REF ${first}`);
    }
  }
  t.end();
});

const ACCURACY_POINTS = 200000;

const trig = (x: number) => Math.abs(x) <= 1e5;

/**
 * sin(2 pi a) and cos(2 pi a) in f64 for an f32 a: a - round(a) is exact in f64, and multiples of
 * a quarter turn give their exact results (0 with the sign of a for sin of an integer a, else +0).
 */
function turnsExact(a: number, cos: boolean): number {
  if (!Number.isFinite(a)) return NaN;
  const t = a - Math.round(a); // in [-1/2, 1/2]
  const q = 4 * t;
  if (Number.isInteger(q)) {
    const v = cos ? [1, 0, -1, 0][(q + 4) % 4] : [0, 1, 0, -1][(q + 4) % 4];
    return v === 0 && !cos && t === 0 ? (Object.is(a, -0) || a < 0 ? -0 : 0) : v;
  }
  return cos ? Math.cos(2 * Math.PI * t) : Math.sin(2 * Math.PI * t);
}
/** Turns: mostly |a| <= 4 (every reduced value), some up to 1e4 and beyond. */
const turnsGen = (): number[] => [rnd() < 0.6 ? uniform(-4, 4) : rnd() < 0.8 ? uniform(-1e4, 1e4) : signed(logUniform(1e-8, 1e7))];
const error = (kind: 'abs' | 'rel', got: number, want: number): number =>
  kind === 'abs' ? Math.abs(got - want) : want === 0 ? (got === 0 ? 0 : Infinity) : Math.abs((got - want) / want);

/**
 * Per function: the f64 function compared to, f32 inputs over its MATH_ACCURACY range, and (when
 * the range is not everything) whether an input is in that range.
 */
const ACCURACY: Record<MathName, { exact: (a: number, b: number) => number; gen: () => number[]; inRange?: (a: number, b: number) => boolean }> = {
  sin: { exact: Math.sin, gen: () => [rnd() < 0.7 ? uniform(-1e5, 1e5) : uniform(-4, 4)], inRange: trig },
  cos: { exact: Math.cos, gen: () => [rnd() < 0.7 ? uniform(-1e5, 1e5) : uniform(-4, 4)], inRange: trig },
  tan: { exact: Math.tan, gen: () => [rnd() < 0.7 ? uniform(-1e5, 1e5) : uniform(-4, 4)], inRange: trig },
  asin: { exact: Math.asin, gen: () => [rnd() < 0.8 ? uniform(-1, 1) : signed(logUniform(1e-30, 1))] },
  acos: { exact: Math.acos, gen: () => [rnd() < 0.8 ? uniform(-1, 1) : signed(logUniform(1e-30, 1))] },
  atan: { exact: Math.atan, gen: () => [rnd() < 0.5 ? uniform(-4, 4) : signed(logUniform(1e-38, 3e38))] },
  atan2: {
    exact: Math.atan2,
    gen: () => rnd() < 0.5 ? [uniform(-4, 4), uniform(-4, 4)] : [signed(logUniform(1e-30, 1e30)), signed(logUniform(1e-30, 1e30))],
  },
  exp: { exact: Math.exp, gen: () => [uniform(-87.3, 88.7)] },
  exp2: { exact: (x) => 2 ** x, gen: () => [uniform(-126, 127.99)] },
  log: { exact: Math.log, gen: () => [rnd() < 0.5 ? uniform(0.5, 2) : positiveBits()] },
  log2: { exact: Math.log2, gen: () => [rnd() < 0.5 ? uniform(0.5, 2) : positiveBits()] },
  sin_turns: { exact: (a) => turnsExact(a, false), gen: turnsGen },
  cos_turns: { exact: (a) => turnsExact(a, true), gen: turnsGen },
  pow: {
    exact: Math.pow,
    gen: () => {
      for (;;) {
        const ab = rnd() < 0.5 ? [uniform(0, 10), uniform(-8, 8)] : [positiveBits(), uniform(-64, 64)];
        const r = ab[0] ** ab[1];
        if (r >= MIN_NORMAL && r <= MAX) return ab;
      }
    },
    // Here negative bases too (their sign handling), results may be subnormal.
    inRange: (a, b) => Math.abs(b) <= 64,
  },
};

t.test('MATH_REF meets MATH_ACCURACY against Math.*', (t) => {
  for (const name of NAMES) {
    const { bound, kind } = MATH_ACCURACY[name];
    const { exact, gen } = ACCURACY[name];
    let worst = 0;
    let at = '';
    for (let j = 0; j < ACCURACY_POINTS; j++) {
      const [a, b] = gen();
      const want = exact(a, b);
      const got = MATH_REF[name](a, b);
      const err = error(kind, got, want);
      if (!(err <= worst)) {
        worst = err;
        at = `${name}(${a}${b === undefined ? '' : `, ${b}`}) = ${got}, Math: ${want}`;
      }
    }
    t.ok(worst <= bound, `${name}: max ${kind} error ${worst.toExponential(2)} <= ${bound} (${at})`);
  }
  t.end();
});

/** Special inputs: results that Math.* gives exactly in f32 (NaN, +-0, +-inf, +-1) must be the same. */
t.test('special cases follow Math.*', (t) => {
  const exactly = (x: number) => x === 0 || !Number.isFinite(x) || x === 1 || x === -1;
  const values = [...SPECIALS, 1.5, -1.5, 1e-10, -1e-10];
  for (const name of NAMES) {
    const { bound, kind } = MATH_ACCURACY[name];
    const { exact, inRange } = ACCURACY[name];
    const pairs = MATH_ARITY[name] === 1 ? values.map((a) => [a, 0]) : values.flatMap((a) => values.map((b) => [a, b]));
    const wrong: string[] = [];
    for (const [a, b] of pairs) {
      const want = exact(a, b);
      const got = MATH_REF[name](a, b);
      // The turns functions' zero results (a a multiple of 1/2 turn) have no specified sign, except
      // for a = +-0.
      const anyZero = name.endsWith('_turns') && want === 0 && a !== 0;
      const ok = anyZero ? got === 0
        : exactly(fr(want)) ? Object.is(got, fr(want))
        : inRange && !inRange(a, b) ? true
        : kind === 'rel' && Math.abs(fr(want)) < MIN_NORMAL ? Math.abs(got - want) <= MIN_SUB // subnormal result
        : Math.sign(got) === Math.sign(want) && error(kind, got, want) <= bound;
      if (!ok) wrong.push(`${name}(${a}, ${b}) = ${got}, Math: ${want}`);
    }
    t.same(wrong, [], `${name}: ${pairs.length} special inputs`);
  }
  // Beyond the accurate range, sin and cos stay in [-1, 1] (the reduction is clamped).
  const huge = repeat(10000, () => signed(logUniform(1e5, 3e38)));
  t.ok(huge.every((x) => Math.abs(MATH_REF.sin(x)) <= 1 && Math.abs(MATH_REF.cos(x)) <= 1), 'sin, cos of huge x in [-1, 1]');
  t.end();
});

t.test('sin_turns, cos_turns: exact at multiples of a quarter turn, any size', (t) => {
  const wrong: string[] = [];
  const check = (what: string, got: number, want: number) => {
    if (!(got === want || (Number.isNaN(got) && Number.isNaN(want)))) wrong.push(`${what} = ${got}, want ${want}`);
  };
  for (const n of [0, 1, 2, 3, 7, 100, 9999, 2 ** 20, 2 ** 21 - 1, 2 ** 22 - 1]) {
    for (const s of [1, -1]) {
      for (let q = 0; q < 4; q++) {
        const a = s * (n + q / 4);
        check(`sin_turns(${a})`, MATH_REF.sin_turns(a), s * [0, 1, 0, -1][q]);
        check(`cos_turns(${a})`, MATH_REF.cos_turns(a), [1, 0, -1, 0][q]);
      }
    }
  }
  for (const a of [2 ** 23, 2 ** 23 + 1, 2 ** 24, 2 ** 31, 2 ** 100, MAX]) {
    for (const x of [a, -a]) {
      check(`sin_turns(${x})`, MATH_REF.sin_turns(x), 0);
      check(`cos_turns(${x})`, MATH_REF.cos_turns(x), 1);
    }
  }
  t.ok(Object.is(MATH_REF.sin_turns(0), 0) && Object.is(MATH_REF.sin_turns(-0), -0), 'sin_turns(+-0) = +-0');
  t.ok(MATH_REF.cos_turns(0) === 1 && MATH_REF.cos_turns(-0) === 1, 'cos_turns(+-0) = 1');
  for (const a of [Infinity, -Infinity, NaN]) {
    check(`sin_turns(${a})`, MATH_REF.sin_turns(a), NaN);
    check(`cos_turns(${a})`, MATH_REF.cos_turns(a), NaN);
  }
  t.same(wrong, []);
  // Odd (zero results aside: their sign is unspecified) and even, and the results stay in [-1, 1].
  const xs = [...repeat(20000, anyBits), ...repeat(20000, () => uniform(-4, 4))];
  t.ok(xs.every((x) => MATH_REF.sin_turns(-x) === -MATH_REF.sin_turns(x) || Number.isNaN(x)), 'sin_turns(-a) = -sin_turns(a)');
  t.ok(xs.every((x) => Object.is(MATH_REF.cos_turns(-x), MATH_REF.cos_turns(x)) || Number.isNaN(x)), 'cos_turns(-a) = cos_turns(a)');
  t.ok(xs.every((x) => Number.isNaN(x) || !Number.isFinite(x) || (Math.abs(MATH_REF.sin_turns(x)) <= 1 && Math.abs(MATH_REF.cos_turns(x)) <= 1)), 'results in [-1, 1]');
  t.end();
});

t.test('sin(a * TAU), cos(TAU * a) lower to the turns ops; other arguments do not', (t) => {
  const tau = cst('f32', BUILTIN_CONSTANTS.TAU);
  const a: Expr = { k: 'uniform', t: 'f32', slot: 0 };
  const lower = (name: string, e: Expr) => findBuiltin(name)!.lower([{ type: F32, comps: [e] }]).comps[0];
  t.same(lower('sin', op('f32.mul', a, tau)), op('f32.sin_turns', a));
  t.same(lower('sin', op('f32.mul', tau, a)), op('f32.sin_turns', a));
  t.same(lower('cos', op('f32.mul', a, tau)), op('f32.cos_turns', a));
  t.same(lower('cos', op('f32.mul', tau, a)), op('f32.cos_turns', a));
  const pi = cst('f32', BUILTIN_CONSTANTS.PI);
  t.same(lower('sin', op('f32.mul', a, pi)), op('f32.sin', op('f32.mul', a, pi)));
  t.same(lower('cos', op('f32.add', a, tau)), op('f32.cos', op('f32.add', a, tau)));
  t.same(lower('sin', a), op('f32.sin', a));
  t.end();
});
