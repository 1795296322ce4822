// Fuel: each lane counts the repetitions it runs (a v128 counter); a scalar count of all
// repetitions of the vector bounds every lane's, so lanes are only compared when it passes the
// limit. A lane over the limit is recorded and stops; lane 0 traps at once, others at the end of
// the vector, reporting the lowest lane: the element the interpreter would trap at.

import binaryen from 'binaryen';
import { ARGS } from '../ir/ir.js';
import { fuelLimit } from '../ir/interp.js';
import { P_ARGS, type Gen, type Ref } from './context.js';
import { lane } from './lanes.js';
import { anyLane, getMask, type Level } from './mask.js';

const v128 = binaryen.v128;
const i32 = binaryen.i32;

/**
 * `units` repetitions' fuel: count them for the lanes of the mask; past the limit, stop the
 * lanes over it (trapping at once for lane 0) and branch to `out` if no lane is left.
 */
export function fuel(g: Gen, node: number, lvl: Level, out: string, units = 1): Ref[] {
  const parts = fuelParts(g, node, lvl, out, units);
  if (!parts) return [];
  const m = g.m;
  return [parts.reps, parts.count, m.if(parts.gate, parts.slow)];
}

/** The charge of one repetition of a loop. */
export interface FuelParts {
  /** g.reps += units: a scalar bound of every lane's count. */
  reps: Ref;
  /** The mask's lanes' counts += units. */
  count: Ref;
  /** reps over the limit: only then can a lane be out of fuel. */
  gate: Ref;
  /** Drop (trap or record) the mask's lanes over the limit; leaves `out` when none is left. */
  slow: Ref;
  limit: number;
}

/** fuel()'s parts, for loops that share the scalar count (interleave.ts); null when nothing to charge. */
export function fuelParts(g: Gen, node: number, lvl: Level, out: string, units = 1): FuelParts | null {
  const m = g.m;
  if (g.unroll.charged || units === 0) return null;
  const limit = fuelLimit(g.fn.fuel);
  const over = g.local(v128);
  const dropOver: Ref[] = [];
  for (const c of lvl.stack) {
    if (!c.uniform) dropOver.push(g.set(c.alive!, m.v128.andnot(g.get(c.alive!), g.get(over))));
  }
  dropOver.push(g.set(g.top, m.v128.andnot(g.get(g.top), g.get(over))));
  if (lvl.mask !== g.top && !lvl.stack.some((c) => c.alive === lvl.mask)) {
    dropOver.push(g.set(lvl.mask, m.v128.andnot(g.get(lvl.mask), g.get(over))));
  }
  const slow = m.block(null, [
    g.set(over, m.v128.and(m.i32x4.gt_u(g.get(g.counter), g.splatI32(limit)), getMask(g, lvl.mask))),
    m.if(
      m.v128.any_true(g.get(over)),
      m.block(null, [
        ...(g.laneZeroTraps ? [m.if(m.i32x4.extract_lane(g.get(over), lane(0)), trap(g, g.i32(node)))] : []),
        g.set(g.trapNode, m.v128.bitselect(g.splatI32(node), g.get(g.trapNode), g.get(over))),
        g.set(g.trapped, g.i32(1)),
        ...dropOver,
        m.br(out, m.i32.eqz(anyLane(g, lvl.mask))),
      ]),
    ),
  ]);
  const count = units === 1
    ? m.i32x4.sub(g.get(g.counter), getMask(g, lvl.mask)) // mask lanes are -1
    : m.i32x4.add(g.get(g.counter), m.v128.and(getMask(g, lvl.mask), g.splatI32(units)));
  return {
    reps: g.set(g.reps, m.i32.add(g.get(g.reps, i32), g.i32(units))),
    count: g.set(g.counter, count),
    gate: m.i32.gt_u(g.get(g.reps, i32), g.i32(limit)),
    slow,
    limit,
  };
}

/**
 * Claim the trap word for `node` (compare-and-swap from -1: another band of the run may have
 * trapped first, on another worker), record the element (lane `lane` of the vector: its x, and the
 * row), and trap.
 */
export function trap(g: Gen, node: Ref, lane: Ref = g.i32(0)): Ref {
  const m = g.m;
  const args = () => g.get(P_ARGS, i32);
  const claimed = m.i32.eq(m.i32.atomic.rmw.cmpxchg(ARGS.trap, args(), g.i32(-1), node), g.i32(-1));
  return m.block(null, [
    m.if(claimed, m.block(null, [m.i32.store(ARGS.trapX, 4, args(), m.i32.add(g.get(g.x0, i32), lane)), m.i32.store(ARGS.trapRow, 4, args(), g.get(g.r, i32))])),
    m.unreachable(),
  ]);
}

/** At the end of a vector: if a lane ran out of fuel, trap naming the lowest such lane's node and element. */
export function trapCheck(g: Gen): Ref {
  const m = g.m;
  const nodeOf = (i: number) => m.i32x4.extract_lane(g.get(g.trapNode), lane(i));
  const has = (i: number) => m.i32.ge_s(nodeOf(i), g.i32(0));
  // Lane 0 gets here only when it does not trap at once.
  let node = m.select(has(2), nodeOf(2), nodeOf(3));
  let at = m.select(has(2), g.i32(2), g.i32(3));
  node = m.select(has(1), nodeOf(1), node);
  at = m.select(has(1), g.i32(1), at);
  if (!g.laneZeroTraps) {
    node = m.select(has(0), nodeOf(0), node);
    at = m.select(has(0), g.i32(0), at);
  }
  return m.if(g.get(g.trapped, i32), trap(g, node, at));
}
