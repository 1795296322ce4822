// Whether a run in a slot is over, read from the control words (doorbell.ts): by the pool's wait
// for a run, by the calling thread's wait after taking part in one (join.ts), and before the pool
// reuses a slot.

import { LOOP, SLOT, type Layout } from './doorbell.js';

/** Every band of slot `s` is done, or the run stopped and no loop is in it. */
export function runOver(control: Int32Array, at: Layout, s: number): boolean {
  if (Atomics.load(control, at.slot(s, SLOT.done)) === Atomics.load(control, at.slot(s, SLOT.bands))) return true;
  return Atomics.load(control, at.slot(s, SLOT.abort)) !== 0 && !loopInSlot(control, at, s);
}

/** Whether a loop is in slot `s` (the busy word of a thread that died stays until its exit). */
export function loopInSlot(control: Int32Array, at: Layout, s: number): boolean {
  for (let w = 0; w < at.loops; w++) if (Atomics.load(control, at.loop(w, LOOP.busy)) === s + 1) return true;
  return false;
}
