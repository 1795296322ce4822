// The project's transcendental functions (the IR's f32.sin ... f32.pow), written ONCE as kernels
// over an abstract set of lane operations (`Lanes`). Two implementations of `Lanes` run them:
// - codegen (src/codegen/math.ts) emits each operation as one WebAssembly SIMD128 instruction on
//   4 f32 lanes;
// - MATH_REF below runs them on one lane in JavaScript, rounding to f32 after every arithmetic
//   step (Math.fround) and mirroring the WebAssembly semantics of each instruction (min/max,
//   nearest, trunc_sat, convert, bit reinterpretation).
// Both therefore perform the same f32 operations in the same order and agree bit for bit, except
// for the payload and sign of NaNs (WebAssembly leaves those unspecified): any NaN matches any NaN.
//
// Only SIMD128 and base WebAssembly operations are used: no FMA, no relaxed SIMD.

import { truncSatI32 } from './convert.js';

/** The transcendental functions, by the name after `f32.` in the IR's operations. */
export type MathName =
  | 'sin' | 'cos' | 'tan' | 'asin' | 'acos' | 'atan' | 'atan2' | 'exp' | 'log' | 'exp2' | 'log2' | 'pow'
  | 'sin_turns' | 'cos_turns';

/**
 * The lane operations the kernels are written in; each is one WebAssembly instruction (or none:
 * `bits` and `float` only reinterpret). F: f32 lanes, I: i32 lanes, M: lane masks (comparisons).
 * f32 arithmetic rounds to nearest f32; min/max propagate NaN and order -0 < +0; `nearest` rounds
 * half to even; `toInt` truncates and saturates (NaN -> 0); integer arithmetic wraps.
 */
export interface Lanes<F, I, M> {
  /** Keeps a value in a local so that several uses read it instead of recomputing it. */
  let<T extends F | I | M>(v: T): T;
  f(v: number): F;
  i(v: number): I;
  add(a: F, b: F): F;
  sub(a: F, b: F): F;
  mul(a: F, b: F): F;
  div(a: F, b: F): F;
  min(a: F, b: F): F;
  max(a: F, b: F): F;
  /** f32x4.pmin: b < a ? b : a (one instruction on x64, where min is several; NaN a gives a). */
  pmin(a: F, b: F): F;
  abs(a: F): F;
  sqrt(a: F): F;
  trunc(a: F): F;
  nearest(a: F): F;
  eq(a: F, b: F): M;
  ne(a: F, b: F): M;
  lt(a: F, b: F): M;
  gt(a: F, b: F): M;
  ge(a: F, b: F): M;
  /** m ? a : b per lane. */
  select(m: M, a: F, b: F): F;
  and(a: M, b: M): M;
  xor(a: M, b: M): M;
  not(a: M): M;
  bits(a: F): I;
  float(a: I): F;
  /** i32x4.trunc_sat_f32x4_s */
  toInt(a: F): I;
  /** f32x4.convert_i32x4_s */
  toFloat(a: I): F;
  iadd(a: I, b: I): I;
  isub(a: I, b: I): I;
  iand(a: I, b: I): I;
  ixor(a: I, b: I): I;
  shl(a: I, n: number): I;
  /** Arithmetic shift right. */
  shr(a: I, n: number): I;
  ieq(a: I, b: I): M;
  /** Signed a < b. */
  ilt(a: I, b: I): M;
  /** m ? a : 0 per lane. */
  imask(m: M, a: I): I;
}

/** A kernel: computes one function on lanes (b is used by atan2 and pow only). */
export type Kernel = <F, I, M>(o: Lanes<F, I, M>, a: F, b: F) => F;

const fr = Math.fround;
const SIGN = -0x80000000; // the f32 sign bit as an i32
const PI = fr(Math.PI);
const PI_2 = fr(Math.PI / 2);
const TWO_OVER_PI = fr(2 / Math.PI);
const LN2 = fr(Math.LN2);
const LOG2E = fr(Math.LOG2E);
// ln 2 = LN2_HI + LN2_LO; LN2_HI has 16 significant bits, so n * LN2_HI is exact for |n| < 256.
const LN2_HI = 0.693145751953125;
const LN2_LO = 1.428606765330187e-6;
// pi/2 = sum of PIO2_PARTS (to 1e-19); the first four have 8 significant bits each, so
// k * part is exact for k < 2^16 (|x| < 102943).
const PIO2_PARTS = [1.5703125, 4.84466552734375e-4, -6.407499313354492e-7, 9.89530235528946e-10,
  2.5633440682570896e-12];

// Minimax coefficients, computed offline (Remez exchange in 50-digit arithmetic; exp by linear
// programming on 4000 Chebyshev nodes) and rounded to f32. Each list is for Horner in z = r^2
// (exp: in r), lowest degree first.
/** sin r = r + r z S(z) on |r| <= 0.7857 (abs. error 1.8e-9). */
const SIN = [-0.16666650772094727, 0.00833197683095932, -0.00019495372544042766];
/** cos r = 1 + z C(z) on |r| <= 0.7857 (abs. error 5.4e-11). */
const COS = [-0.5, 0.04166662320494652, -0.0013886759988963604, 2.4390137696173042e-5];
/**
 * sin(pi/2 q) = q + q T(z), z = q^2, on [0, 1] (q in quarter turns; abs. error 3.3e-9; Lawson's
 * algorithm on 4000 Chebyshev nodes). The leading term q is exact; the result at q = 1 is 1.
 */
const TURNS = [0.5707963109016418, -0.6459633708000183, 0.07968848198652267, -0.004672227893024683,
  0.00015082056052051485];
/** atan t = t + t z A(z) on [0, 1] (abs. error 4.9e-8). */
const ATAN = [-0.3333165943622589, 0.19962704181671143, -0.13976582884788513, 0.09794235229492188,
  -0.05777359381318092, 0.02304013818502426, -0.004355406388640404];
/** asin s = s + s z B(z) on [0, 0.5] (rel. error 4.9e-9). */
const ASIN = [0.16666752099990845, 0.07495297491550446, 0.04547037556767464, 0.02417951449751854,
  0.04216630756855011];
/** e^r = 1 + r + r^2 E(r) on |r| <= 0.3476 (rel. error of E 1.2e-7, of e^r 7e-9). */
const EXP = [0.5, 0.16666576266288757, 0.04166693240404129, 0.008363425731658936,
  0.0013896679738536477];
/** ln((1+s)/(1-s)) = 2s + s z L(z) on |s| <= 0.1716 (rel. error 8.1e-10). */
const LOG = [0.6666677594184875, 0.3997752070426941, 0.29872503876686096];

function horner<F, I, M>(o: Lanes<F, I, M>, z: F, coeffs: readonly number[]): F {
  let acc = o.f(coeffs[coeffs.length - 1]);
  for (let j = coeffs.length - 2; j >= 0; j--) acc = o.add(o.f(coeffs[j]), o.mul(z, acc));
  return acc;
}

/** a with its sign bit flipped where `sign` has it set. */
function flipSign<F, I, M>(o: Lanes<F, I, M>, a: F, sign: I): F {
  return o.float(o.ixor(o.bits(a), sign));
}

function signOf<F, I, M>(o: Lanes<F, I, M>, a: F): I {
  return o.iand(o.bits(a), o.i(SIGN));
}

/**
 * sin and cos share this: y = |x| >= 0 reduced by pi/2 (Cody-Waite, 5 parts): k = nearest(y 2/pi),
 * r = y - k pi/2 in about [-pi/4, pi/4], accurate for y < 102943. Beyond, r is clamped to [-1, 1]
 * so that results stay in [-1, 1]. Returns the quadrant q = k mod 4 (in its low bits) and the
 * degree-7 sine and degree-8 cosine polynomials of r.
 */
function sinCosCore<F, I, M>(o: Lanes<F, I, M>, y: F): { q: I; s: F; c: F } {
  const k = o.let(o.nearest(o.mul(y, o.f(TWO_OVER_PI))));
  let r = y;
  for (const part of PIO2_PARTS) r = o.sub(r, o.mul(k, o.f(part)));
  r = o.let(o.min(o.max(r, o.f(-1)), o.f(1)));
  const z = o.let(o.mul(r, r));
  const s = o.let(o.add(r, o.mul(o.mul(r, z), horner(o, z, SIN))));
  const c = o.let(o.add(o.f(1), o.mul(z, horner(o, z, COS))));
  return { q: o.let(o.toInt(k)), s, c };
}

function odd<F, I, M>(o: Lanes<F, I, M>, q: I): M {
  return o.ieq(o.iand(q, o.i(1)), o.i(1));
}

/** sin x = sign(x) sin |x|; quadrant q: +-sin r or +-cos r. */
const sin: Kernel = (o, x) => {
  const { q, s, c } = sinCosCore(o, o.abs(x));
  // Quadrants 2 and 3 negate: bit 1 of q moved to the sign bit.
  const sign = o.iand(o.ixor(o.bits(x), o.shl(q, 30)), o.i(SIGN));
  return flipSign(o, o.select(odd(o, q), c, s), sign);
};

/** cos x = cos |x| = sin(|x| + pi/2): the sine's quadrant logic with q + 1. */
const cos: Kernel = (o, x) => {
  const { q, s, c } = sinCosCore(o, o.abs(x));
  const q1 = o.let(o.iadd(q, o.i(1)));
  return flipSign(o, o.select(odd(o, q1), c, s), o.iand(o.shl(q1, 30), o.i(SIGN)));
};

/**
 * sin_turns and cos_turns: sin 2 pi a and cos 2 pi a, `a` in turns. t = a - nearest(a) in
 * [-1/2, 1/2] is exact for every finite a (|a| >= 2^23 is an integer: t = 0; +-inf gives NaN).
 * Both fold t to a quarter turn q in [0, 1] (quarter turns) and a sign, and return
 * sign * sin(pi/2 q) from one odd polynomial of degree 9.
 */
function quarterSine<F, I, M>(o: Lanes<F, I, M>, q0: F, sign: I): F {
  const q = o.let(q0);
  const z = o.let(o.mul(q, q));
  return flipSign(o, o.add(q, o.mul(q, horner(o, z, TURNS))), sign);
}

/**
 * sin_turns a = sign(t) sin(2 pi |t|), t = a - (nearest(a) + 0) in [-1/2, 1/2] (the + 0 turns
 * nearest(-0) = -0 into +0, so that t = -0 and sin_turns(-0) = -0). For |t| in [0, 1/2],
 * sin(2 pi |t|) = sin(pi/2 q) with q = 4 min(|t|, 1/2 - |t|) in [0, 1] (exact: 1/2 - |t| is exact
 * when it is the minimum; pmin, cheaper than min, since no operand is NaN unless |t| is, and then
 * pmin gives |t|). Multiples of 1/4 turn give exactly 0, +-1 (the sign of a zero result is
 * unspecified but for sin_turns(+-0) = +-0).
 */
const sin_turns: Kernel = (o, a) => {
  const t = o.let(o.sub(a, o.add(o.nearest(a), o.f(0))));
  const at = o.let(o.abs(t));
  const q = o.mul(o.pmin(at, o.sub(o.f(0.5), at)), o.f(4));
  return quarterSine(o, q, o.iand(o.bits(t), o.i(SIGN)));
};

/**
 * cos_turns a = cos(2 pi |t|) = sin(pi/2 w), t = a - nearest(a), w = 1 - 4 |t| in [-1, 1]: q = |w|
 * with the sign of w. (1 - 4 |t| rounds for |t| < 1/8, where the cosine is flat: the error stays
 * within the bound.)
 */
const cos_turns: Kernel = (o, a) => {
  const t = o.sub(a, o.nearest(a));
  const w = o.let(o.sub(o.f(1), o.mul(o.abs(t), o.f(4))));
  return quarterSine(o, o.abs(w), o.iand(o.bits(w), o.i(SIGN)));
};

/** tan x = sign(x) tan |x|: sin r / cos r, or -cos r / sin r in odd quadrants. */
const tan: Kernel = (o, x) => {
  const { q, s, c } = sinCosCore(o, o.abs(x));
  const isOdd = o.let(odd(o, q));
  const t = o.div(o.select(isOdd, c, s), o.select(isOdd, s, c));
  return flipSign(o, t, o.iand(o.ixor(o.bits(x), o.shl(q, 31)), o.i(SIGN)));
};

/** atan t for t in [0, 1]: odd polynomial of degree 15. */
function atanPoly<F, I, M>(o: Lanes<F, I, M>, t0: F): F {
  const t = o.let(t0);
  const z = o.let(o.mul(t, t));
  return o.add(t, o.mul(o.mul(t, z), horner(o, z, ATAN)));
}

/**
 * atan x = sign(x) atan |x|; for |x| > 1, atan |x| = pi/2 - atan(1/|x|), so the polynomial only
 * sees t = min(|x|, 1) / max(|x|, 1) in [0, 1].
 */
const atan: Kernel = (o, x) => {
  const y = o.let(o.abs(x));
  const swap = o.let(o.gt(y, o.f(1)));
  const a = atanPoly(o, o.div(o.min(y, o.f(1)), o.max(y, o.f(1))));
  const r = o.add(o.select(swap, o.f(PI_2), o.f(0)), flipSign(o, a, o.imask(swap, o.i(SIGN))));
  return flipSign(o, r, signOf(o, x));
};

/**
 * atan2(y, x) = sign(y) (offset +- atan t), t = min(|x|, |y|) / max(|x|, |y|) in [0, 1]; the offset
 * (0, pi/2 or pi) and the sign of atan t follow from |y| > |x| and the sign bit of x (so -0
 * counts as negative, like Math.atan2). 0/0 and inf/inf give t = 0 and t = 1.
 */
const atan2: Kernel = (o, y, x) => {
  const ay = o.let(o.abs(y));
  const ax = o.let(o.abs(x));
  const swap = o.let(o.gt(ay, ax));
  const num = o.let(o.min(ax, ay));
  const den = o.let(o.max(ax, ay));
  const t = o.select(o.eq(num, den), o.select(o.eq(num, o.f(0)), o.f(0), o.f(1)), o.div(num, den));
  const a = atanPoly(o, t);
  const xneg = o.let(o.ilt(o.bits(x), o.i(0)));
  const offset = o.select(swap, o.f(PI_2), o.select(xneg, o.f(PI), o.f(0)));
  const r = o.add(offset, flipSign(o, a, o.imask(o.xor(swap, xneg), o.i(SIGN))));
  return flipSign(o, r, signOf(o, y));
};

/**
 * asin and acos share this, for a = |x|: p = asin s with s = a (a <= 1/2) or, when `big`
 * (a > 1/2), s = sqrt((1 - a) / 2), since asin a = pi/2 - 2 asin s; odd polynomial of degree 11.
 * w = p, or 2p when big. |x| > 1 gives sqrt of a negative number: NaN.
 */
function asinCore<F, I, M>(o: Lanes<F, I, M>, a0: F): { big: M; w: F } {
  const a = o.let(a0);
  const big = o.let(o.gt(a, o.f(0.5)));
  const z = o.let(o.select(big, o.mul(o.sub(o.f(1), a), o.f(0.5)), o.mul(a, a)));
  const s = o.let(o.select(big, o.sqrt(z), a));
  const p = o.let(o.add(s, o.mul(o.mul(s, z), horner(o, z, ASIN))));
  return { big, w: o.select(big, o.add(p, p), p) };
}

/** asin x = sign(x) (p or pi/2 - 2p). */
const asin: Kernel = (o, x) => {
  const { big, w } = asinCore(o, o.abs(x));
  const r = o.add(o.select(big, o.f(PI_2), o.f(0)), flipSign(o, w, o.imask(big, o.i(SIGN))));
  return flipSign(o, r, signOf(o, x));
};

/** acos x = pi/2 - sign(x) p, or 2p (x > 1/2), or pi - 2p (x < -1/2). */
const acos: Kernel = (o, x) => {
  const { big, w } = asinCore(o, o.abs(x));
  const xneg = o.let(o.ilt(o.bits(x), o.i(0)));
  const offset = o.select(big, o.select(xneg, o.f(PI), o.f(0)), o.f(PI_2));
  return o.add(offset, flipSign(o, w, o.imask(o.not(o.xor(big, xneg)), o.i(SIGN))));
};

/**
 * e^r 2^n for |r| <= ~ln(2)/2 and integer n in [-151, 129]: polynomial of degree 6, then two
 * exact scalings by 2^(n >> 1) and 2^(n - (n >> 1)) so that results round once into the
 * subnormal range and overflow to infinity.
 */
function expScale<F, I, M>(o: Lanes<F, I, M>, r0: F, n: F): F {
  const r = o.let(r0);
  const p = o.add(o.f(1), o.add(r, o.mul(o.mul(r, r), horner(o, r, EXP))));
  const ni = o.let(o.toInt(n));
  const n1 = o.let(o.shr(ni, 1));
  const pow2 = (k: I): F => o.float(o.shl(o.iadd(k, o.i(127)), 23));
  return o.mul(o.mul(p, pow2(n1)), pow2(o.isub(ni, n1)));
}

/**
 * exp x = e^r 2^n: x clamped to [-104, 89] (beyond, the result is 0 or infinity anyway),
 * n = nearest(x log2 e), r = x - n ln 2 (Cody-Waite, 2 parts: exact first product).
 */
const exp: Kernel = (o, x) => {
  const xc = o.let(o.min(o.max(x, o.f(-104)), o.f(89)));
  const n = o.let(o.nearest(o.mul(xc, o.f(LOG2E))));
  const r = o.sub(o.sub(xc, o.mul(n, o.f(LN2_HI))), o.mul(n, o.f(LN2_LO)));
  return expScale(o, r, n);
};

/** exp2 x = e^((x - n) ln 2) 2^n, n = nearest(x), x clamped to [-151, 129]. */
const exp2: Kernel = (o, x) => {
  const xc = o.let(o.min(o.max(x, o.f(-151)), o.f(129)));
  const n = o.let(o.nearest(xc));
  return expScale(o, o.mul(o.sub(xc, n), o.f(LN2)), n);
};

/**
 * For x > 0 (subnormals scaled by 2^24 first): x = m 2^e with m in [sqrt(1/2), sqrt(2)), and
 * ln m = f - hfsq + s (hfsq + R) (the fdlibm form: f = m - 1, hfsq = f^2 / 2, s = f / (2 + f),
 * 2s + s R = ln m with R = z L(z), z = s^2, degree 7 in s). Returns e, and ln m as its three
 * terms (`tail` = s (hfsq + R)) so that log can add e ln 2 in between.
 * Other inputs give finite garbage that logFix replaces.
 */
function logCore<F, I, M>(o: Lanes<F, I, M>, x0: F): { e: F; f: F; hfsq: F; tail: F } {
  const x = o.let(x0);
  const tiny = o.let(o.lt(x, o.f(2 ** -126)));
  const xb = o.let(o.bits(o.select(tiny, o.mul(x, o.f(2 ** 24)), x)));
  // Subtracting the bits of sqrt(1/2) makes the exponent field count from m = sqrt(1/2).
  const ei = o.let(o.shr(o.isub(xb, o.i(0x3f3504f3)), 23));
  const m = o.float(o.isub(xb, o.shl(ei, 23)));
  const e = o.let(o.toFloat(o.iadd(ei, o.imask(tiny, o.i(-24)))));
  const f = o.let(o.sub(m, o.f(1)));
  const s = o.let(o.div(f, o.add(f, o.f(2))));
  const z = o.let(o.mul(s, s));
  const hfsq = o.let(o.mul(o.mul(f, f), o.f(0.5)));
  const tail = o.mul(s, o.add(hfsq, o.mul(z, horner(o, z, LOG))));
  return { e, f, hfsq, tail: o.let(tail) };
}

/** ln m from logCore's terms. */
function lnM<F, I, M>(o: Lanes<F, I, M>, c: { f: F; hfsq: F; tail: F }): F {
  return o.add(o.sub(c.tail, c.hfsq), c.f);
}

/** The special cases of log and log2: +inf -> +inf, +-0 -> -inf, x < 0 or NaN -> NaN. */
function logFix<F, I, M>(o: Lanes<F, I, M>, x0: F, r: F): F {
  const x = o.let(x0);
  const inf = o.select(o.eq(x, o.f(Infinity)), o.f(Infinity), r);
  const zero = o.select(o.eq(x, o.f(0)), o.f(-Infinity), inf);
  return o.select(o.ge(x, o.f(0)), zero, o.f(NaN));
}

/** log x = e ln 2 + ln m, with ln 2 in two parts (fdlibm's order of additions). */
const log: Kernel = (o, x) => {
  const c = logCore(o, x);
  const lo = o.sub(o.add(c.tail, o.mul(c.e, o.f(LN2_LO))), c.hfsq);
  return logFix(o, x, o.add(o.add(lo, c.f), o.mul(c.e, o.f(LN2_HI))));
};

/** log2 x = e + log2(e) ln m. */
const log2: Kernel = (o, x) => {
  const c = logCore(o, x);
  return logFix(o, x, o.add(o.mul(lnM(o, c), o.f(LOG2E)), c.e));
};

/**
 * pow(a, b) = 2^(b log2 |a|), sign and special cases as Math.pow. With log2 |a| = e + L
 * (e integer), b is split exactly into bh + bl (Veltkamp, 12 bits each) so that b e = bh e + bl e
 * is exact; n = nearest(b log2 |a|) and the remainder f = (bh e - n) + (bl e + b L) in about
 * [-1/2, 1/2] then lose no bits to the size of b log2 |a|. Result e^(f ln 2) 2^n (expScale).
 * Special cases flow through t0 = b log2 |a| (+-inf, NaN) and the fix-ups at the end.
 */
const pow: Kernel = (o, a, b) => {
  const ax = o.let(o.abs(a));
  const c = logCore(o, ax);
  const l = o.let(o.mul(lnM(o, c), o.f(LOG2E)));
  const t0 = o.mul(b, logFix(o, ax, o.add(c.e, l)));
  const n = o.let(o.nearest(o.min(o.max(t0, o.f(-200)), o.f(200))));
  const bc = o.let(o.min(o.max(b, o.f(-(2 ** 64))), o.f(2 ** 64)));
  const split = o.let(o.mul(bc, o.f(4097)));
  const bh = o.let(o.sub(split, o.sub(split, bc)));
  const bl = o.sub(bc, bh);
  const f = o.add(o.sub(o.mul(bh, c.e), n), o.add(o.mul(bl, c.e), o.mul(bc, l)));
  // |f| > 1 only when |b log2 |a|| > 200, where the result is 0 or infinity anyway.
  const fc = o.min(o.max(f, o.f(-1)), o.f(1));
  const r = expScale(o, o.mul(fc, o.f(LN2)), n);
  // Negative base: an odd integer exponent negates, a non-integer one gives NaN (finite base).
  const bInt = o.let(o.eq(o.trunc(b), b));
  const half = o.let(o.mul(b, o.f(0.5)));
  const bOdd = o.and(bInt, o.ne(o.trunc(half), half));
  const signed = flipSign(o, r, o.imask(o.and(bOdd, o.ilt(o.bits(a), o.i(0))), o.i(SIGN)));
  const negFinite = o.and(o.lt(a, o.f(0)), o.gt(a, o.f(-Infinity)));
  const real = o.select(o.and(negFinite, o.not(bInt)), o.f(NaN), signed);
  return o.select(o.eq(b, o.f(0)), o.f(1), real);
};

export const MATH_KERNELS: Record<MathName, Kernel> = {
  sin, cos, tan, asin, acos, atan, atan2, exp, log, exp2, log2, pow, sin_turns, cos_turns,
};

export const MATH_ARITY: Record<MathName, 1 | 2> = {
  sin: 1, cos: 1, tan: 1, asin: 1, acos: 1, atan: 1, atan2: 2, exp: 1, log: 1, exp2: 1, log2: 1,
  pow: 2, sin_turns: 1, cos_turns: 1,
};

// One f32/i32 lane in JavaScript. Values are f32-exact numbers (F), int32 numbers (I), booleans (M).
const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);

/** WebAssembly's nearest: round half to even, keeping the sign of zero. */
function nearest(a: number): number {
  const r = Math.round(a); // halves round up; -0.5 < a <= 0 gives -0
  return r - a === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

const scalar: Lanes<number, number, boolean> = {
  let: (v) => v,
  f: (v) => fr(v),
  i: (v) => v | 0,
  add: (a, b) => fr(a + b),
  sub: (a, b) => fr(a - b),
  mul: (a, b) => fr(a * b),
  div: (a, b) => fr(a / b),
  min: Math.min, // NaN if either is NaN, -0 < +0: as f32x4.min
  max: Math.max,
  pmin: (a, b) => (b < a ? b : a),
  abs: Math.abs,
  sqrt: (a) => fr(Math.sqrt(a)),
  trunc: Math.trunc,
  nearest,
  eq: (a, b) => a === b,
  ne: (a, b) => a !== b,
  lt: (a, b) => a < b,
  gt: (a, b) => a > b,
  ge: (a, b) => a >= b,
  select: (m, a, b) => (m ? a : b),
  and: (a, b) => a && b,
  xor: (a, b) => a !== b,
  not: (a) => !a,
  bits: (a) => ((f32[0] = a), i32[0]),
  float: (a) => ((i32[0] = a), f32[0]),
  toInt: truncSatI32, // as the interpreter converts (trunc_sat)
  toFloat: (a) => fr(a),
  iadd: (a, b) => (a + b) | 0,
  isub: (a, b) => (a - b) | 0,
  iand: (a, b) => a & b,
  ixor: (a, b) => a ^ b,
  shl: (a, n) => a << n,
  shr: (a, n) => a >> n,
  ieq: (a, b) => a === b,
  ilt: (a, b) => a < b,
  imask: (m, a) => (m ? a : 0),
};

/**
 * The scalar mirror of the compiled functions: bit-identical to each lane of the WebAssembly
 * (NaN payloads aside). Arguments are f32 values (Math.fround them first).
 */
export const MATH_REF: Record<MathName, (a: number, b?: number) => number> = Object.fromEntries(
  (Object.keys(MATH_KERNELS) as MathName[]).map((name) => {
    const k = MATH_KERNELS[name];
    return [name, (a: number, b = 0) => k(scalar, a, b)];
  }),
) as Record<MathName, (a: number, b?: number) => number>;

/**
 * The accuracy MATH_REF (so also the compiled code) meets against Math.* in f64 on the same f32
 * inputs: max |got - exact| ('abs') or |got - exact| / |exact| ('rel') over `range`. Measured
 * worst cases (exhaustively on the core intervals, else on tens of millions of points) plus a
 * margin of 15-50 %; test/math.test.ts checks them on 200k points each. For scale: rounding to
 * f32 alone costs up to 6e-8 relative.
 */
export const MATH_ACCURACY: Record<MathName, { bound: number; kind: 'abs' | 'rel'; range: string }> = {
  sin: { bound: 1.5e-7, kind: 'abs', range: '|x| <= 1e5 (beyond, accuracy decays; results stay in [-1, 1])' },
  cos: { bound: 1.5e-7, kind: 'abs', range: '|x| <= 1e5 (beyond, accuracy decays; results stay in [-1, 1])' },
  tan: { bound: 6e-7, kind: 'rel', range: '|x| <= 1e5' },
  asin: { bound: 2.5e-7, kind: 'abs', range: '[-1, 1]' },
  acos: { bound: 4e-7, kind: 'abs', range: '[-1, 1]' },
  atan: { bound: 2.5e-7, kind: 'abs', range: 'all x' },
  atan2: { bound: 4e-7, kind: 'abs', range: 'all y, x' },
  exp: { bound: 1.5e-7, kind: 'rel', range: '[-87.3, 88.7] (normal results)' },
  exp2: { bound: 1.5e-7, kind: 'rel', range: '[-126, 128) (normal results)' },
  log: { bound: 1.5e-7, kind: 'rel', range: 'x > 0, subnormals included' },
  log2: { bound: 2.5e-7, kind: 'rel', range: 'x > 0, subnormals included' },
  pow: { bound: 4e-6, kind: 'rel', range: 'a > 0, |b| <= 64, normal results (error about 1e-7 + 4.3e-8 |b|)' },
  // Against sin(2 pi a) and cos(2 pi a) for the f32 a itself (not for the f32 product a * TAU):
  // the reduction is exact, so the bound holds for every finite a.
  // (Measured exhaustively for a in [2^-12, 1]: 1.19e-7 and 1.20e-7.)
  sin_turns: { bound: 1.5e-7, kind: 'abs', range: 'all finite a (exact reduction; |a| >= 2^23: a is an integer, 0)' },
  cos_turns: { bound: 1.5e-7, kind: 'abs', range: 'all finite a (exact reduction; |a| >= 2^23: a is an integer, 1)' },
};
