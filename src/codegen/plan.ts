// The decisions codegen takes for a whole function before it emits anything (the interleave and
// interior split steps, and whether to optimise), in one record the emitter follows (and
// `ENTELECHY_DUMP=after:plan` prints). The loops' decisions join it after: which counted loops
// to unroll in which context (unroll.ts) and each `while` loop's lockstep counters (lockstep.ts).

import type { LockstepPlan } from './lockstep.js';
import type { UnrollContext } from './unroll.js';

import type { Gen } from './context.js';
import { describeInterleave, straightLine } from './interleave.js';
import { describeUnswitch, type If } from './unswitch.js';

/**
 * Which module to make. `optimised` (the default): interleaving, the interior split and
 * binaryen's -O3 where they pay. `fast`: what a live edit runs first (docs/architecture.md,
 * Tiers): a loop interleaved, a straight line one vector per step, no interior version, no
 * binaryen optimiser; still SIMD, and bit for bit the same results (every pass is exact), in a
 * fraction of the compile time.
 */
export type Tier = 'fast' | 'optimised';
export const TIERS: readonly Tier[] = ['fast', 'optimised'];

export interface PlanOptions {
  tier?: Tier;
  /** Run binaryen's optimiser (-O3). Default: yes, except for straight-line bodies. */
  optimize?: boolean;
  /** Vectors per step for latency-bound loops (interleave.ts); 1 turns interleaving off. */
  interleave?: number;
  /** binaryen passes to run where -O3 does not (experiments: bench/experiments/tier-frames.ts). */
  passes?: readonly string[];
}

export interface RunPlan {
  /**
   * Several vectors per step (interleave.ts): how many, and where in the body's top level they
   * are fused (the loop they share; the body's length: a straight line side by side).
   */
  interleave: { vectors: number; at: number } | null;
  /**
   * Compile a second, interior version of the vector without edge tests (interior.ts): the body
   * gathers and takes one vector per step. Kept only if some gather used it.
   */
  interior: boolean;
  /**
   * With an interior version: the row-invariant `if` whose branches each get an interior loop of
   * their own (unswitch.ts), else null.
   */
  unswitch: If | null;
  /** Run binaryen's -O3: it buys a straight-line body nothing at run time and costs ~90 ms on its six vectors. */
  optimize: boolean;
}

/** The plan with the loops' decisions: what emission follows (emit.ts). */
export interface EmitPlan extends RunPlan {
  /** The unroll pass's decisions, from the body's context down (unroll.ts). */
  unroll: UnrollContext;
  /** The lockstep pass's findings (lockstep.ts). */
  lockstep: LockstepPlan;
}

/** The plan: the interleave and interior split steps' decisions, and whether to optimise (not on the fast tier). */
export function planRun(g: Gen, interleave: RunPlan['interleave'], interior: boolean, unswitch: If | null, options: PlanOptions = {}): RunPlan {
  return { interleave, interior, unswitch: interior ? unswitch : null, optimize: options.optimize ?? (options.tier !== 'fast' && !straightLine(g)) };
}

/** The plan for people (after:plan). */
export function describePlan(g: Gen, plan: RunPlan, tier: Tier = 'optimised'): string {
  return [`plan ${g.fn.nodes.join(' + ')}${tier === 'fast' ? ' (fast tier)' : ''}`, `  interleave: ${describeInterleave(g, plan.interleave)}`, `  interior split: ${describeInterior(plan.interior)}`, ...(plan.interior ? [`  unswitch: ${describeUnswitch(plan.unswitch)}`] : []), `  optimise: ${plan.optimize ? 'binaryen -O3' : tier === 'fast' ? 'no (the fast tier)' : 'no (a straight line)'}`].join('\n');
}

export function describeInterior(interior: boolean): string {
  return interior ? 'yes (a gather at x + constant drops its edge test)' : 'no';
}
