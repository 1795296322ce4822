// The evaluation pool's shared control words (Int32, one SharedArrayBuffer per pool), read and
// written by the pool (pool.ts) and by each worker's band loop (band-loop.ts).
//
// A run is posted by writing it into a free slot, marking it open and ringing the bell (a counter
// the idle loops wait on). Each loop claims bands from the slot's counter and counts the ones it
// finished; the one that finishes the last band wakes the pool. A loop says which slot it is in
// (its `busy` word) before it looks at the slot, and the pool reuses a slot only when no loop is
// in it: with sequentially consistent Atomics one of the two always sees the other's write.
//
// Every group of words that different threads write often sits on its own 64-byte line.

/** Words per cache line. */
const LINE = 16;

/** Header words. */
export const BELL = 0;
/** Loops started before the current value return to piscina (a `call`, the pool's end). */
export const YIELD = 1;
/** Loops spinning now (at most the task's `spinners`: the coordinator needs a core too). */
export const SPINNERS = 2;

/** Per loop, its own line: which slot it serves (slot + 1, 0 for none), its thread, whether it runs. */
export const LOOP = { busy: 0, thread: 1, live: 2 } as const;
/** `live`: the loop serves runs; it is leaving; the pool posted another in its place. */
export const LIVE = { leaving: 0, serving: 1, replaced: 2 } as const;

/** Per slot, its own line. */
export const SLOT = {
  state: 0,
  /** The next band to claim. */
  next: 1,
  /** Bands finished. */
  done: 2,
  /** Set on an error or a cancel: no more bands are claimed. */
  abort: 3,
  /** 0, or the first error's kind (ERROR). */
  error: 4,
  /** Bumped (and notified) when the pool should look again: the last band done, a loop leaving an aborted run. */
  wake: 5,
  bands: 6,
  bandRows: 7,
  first: 8,
  rows: 9,
  /** The argument block's address (unsigned). */
  args: 10,
  /** The module's number (the pool's module ids, sent to each loop over its port). */
  module: 11,
  /** The run's number, so a loop's error report is not taken for a later run's in the same slot. */
  seq: 12,
  /** How many loops may take part: all of them, or one fewer per calling thread that does (pool.ts, `here`). */
  seats: 13,
  /** Loops that took a seat (or were refused one). */
  seated: 14,
  /** 1 while the calling thread, taking part, waits awake for the last band: its finisher may spin. */
  awake: 15,
} as const;
export const STATE = { free: 0, open: 1 } as const;
export const ERROR = { none: 0, error: 1, wasmTrap: 2 } as const;

/** Where the loops' lines and the slots' lines start, for a pool of `loops` loops. */
export function layout(loops: number, slots: number) {
  const loopBase = LINE;
  const slotBase = loopBase + loops * LINE;
  return {
    loops,
    slots,
    words: slotBase + slots * LINE,
    loop: (w: number, word: number) => loopBase + w * LINE + word,
    slot: (s: number, word: number) => slotBase + s * LINE + word,
  };
}
export type Layout = ReturnType<typeof layout>;

/** Tell whoever waits on `word` to look again. */
export function ring(control: Int32Array, word: number): void {
  Atomics.add(control, word, 1);
  Atomics.notify(control, word);
}

/**
 * Ring the bell for a run `seats` loops may take part in, waking no more sleeping loops than that
 * (a loop spinning, or about to sleep, reads the bell first: SPINNERS counts it).
 */
export function ringFor(control: Int32Array, seats: number): void {
  Atomics.add(control, BELL, 1);
  Atomics.notify(control, BELL, Math.max(0, seats - Atomics.load(control, SPINNERS)));
}

type WaitAsync = (a: Int32Array, index: number, value: number) => { async: false; value: string } | { async: true; value: Promise<string> };
/** Atomics.waitAsync (Node 20 has it; TypeScript's ES2022 library does not declare it). */
export const waitAsync: WaitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync.bind(Atomics);

/** What the pool sends a loop over its port. */
export type LoopMessage = { id: number; digest: string; module: WebAssembly.Module } | { drop: number };
/** What a loop sends back: the first error of a run (`seq` tells the run from a later one in the same slot). */
export interface LoopError {
  slot: number;
  seq: number;
  message: string;
}
