// IrFunction -> WebAssembly module exporting run(args, r0, r1). The passes of codegen, in order:
// this function is their table of contents, and `ENTELECHY_DUMP=after:PASS` prints what each made.
//
// Before codegen (src/ir): `lower` turns each kernel's body into IR as it is checked
// (src/ir/check, src/ir/lower); `fuse` merges each group of kernels into one function
// (src/ir/fuse.ts, via sceneGroups in src/main/engine.ts).

import type { IrFunction } from '../ir/ir.js';
import { dumpAfter, dumping } from '../ir/dump.js';
import { shareValues } from '../ir/share.js';
import { analyse } from './analysis.js';
import { Gen } from './context.js';
import { emitRun } from './emit.js';
import { describeLockstep, planLockstep } from './lockstep.js';
import { describeUnroll, planUnroll } from './unroll.js';
import { describeUses } from './uses.js';
import { newModule } from './module.js';
import { optimise } from './optimise.js';
import { describeInterior, describePlan, planRun, type PlanOptions } from './plan.js';
import { describeInterleave, loopFactor, planInterleave } from './interleave.js';
import { planInterior } from './interior.js';
import { planUnswitch } from './unswitch.js';

export type CompileOptions = PlanOptions;

/** Milliseconds a compile spent in codegen (analyse, plan, emit) and in binaryen (validate, optimise, emit the bytes). */
export interface CompileTimes {
  codegen_ms: number;
  binaryen_ms: number;
}

export function compileFunction(ir: IrFunction, options: CompileOptions = {}, times?: CompileTimes): Uint8Array<ArrayBuffer> {
  const start = performance.now();
  // Shared values as locals (src/ir/share.ts; lowering already did it, an IR built by hand may not).
  const fn = shareValues(ir);
  const m = newModule({ nodes: fn.nodes, fuel: fn.fuel });
  const heading = (step: string) => `${step} ${fn.nodes.join(' + ')}`;
  // analyse (analysis.ts): which values, conditions and loops are the same for the 4 lanes.
  const g = new Gen(m, fn, analyse(fn));
  // unroll (unroll.ts): which counted loops are copied with their counter a constant, in every
  // context a loop is reached in (a loop's bounds may be the counter of an enclosing unrolled loop).
  const unroll = planUnroll(fn);
  dumpAfter('unroll', () => [heading('unroll'), ...orNone(describeUnroll(unroll), 'no counted loop')].join('\n'));
  // interleave (interleave.ts): several vectors per step for a latency-bound loop or straight line.
  // The fast tier interleaves a loop too (on one vector per step, the mandelbrot example's escape
  // loop took 2.4x the CPU), not a straight line (6 vectors side by side cost more to compile
  // than they save in a first frame), and takes no interior version (plan.ts, Tier).
  const fast = options.tier === 'fast';
  const interleave = planInterleave(g, unroll, options.interleave ?? (fast ? loopFactor(g, unroll) : undefined));
  dumpAfter('interleave', () => `${heading('interleave')}\n  ${describeInterleave(g, interleave)}`);
  // interior split (interior.ts): a second version of the vector without edge tests, when a gather
  // it emits (through the unroll pass's contexts) can drop its test.
  const interior = !fast && planInterior(g, unroll, interleave !== null);
  dumpAfter('interior', () => `${heading('interior')}\n  ${describeInterior(interior)}`);
  // unswitch (unswitch.ts): an interior loop per branch of a row-invariant `if` (life's `frame == 0`).
  const unswitch = interior ? planUnswitch(g) : null;
  // plan (plan.ts): those decisions and whether to optimise, in one record the emitter follows.
  const plan = planRun(g, interleave, interior, unswitch, options);
  dumpAfter('plan', () => describePlan(g, plan, options.tier));
  // lockstep (lockstep.ts): the counters of each `while` loop that every lane agrees on, tested once.
  const lockstep = planLockstep(fn, g.analysis, unroll);
  dumpAfter('lockstep', () => [heading('lockstep'), ...orNone(describeLockstep(lockstep), 'no while loop')].join('\n'));
  // emit (emit.ts): the run function, following those decisions. uses (uses.ts) runs inside it, on
  // each vector's code once emitted: the x vector and the top mask are kept only where it reads them.
  const uses = emitRun(g, { ...plan, unroll, lockstep });
  dumpAfter('uses', () => [heading('uses'), ...uses.map((u) => `  ${describeUses(u.vector, u.uses)}`)].join('\n'));
  if (dumping('emit')) dumpAfter('emit', () => m.emitText());
  const emitted = performance.now();
  // optimise (optimise.ts): validate, binaryen's -O3 where the plan says, the bytes.
  const bytes = optimise(m, plan.optimize, options.passes);
  if (times) {
    times.codegen_ms += emitted - start;
    times.binaryen_ms += performance.now() - emitted;
  }
  return bytes;
}

function orNone(lines: string[], none: string): string[] {
  return (lines.length ? lines : [none]).map((l) => `  ${l}`);
}
