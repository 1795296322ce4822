// The evaluation pool's band loops: one long piscina task per worker (band-loop.ts) that serves
// run after run. Here: posting a loop with the modules of the runs in flight, seating enough
// loops for a run, ending the loops computing a cancelled run, keeping the error reports they
// send, and what happens when a loop's task ends: it was idle (its thread goes on in piscina), or
// its thread is gone (ended by a cancel, or died: the run it was in fails, and another loop takes
// its place unless threads keep dying).

import { MessageChannel, receiveMessageOnPort, type Worker } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import type { LoopTask } from './band-loop.js';
import { LIVE, LOOP, SLOT, YIELD, ring, type Layout, type LoopError } from './doorbell.js';
import type { LoopModules, LoopPort, ModuleEntry } from './loop-modules.js';

/** A loop's thread dying this many times in a row with runs waiting fails them instead of starting another. */
const CRASH_LIMIT = 3;

/** One band loop as the pool sees it. */
interface Loop extends LoopPort {
  index: number;
  controller: AbortController;
  /** Its piscina task settled (it returned, or its thread is gone). */
  settled?: Promise<unknown>;
  /** Ended by the pool (a cancelled run it was in). */
  terminated?: boolean;
}

/** What the loops need of their pool. */
export interface LoopsOf {
  control: Int32Array;
  at: Layout;
  /** Piscina, made at its first use. */
  piscina: () => Piscina;
  /** Piscina if it was made. */
  made: () => Piscina | undefined;
  modules: LoopModules;
  /** The runs in the slots (the pool's table, only read here). */
  runs: readonly ({ module: ModuleEntry } | undefined)[];
  /** Fail the run in slot `s` (a loop's thread died in it). */
  fail: (s: number, message: string) => void;
  destroyed: () => boolean;
  spinMicros: number;
  spinners: number;
  idleMillis: number;
}

export class BandLoops {
  private readonly loops: (Loop | undefined)[];
  /** Each thread's exit by its threadId, watched from when a loop was posted. */
  private readonly exits = new Map<number, Promise<void>>();
  /** Threads ended under a loop (a cancel, a crash): they counted themselves in the pool's `loaded` too. */
  ended = 0;
  /** Reports of failed bands that came over the loops' ports, by `slot:seq`. */
  private readonly reports = new Map<string, string>();
  private crashes = 0;

  constructor(private readonly pool: LoopsOf) {
    this.loops = new Array(pool.at.loops).fill(undefined);
  }

  /** Each loop's port, or undefined where none is posted (what the module table sends drops to). */
  get ports(): readonly (LoopPort | undefined)[] {
    return this.loops;
  }

  /** Whether any loop is posted. */
  get any(): boolean {
    return this.loops.some((l) => l);
  }

  /** Send `entry`'s module to every loop that lacks it. */
  send(entry: ModuleEntry): void {
    for (const loop of this.loops) if (loop) this.pool.modules.send(loop, entry);
  }

  /** Make sure `seats` loops serve runs (after the bell rang for a run with that many seats). */
  seat(seats: number): void {
    const { control: c, at } = this.pool;
    // Loops enough for the seats: one that left (idle) or is leaving gets another in its place;
    // its CAS against ours decides whether it stays instead (band-loop.ts, leave).
    const serving = (w: number) => this.loops[w] && Atomics.load(c, at.loop(w, LOOP.live)) !== LIVE.leaving;
    let missing = seats;
    for (let w = 0; w < at.loops; w++) if (serving(w)) missing--;
    for (let w = 0; w < at.loops && missing > 0; w++) {
      if (this.loops[w] && Atomics.compareExchange(c, at.loop(w, LOOP.live), LIVE.leaving, LIVE.replaced) !== LIVE.leaving) continue;
      this.startLoop(w);
      missing--;
    }
  }

  /** The threadIds of the threads computing a run's bands now (a loop between runs is in none). */
  get computing(): number[] {
    const { control, at } = this.pool;
    const ids: number[] = [];
    for (let w = 0; w < at.loops; w++) {
      if (this.loops[w] && Atomics.load(control, at.loop(w, LOOP.busy)) !== 0) ids.push(Atomics.load(control, at.loop(w, LOOP.thread)));
    }
    return ids;
  }

  /** End the threads computing a band of slot `s` (a cancel). */
  endIn(s: number): void {
    const { control, at } = this.pool;
    for (let w = 0; w < at.loops; w++) {
      const loop = this.loops[w];
      if (!loop || Atomics.load(control, at.loop(w, LOOP.busy)) !== s + 1) continue;
      loop.terminated = true;
      loop.controller.abort(); // piscina ends the thread and starts another
    }
  }

  /** Until the loops in no run have returned to piscina (the pool's end). */
  async idleSettled(): Promise<void> {
    const { control, at } = this.pool;
    const idle = this.loops.filter((l): l is Loop => !!l && Atomics.load(control, at.loop(l.index, LOOP.busy)) === 0);
    await Promise.all(idle.map((l) => l.settled));
  }

  /** The error a loop reported for run `seq` in slot `s`, once every report sent so far is read. */
  report(s: number, seq: number): string | undefined {
    for (const loop of this.loops) if (loop) this.receive(loop);
    return this.reports.get(`${s}:${seq}`);
  }

  /** Run `seq` in slot `s` is over: its report is not needed any more. */
  forget(s: number, seq: number): void {
    this.reports.delete(`${s}:${seq}`);
  }

  /** A run succeeded: threads dying before it were not dying in a row. */
  ranWell(): void {
    this.crashes = 0;
  }

  /** Keep the error reports a loop sent (read when a run that failed is over). */
  private receive(loop: Loop): void {
    for (let m = receiveMessageOnPort(loop.port); m; m = receiveMessageOnPort(loop.port)) {
      const r = m.message as LoopError;
      this.reports.set(`${r.slot}:${r.seq}`, r.message);
    }
  }

  /** Post loop `w` on piscina, with the modules of the runs in flight. */
  private startLoop(w: number): void {
    const { control, at } = this.pool;
    const piscina = this.pool.piscina();
    for (const t of piscina.threads) this.watch(t);
    const { port1, port2 } = new MessageChannel();
    const loop: Loop = { index: w, port: port1, sent: new Set(), controller: new AbortController() };
    this.loops[w] = loop;
    Atomics.store(control, at.loop(w, LOOP.live), LIVE.serving);
    Atomics.store(control, at.loop(w, LOOP.thread), 0); // written by the loop when it starts
    for (const run of this.pool.runs) if (run) this.pool.modules.send(loop, run.module);
    const task: LoopTask = {
      control,
      port: port2,
      index: w,
      loops: at.loops,
      slots: at.slots,
      generation: Atomics.load(control, YIELD),
      spinMicros: this.pool.spinMicros,
      spinners: this.pool.spinners,
      idleMillis: this.pool.idleMillis,
    };
    loop.settled = piscina.run(task, { name: 'loop', transferList: [port2], signal: loop.controller.signal }).then(
      () => this.loopEnded(loop),
      (e: unknown) => this.loopEnded(loop, e),
    );
  }

  private watch(t: Worker): void {
    if (!this.exits.has(t.threadId)) this.exits.set(t.threadId, new Promise<void>((r) => t.once('exit', () => r())));
  }

  /**
   * A loop's task ended: idle or yielding (its thread goes on in piscina), or its thread is gone
   * (ended by a cancel, or died). A thread that died in a run fails the run; either way its busy
   * word stays until the thread has exited, so the run is not over while the thread could still
   * write into the fields.
   */
  private async loopEnded(loop: Loop, error?: unknown): Promise<void> {
    const { control, at } = this.pool;
    const w = loop.index;
    this.receive(loop);
    loop.port.close();
    if (error === undefined) {
      if (this.loops[w] === loop) this.loops[w] = undefined;
      return;
    }
    const busy = Atomics.load(control, at.loop(w, LOOP.busy));
    const message = error instanceof Error ? error.message : String(error);
    if (busy && !loop.terminated) this.pool.fail(busy - 1, message);
    const thread = Atomics.load(control, at.loop(w, LOOP.thread));
    // A thread piscina still holds is alive and out of the loop (the loop threw): nothing to wait for.
    const alive = this.pool.made()?.threads.some((t) => t.threadId === thread);
    const exited = alive ? undefined : this.exits.get(thread);
    if (exited) {
      await exited;
      this.exits.delete(thread);
      this.ended++;
    }
    if (this.loops[w] !== loop) return;
    Atomics.store(control, at.loop(w, LOOP.busy), 0);
    if (busy) ring(control, at.slot(busy - 1, SLOT.wake));
    this.loops[w] = undefined;
    if (this.pool.destroyed() || !this.pool.runs.some((r) => r)) return;
    // Runs are waiting: another loop in its place, unless threads keep dying.
    if (!loop.terminated && ++this.crashes >= CRASH_LIMIT) {
      for (let s = 0; s < at.slots; s++) this.pool.fail(s, message);
      return;
    }
    this.startLoop(w);
  }
}
