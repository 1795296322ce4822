// The compile worker's warm-up (issue 17: an edit's compile). V8 first runs our codegen's
// JavaScript and binaryen's glue on baseline code and optimises a function only once it has run a
// while, so a young worker compiled an edit's fast tier in 15-60 ms against 5-10 ms once warm
// (bench/RESULTS.md, "The compile worker warmed with the session's own scene"). A session's first
// edits paid for that warming. Here the worker compiles the session's own groups at the fast tier
// a few times while it has nothing else to do and throws the bytes away: the code paths an edit of
// that scene takes are the ones warmed.
//
// A real compile goes first: each warm-up compile is one macrotask (a request that arrives waits
// for at most that one), none starts until the worker has been idle IDLE_MS, and the warm-up stops
// after WARM_COMPILES compiles or WARM_MS of its own time, whichever comes first (on a busy machine
// every compile takes longer: it then does fewer). Its first error ends it: a warm-up that fails
// costs nothing but itself.
//
// Frames go first too: a compile starts only when the process was quiet over the IDLE_MS before it
// (`busy`: the worker measures the process's CPU). Run back to back, the warm-up took a core from
// the first frames after opening: the first 10 frames of noise took 767-822 ms against 377-419
// without it. With frames running non-stop (a Player), it waits, and the edits warm the worker.

import type { IrFunction } from '../ir/ir.js';

/** Idle time before each warm-up compile: requests in a burst are not interleaved with it. */
export const IDLE_MS = 30;
/** Compiles in all (groups round-robin); 20-25 edits of one scene made the worker as fast as this does. */
export const WARM_COMPILES = 24;
/** Wall time spent compiling, at most (milliseconds). */
export const WARM_MS = 1000;

/** Past this share of a core over the gap measured, the process is running frames: the warm-up waits. */
export const BUSY_CORES = 0.25;

let since = { at: performance.now(), cpu: process.cpuUsage() };
/** Whether the process (every thread) used more than BUSY_CORES since the last call: the worker's `busy`. */
export function processBusy(): boolean {
  const now = { at: performance.now(), cpu: process.cpuUsage() };
  const used = (now.cpu.user - since.cpu.user + now.cpu.system - since.cpu.system) / 1000;
  const busy = used > (now.at - since.at) * BUSY_CORES;
  since = now;
  return busy;
}

/** What a warm-up did so far. */
export interface Warmth {
  compiles: number;
  /** Milliseconds spent compiling. */
  millis: number;
  done: boolean;
  error?: string;
}

/**
 * Warm `compile` up in the background with `irs` (see the top of this file); `lastRequest()` is
 * when the worker last answered a request, `busy()` whether the process was busy since it was last
 * asked. Returns its progress, updated as it goes.
 */
export function warmUp(irs: IrFunction[], compile: (ir: IrFunction) => void, lastRequest: () => number, busy: () => boolean = () => false, limits = { compiles: WARM_COMPILES, millis: WARM_MS }): Warmth {
  const warmth: Warmth = { compiles: 0, millis: 0, done: !irs.length };
  const step = () => {
    const idle = performance.now() - lastRequest();
    // `busy` is asked every time: it measures the process since it was last asked.
    if (busy() || idle < IDLE_MS) {
      setTimeout(step, IDLE_MS);
      return;
    }
    const start = performance.now();
    try {
      compile(irs[warmth.compiles % irs.length]);
    } catch (e) {
      warmth.error = (e as Error)?.message ?? String(e);
      warmth.done = true;
      return;
    }
    warmth.millis += performance.now() - start;
    warmth.compiles++;
    if (warmth.compiles >= limits.compiles || warmth.millis >= limits.millis) warmth.done = true;
    else {
      busy(); // from now: the next step judges the gap after this compile, not the compile
      setTimeout(step, IDLE_MS);
    }
  };
  if (!warmth.done) {
    busy();
    setTimeout(step, IDLE_MS);
  }
  return warmth;
}
