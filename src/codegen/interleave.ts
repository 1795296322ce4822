// Interleaved vectors for latency-bound code: data-dependent loops (P4, Mandelbrot-like kernels)
// and short straight-line pointwise bodies (P1's rings: a divide, a square root, a polynomial).
//
// A data-dependent loop on one vector is one dependency chain: each repetition waits for the
// previous one's multiplies and adds, and the core idles most of the time. When the body's top
// level holds such a loop, the x loop first takes K vectors per step (4K elements), each compiled
// by its own Gen view (its own locals; hoisted values, labels and row locals shared), and their
// loops are fused into one loop that runs the body of every vector with a lane still alive, per
// repetition: K independent chains in flight. It stops when no lane of any vector is alive
// (each vector's lanes leave as they would alone). The statements before the loop run per
// vector, in order; those after it per vector that has a lane left, as `list` does. Columns left
// over (fewer than K vectors' worth before the row's end) take the one-vector loop.
//
// A straight-line body (no loops, no gathers) is all "before": the K vectors' statements are
// emitted side by side, statement i of each vector, then statement i + 1, so that the out-of-order
// core sees K independent chains within its window.
//
// Fuel and traps stay exact: each vector counts its own lanes' repetitions; only the first
// vector's lane 0 (the lowest element of the step) traps at once, the other lanes are recorded
// and dropped, and after the step the vectors are checked in order, lowest lane first: the
// element the interpreter traps at names the node.

import binaryen from 'binaryen';
import type { Stmt } from '../ir/ir.js';
import { containsLoop, whileShape } from './analysis.js';
import type { Gen, Ref } from './context.js';
import { anchorInvariants, list, whileBody, whileLevel } from './control.js';
import { fuel, fuelParts, trapCheck } from './fuel.js';
import { anyLane, type Level } from './mask.js';
import { lockstepCode, withShadows } from './shadows.js';
import { storeCode } from './fields.js';
import { gathers } from './interior.js';
import { expandedSize, type UnrollContext } from './unroll.js';
import { localsRead, vectorUses, type VectorUses } from './uses.js';

type Loop = Extract<Stmt, { k: 'loop' }>;

const i32 = binaryen.i32;
const v128 = binaryen.v128;

/** Vectors per step when the body has a loop to interleave (4 measured best on P4, see docs). */
const DEFAULT_FACTOR = 4;
/**
 * Vectors per step for a straight-line pointwise body (6 measured best on P1, 1.25x over one).
 * Such a body is one long dependency chain per vector (divide, square root, a polynomial): side
 * by side, statement by statement, the chains overlap.
 */
const POINTWISE_FACTOR = 6;
/** Straight-line bodies larger than this (IR nodes) take one vector per step. */
const POINTWISE_MAX_SIZE = 400;
/**
 * Loops whose body is larger than this (IR nodes) take one vector per step. A long body already
 * holds independent chains for the core to overlap, and its 4 copies cost binaryen superlinear
 * time: the corpus's sphere tracer (bench/corpus/inline.esn, ~1000 nodes per repetition) took
 * 24-38 s in -O3, 16 s of it in simplify-locals-nostructure. P4's loop is ~20 nodes.
 */
const LOOP_MAX_SIZE = 400;

/** The index in the body's top level of the loop to interleave, or -1. `unroll`: the unroll pass's decisions for the body. */
function fusableLoop(g: Gen, unroll: UnrollContext): number {
  const body = g.fn.body;
  for (let i = 0; i < body.length; i++) {
    const s = body[i];
    if (s.k !== 'loop') {
      // The statements before the loop must not lose lanes (then they are straight-line code).
      if (containsLoop(s)) return -1;
      continue;
    }
    if (g.analysis.uniformConstruct(s)) return -1;
    // A counted loop the unroll pass unrolls is not latency-bound in this way.
    if (unroll.loops.get(s)?.unrolled) return -1;
    if (s.body.some(containsLoop)) return -1;
    if (expandedSize(g.fn, g.subst, s.body) > LOOP_MAX_SIZE) return -1;
    return i;
  }
  return -1;
}

/**
 * The interleave step: how many vectors each step of the x loop takes and where in the body's top
 * level they are fused (the loop they share; the body's length: a straight line side by side), or
 * null for one vector per step. `vectors` overrides the choice (1 turns interleaving off).
 */
export function planInterleave(g: Gen, unroll: UnrollContext, vectors = interleaveFactor(g, unroll)): { vectors: number; at: number } | null {
  const at = vectors > 1 ? interleavePoint(g, unroll) : -1;
  return at >= 0 ? { vectors, at } : null;
}

/** The interleave step's decision, for people (after:interleave). */
export function describeInterleave(g: Gen, step: { vectors: number; at: number } | null): string {
  return step
    ? `${step.vectors} vectors per step, ${step.at < g.fn.body.length ? `sharing the loop at body[${step.at}]` : 'a straight line side by side'}`
    : 'one vector per step';
}

/** Vectors per step for this function: 1 when it has no loop to interleave. */
export function interleaveFactor(g: Gen, unroll: UnrollContext): number {
  if (fusableLoop(g, unroll) >= 0) return DEFAULT_FACTOR;
  return straightLine(g) ? POINTWISE_FACTOR : 1;
}

/** Vectors per step on the fast tier: a loop's, as interleaveFactor; 1 for a straight line. */
export function loopFactor(g: Gen, unroll: UnrollContext): number {
  return fusableLoop(g, unroll) >= 0 ? DEFAULT_FACTOR : 1;
}

/**
 * Where the vectors of a step are fused: the index in the body's top level of the loop they
 * share, the body's length for a straight line (statements side by side), or -1 (no step).
 */
export function interleavePoint(g: Gen, unroll: UnrollContext): number {
  const at = fusableLoop(g, unroll);
  return at < 0 && straightLine(g) ? g.fn.body.length : at;
}

/** No loops, no gathers and small: a pointwise chain, latency-bound per vector. */
export function straightLine(g: Gen): boolean {
  return !g.analysis.hasLoops && !gathers(g.fn.body) && expandedSize(g.fn, g.subst, g.fn.body) <= POINTWISE_MAX_SIZE;
}

export interface Step {
  /** The step loop over columns: leaves g.x0 at the first column it did not cover. */
  loop: Ref[];
  /** Per call (after the call values): the views' trap records. */
  perCall: Ref[];
  /** What each vector's code reads (the uses pass). */
  uses: VectorUses[];
}

/** The loop over columns taking `k` vectors per step, fused at `at` (interleavePoint). */
export function interleavedStep(g: Gen, k: number, at: number): Step {
  const m = g.m;
  const body = g.fn.body;
  const views = Array.from({ length: k }, (_, j) => g.view({ laneZeroTraps: j === 0 }));
  const top = (v: Gen): Level => ({ mask: v.top, stack: [] });

  // Compile every part first: the starts depend on what the bodies used.
  const before = views.map((v) => list(v, body.slice(0, at), top(v)));
  const rest = body.slice(at + 1);
  const loop = at < body.length ? fusedLoop(views, body.slice(0, at), body[at] as Loop, rest.some(containsLoop)) : [];
  const after = views.map((v) => {
    const code = list(v, rest, top(v));
    return code.length ? [m.if(anyLane(v, v.top), m.block(null, code))] : [];
  });
  const stores = views.map((v) => storeCode(v));
  // The uses pass, on all the vectors' code at once (each reads only its own locals), read once if at all.
  let read: ReadonlySet<number> | undefined;
  const reads = () => (read ??= localsRead([...before.flat(), ...loop, ...after.flat(), ...stores.flat()]));
  const uses = views.map((v) => vectorUses(v, reads));
  const starts = views.map((v, j) => {
    const start = v.vectorStart(uses[j]);
    return [
      g.set(v.x0, m.i32.add(g.get(g.x0, i32), g.i32(4 * j))),
      ...(uses[j].xv ? [g.set(v.xv, m.i32x4.add(m.i32x4.splat(g.get(v.x0, i32)), g.lanesI32(0, 1, 2, 3)))] : []),
      ...start,
    ];
  });

  const { x1 } = g.columns();
  // Steps run while all k vectors start inside the row's columns: x0 < x1 - 4 (k - 1).
  const limit = g.callValue(`interleave${k}`, i32, () => m.i32.sub(g.get(x1, i32), g.i32(4 * (k - 1))));
  const label = g.label('step');
  const stepCode: Ref[] = [
    ...starts.flat(),
    ...interleaveLists(before),
    ...(at < body.length ? views.flatMap((v) => anchorInvariants(v, body.slice(0, at), body[at] as Loop)) : []),
    ...loop,
    ...after.flat(),
    ...views.map((v) => trapCheck(v)),
    ...stores.flat(),
    g.set(g.x0, m.i32.add(g.get(g.x0, i32), g.i32(4 * k))),
    m.br(label, m.i32.lt_s(g.get(g.x0, i32), g.get(limit, i32))),
  ];
  return {
    loop: [m.if(m.i32.lt_s(g.get(g.x0, i32), g.get(limit, i32)), m.loop(label, m.block(null, stepCode)))],
    perCall: views.flatMap((v) => v.trapStart()),
    uses,
  };
}

/** Statement i of every list, then statement i + 1 of every list, ...: the chains side by side. */
function interleaveLists(lists: Ref[][]): Ref[] {
  const out: Ref[] = [];
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) for (const l of lists) if (i < l.length) out.push(l[i]);
  return out;
}

/**
 * The loop of every view at once: per repetition, each view with a lane alive runs its fuel
 * count and its body under its alive mask (as varyingLoop does for one vector); the loop repeats
 * while a lane of any view is alive. At the top level, lanes out of fuel leave the views' top
 * masks in `fuel`, so nothing is to restore after the loop.
 */
function fusedLoop(views: Gen[], before: Stmt[], s: Loop, countsRead: boolean): Ref[] {
  const g = views[0];
  const m = g.m;
  const repeat = g.label('fused');
  const enter: Ref[] = [];
  const bodies: Ref[] = [];
  const alive: number[] = [];
  const plain = whileShape(s);
  // Lockstep counters (lockstep.ts): the same in every view, so only the first view follows them
  // and their conjunct is tested once per repetition, before the bodies.
  const ls = plain ? lockstepCode(g, s) : null;
  // Plain loops: one scalar repetition count for all views (views[0].reps), see `head` below.
  const charges: Ref[] = [];
  const slows: Ref[] = [];
  let gate: Ref | null = null;
  for (const v of views) {
    const a = g.local(v128);
    alive.push(a);
    const bodyEnd = g.label('body');
    enter.push(g.set(a, g.get(v.top)));
    if (plain) {
      // No test per vector: a vector whose lanes all left runs on with no effect.
      const top: Level = { mask: v.top, stack: [] };
      const parts = fuelParts(v, s.node, whileLevel(a, top), bodyEnd);
      if (parts) {
        if (v === g) charges.push(parts.reps);
        gate ??= parts.gate;
        if (countsRead) charges.push(parts.count);
        const counts = countsRead ? [] : [g.set(v.counter, m.i32x4.splat(g.get(g.reps, i32)))];
        slows.push(m.block(bodyEnd, [...counts, parts.slow]));
      }
      bodies.push(...withShadows(v, v === g ? ls : null, () => whileBody(v, s, a, top, bodyEnd, false, ls)));
      continue;
    }
    const inner: Level = { mask: a, stack: [{ uniform: false, alive: a }] };
    const code = m.block(bodyEnd, [...fuel(v, s.node, inner, bodyEnd), ...list(v, s.body, inner)]);
    bodies.push(m.if(m.v128.any_true(g.get(a)), code));
  }
  let any = g.get(alive[0]);
  for (const a of alive.slice(1)) any = m.v128.or(any, g.get(a));
  // Plain loops charge every view's fuel at the top of the repetition. Every view runs every
  // repetition and every reps is 0 at the loop (the statements before it have no loops), so
  // views[0].reps stands for all: one count and one test per repetition instead of one per view;
  // the others get its value after the loop. Over the limit, the views' lanes are dropped in
  // view order, before any body runs: only view 0's lane 0 traps at once, so the order of the
  // records against the bodies changes nothing.
  // A lane alive at a repetition was alive at every one before it (masks only lose lanes) and
  // its count was 0 at the loop, so its count is reps. When no loop after this one reads the
  // counts (`countsRead` false), they are not kept per repetition: the slow path, which reads
  // only alive lanes' counts, sets them to reps first.
  // So over the limit every lane still alive is out of fuel: the slow path drops them all and the
  // loop would end. It runs after the loop, which the repetition leaves for it: inside, it would
  // be a join in every repetition where V8 reloads the values it spilled around the slow path.
  const done = g.label('done');
  const leave = ls ? [m.br(done, m.i32.eqz(ls.stay))] : [];
  const loop = (head: Ref[]) => m.loop(repeat, m.block(null, [...head, ...leave, ...bodies, m.br(repeat, m.v128.any_true(any))]));
  enter.push(...(ls?.init ?? []));
  if (!gate) return [...enter, m.block(done, [loop([])])];
  const outOfFuel = g.label('fuel');
  const sync = views.slice(1).map((v) => g.set(v.reps, g.get(g.reps, i32)));
  return [
    ...enter,
    m.block(done, [m.block(outOfFuel, [loop([...charges, m.br(outOfFuel, gate)]), m.br(done)]), ...slows]),
    ...sync,
  ];
}

