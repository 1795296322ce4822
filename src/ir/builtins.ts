// The builtins of kernel bodies: one table that the checker lowers calls with and `help` lists.

import type { Grant } from './grants.js';
import type { Expr, Op, Scalar } from './ir.js';
import { convert, f32, i32, op, select, type Value } from './lower/build.js';
import { BOOL, F32, I32, aType, vec, type ElemType } from './types.js';

/** Thrown by a builtin's lowering when its arguments do not fit; the checker adds the location. */
export class BuiltinError extends Error {}

export interface BuiltinFunction {
  name: string;
  signature: string;
  summary: string;
  /** How many arguments it takes: [min, max]. */
  arity: [number, number];
  lower: (args: Value[]) => Value;
}

export interface BuiltinValue {
  name: string;
  type: string;
  summary: string;
  grant?: Grant;
}

/** Values a body can name. `x`, `y`, `z` are the coordinates `each` declares. */
export const BUILTIN_VALUES: BuiltinValue[] = [
  { name: 'x, y, z', type: 'i32', summary: "the element's coordinates, as named by `each (x, y, z)`" },
  { name: 'width', type: 'i32', summary: "the domain's extent along x" },
  { name: 'height', type: 'i32', summary: "the domain's extent along y (1 for a 1-D domain)" },
  { name: 'depth', type: 'i32', summary: "the domain's extent along z (1 for a 1-/2-D domain)" },
  { name: 'time', type: 'f32', summary: 'seconds of the world clock', grant: 'time.read' },
  { name: 'frame', type: 'i32', summary: 'frames evaluated since the world began', grant: 'time.read' },
  { name: 'pointer.xy', type: 'vec2', summary: "the pointer's position in the output's element coordinates", grant: 'input.read' },
  { name: 'pointer.down', type: 'bool', summary: 'true while a pointer button is held', grant: 'input.read' },
  { name: 'keys.NAME', type: 'bool', summary: 'true while key NAME is held (keys.space, keys.a, keys.arrowleft, ...)', grant: 'input.read' },
  { name: 'TAU', type: 'f32', summary: '2 pi' },
  { name: 'PI', type: 'f32', summary: 'pi' },
  { name: 'FIELD.width / .height / .depth', type: 'i32', summary: "a field port's own extents" },
  { name: 'FIELD.at(x, y[, z])', type: 'element', summary: 'gather at integer coordinates, clamped to the edge', grant: 'field.read' },
  { name: 'FIELD.wrap(x, y[, z])', type: 'element', summary: 'gather at integer coordinates, wrapped around the edges', grant: 'field.read' },
  { name: 'FIELD.sample(u, v[, w])', type: 'element', summary: 'bilinear (trilinear) filtering at normalised coordinates in [0, 1], clamped', grant: 'field.read' },
];

// ---- helpers -------------------------------------------------------------------------------

const isNum = (v: Value) => v.type.kind === 'scalar' && v.type.name !== 'bool';

function scalarOf(v: Value, what: string): Expr {
  if (v.type.kind !== 'scalar') throw new BuiltinError(`${what} takes a number, not ${aType(v.type.name)}`);
  return v.comps[0];
}

function floatComps(v: Value, what: string): Expr[] {
  if (v.type.kind === 'struct') throw new BuiltinError(`${what} takes numbers or vectors, not ${aType(v.type.name)}`);
  if (v.type.kind === 'scalar' && v.type.name === 'bool') throw new BuiltinError(`${what} takes numbers or vectors, not a bool`);
  return v.comps.map((c) => convert(c, 'f32'));
}

function floatValue(comps: Expr[]): Value {
  return { type: comps.length === 1 ? F32 : vec(comps.length as 2 | 3 | 4), comps };
}

/** Broadcast a list of values to a common component count (scalars repeat). */
function broadcast(args: Value[], what: string): Expr[][] {
  const lists = args.map((a) => floatComps(a, what));
  const n = Math.max(...lists.map((l) => l.length));
  return lists.map((l, i) => {
    if (l.length === n) return l;
    if (l.length === 1) return new Array(n).fill(l[0]);
    throw new BuiltinError(`${what}: argument ${i + 1} is ${aType(args[i].type.name)} but another is a vec${n}`);
  });
}

function componentwise(what: string, f: (...c: Expr[]) => Expr) {
  return (args: Value[]): Value => {
    const lists = broadcast(args, what);
    return floatValue(lists[0].map((_, i) => f(...lists.map((l) => l[i]))));
  };
}

const unaryF = (name: Op) => componentwise(name.slice(4), (a) => op(name, a));

/**
 * sin and cos. An argument `a * TAU` (or `TAU * a`) lowers to the turns op of `a`, sin(2 pi a)
 * or cos(2 pi a), which reduces `a` exactly (a - nearest(a)) instead of rounding a * TAU to f32
 * and reducing that by pi/2: more accurate, and much cheaper (src/ir/mathref.ts).
 */
function trig(name: 'sin' | 'cos') {
  const isTau = (e: Expr) => e.k === 'const' && e.t === 'f32' && e.v === Math.fround(BUILTIN_CONSTANTS.TAU);
  return componentwise(name, (a) => {
    if (a.k === 'op' && a.op === 'f32.mul') {
      const [x, y] = a.args;
      if (isTau(y)) return op(`f32.${name}_turns`, x);
      if (isTau(x)) return op(`f32.${name}_turns`, y);
    }
    return op(`f32.${name}`, a);
  });
}

function sum(es: Expr[]): Expr {
  return es.reduce((acc, e) => op('f32.add', acc, e));
}

function dotComps(a: Expr[], b: Expr[]): Expr {
  return sum(a.map((c, i) => op('f32.mul', c, b[i])));
}

function needVectors(args: Value[], what: string, size?: number): Expr[][] {
  const lists = args.map((a) => floatComps(a, what));
  const n = lists[0].length;
  if (lists.some((l) => l.length !== n) || (size !== undefined && n !== size))
    throw new BuiltinError(`${what} takes ${size ? `two vec${size}` : 'two values of one type'}; got ${args.map((a) => a.type.name).join(', ')}`);
  return lists;
}

/** min/max keep i32 when every argument is i32. */
function minMax(name: 'min' | 'max') {
  return (args: Value[]): Value => {
    if (args.every((a) => a.type.kind === 'scalar' && a.type.name === 'i32'))
      return { type: I32, comps: [op(`i32.${name}`, args[0].comps[0], args[1].comps[0])] };
    return componentwise(name, (a, b) => op(`f32.${name}`, a, b))(args);
  };
}

function clampF(a: Expr, lo: Expr, hi: Expr): Expr {
  return op('f32.min', op('f32.max', a, lo), hi);
}

/** Of all-i32 arguments, the i32 form `int`; else the componentwise f32 one (mod and clamp of i32s were f32, inexact past 2^24). */
function intsOr(name: string, int: (...c: Expr[]) => Expr, float: (...c: Expr[]) => Expr) {
  return (args: Value[]): Value => {
    if (args.every((a) => a.type.kind === 'scalar' && a.type.name === 'i32')) return { type: I32, comps: [int(...args.map((a) => a.comps[0]))] };
    return componentwise(name, float)(args);
  };
}

/** GLSL's mod of i32s: the remainder with the sign of b (0 for b = 0, as `%` gives). */
function modI(a: Expr, b: Expr): Expr {
  const r = op('i32.rem', a, b);
  const opposite = op('i32.lt', op('i32.xor', r, b), i32(0));
  return select(op('i32.ne', r, i32(0)), select(opposite, op('i32.add', r, b), r), r);
}

function smooth(e0: Expr, e1: Expr, x: Expr): Expr {
  const t = clampF(op('f32.div', op('f32.sub', x, e0), op('f32.sub', e1, e0)), f32(0), f32(1));
  return op('f32.mul', op('f32.mul', t, t), op('f32.sub', f32(3), op('f32.mul', f32(2), t)));
}

/** An integer hash of up to 3 i32 coordinates (a murmur-style mix), as a float in [0, 1). */
export function hashExpr(coords: Expr[]): Expr {
  let h: Expr = i32(0x9e3779b9 | 0);
  const primes = [0x27d4eb2d, 0x165667b1, 0x1b873593];
  coords.forEach((c, i) => {
    h = op('i32.xor', h, op('i32.mul', convert(c, 'i32'), i32(primes[i])));
    h = op('i32.mul', op('i32.xor', h, op('i32.shr_u', h, i32(15))), i32(0x2c1b3c6d));
    h = op('i32.mul', op('i32.xor', h, op('i32.shr_u', h, i32(12))), i32(0x297a2d39));
    h = op('i32.xor', h, op('i32.shr_u', h, i32(15)));
  });
  // The top 24 bits as a fraction: exact in f32.
  return op('f32.mul', op('i32.to_f32', op('i32.shr_u', h, i32(8))), f32(1 / 16777216));
}

/** Value noise in [0, 1): hashes at the lattice corners, blended with smoothstep. */
function noiseExpr(p: Expr[]): Expr {
  const cells = p.map((c) => op('f32.floor', c));
  const t = p.map((c, i) => {
    const f = op('f32.sub', c, cells[i]);
    return op('f32.mul', op('f32.mul', f, f), op('f32.sub', f32(3), op('f32.mul', f32(2), f)));
  });
  const base = cells.map((c) => op('f32.to_i32', c));
  const corner = (bits: number): Expr => hashExpr(base.map((b, i) => ((bits >> i) & 1 ? op('i32.add', b, i32(1)) : b)));
  // Blend along each axis in turn, from the highest.
  const blend = (axis: number, bits: number): Expr => {
    if (axis < 0) return corner(bits);
    const a = blend(axis - 1, bits);
    const b = blend(axis - 1, bits | (1 << axis));
    return op('f32.add', a, op('f32.mul', op('f32.sub', b, a), t[axis]));
  };
  return blend(p.length - 1, 0);
}

function construct(size: 2 | 3 | 4) {
  return (args: Value[]): Value => {
    const comps = args.flatMap((a) => floatComps(a, `vec${size}`));
    if (comps.length === 1) return { type: vec(size), comps: new Array(size).fill(comps[0]) };
    if (comps.length !== size)
      throw new BuiltinError(`vec${size} needs ${size} components (or one to repeat); got ${comps.length} from ${args.map((a) => a.type.name).join(', ')}`);
    return { type: vec(size), comps };
  };
}

function cast(to: Scalar) {
  return (args: Value[]): Value => {
    const e = scalarOf(args[0], to);
    const t: ElemType = to === 'f32' ? F32 : to === 'i32' ? I32 : BOOL;
    // i32(f) truncates toward zero like JavaScript's `| 0` on numbers in range.
    return { type: t, comps: [convert(e, to)] };
  };
}

// ---- the table -----------------------------------------------------------------------------

export const BUILTIN_FUNCTIONS: BuiltinFunction[] = [
  { name: 'sin', signature: 'sin(T) -> T', summary: 'sine (radians), componentwise; accurate for |x| up to 1e5 (a growing phase: sin(a * TAU) in turns)', arity: [1, 1], lower: trig('sin') },
  { name: 'cos', signature: 'cos(T) -> T', summary: 'cosine (radians), componentwise; accurate for |x| up to 1e5 (a growing phase: cos(a * TAU) in turns)', arity: [1, 1], lower: trig('cos') },
  { name: 'tan', signature: 'tan(T) -> T', summary: 'tangent (radians), componentwise; accurate for |x| up to 1e5', arity: [1, 1], lower: unaryF('f32.tan') },
  { name: 'asin', signature: 'asin(T) -> T', summary: 'arc sine, componentwise', arity: [1, 1], lower: unaryF('f32.asin') },
  { name: 'acos', signature: 'acos(T) -> T', summary: 'arc cosine, componentwise', arity: [1, 1], lower: unaryF('f32.acos') },
  { name: 'atan', signature: 'atan(T) -> T', summary: 'arc tangent, componentwise', arity: [1, 1], lower: unaryF('f32.atan') },
  { name: 'atan2', signature: 'atan2(y: T, x: T) -> T', summary: 'the angle of (x, y), componentwise', arity: [2, 2], lower: componentwise('atan2', (a, b) => op('f32.atan2', a, b)) },
  { name: 'exp', signature: 'exp(T) -> T', summary: 'e to the power, componentwise', arity: [1, 1], lower: unaryF('f32.exp') },
  { name: 'exp2', signature: 'exp2(T) -> T', summary: '2 to the power, componentwise', arity: [1, 1], lower: unaryF('f32.exp2') },
  { name: 'log', signature: 'log(T) -> T', summary: 'natural logarithm, componentwise', arity: [1, 1], lower: unaryF('f32.log') },
  { name: 'log2', signature: 'log2(T) -> T', summary: 'base-2 logarithm, componentwise', arity: [1, 1], lower: unaryF('f32.log2') },
  { name: 'pow', signature: 'pow(a: T, b: T) -> T', summary: 'a to the power b, componentwise', arity: [2, 2], lower: componentwise('pow', (a, b) => op('f32.pow', a, b)) },
  { name: 'sqrt', signature: 'sqrt(T) -> T', summary: 'square root (exact), componentwise', arity: [1, 1], lower: unaryF('f32.sqrt') },
  {
    name: 'abs', signature: 'abs(T) -> T', summary: 'absolute value (i32 stays i32)', arity: [1, 1],
    lower: (a) => (a[0].type.name === 'i32' ? { type: I32, comps: [op('i32.abs', a[0].comps[0])] } : unaryF('f32.abs')(a)),
  },
  { name: 'floor', signature: 'floor(T) -> T', summary: 'round down, componentwise', arity: [1, 1], lower: unaryF('f32.floor') },
  { name: 'ceil', signature: 'ceil(T) -> T', summary: 'round up, componentwise', arity: [1, 1], lower: unaryF('f32.ceil') },
  { name: 'round', signature: 'round(T) -> T', summary: 'round to nearest, ties to even, componentwise', arity: [1, 1], lower: unaryF('f32.nearest') },
  { name: 'trunc', signature: 'trunc(T) -> T', summary: 'round toward zero, componentwise', arity: [1, 1], lower: unaryF('f32.trunc') },
  { name: 'fract', signature: 'fract(T) -> T', summary: 'x - floor(x), componentwise', arity: [1, 1], lower: componentwise('fract', (a) => op('f32.sub', a, op('f32.floor', a))) },
  {
    name: 'sign', signature: 'sign(T) -> T', summary: '-1, 0 or 1, componentwise', arity: [1, 1],
    lower: componentwise('sign', (a) => select(op('f32.gt', a, f32(0)), f32(1), select(op('f32.lt', a, f32(0)), f32(-1), a))),
  },
  {
    name: 'mod', signature: 'mod(a: T, b: T) -> T', summary: 'a - b * floor(a / b) (GLSL mod; `%` truncates like JavaScript); of i32s an exact i32, 0 for b = 0', arity: [2, 2],
    lower: intsOr('mod', modI, (a, b) => op('f32.sub', a, op('f32.mul', b, op('f32.floor', op('f32.div', a, b))))),
  },
  { name: 'min', signature: 'min(a: T, b: T) -> T', summary: 'the smaller, componentwise (i32 stays i32)', arity: [2, 2], lower: minMax('min') },
  { name: 'max', signature: 'max(a: T, b: T) -> T', summary: 'the larger, componentwise (i32 stays i32)', arity: [2, 2], lower: minMax('max') },
  { name: 'clamp', signature: 'clamp(x: T, lo: T, hi: T) -> T', summary: 'min(max(x, lo), hi), componentwise (i32 stays i32)', arity: [3, 3], lower: intsOr('clamp', (a, lo, hi) => op('i32.min', op('i32.max', a, lo), hi), clampF) },
  {
    name: 'mix', signature: 'mix(a: T, b: T, t: T) -> T', summary: 'a + (b - a) * t, componentwise', arity: [3, 3],
    lower: componentwise('mix', (a, b, t) => op('f32.add', a, op('f32.mul', op('f32.sub', b, a), t))),
  },
  { name: 'step', signature: 'step(edge: T, x: T) -> T', summary: '0 where x < edge, else 1, componentwise', arity: [2, 2], lower: componentwise('step', (e, x) => select(op('f32.lt', x, e), f32(0), f32(1))) },
  { name: 'smoothstep', signature: 'smoothstep(e0: T, e1: T, x: T) -> T', summary: 'Hermite step from e0 to e1, componentwise', arity: [3, 3], lower: componentwise('smoothstep', smooth) },
  {
    name: 'length', signature: 'length(vecN) -> f32', summary: 'Euclidean length', arity: [1, 1],
    lower: (a) => { const c = floatComps(a[0], 'length'); return { type: F32, comps: [c.length === 1 ? op('f32.abs', c[0]) : op('f32.sqrt', dotComps(c, c))] }; },
  },
  {
    name: 'distance', signature: 'distance(a: vecN, b: vecN) -> f32', summary: 'length(a - b)', arity: [2, 2],
    lower: (a) => { const [p, q] = needVectors(a, 'distance'); const d = p.map((c, i) => op('f32.sub', c, q[i])); return { type: F32, comps: [op('f32.sqrt', dotComps(d, d))] }; },
  },
  {
    name: 'dot', signature: 'dot(a: vecN, b: vecN) -> f32', summary: 'dot product', arity: [2, 2],
    lower: (a) => { const [p, q] = needVectors(a, 'dot'); return { type: F32, comps: [dotComps(p, q)] }; },
  },
  {
    name: 'cross', signature: 'cross(a: vec3, b: vec3) -> vec3', summary: 'cross product', arity: [2, 2],
    lower: (a) => {
      const [p, q] = needVectors(a, 'cross', 3);
      const m = (i: number, j: number) => op('f32.sub', op('f32.mul', p[i], q[j]), op('f32.mul', p[j], q[i]));
      return { type: vec(3), comps: [m(1, 2), m(2, 0), m(0, 1)] };
    },
  },
  {
    name: 'normalize', signature: 'normalize(vecN) -> vecN', summary: 'the vector scaled to length 1', arity: [1, 1],
    lower: (a) => {
      const c = floatComps(a[0], 'normalize');
      if (c.length === 1) throw new BuiltinError('normalize takes a vector');
      const inv = op('f32.div', f32(1), op('f32.sqrt', dotComps(c, c)));
      return floatValue(c.map((x) => op('f32.mul', x, inv)));
    },
  },
  {
    name: 'hash', signature: 'hash(a[, b[, c]]) -> f32', summary: 'a repeatable pseudo-random number in [0, 1) from up to 3 integers', arity: [1, 3],
    lower: (a) => {
      // An f32 was cut to an integer without a word: hash(x / width) is one value for a whole row.
      const f = a.findIndex((v) => v.type.kind === 'scalar' && v.type.name === 'f32');
      if (f >= 0)
        throw new BuiltinError(`hash takes integers, and argument ${f + 1} is an f32, which would be cut to an integer (hash(x / width) is one value for a whole row): hash the element's integer coordinates, e.g. hash(x, y), or cut on purpose with i32(...), e.g. hash(i32(x / 8))`);
      return { type: F32, comps: [hashExpr(a.map((v) => (isNum(v) ? v.comps[0] : scalarOf(v, 'hash'))))] };
    },
  },
  {
    name: 'noise', signature: 'noise(p: f32 | vec2 | vec3) -> f32', summary: 'smooth value noise in [0, 1)', arity: [1, 1],
    lower: (a) => ({ type: F32, comps: [noiseExpr(floatComps(a[0], 'noise'))] }),
  },
  { name: 'vec2', signature: 'vec2(x, y) | vec2(s)', summary: 'a 2-component vector', arity: [1, 2], lower: construct(2) },
  { name: 'vec3', signature: 'vec3(x, y, z) | vec3(v2, z) | vec3(s)', summary: 'a 3-component vector', arity: [1, 3], lower: construct(3) },
  { name: 'vec4', signature: 'vec4(x, y, z, w) | vec4(v3, w) | vec4(s)', summary: 'a 4-component vector', arity: [1, 4], lower: construct(4) },
  { name: 'f32', signature: 'f32(n) -> f32', summary: 'to float', arity: [1, 1], lower: cast('f32') },
  { name: 'i32', signature: 'i32(n) -> i32', summary: 'to integer, truncating toward zero', arity: [1, 1], lower: cast('i32') },
  { name: 'bool', signature: 'bool(n) -> bool', summary: 'n != 0', arity: [1, 1], lower: cast('bool') },
];

export const BUILTIN_CONSTANTS: Record<string, number> = { TAU: Math.PI * 2, PI: Math.PI };

export function findBuiltin(name: string): BuiltinFunction | undefined {
  return BUILTIN_FUNCTIONS.find((b) => b.name === name);
}

/**
 * `Math.X` is the builtin X, but for one whose JavaScript meaning differs: `Math.round` rounds
 * halves up (2.5 -> 3, -2.5 -> -2), where `round` ties to even (2.5 -> 2), and a JavaScript
 * author writing it means JavaScript's.
 */
const MATH_ROUND: BuiltinFunction = {
  name: 'Math.round', signature: 'Math.round(T) -> T', summary: 'round to nearest, halves up (as JavaScript), componentwise', arity: [1, 1],
  lower: componentwise('Math.round', (a) => {
    const down = op('f32.floor', a);
    return op('f32.add', down, select(op('f32.ge', op('f32.sub', a, down), f32(0.5)), f32(1), f32(0)));
  }),
};

/** `Math.fround(x)`: the nearest f32, which every number here is already. */
const MATH_FROUND: BuiltinFunction = {
  name: 'Math.fround', signature: 'Math.fround(T) -> T', summary: 'the nearest f32: the number itself (numbers are f32 already)', arity: [1, 1],
  lower: componentwise('Math.fround', (a) => a),
};

/** `Math.min` and `Math.max` take any number of arguments, as JavaScript's do (min and max take two). */
const mathMinMax = (name: 'min' | 'max'): BuiltinFunction => ({
  name: `Math.${name}`, signature: `Math.${name}(a: T, b: T, ...) -> T`, summary: `${name} of two or more, componentwise`, arity: [2, 64],
  lower: (args) => args.slice(1).reduce((acc, a) => minMax(name)([acc, a]), args[0]),
});

export function findMathBuiltin(name: string): BuiltinFunction | undefined {
  if (name === 'round') return MATH_ROUND;
  if (name === 'fround') return MATH_FROUND;
  if (name === 'min' || name === 'max') return mathMinMax(name);
  return findBuiltin(name);
}
