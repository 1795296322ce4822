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
import { newModule } from './module.js';
import { optimise } from './optimise.js';
import { describePlan, planRun, type PlanOptions } from './plan.js';

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
  // analyse (analysis.ts): which values, conditions and loops are the same for the 4 lanes.
  const g = new Gen(m, fn, analyse(fn));
  // plan (plan.ts): interleave (interleave.ts), the interior split (interior.ts), whether to optimise.
  const plan = planRun(g, options);
  dumpAfter('plan', () => describePlan(g, plan, options.tier));
  // emit (emit.ts): the run function; each loop is unrolled (unroll.ts) or keeps a lockstep
  // counter (lockstep.ts) as it is emitted.
  emitRun(g, plan);
  if (dumping('emit')) dumpAfter('emit', () => m.emitText());
  const emitted = performance.now();
  // optimise (optimise.ts): validate, binaryen's -O3 where the plan says, the bytes.
  const bytes = optimise(m, plan.optimize);
  if (times) {
    times.codegen_ms += emitted - start;
    times.binaryen_ms += performance.now() - emitted;
  }
  return bytes;
}
