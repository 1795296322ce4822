// IrFunction -> WebAssembly module exporting run(args, r0, r1). The passes of codegen, in order:
// this function is their table of contents, and `ENTELECHY_DUMP=after:PASS` prints what each made.
//
// Before codegen (src/ir): `lower` turns each kernel's body into IR as it is checked
// (src/ir/check, src/ir/lower); `fuse` merges each group of kernels into one function
// (src/ir/fuse.ts, via sceneGroups in src/main/engine.ts).

import type { IrFunction } from '../ir/ir.js';
import { dumpAfter, dumping } from '../ir/dump.js';
import { analyse } from './analysis.js';
import { Gen } from './context.js';
import { emitRun } from './emit.js';
import { newModule } from './module.js';
import { optimise } from './optimise.js';
import { describePlan, planRun, type PlanOptions } from './plan.js';

export type CompileOptions = PlanOptions;

export function compileFunction(fn: IrFunction, options: CompileOptions = {}): Uint8Array<ArrayBuffer> {
  const m = newModule({ nodes: fn.nodes, fuel: fn.fuel });
  // analyse (analysis.ts): which values, conditions and loops are the same for the 4 lanes.
  const g = new Gen(m, fn, analyse(fn));
  // plan (plan.ts): interleave (interleave.ts), the interior split (interior.ts), whether to optimise.
  const plan = planRun(g, options);
  dumpAfter('plan', () => describePlan(g, plan));
  // emit (emit.ts): the run function; each loop is unrolled (unroll.ts) or keeps a lockstep
  // counter (lockstep.ts) as it is emitted.
  emitRun(g, plan);
  if (dumping('emit')) dumpAfter('emit', () => m.emitText());
  // optimise (optimise.ts): validate, binaryen's -O3 where the plan says, the bytes.
  return optimise(m, plan.optimize);
}
