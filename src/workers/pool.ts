// The evaluation pool: runs a compiled module's rows on worker threads over the shared memory.
//
// Piscina owns the threads (start, replacement, end); each thread runs one long task, a band loop
// (band-loop.ts, posted and replaced by loops.ts), that serves run after run. A run is written into
// a slot of shared control words and the loops are woken by a doorbell (doorbell.ts); they claim
// bands of `bandRows` rows from the slot's counter until none are left, so a slow worker simply
// takes fewer bands, and the one that finishes the last band wakes the pool (Atomics.waitAsync).
// No message per run: a message to a worker and back cost ~0.2 ms per run, a third of a
// 1024 x 1024 life step (bench/RESULTS.md). A short run's caller may take bands too (join.ts).
// Modules go to each loop once, over its port, numbered (loop-modules.ts).
// Results are bit-identical whatever the worker count and band size: every row is computed by
// the same code, exactly once.

import os from 'node:os';
import { Piscina } from 'piscina';
import { trappedElement, trappedNode } from '../ir/fuel-trap.js';
import type { BandRun } from './bands.js';
import { BELL, ERROR, LOOP, SLOT, STATE, YIELD, layout, ring, ringFor, type Layout, waitAsync } from './doorbell.js';
import { joinRun } from './join.js';
import { loadedCounter, untilLoaded } from './loaded.js';
import { LoopModules, type ModuleEntry } from './loop-modules.js';
import { BandLoops } from './loops.js';
import { loopInSlot, runOver } from './run-state.js';
import { WORKER_EXEC_ARGV } from './exec-argv.js';
import { logThreadErrors } from './thread-errors.js';


/** A run trapped on fuel: `trap` is the node index the module wrote into the trap word. */
export class PoolTrap extends Error {
  constructor(
    readonly trap: number,
    /** The element the trap recorded (fuel-trap.ts). */
    readonly element: readonly number[],
    message = `trapped in node #${trap}`,
  ) {
    super(message);
    this.name = 'PoolTrap';
  }
}

export const DEFAULT_BAND_ROWS = 32;
/** The fewest rows a band of a frame's run takes (bandRowsFor). */
const MIN_BAND_ROWS = 8;

/**
 * Rows per band of a frame's run over `rows` rows when the session names none: 32, or fewer, down
 * to 8, so that a run under 1024 rows still has 32 bands. The pool's threads claim bands until
 * none are left, so a run ends when its last band does: with the 8 bands of 32 rows of a 256-row
 * frame, the ray marcher's or the inline corpus scene's center bands (the costly ones) left one
 * thread working alone for 1-1.5 ms at the end of a 17-34 ms frame (bench/RESULTS.md, issue 17).
 * A band costs only its claim (no row is computed twice: fusion reads a producer at its own
 * element), but from 1024 rows on bands of 8 made P2 and P3 slower, so large frames keep 32.
 */
export function bandRowsFor(rows: number): number {
  return Math.min(DEFAULT_BAND_ROWS, Math.max(MIN_BAND_ROWS, Math.floor(rows / 32)));
}
/** Runs in flight at once; more wait for a slot. */
const SLOTS = 16;

/** A run in a slot. */
interface Run {
  seq: number;
  module: ModuleEntry;
  /** Why it failed, when the pool knows (a loop's thread died in it). */
  failure?: string;
}

export interface PoolOptions {
  workers?: number;
  /** Start the threads at the first run (a session with --workers 1 may never need its one). */
  lazy?: boolean;
  /** How long a loop spins on the bell after its last band before sleeping (bench/experiments/dispatch.ts varies it). */
  spinMicros?: number;
  /** How many loops may spin at once; default the cores less one (the coordinator's). */
  spinners?: number;
  /** How long a loop sleeps without a run before its thread goes back to piscina. */
  idleMillis?: number;
}

export class EvalPool {
  readonly workers: number;
  private made?: Piscina;

  /** The threads that ran this pool's work: `workers` once started, else none (a lazy pool a render never needed). */
  get used(): number {
    return this.made ? this.workers : 0;
  }
  private destroyed = false;
  /** Workers that finished loading (loaded.ts). */
  private readonly loaded = loadedCounter();
  private readonly spinMicros: number;
  private readonly spinners: number;
  private readonly idleMillis: number;

  private readonly at: Layout;
  private readonly control: Int32Array;
  private readonly runs: (Run | undefined)[] = new Array(SLOTS).fill(undefined);
  private seq = 0;
  private readonly modules = new LoopModules();
  private readonly loops: BandLoops;
  private inFlight = 0;

  constructor(
    private readonly memory: WebAssembly.Memory,
    options: PoolOptions = {},
  ) {
    this.workers = Math.max(1, Math.floor(options.workers ?? os.availableParallelism()));
    this.spinMicros = options.spinMicros ?? 100;
    this.spinners = options.spinners ?? os.availableParallelism() - 1;
    this.idleMillis = options.idleMillis ?? 1000;
    this.at = layout(this.workers, SLOTS);
    this.control = new Int32Array(new SharedArrayBuffer(this.at.words * 4));
    this.loops = new BandLoops({
      control: this.control,
      at: this.at,
      piscina: () => this.piscina,
      made: () => this.made,
      modules: this.modules,
      runs: this.runs,
      fail: (s, message) => this.fail(s, message),
      destroyed: () => this.destroyed,
      spinMicros: this.spinMicros,
      spinners: this.spinners,
      idleMillis: this.idleMillis,
    });
    if (!options.lazy) void this.piscina;
  }

  private get piscina(): Piscina {
    this.made ??= logThreadErrors(new Piscina({
      filename: new URL('./eval-worker.js', import.meta.url).href,
      minThreads: this.workers,
      maxThreads: this.workers,
      concurrentTasksPerWorker: 1,
      idleTimeout: Infinity,
      workerData: { memory: this.memory, loaded: this.loaded },
      execArgv: [...WORKER_EXEC_ARGV],
    }), 'evaluation');
    return this.made;
  }

  /**
   * Until every thread has started and loaded (or 10 s). A benchmark waits for it before timing:
   * a thread's start costs ~35 ms of CPU and ends 130-300 ms after the pool is made, longer than
   * a 1024 x 1024 life measurement takes, which it overlapped (bench/run.ts).
   */
  async started(): Promise<void> {
    void this.piscina;
    await untilLoaded(this.loaded, () => this.workers);
  }

  /** Runs and calls in flight (for leak checks, and to see a frame is running). */
  get pending(): number {
    return this.inFlight;
  }

  /** Threads running now (replacements of ended ones included). */
  get threads(): number {
    return this.made?.threads.length ?? 0;
  }

  /** The threadIds of the threads computing a run's bands now (a loop between runs is in none). */
  get computing(): number[] {
    return this.loops.computing;
  }

  /**
   * Run rows [first, first + rows) of `module` (which imports the shared memory and exports
   * `run(args, r0, r1)`). Resolves once every band is done; rejects once, with the first error,
   * when no worker is still in the run: a PoolTrap if the module wrote a node index into the trap
   * word (args + 12; the caller sets it to -1 beforehand), otherwise an Error with its message.
   * `tasks` is how many workers could take part.
   *
   * With `here` (the module's run function on the calling thread) the calling thread takes bands
   * too, as one of the pool's `workers` (one loop fewer is seated): no thread is woken to start
   * the run nor to take its end, which cost a short run (a 1024 x 1024 life step) a quarter of its
   * time. It blocks the calling thread for its share of the run and cannot be cancelled meanwhile:
   * for runs provably short only (the engine decides, work.ts).
   *
   * When `signal` aborts, the workers running the run's bands are ended (piscina starts others in
   * their place) and, once they are gone and no longer touch the memory, the run rejects with
   * the signal's reason.
   */
  async run(
    module: WebAssembly.Module,
    digest: string,
    args: number,
    rows: number,
    bandRows = DEFAULT_BAND_ROWS,
    signal?: AbortSignal,
    first = 0,
    here?: BandRun,
  ): Promise<{ tasks: number; bands: number }> {
    if (this.destroyed) throw new Error('the evaluation pool was destroyed');
    if (signal?.aborted) throw signal.reason;
    bandRows = Math.max(1, Math.floor(bandRows));
    const bands = rows > 0 ? Math.ceil(rows / bandRows) : 0;
    if (bands === 0) return { tasks: 0, bands: 0 };
    this.inFlight++;
    try {
      const entry = this.modules.take(digest, module, this.loops.ports);
      const run: Run = { seq: ++this.seq, module: entry };
      const s = await this.acquire(run);
      try {
        this.open(s, run, { bands, bandRows, first, rows, args }, here ? this.workers - 1 : this.workers);
        if (here) joinRun(this.control, this.at, s, here, (message) => void (run.failure = message));
        await this.finished(s, signal);
        if (signal?.aborted) throw signal.reason;
        this.check(s, run, args, bands);
        this.loops.ranWell();
        return { tasks: Math.min(this.workers, bands), bands };
      } finally {
        Atomics.store(this.control, this.at.slot(s, SLOT.state), STATE.free);
        this.runs[s] = undefined;
        this.loops.forget(s, run.seq);
        entry.uses--;
      }
    } finally {
      this.inFlight--;
    }
  }

  /** Write the run into slot `s`, open it, ring, and make sure `seats` loops run. */
  private open(s: number, run: Run, r: { bands: number; bandRows: number; first: number; rows: number; args: number }, seats: number): void {
    const c = this.control;
    const word = (w: number) => this.at.slot(s, w);
    this.loops.send(run.module);
    Atomics.store(c, word(SLOT.next), 0);
    Atomics.store(c, word(SLOT.done), 0);
    Atomics.store(c, word(SLOT.abort), 0);
    Atomics.store(c, word(SLOT.error), ERROR.none);
    Atomics.store(c, word(SLOT.bands), r.bands);
    Atomics.store(c, word(SLOT.bandRows), r.bandRows);
    Atomics.store(c, word(SLOT.first), r.first);
    Atomics.store(c, word(SLOT.rows), r.rows);
    Atomics.store(c, word(SLOT.args), r.args | 0);
    Atomics.store(c, word(SLOT.module), run.module.id);
    Atomics.store(c, word(SLOT.seq), run.seq);
    Atomics.store(c, word(SLOT.seats), seats);
    Atomics.store(c, word(SLOT.seated), 0);
    Atomics.store(c, word(SLOT.awake), seats < this.workers ? 1 : 0);
    Atomics.store(c, word(SLOT.state), STATE.open);
    if (seats === 0) return;
    ringFor(c, seats);
    this.loops.seat(seats);
  }

  /** Until every band is done, or the run stopped and no loop is in it; a cancel stops it. */
  private async finished(s: number, signal?: AbortSignal): Promise<void> {
    const wake = this.at.slot(s, SLOT.wake);
    const onAbort = () => this.cancel(s);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort(); // while it waited for a slot
    try {
      for (;;) {
        const seen = Atomics.load(this.control, wake);
        if (runOver(this.control, this.at, s)) return;
        const waited = waitAsync(this.control, wake, seen);
        if (waited.async) await waited.value;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** A cancel: no more bands are claimed, and the threads computing one are ended. */
  private cancel(s: number): void {
    Atomics.store(this.control, this.at.slot(s, SLOT.abort), 1);
    this.loops.endIn(s);
    ring(this.control, this.at.slot(s, SLOT.wake));
  }

  /** Fail the run in slot `s` from here (its loop's thread died). */
  private fail(s: number, message: string): void {
    const run = this.runs[s];
    if (!run) return;
    run.failure ??= message;
    Atomics.compareExchange(this.control, this.at.slot(s, SLOT.error), ERROR.none, ERROR.error);
    Atomics.store(this.control, this.at.slot(s, SLOT.abort), 1);
    ring(this.control, this.at.slot(s, SLOT.wake));
  }

  /** Throw the run's error, if it had one. */
  private check(s: number, run: Run, args: number, bands: number): void {
    const kind = Atomics.load(this.control, this.at.slot(s, SLOT.error));
    if (kind !== ERROR.none) {
      const reported = this.loops.report(s, run.seq);
      const message = run.failure ?? reported ?? 'a worker failed without saying why';
      const words = new Int32Array(this.memory.buffer);
      const trap = kind === ERROR.wasmTrap ? trappedNode(words, args) : -1;
      if (trap >= 0) throw new PoolTrap(trap, trappedElement(words, args), message);
      throw new Error(message);
    }
    const done = Atomics.load(this.control, this.at.slot(s, SLOT.done));
    if (done !== bands) throw new Error(`evaluation pool: ${done} of ${bands} bands computed`);
  }

  /** Take a free slot no loop is still in (a loop may be on its way out of a finished run) for `run`. */
  private async acquire(run: Run): Promise<number> {
    for (;;) {
      for (let s = 0; s < SLOTS; s++) {
        if (this.runs[s] || loopInSlot(this.control, this.at, s)) continue;
        this.runs[s] = run;
        return s;
      }
      await new Promise((r) => setImmediate(r));
    }
  }

  /**
   * Run one task of another kind on a worker: the named export of eval-worker.ts (a frame's PNG
   * strips, field-png.ts), given `task` and the shared memory. The band loops go back to piscina
   * to make room for it (the next run posts them again).
   */
  async call<T>(name: string, task: object): Promise<T> {
    if (this.destroyed) throw new Error('the evaluation pool was destroyed');
    this.inFlight++;
    try {
      if (this.loops.any) this.yieldLoops();
      return (await this.piscina.run(task, { name })) as T;
    } finally {
      this.inFlight--;
    }
  }

  private yieldLoops(): void {
    Atomics.add(this.control, YIELD, 1);
    ring(this.control, BELL);
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    const piscina = this.made;
    if (!piscina) return;
    this.yieldLoops();
    for (let s = 0; s < SLOTS; s++) this.fail(s, 'the evaluation pool was destroyed');
    // Let the loops that are in no run return to piscina first: a loop's answer that comes after
    // piscina has ended its thread is an 'error' event on the pool (an uncaught exception).
    await this.loops.idleSettled();
    await untilLoaded(this.loaded, () => piscina.threads.length + this.loops.ended);
    await piscina.destroy();
    // Every thread has exited (piscina settles no task it ended here): no loop is in a run now.
    for (let w = 0; w < this.workers; w++) Atomics.store(this.control, this.at.loop(w, LOOP.busy), 0);
    for (let s = 0; s < SLOTS; s++) ring(this.control, this.at.slot(s, SLOT.wake));
  }
}
