// The last pass: validate the module codegen built, run binaryen's optimiser on it (-O3 and
// loop-invariant code motion) where the plan says, and emit its bytes.

import binaryen from 'binaryen';
import { dumpAfter, dumping } from '../ir/dump.js';
import { InternalCompileError } from './module.js';
import { withCompileHints } from './turbofan.js';

/** Validate (always), optimise (unless told not to: then only `passes`, if any), emit, and free the module. */
export function optimise(m: binaryen.Module, optimize: boolean, passes: readonly string[] = []): Uint8Array<ArrayBuffer> {
  try {
    const problems = captureOutput(() => m.validate());
    if (!problems.result) throw new InternalCompileError(problems.text.trim() || 'binaryen gave no message');
    if (optimize) {
      binaryen.setOptimizeLevel(3);
      binaryen.setShrinkLevel(0);
      binaryen.setFastMath(false);
      // -O3 does not hoist loop-invariant code; uniform loops (blur with a uniform radius)
      // recompute row addresses otherwise.
      m.runPasses(['licm']);
      withoutInlining(() => m.optimize());
    } else if (passes.length) {
      m.runPasses(passes);
    }
    if (dumping('optimise')) dumpAfter('optimise', () => m.emitText());
    // binaryen copies the bytes out of its heap into a fresh ArrayBuffer; V8 is told to compile
    // the functions with TurboFan (turbofan.ts).
    return withCompileHints(m.emitBinary() as Uint8Array<ArrayBuffer>);
  } finally {
    m.dispose();
  }
}

/**
 * Run binaryen's optimiser without its inliner. Inlining the math functions into `run` made V8's
 * code for the corpus's ray marcher slower (sin and cos, called once per vector for the camera
 * before the marching loop: 145 ms of CPU per frame against 110 without, the fast tier's figure);
 * kept as calls, no corpus kernel that calls them in a loop (mandelbrot, P1, P2, stencil,
 * straight, inline) ran measurably slower. The sizes are global: restored after.
 */
function withoutInlining(run: () => void): void {
  const sizes = [binaryen.getAlwaysInlineMaxSize(), binaryen.getFlexibleInlineMaxSize(), binaryen.getOneCallerInlineMaxSize()];
  binaryen.setAlwaysInlineMaxSize(0);
  binaryen.setFlexibleInlineMaxSize(0);
  binaryen.setOneCallerInlineMaxSize(0);
  try {
    run();
  } finally {
    binaryen.setAlwaysInlineMaxSize(sizes[0]);
    binaryen.setFlexibleInlineMaxSize(sizes[1]);
    binaryen.setOneCallerInlineMaxSize(sizes[2]);
  }
}

/** binaryen's validator prints its findings; collect them instead. */
function captureOutput<T>(run: () => T): { result: T; text: string } {
  const chunks: string[] = [];
  const out = process.stdout.write;
  const err = process.stderr.write;
  const keep = (chunk: unknown): boolean => {
    chunks.push(String(chunk));
    return true;
  };
  process.stdout.write = keep as typeof process.stdout.write;
  process.stderr.write = keep as typeof process.stderr.write;
  try {
    return { result: run(), text: chunks.join('') };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}
