// A worker's band loop (the pool's dispatch, doorbell.ts): one long piscina task that serves run
// after run without a message per run. After a run it spins on the bell for a moment (a frame's
// next group, or a playing session's next step, finds it awake), then sleeps in Atomics.wait
// (no CPU), and after a longer idle time returns to piscina, which then holds an idle thread as
// before (unreferenced: it keeps no process alive). At most `spinners` loops spin at once, so
// spinning never takes the core the coordinator needs to take a run's end and post the next.

import { receiveMessageOnPort, threadId, type MessagePort } from 'node:worker_threads';
import { claimBands, failBand, type BandRun as Run } from './bands.js';
import { BELL, LIVE, LOOP, SLOT, SPINNERS, STATE, YIELD, layout, ring, type LoopError, type LoopMessage } from './doorbell.js';

export interface LoopTask {
  control: Int32Array;
  /** Modules from the pool; this loop's errors to it. */
  port: MessagePort;
  /** This loop's line in the control words. */
  index: number;
  loops: number;
  slots: number;
  /** The YIELD value when the pool posted it: a larger one sends it back to piscina. */
  generation: number;
  /** How long to spin after the last band before sleeping, microseconds. */
  spinMicros: number;
  /** How many loops may spin at once (the cores less the coordinator's). */
  spinners: number;
  /** How long to sleep without a run before returning to piscina, milliseconds. */
  idleMillis: number;
}

/** Serve runs until idle or asked to yield; `runner` gives a module's run function (instances cached by digest). */
export function bandLoop(task: LoopTask, runner: (module: WebAssembly.Module, digest: string) => Run): 'idle' | 'yield' {
  const { control, port, index, generation } = task;
  const at = layout(task.loops, task.slots);
  const busy = at.loop(index, LOOP.busy);
  const live = at.loop(index, LOOP.live);
  const modules = new Map<number, { digest: string; module: WebAssembly.Module }>();
  const receive = () => {
    for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
      const msg = m.message as LoopMessage;
      if ('drop' in msg) modules.delete(msg.drop);
      else modules.set(msg.id, { digest: msg.digest, module: msg.module });
    }
  };
  const fail = (s: number, e: unknown) => {
    // The first error of the run is the one reported; the others stop at the abort.
    if (!failBand(control, at, s, e)) return;
    const report: LoopError = { slot: s, seq: Atomics.load(control, at.slot(s, SLOT.seq)), message: e instanceof Error ? e.message : String(e) };
    port.postMessage(report);
  };

  /**
   * Set when this loop finished a run's last band: the coordinator takes the run's end now and
   * needs a core, so this loop sleeps at once (when another program holds the other core, its
   * spin held the coordinator back for the whole spin: bench/RESULTS.md).
   */
  let ended = false;

  /** Take bands of slot `s` until none are left; false if it was not open for us (or no seat was left). */
  const serve = (s: number): boolean => {
    const word = (w: number) => at.slot(s, w);
    if (Atomics.load(control, word(SLOT.state)) !== STATE.open) return false;
    if (Atomics.load(control, word(SLOT.next)) >= Atomics.load(control, word(SLOT.bands))) return false;
    // In the slot before reading it: the pool does not reuse a slot a loop is in.
    Atomics.store(control, busy, s + 1);
    try {
      if (Atomics.load(control, word(SLOT.state)) !== STATE.open || Atomics.load(control, word(SLOT.abort)) !== 0) return false;
      const id = Atomics.load(control, word(SLOT.module));
      if (!modules.has(id)) receive();
      const m = modules.get(id);
      if (!m) return false; // sent only to loops posted after the run opened: another loop serves it
      // A run the calling thread takes part in seats fewer loops: `--workers N` is N threads computing.
      if (Atomics.add(control, word(SLOT.seated), 1) >= Atomics.load(control, word(SLOT.seats))) return false;
      let run: Run;
      try {
        run = runner(m.module, m.digest);
      } catch (e) {
        fail(s, e);
        return true;
      }
      const claimed = claimBands(control, at, s, run, (e) => fail(s, e));
      // A calling thread waiting awake for the end needs no core from us.
      if (claimed.last && Atomics.load(control, word(SLOT.awake)) === 0) ended = true;
      // Seated counts as served even when the others took every band: runs are coming, so spin
      // for the next (at 256 x 256 a loop that missed one step slept and missed every later one).
      return true;
    } finally {
      Atomics.store(control, busy, 0);
      // A run that stopped is over when no loop is in it any more: tell the pool to look.
      if (Atomics.load(control, word(SLOT.abort)) !== 0) ring(control, word(SLOT.wake));
    }
  };

  /** Leave, unless a run was posted meanwhile and the pool has not put another loop in our place. */
  const leave = (bell: number): boolean => {
    Atomics.store(control, live, LIVE.leaving);
    if (Atomics.load(control, BELL) === bell) return true;
    return Atomics.compareExchange(control, live, LIVE.leaving, LIVE.serving) !== LIVE.leaving;
  };

  Atomics.store(control, at.loop(index, LOOP.thread), threadId);
  let lastWork = performance.now();
  /** Whether to spin after this work: not after finishing a run's last band (see `ended`). */
  let spin = true;
  for (;;) {
    const bell = Atomics.load(control, BELL);
    ended = false;
    let served = false;
    for (let s = 0; s < at.slots; s++) if (serve(s)) served = true;
    if (served) {
      lastWork = performance.now();
      spin = !ended;
      continue;
    }
    if (Atomics.load(control, YIELD) !== generation) {
      if (leave(bell)) return 'yield';
      continue;
    }
    // Spin on the bell for a moment after work (if a core is free for it), then sleep until it rings.
    const spinUntil = lastWork + task.spinMicros / 1000;
    if (spin && performance.now() < spinUntil) {
      if (Atomics.add(control, SPINNERS, 1) < task.spinners) while (Atomics.load(control, BELL) === bell && performance.now() < spinUntil);
      Atomics.sub(control, SPINNERS, 1);
    }
    if (Atomics.load(control, BELL) !== bell) continue;
    const idle = performance.now() - lastWork;
    if (idle >= task.idleMillis) {
      if (leave(bell)) return 'idle';
      continue;
    }
    Atomics.wait(control, BELL, bell, task.idleMillis - idle);
  }
}
