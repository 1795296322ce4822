// The calling thread taking part in a run (EvalPool.run's `here`): it claims bands from the
// slot's counter as one of the pool's workers, by the same code as the loops (bands.ts), so no
// thread is woken to start a short run nor to take its end. Then it waits awake, briefly, for the
// loops' last bands: a sleeping coordinator costs the loop that finishes the run a wake-up.

import { claimBands, failBand, type BandRun } from './bands.js';
import { SLOT, type Layout } from './doorbell.js';
import { runOver } from './run-state.js';

/** How long at least a calling thread that took part in a run waits awake for the loops' last bands, ms. */
const JOIN_WAIT = 0.05;

/**
 * The calling thread takes bands of slot `s` until none are left, then waits awake for the
 * loops' last ones (each began before its own last claim failed) twice as long as one of its
 * bands took, before it leaves the rest to the pool's wait (and the loop finishing the run to
 * wake it). The first error of the run, if it is one of these bands', goes to `failed`.
 */
export function joinRun(control: Int32Array, at: Layout, s: number, here: BandRun, failed: (message: string) => void): void {
  const t0 = performance.now();
  const { bands } = claimBands(control, at, s, here, (e) => {
    if (failBand(control, at, s, e)) failed(e instanceof Error ? e.message : String(e));
  });
  const t1 = performance.now();
  const until = t1 + Math.max(JOIN_WAIT, bands ? (2 * (t1 - t0)) / bands : 0);
  while (!runOver(control, at, s) && performance.now() < until);
  // Only when it gives up: a loop that finished the last band reads this after it counted the
  // band done, and must not sleep for a coordinator that saw that and is already on its way.
  if (!runOver(control, at, s)) Atomics.store(control, at.slot(s, SLOT.awake), 0);
}
