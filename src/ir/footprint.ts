// Footprints: which elements of each field a function reads when it computes a region of its
// domain (bounds inference for tiles). A tile computes a rectangle of the output; each node it
// needs computes only the rectangle its consumers read, found here.
//
// The body is run in the abstract: every i32 and bool value is an interval [lo, hi] of what it may
// be over the region (coordinates range over the region, extents and uniforms are the frame's
// known values, locals start at 0). Loops repeat until nothing grows (a bound still moving after
// a few rounds goes to the end of i32), and a loop's exit test narrows its counter inside the
// body, so `for (dx = -r; dx <= r; dx++) f.at(x + dx, y)` reads columns [x0 - r, x1 + r]. A coordinate that depends on
// data (a load, an f32 computation such as sample's, an operation not modelled) is unbounded: the
// caller computes that producer whole. Clamped coordinates are clamped to the field; wrapped ones
// that cross an edge take the whole axis.

import type { Expr, IrFunction, Stmt } from './ir.js';
import { unreachable } from './unreachable.js';

/** What a value may be: [lo, hi], or anything (null). */
export type Interval = readonly [number, number] | null;

/** The region a function computes: along each axis, [lo, hi] inclusive (lanes past the domain's width included). */
export type Box = readonly (readonly [number, number])[];

export interface FootprintInput {
  /** Coordinates computed, per axis of the domain. */
  region: Box;
  /** The domain's extents (width, height, depth). */
  domain: readonly number[];
  /** Each field's extents, by field index. */
  fieldExtents: readonly (readonly number[])[];
  /** Each uniform slot's value this frame. */
  uniforms: readonly number[];
}

/** Per field read: per axis [lo, hi] (inclusive, inside the field), or null when unbounded; undefined when not read. */
export type Footprint = (Box | null | undefined)[];

const I32_MIN = -(2 ** 31);
const I32_MAX = 2 ** 31 - 1;
/** Loop rounds before a local still growing is widened to unbounded. */
const ROUNDS = 4;

type Env = Interval[];

const join = (a: Interval, b: Interval): Interval => (a && b ? [Math.min(a[0], b[0]), Math.max(a[1], b[1])] : null);
const joinEnv = (a: Env | null, b: Env | null): Env | null => (!a ? b : !b ? a : a.map((v, i) => join(v, b[i])));
const sameEnv = (a: Env, b: Env) => a.every((v, i) => (v === null ? b[i] === null : b[i] !== null && v[0] === b[i]![0] && v[1] === b[i]![1]));
/** An i32 result: where it may wrap, any i32 (still an interval, so a loop's exit test narrows it). */
const i32 = (lo: number, hi: number): Interval => (lo >= I32_MIN && hi <= I32_MAX ? [lo, hi] : [I32_MIN, I32_MAX]);
const BOOL: Interval = [0, 1];

export function footprint(fn: IrFunction, input: FootprintInput): Footprint {
  const reads: Footprint = fn.fields.map(() => undefined);
  const record = (field: number, box: Box | null) => {
    const was = reads[field];
    if (was === null || box === null) reads[field] = was === undefined && box !== null ? box : null;
    else reads[field] = was === undefined ? box : was.map((a, i) => [Math.min(a[0], box[i][0]), Math.max(a[1], box[i][1])] as const);
  };
  const fieldAxis = (f: number, axis: number) => Math.max(1, input.fieldExtents[f][axis] ?? 1);

  const value = (e: Expr, env: Env): Interval => {
    switch (e.k) {
      case 'const':
        return e.t === 'f32' ? null : [e.v, e.v];
      case 'local':
        return env[e.i];
      case 'coord':
        return input.region[e.axis] ?? [0, 0];
      case 'extent': {
        const n = e.field === undefined ? (input.domain[e.axis] ?? 1) : (input.fieldExtents[e.field][e.axis] ?? 1);
        return [n, n];
      }
      case 'uniform': {
        if (e.t === 'f32') return null;
        const v = input.uniforms[e.slot] ?? 0;
        return e.t === 'bool' ? (v ? [1, 1] : [0, 0]) : [v | 0, v | 0];
      }
      case 'load': {
        if (!e.at) {
          const n = fn.fields[e.field].dims;
          record(e.field, input.region.slice(0, n).map(([lo, hi], axis) => [Math.max(0, lo), Math.min(fieldAxis(e.field, axis) - 1, hi)] as const));
        } else {
          const axes = e.at.coords.map((c, axis) => fit(value(c, env), fieldAxis(e.field, axis), e.at!.mode));
          record(e.field, axes.every((a) => a !== null) ? (axes as [number, number][]) : null);
        }
        return e.t === 'bool' ? BOOL : null;
      }
      case 'select':
        value(e.c, env);
        return join(value(e.a, env), value(e.b, env));
      case 'op':
        return op(e, e.args.map((a) => value(a, env)));
      default:
        return unreachable(e, 'an expression');
    }
  };

  /** Run statements from `env`; returns the env falling out of them (null: none does), and adds each break's env to `exits`. */
  const run = (list: Stmt[], env: Env | null, exits: (Env | null)[]): Env | null => {
    for (const s of list) {
      if (!env) return null;
      switch (s.k) {
        case 'set': {
          const v = value(s.e, env);
          env = env.slice();
          env[s.local] = fn.locals[s.local] === 'f32' ? null : v;
          break;
        }
        case 'if': {
          const c = value(s.c, env);
          const thenEnv = c && c[1] === 0 ? null : run(s.then, refine(s.c, true, env), exits);
          const elseEnv = c && c[0] === 1 ? null : run(s.else, refine(s.c, false, env), exits);
          env = joinEnv(thenEnv, elseEnv);
          break;
        }
        case 'block': {
          const inner: (Env | null)[] = [null, ...exits];
          const out = run(s.body, env, inner);
          exits.forEach((_, i) => (exits[i] = joinEnv(exits[i], inner[i + 1])));
          env = joinEnv(out, inner[0]);
          break;
        }
        case 'loop': {
          let start: Env = env;
          let leave: Env | null = null;
          for (let round = 0; ; round++) {
            const inner: (Env | null)[] = [null, ...exits];
            const end = run(s.body, start, inner);
            leave = inner[0];
            exits.forEach((_, i) => (exits[i] = joinEnv(exits[i], inner[i + 1])));
            let next = joinEnv(start, end)!;
            if (round >= ROUNDS) next = next.map((v, i) => widen(start[i], v));
            if (sameEnv(next, start)) break;
            start = next;
          }
          env = leave;
          break;
        }
        case 'break':
          exits[s.depth] = joinEnv(exits[s.depth], env);
          return null;
        default:
          unreachable(s, 'a statement');
      }
    }
    return env;
  };

  /** The env where `c` is `truth`: a local compared with a bounded value is narrowed. */
  const refine = (c: Expr, truth: boolean, env: Env): Env | null => {
    if (c.k === 'op' && c.op === 'bool.not') return refine(c.args[0], !truth, env);
    if (c.k === 'op' && (c.op === 'bool.and' || c.op === 'bool.or') && (c.op === 'bool.and') === truth) {
      const first = refine(c.args[0], truth, env);
      return first && refine(c.args[1], truth, first);
    }
    if (c.k !== 'op' || !['i32.lt', 'i32.le', 'i32.gt', 'i32.ge'].includes(c.op)) return env;
    const [a, b] = c.args;
    // a < b as lo/hi bounds on whichever side is a local.
    let rel = c.op.slice(4) as 'lt' | 'le' | 'gt' | 'ge';
    if (!truth) rel = ({ lt: 'ge', le: 'gt', gt: 'le', ge: 'lt' } as const)[rel];
    let out: Env | null = env;
    const narrow = (local: Expr, other: Expr, r: typeof rel) => {
      if (!out || local.k !== 'local') return;
      const v = out[local.i];
      const o = value(other, out);
      if (!v || !o) return;
      let [lo, hi] = v;
      if (r === 'lt') hi = Math.min(hi, o[1] - 1);
      if (r === 'le') hi = Math.min(hi, o[1]);
      if (r === 'gt') lo = Math.max(lo, o[0] + 1);
      if (r === 'ge') lo = Math.max(lo, o[0]);
      if (lo > hi) {
        out = null;
        return;
      }
      out = out.slice();
      out[local.i] = [lo, hi];
    };
    narrow(a, b, rel);
    narrow(b, a, ({ lt: 'gt', le: 'ge', gt: 'lt', ge: 'le' } as const)[rel]);
    return out;
  };

  run(fn.body, fn.locals.map((t) => (t === 'f32' ? null : [0, 0])), []);
  return reads;
}

/** A bound still moving after a few rounds moves to the end of i32: loops settle in a round more. */
function widen(was: Interval, now: Interval): Interval {
  if (!was || !now) return null;
  return [now[0] < was[0] ? I32_MIN : was[0], now[1] > was[1] ? I32_MAX : was[1]];
}

/** A coordinate interval clamped or wrapped into [0, n). */
function fit(v: Interval, n: number, mode: 'clamp' | 'wrap'): Interval {
  if (!v) return null;
  if (mode === 'clamp') return [Math.min(n - 1, Math.max(0, v[0])), Math.min(n - 1, Math.max(0, v[1]))];
  if (v[0] >= 0 && v[1] < n) return v;
  if (v[1] - v[0] + 1 >= n) return [0, n - 1];
  const lo = ((v[0] % n) + n) % n;
  const hi = ((v[1] % n) + n) % n;
  return lo <= hi ? [lo, hi] : [0, n - 1]; // across the edge: the whole axis
}

/** An operation's result over intervals (i32 and bool; f32 values are unbounded). */
function op(e: Extract<Expr, { k: 'op' }>, args: Interval[]): Interval {
  if (e.t === 'bool') return BOOL;
  if (e.t === 'f32') return null;
  const [a, b] = args;
  switch (e.op) {
    case 'i32.add':
      return a && b && i32(a[0] + b[0], a[1] + b[1]);
    case 'i32.sub':
      return a && b && i32(a[0] - b[1], a[1] - b[0]);
    case 'i32.mul': {
      if (!a || !b) return null;
      const p = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]];
      return i32(Math.min(...p), Math.max(...p));
    }
    case 'i32.neg':
      return a && i32(-a[1], -a[0]);
    case 'i32.min':
      return a && b && [Math.min(a[0], b[0]), Math.min(a[1], b[1])];
    case 'i32.max':
      return a && b && [Math.max(a[0], b[0]), Math.max(a[1], b[1])];
    case 'i32.abs':
      return a && i32(a[0] >= 0 ? a[0] : a[1] <= 0 ? -a[1] : 0, Math.max(Math.abs(a[0]), Math.abs(a[1])));
    case 'bool.to_i32':
      return BOOL;
    default:
      // rem, bit operations, shifts, conversions from f32: not modelled.
      return null;
  }
}
