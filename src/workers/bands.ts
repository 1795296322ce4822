// Claiming a run's bands from its slot (doorbell.ts): the one loop that the band loops
// (band-loop.ts) and a calling thread taking part in a run (pool.ts, `here`) both run, so every
// band is computed by the same code, exactly once, whichever thread takes it.

import { ERROR, SLOT, ring, type Layout } from './doorbell.js';

export type BandRun = (args: number, r0: number, r1: number) => void;

/**
 * Claim bands of slot `s` and run them until none are left or the run stopped. `bands` is how
 * many this thread ran (a band that threw counts), `last` whether it finished the run's last
 * band (and woke the pool). A band's error goes to `fail` once the run is stopped (failBand).
 */
export function claimBands(control: Int32Array, at: Layout, s: number, run: BandRun, fail: (e: unknown) => void): { bands: number; last: boolean } {
  const word = (w: number) => at.slot(s, w);
  const bands = Atomics.load(control, word(SLOT.bands));
  const bandRows = Atomics.load(control, word(SLOT.bandRows));
  const first = Atomics.load(control, word(SLOT.first));
  const rows = Atomics.load(control, word(SLOT.rows));
  const args = Atomics.load(control, word(SLOT.args)) >>> 0;
  let ran = 0;
  let last = false;
  try {
    for (;;) {
      if (Atomics.load(control, word(SLOT.abort)) !== 0) break;
      const b = Atomics.add(control, word(SLOT.next), 1);
      if (b >= bands) break;
      ran++;
      const r0 = b * bandRows;
      run(args, first + r0, first + Math.min(rows, r0 + bandRows));
      if (Atomics.add(control, word(SLOT.done), 1) + 1 === bands) {
        ring(control, word(SLOT.wake));
        last = true;
      }
    }
  } catch (e) {
    fail(e);
  }
  return { bands: ran, last };
}

/** Stop slot `s`'s run for error `e`: whether it is the run's first error (the one reported). */
export function failBand(control: Int32Array, at: Layout, s: number, e: unknown): boolean {
  const kind = e instanceof WebAssembly.RuntimeError ? ERROR.wasmTrap : ERROR.error;
  const first = Atomics.compareExchange(control, at.slot(s, SLOT.error), ERROR.none, kind) === ERROR.none;
  Atomics.store(control, at.slot(s, SLOT.abort), 1);
  return first;
}
