// IR builders for hand-written test functions, and a random IR generator for property tests:
// well-typed expression trees and statement nests whose loops always terminate (each loop has
// its own counter and a bound below 8), with breaks at random depths.

import { DEFAULT_FUEL, IR_VERSION, OPS, type Expr, type IrField, type IrFunction, type IrUniform, type Op, type Scalar, type Stmt } from '../src/ir/ir.js';
import type { Extents } from '../src/codegen/layout.js';

// ---------------------------------------------------------------------------------------------
// Builders

export const f32 = (v: number): Expr => ({ k: 'const', t: 'f32', v: Math.fround(v) });
export const i32 = (v: number): Expr => ({ k: 'const', t: 'i32', v: v | 0 });
export const bool = (v: boolean): Expr => ({ k: 'const', t: 'bool', v: v ? 1 : 0 });
export const local = (i: number, t: Scalar): Expr => ({ k: 'local', t, i });
export const X: Expr = { k: 'coord', t: 'i32', axis: 0 };
export const Y: Expr = { k: 'coord', t: 'i32', axis: 1 };
export const Z: Expr = { k: 'coord', t: 'i32', axis: 2 };
export const extent = (axis: 0 | 1 | 2, field?: number): Expr => ({ k: 'extent', t: 'i32', axis, field });
export const uniform = (slot: number, t: Scalar): Expr => ({ k: 'uniform', t, slot });
export const op = (name: Op, ...args: Expr[]): Expr => ({ k: 'op', t: OPS[name].result, op: name, args });
export const select = (c: Expr, a: Expr, b: Expr): Expr => ({ k: 'select', t: a.t, c, a, b });
export const load = (field: number, comp: number, t: Scalar): Expr => ({ k: 'load', t, field, comp });
export const gather = (field: number, comp: number, t: Scalar, mode: 'clamp' | 'wrap', ...coords: Expr[]): Expr =>
  ({ k: 'load', t, field, comp, at: { mode, coords } });

export const set = (l: number, e: Expr): Stmt => ({ k: 'set', local: l, e });
export const iff = (c: Expr, then: Stmt[], otherwise: Stmt[] = []): Stmt => ({ k: 'if', c, then, else: otherwise });
export const block = (...body: Stmt[]): Stmt => ({ k: 'block', body });
export const loop = (node: number, ...body: Stmt[]): Stmt => ({ k: 'loop', body, node });
export const brk = (depth = 0): Stmt => ({ k: 'break', depth });

export function fn(parts: Partial<IrFunction> & Pick<IrFunction, 'locals' | 'fields' | 'body' | 'stores'>): IrFunction {
  return { ir: IR_VERSION, dims: 2, nodes: ['test'], uniforms: [], fuel: DEFAULT_FUEL, ...parts };
}

export const field = (name: string, role: 'read' | 'write', dims: 1 | 2 | 3, comps: Scalar[]): IrField => ({ name, role, dims, comps });

// ---------------------------------------------------------------------------------------------
// Random functions

/** A small deterministic generator (mulberry32). */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let r = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

export interface RandomCase {
  fn: IrFunction;
  domain: Extents;
  /** Extents of each field (write fields and pointwise-read fields have the domain's). */
  extents: Extents[];
  uniforms: number[];
}

const SPECIAL_F32 = [0, -0, 1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, 3, 1e-3, 1e30, -1e30, 3.4e38, 1e-40, Infinity, -Infinity, NaN, 2147483648, -2147483904, 8388609];
const SPECIAL_I32 = [0, 1, -1, 2, 3, 7, 31, 32, 33, -32, 100, 0x7fffffff, -0x80000000, 0x55555555];

const MATH: Op[] = ['f32.sin', 'f32.cos', 'f32.tan', 'f32.asin', 'f32.acos', 'f32.atan', 'f32.exp', 'f32.log', 'f32.exp2', 'f32.log2', 'f32.pow', 'f32.atan2'];

export interface RandomOptions {
  /** Use the transcendental functions (sin ... pow). */
  math?: boolean;
}

export function randomCase(seed: number, options: RandomOptions = {}): RandomCase {
  const r = rng(seed);
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const chance = (p: number) => r() < p;
  const types: Scalar[] = ['f32', 'i32', 'bool'];

  const dims = pick([1, 2, 2, 3] as const);
  const domain: Extents = {
    width: pick([1, 2, 3, 4, 5, 7, 8, 9, 13, 16]),
    height: dims >= 2 ? pick([1, 2, 3, 5]) : 1,
    depth: dims === 3 ? pick([1, 2, 3]) : 1,
  };

  // Fields: read fields (pointwise ones have the domain's shape), then write fields.
  const fields: IrField[] = [];
  const extents: Extents[] = [];
  const pointwise: number[] = [];
  const gatherable: number[] = [];
  const nRead = 1 + int(3);
  for (let f = 0; f < nRead; f++) {
    const same = chance(0.6);
    const fd = same ? dims : pick([1, 2, 3] as const);
    const comps = Array.from({ length: 1 + int(3) }, () => pick(types));
    fields.push({ name: `in${f}`, role: 'read', dims: fd, comps });
    if (same) {
      extents.push({ ...domain });
      pointwise.push(f);
    } else {
      extents.push({ width: 1 + int(9), height: fd >= 2 ? 1 + int(6) : 1, depth: fd === 3 ? 1 + int(4) : 1 });
    }
    gatherable.push(f);
  }
  const nWrite = 1 + int(2);
  const writes: number[] = [];
  for (let w = 0; w < nWrite; w++) {
    writes.push(fields.length);
    fields.push({ name: `out${w}`, role: 'write', dims, comps: Array.from({ length: 1 + int(3) }, () => pick(types)) });
    extents.push({ ...domain });
  }

  const uniforms: IrUniform[] = Array.from({ length: int(4) }, (_, u) => ({ name: `u${u}`, t: pick(types) }));
  const uniformValues = uniforms.map((u) =>
    u.t === 'f32' ? Math.fround(chance(0.3) ? pick(SPECIAL_F32) : r() * 8 - 4) : u.t === 'i32' ? (chance(0.3) ? pick(SPECIAL_I32) : int(9) - 4) : int(2),
  );

  // Locals: a few of each type; loop counters are extra i32 locals nobody else sets.
  const locals: Scalar[] = [...types, ...Array.from({ length: 2 + int(5) }, () => pick(types))];
  const ofType = (t: Scalar) => locals.map((lt, i) => (lt === t ? i : -1)).filter((i) => i >= 0);
  const settable = locals.map((_, i) => i);
  const counter = (): number => {
    locals.push('i32');
    return locals.length - 1;
  };

  const nodes = ['alpha', 'beta', 'gamma'];
  const opsByResult = (t: Scalar) =>
    (Object.keys(OPS) as Op[]).filter((o) => OPS[o].result === t && (options.math || !MATH.includes(o)));

  // `uniformOnly`: build from constants, uniforms, y, z and extents (uniform across lanes).
  const expr = (t: Scalar, depth: number, uniformOnly = false): Expr => {
    if (depth <= 0 || chance(0.25)) return leaf(t, uniformOnly);
    const k = int(10);
    if (k === 0) return select(expr('bool', depth - 1, uniformOnly), expr(t, depth - 1, uniformOnly), expr(t, depth - 1, uniformOnly));
    if (k === 1 && !uniformOnly && t !== 'bool' || k === 1 && chance(0.2)) return gatherExpr(t, depth, uniformOnly);
    const o = pick(opsByResult(t));
    return op(o, ...OPS[o].args.map((a) => expr(a, depth - 1, uniformOnly)));
  };

  const constant = (t: Scalar): Expr => {
    if (t === 'f32') return f32(chance(0.4) ? pick(SPECIAL_F32) : (r() * 16 - 8) * (chance(0.3) ? 1000 : 1));
    if (t === 'i32') return i32(chance(0.4) ? pick(SPECIAL_I32) : int(17) - 8);
    return bool(chance(0.5));
  };

  const leaf = (t: Scalar, uniformOnly: boolean): Expr => {
    const options: (() => Expr | null)[] = [
      () => constant(t),
      () => {
        if (uniformOnly) return null;
        const ls = ofType(t);
        return ls.length ? local(pick(ls), t) : null;
      },
      () => {
        const us = uniforms.map((u, i) => (u.t === t ? i : -1)).filter((i) => i >= 0);
        return us.length ? uniform(pick(us), t) : null;
      },
      () => (t === 'i32' ? pick(uniformOnly ? [Y, Z, extent(0), extent(1)] : [X, X, Y, Z, extent(0), extent(int(3) as 0 | 1 | 2)]) : null),
      () => {
        if (uniformOnly) return null;
        const candidates: [number, number][] = [];
        for (const f of pointwise) fields[f].comps.forEach((ct, c) => ct === t && candidates.push([f, c]));
        if (!candidates.length) return null;
        const [f, c] = pick(candidates);
        return load(f, c, t);
      },
    ];
    for (let tries = 0; tries < 20; tries++) {
      const e = pick(options)();
      if (e) return e;
    }
    return constant(t);
  };

  const coordinate = (depth: number, axis: number, uniformOnly: boolean): Expr => {
    const own = [X, Y, Z][Math.min(axis, dims - 1)];
    const near = () => i32(int(7) - 3);
    switch (int(uniformOnly ? 3 : 6)) {
      case 0: return op('i32.add', axis === 0 || uniformOnly ? (uniformOnly ? Y : X) : own, near());
      case 1: return expr('i32', depth - 1, true);
      case 2: return i32(int(12) - 3);
      case 3: return op('i32.sub', X, expr('i32', 1, true)); // fast path form, uniform offset
      case 4: return axis === 0 ? op('i32.add', X, expr('i32', 1, true)) : own;
      default: return expr('i32', depth - 1, false);
    }
  };

  const gatherExpr = (t: Scalar, depth: number, uniformOnly: boolean): Expr => {
    const candidates: [number, number][] = [];
    for (const f of gatherable) fields[f].comps.forEach((ct, c) => ct === t && candidates.push([f, c]));
    if (!candidates.length) return leaf(t, uniformOnly);
    const [f, c] = pick(candidates);
    const coords = Array.from({ length: fields[f].dims }, (_, axis) => coordinate(depth, axis, uniformOnly));
    return gather(f, c, t, chance(0.5) ? 'clamp' : 'wrap', ...coords);
  };

  // Statements. `constructs` counts the enclosing blocks and loops (for break depths).
  let budget = 40;
  const stmts = (depth: number, constructs: number, n: number): Stmt[] => {
    const out: Stmt[] = [];
    for (let i = 0; i < n && budget > 0; i++) {
      budget--;
      const k = depth <= 0 ? 0 : int(10);
      if (k <= 3) {
        const l = pick(settable);
        out.push(set(l, expr(locals[l], 3)));
      } else if (k <= 5) {
        const c = chance(0.3) ? expr('bool', 2, true) : expr('bool', 3);
        out.push(iff(c, stmts(depth - 1, constructs, 1 + int(3)), chance(0.5) ? stmts(depth - 1, constructs, 1 + int(2)) : []));
      } else if (k === 6) {
        out.push(block(...stmts(depth - 1, constructs + 1, 1 + int(3))));
      } else if (k === 7) {
        out.push(...boundedLoop(depth, constructs));
      } else if (k === 8) {
        out.push(...forLoop(depth, constructs));
      } else if (constructs > 0) {
        const b = brk(int(constructs));
        // Mostly conditional: an unconditional break makes the rest of the list dead.
        out.push(chance(0.8) ? iff(chance(0.3) ? expr('bool', 2, true) : expr('bool', 2), [b]) : b);
      }
    }
    return out;
  };

  const boundedLoop = (depth: number, constructs: number): Stmt[] => {
    const c = counter();
    const bound = chance(0.4) ? i32(int(5)) : op('i32.and', expr('i32', 2, chance(0.4)), i32(chance(0.5) ? 3 : 7));
    const body: Stmt[] = [
      iff(op('i32.ge', local(c, 'i32'), bound), [brk(0)]),
      set(c, op('i32.add', local(c, 'i32'), i32(1))),
    ];
    if (chance(0.3)) {
      // continue-like: leave an inner block, the rest of the repetition goes on
      body.push(block(iff(expr('bool', 2), [brk(0)]), ...stmts(depth - 1, constructs + 2, 1 + int(2))));
    }
    body.push(...stmts(depth - 1, constructs + 1, 1 + int(3)));
    return [set(c, i32(0)), loop(int(nodes.length), ...body)];
  };

  /**
   * `for (v = c0; v <= c1; v += step) { middle }` as the front end lowers it: a counted loop the
   * compiler unrolls when the middle breaks only to constructs of its own (mostly the case here).
   */
  const forLoop = (depth: number, constructs: number): Stmt[] => {
    const v = counter();
    const c0 = int(6) - 3;
    const c1 = c0 + int(6) - 1;
    const step = chance(0.8) ? 1 : 2;
    const exit = pick([
      op('bool.not', op('i32.le', local(v, 'i32'), i32(c1))),
      op('i32.gt', local(v, 'i32'), i32(c1)),
      op('i32.ge', local(v, 'i32'), i32(c1 + 1)),
    ]);
    const inner = chance(0.15) ? constructs + 1 : 0; // sometimes breaks may leave the loop
    const middle: Stmt[] = chance(0.4)
      ? [block(iff(expr('bool', 2), [brk(0)]), ...stmts(depth - 1, inner + 1, 1 + int(3)))] // with a continue
      : stmts(depth - 1, inner, 1 + int(3));
    return [
      set(v, i32(c0)),
      loop(int(nodes.length), iff(exit, [brk(0)]), ...middle, set(v, op('i32.add', local(v, 'i32'), i32(step)))),
    ];
  };

  const body = stmts(3, 0, 3 + int(5));
  const stores: IrFunction['stores'] = [];
  for (const w of writes) {
    fields[w].comps.forEach((t, comp) => stores.push({ field: w, comp, local: pick(ofType(t)) }));
  }
  const fn: IrFunction = {
    ir: IR_VERSION,
    dims,
    nodes,
    locals,
    fields,
    uniforms,
    body,
    stores,
    fuel: chance(0.2) ? 1 + int(12) : DEFAULT_FUEL,
  };
  return { fn, domain, extents, uniforms: uniformValues };
}

/** Random contents for a read field component (specials mixed in). */
export function randomValues(r: () => number, t: Scalar, n: number): Float32Array | Int32Array {
  if (t === 'f32') {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = r() < 0.2 ? SPECIAL_F32[Math.floor(r() * SPECIAL_F32.length)] : (r() * 16 - 8) * (r() < 0.2 ? 1e4 : 1);
    return out;
  }
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = t === 'bool' ? (r() < 0.5 ? 1 : 0) : r() < 0.2 ? SPECIAL_I32[Math.floor(r() * SPECIAL_I32.length)] : Math.floor(r() * 17) - 8;
  }
  return out;
}
