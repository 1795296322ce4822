// Interior vectors for gathers along x (P2's blur, P3's life): a second version of the vector
// code without edge tests.
//
// A gather at `x + d` (other axes uniform) loads the 4 neighbours at once when x0 + d .. x0 + d + 3
// lie inside the field's row, else per lane with clamped or wrapped coordinates (fields.ts). That
// test costs a compare and a branch per gather: 100 per vector in a 5 x 5 blur of 4 planes. Most
// vectors are far from the edges, so the vector is compiled twice: the general version, and an
// interior version in which every gather at x + constant loads directly and notes its offset
// here. Per vector one test picks the version: x0 inside [xmin, xmax), where every noted gather
// of every field is inside its row (computed once per call from the fields' widths and the
// offsets' range). The results are the same by construction: the interior version only drops
// tests that hold there. Gathers at x + a non-constant uniform keep their test.

import binaryen from 'binaryen';
import type { Expr, Stmt } from '../ir/ir.js';
import { someExpr, someStmtExpr, unreachable, visitExpr } from '../ir/walk.js';
import type { Gen, Ref } from './context.js';
import { constValue, countedLoop, walkEmitted, type Subst, type UnrollContext } from './unroll.js';

const i32 = binaryen.i32;

/** Offsets beyond this are not noted (the bounds arithmetic stays far from overflow). */
const MAX_OFFSET = 1 << 20;

export class Interior {
  constructor(
    /** Per field: the constant x offsets its gathers take, all of them (offsetSpans). */
    readonly spans = new Map<number, { lo: number; hi: number }>(),
  ) {}

  /**
   * Do the field's gathers share loads within a vector (alignedTap)? When they span 5 or more
   * columns: then 3 loads and 2 shuffles per row replace 5 loads. Life's 3 columns load faster
   * directly: as aligned blocks carried from vector to vector, 1 load and 2 shuffles per row, its
   * loop took 20 % more CPU time (most likely the shuffles taking x64's ports 1 and 5 from its
   * additions; the loads were not the bound: bench/RESULTS.md, issue 19).
   */
  alignedBlocks(f: number): boolean {
    const span = this.spans.get(f);
    return span !== undefined && span.hi - span.lo >= 4;
  }

  /** Per field: the range of the constant x offsets of its direct gathers. */
  readonly offsets = new Map<number, { lo: number; hi: number }>();
  /**
   * Loads of gathered rows made so far in this vector, by row base local and offset: a gather at
   * an odd x0 + d is a shuffle of the loads at d - 1 and d + 1 (alignedTap). Only loads made
   * where every later reader runs count (see `scoped`).
   */
  blocks = new Map<string, number>();

  /** A gather of field f at x0 + d skips its test (directGather said it can): d is noted. */
  note(f: number, d: number): void {
    const known = this.offsets.get(f);
    if (known) {
      known.lo = Math.min(known.lo, d);
      known.hi = Math.max(known.hi, d);
    } else {
      this.offsets.set(f, { lo: d, hi: d });
    }
  }
}

/**
 * The range of interior vectors. `test` picks the interior version: xmin <= x0 < xmax. A gather
 * of field f at x0 + d loads directly when 0 <= x0 + d < limit_f = max(width_f - 3, 0)
 * (fields.ts): for every noted d in [lo, hi] that is x0 >= -lo and x0 < limit_f - hi.
 * `end` (an i32 call value) is min(xmax, x1): from an interior x0, every x0 + 4k below it is
 * interior too (x0 only grows, staying >= xmin) and inside the row's columns.
 */
export function interiorRange(g: Gen, interior: Interior): { test: Ref; end: number } {
  const m = g.m;
  let xmin: Ref | null = null;
  let xmax: Ref | null = null;
  for (const [f, { lo, hi }] of interior.offsets) {
    const min = g.i32(-lo);
    const max = m.i32.sub(g.get(directLimit(g, f), i32), g.i32(hi));
    xmin = xmin ? maxS(g, xmin, min) : min;
    xmax = xmax ? minS(g, xmax, max) : max;
  }
  const lo = g.callValue('interior.min', i32, () => xmin!);
  const hi = g.callValue('interior.max', i32, () => xmax!);
  const end = g.callValue('interior.end', i32, () => minS(g, g.get(hi, i32), g.get(g.columns().x1, i32)));
  const x0 = () => g.get(g.x0, i32);
  return { test: m.i32.and(m.i32.ge_s(x0(), g.get(lo, i32)), m.i32.lt_s(x0(), g.get(hi, i32))), end };
}

/** The larger (or, with `pick` = lt_s, the smaller) of two i32s, each evaluated once. */
function pickS(g: Gen, a: Ref, b: Ref, pick: (x: Ref, y: Ref) => Ref): Ref {
  const ta = g.local(i32);
  const tb = g.local(i32);
  const m = g.m;
  return m.block(null, [g.set(ta, a), g.set(tb, b),
    m.select(pick(g.get(ta, i32), g.get(tb, i32)), g.get(ta, i32), g.get(tb, i32))], i32);
}

const maxS = (g: Gen, a: Ref, b: Ref): Ref => pickS(g, a, b, (x, y) => g.m.i32.gt_s(x, y));
const minS = (g: Gen, a: Ref, b: Ref): Ref => pickS(g, a, b, (x, y) => g.m.i32.lt_s(x, y));

/** max(width_f - 3, 0): x0 + d loads 4 neighbours directly when it is in [0, this). */
export function directLimit(g: Gen, f: number): number {
  const m = g.m;
  return g.callValue(`fast${f}`, i32, () => {
    const widthLess3 = () => m.i32.sub(g.get(g.fieldExtent(f, 0), i32), g.i32(3));
    return m.select(m.i32.gt_s(widthLess3(), g.i32(0)), widthLess3(), g.i32(0));
  });
}

/**
 * Compile `f` as a region that may not run (a branch, a loop body, a block left by a break):
 * blocks loaded before it are reused inside, blocks it loads are forgotten after it.
 */
export function scoped<T>(g: Gen, f: () => T): T {
  const interior = g.interior;
  if (!interior) return f();
  const outer = interior.blocks;
  interior.blocks = new Map(outer);
  try {
    return f();
  } finally {
    interior.blocks = outer;
  }
}

/**
 * The gather at x0 + d of the row starting at byte address `rowBase` (an i32 local computed
 * per row), in the interior version of a field whose gathers span 5 or more columns. Taps at an
 * even d are loads (x0 + d .. x0 + d + 3, 8-byte aligned), each loaded once per vector; a tap at
 * an odd d between two of them is an `i8x16.shuffle` of two lanes of each of its neighbours at
 * d - 1 and d + 1. A 5 x 5
 * blur takes 3 loads and 2 shuffles per row and plane: x64 has one or two ports for shuffles and
 * three for loads, and the 4 shuffles of aligned blocks at x0 - 4, x0, x0 + 4 (one per tap but the
 * centre) bound the loop. All of a row's loads share the address of x0 + lo (lo: the field's
 * lowest offset) plus a static offset, as in interiorTap. In the interior every d in [lo, hi]
 * reads inside the padded row, so every load here does.
 */
export function alignedTap(g: Gen, f: number, rowBase: number, d: number, pre: Ref[]): Ref {
  const m = g.m;
  const blocks = g.interior!.blocks;
  const span = g.interior!.spans.get(f) ?? { lo: d, hi: d };
  const lo = Math.min(span.lo, d);
  const load = (e: number): Ref => {
    const key = `${rowBase}:${e}`;
    let local = blocks.get(key);
    if (local === undefined) {
      local = g.temp(binaryen.v128, interiorTap(g, f, rowBase, e), pre);
      blocks.set(key, local);
    }
    return g.get(local);
  };
  const odd = ((d % 2) + 2) % 2 === 1;
  if (!odd || d - 1 < lo || d + 1 > span.hi) return load(d);
  // Lanes 1, 2 of x0 + d - 1 .. d + 2, then lanes 1, 2 of x0 + d + 1 .. d + 4 (one `shufps`).
  return m.i8x16.shuffle(load(d - 1), load(d + 1), [4, 5, 6, 7, 8, 9, 10, 11, 20, 21, 22, 23, 24, 25, 26, 27]);
}

/**
 * The gather at x0 + d of the row starting at byte address `rowBase` (a per-row local), in the
 * interior version, as one unaligned load. Its address is that of x0 + lo (lo: the field's lowest
 * offset) plus a static offset of 4 (d - lo) bytes, so the gathers of one row share one address
 * and V8 folds the rest into each load (3 address computations per vector in life, not 9). In
 * the interior x0 + lo >= 0: the address does not wrap.
 */
export function interiorTap(g: Gen, f: number, rowBase: number, d: number): Ref {
  const m = g.m;
  const lo = Math.min(g.interior!.spans.get(f)?.lo ?? d, d);
  const shifted = g.rowValue(`tap${rowBase}:${lo}`, i32, () => m.i32.add(g.get(rowBase, i32), g.i32(4 * lo)));
  const at = m.i32.add(g.get(shifted, i32), m.i32.shl(g.get(g.x0, i32), g.i32(2)));
  return m.v128.load(4 * (d - lo), 4, at);
}

/** Per field, the range of the constant x offsets of its gathers once counted loops are unrolled. */
export function offsetSpans(g: Gen, stmts: Stmt[], into = new Map<number, { lo: number; hi: number }>(), subst: Subst = g.subst): Map<number, { lo: number; hi: number }> {
  const note = (f: number, d: number) => {
    const known = into.get(f);
    into.set(f, known ? { lo: Math.min(known.lo, d), hi: Math.max(known.hi, d) } : { lo: d, hi: d });
  };
  const expr = (e: Expr): void =>
    visitExpr(e, (x) => {
      if (x.k !== 'load' || !x.at) return;
      const d = xOffset(g, subst, x.at.coords[0]);
      if (d !== undefined) note(x.field, d);
    });
  stmts.forEach((s, i) => {
    switch (s.k) {
      case 'set':
        return expr(s.e);
      case 'if':
        expr(s.c);
        offsetSpans(g, s.then, into, subst);
        offsetSpans(g, s.else, into, subst);
        return;
      case 'block':
        offsetSpans(g, s.body, into, subst);
        return;
      case 'loop': {
        // Unrolled loops are compiled once per value of their counter: each has its own offsets.
        const c = countedLoop(g.fn, subst, stmts[i - 1], s);
        if (!c) offsetSpans(g, s.body, into, subst);
        else for (let k = 0; k + 1 < c.values.length; k++) offsetSpans(g, c.middle, into, new Map(subst).set(c.v, c.values[k]));
        return;
      }
      case 'break':
        return;
      default:
        unreachable(s);
    }
  });
  return into;
}

/** The x coordinate as `x + d` with d uniform: d's expression and sign, or null. */
export function xPlusUniform(g: Gen, e: Expr): { d: Expr | null; negate: boolean } | null {
  const isX = (a: Expr) => a.k === 'coord' && a.axis === 0;
  if (isX(e)) return { d: null, negate: false };
  if (e.k !== 'op') return null;
  const [a, b] = e.args;
  const uniform = g.analysis.uniformExpr;
  if (e.op === 'i32.add' && isX(a) && uniform(b)) return { d: b, negate: false };
  if (e.op === 'i32.add' && isX(b) && uniform(a)) return { d: a, negate: false };
  if (e.op === 'i32.sub' && isX(a) && uniform(b)) return { d: b, negate: true };
  return null;
}

/** x + d or x - d with d constant (counters of unrolled loops substituted): d, else undefined. */
function xOffset(g: Gen, subst: Subst, e: Expr): number | undefined {
  const at = xPlusUniform(g, e);
  if (!at) return undefined;
  if (!at.d) return 0;
  const d = constValue(subst, at.d);
  return d === undefined ? undefined : at.negate ? -d : d;
}

/**
 * The interior split step: compile a second, interior version of the vector without edge tests
 * when it takes one vector per step (not interleaved) and some gather the vector code emits can
 * drop its test there (directGather), walking the body as emission does through the unroll
 * pass's contexts. Emission then keeps that version without asking (Interior.used says it did).
 */
export function planInterior(g: Gen, unroll: UnrollContext, interleaved: boolean): boolean {
  if (interleaved) return false;
  const direct = (e: Expr, subst: Subst) => someExpr(e, (x) => x.k === 'load' && directGather(g, subst, x) !== undefined);
  return walkEmitted(g.fn.body, unroll, (s, ctx) =>
    s.k === 'set' ? direct(s.e, ctx.subst)
    : s.k === 'if' ? constValue(ctx.subst, s.c) === undefined && direct(s.c, ctx.subst)
    : false);
}

/**
 * A gather the interior version loads without a test (fields.ts, gather): at x + d along x with
 * d constant here (within MAX_OFFSET), the other coordinates uniform. Its d, else undefined.
 */
export function directGather(g: Gen, subst: Subst, e: Extract<Expr, { k: 'load' }>): number | undefined {
  if (!e.at) return undefined;
  const uniform = e.at.coords.map((c) => g.analysis.uniformExpr(c));
  if (uniform.every((u) => u) || !uniform.slice(1).every((u) => u)) return undefined;
  const fast = xPlusUniform(g, e.at.coords[0]);
  if (!fast) return undefined;
  const offset = fast.d ? constValue(subst, fast.d) : 0;
  const d = offset === undefined ? undefined : fast.negate ? -offset : offset;
  return d !== undefined && Math.abs(d) <= MAX_OFFSET ? d : undefined;
}

/** Does the body gather (so that an interior version may pay for compiling the body twice)? */
export function gathers(stmts: Stmt[]): boolean {
  return someStmtExpr(stmts, (e) => e.k === 'load' && e.at !== undefined);
}
