// Where a pool dispatch's time goes (issue 19). The engine's own frames run through a pool built
// here as src/workers/pool.ts was before its band loops (a piscina task per worker and run, bands
// claimed from a shared Atomics counter), whose
// workers note when each task started and ended (timeline-worker.ts). Per frame: how long after
// the post each task started, how long after the last band ended the frame was seen done, and the
// whole frame; against the same frame on the calling thread alone. Variants, interleaved in rounds:
//
//   all    as the pool did: the frame is done when every task has returned
//   bands  done when every band is done (a task that woke too late to find a band holds nothing)
//   join   the calling thread claims bands too, after posting the tasks; done when every band is
//   main   no pool: the calling thread runs every band
//   bell   src/workers/pool.ts itself (its band loops woken by a doorbell): the frame and its CPU
//          only, no task times; bell-sN-nM: its loops spin N us after a run (default 100), at most M at
//          once (default the cores less one)
//
//   node dist/bench/experiments/timeline.js ROUNDS SIZE PIPELINE WORKERS FRAMES VARIANT...

import { loadavg } from 'node:os';
import { Piscina } from 'piscina';
import { benchScene } from '../run.js';
import { Engine } from '../../src/main/engine.js';
import { FieldMemory } from '../../src/main/memory.js';
import { instantiate, type RunFunction } from '../../src/codegen/instantiate.js';
import { loadCompiler } from '../../src/main/modules.js';
import { EvalPool } from '../../src/workers/pool.js';
import { isPipelineName, median } from '../reference/measurement.js';
import type { TimedTask } from './timeline-worker.js';

/** CLOCK_MONOTONIC in ms: the clock the workers note their tasks' times in. */
const now = () => Number(process.hrtime.bigint()) / 1e6;

type Variant = 'all' | 'bands' | 'join' | 'main' | 'bell';
const VARIANTS: Variant[] = ['all', 'bands', 'join', 'main', 'bell'];

interface FrameTimes {
  total: number;
  /** Start of each task after the post, ms (NaN: it started after the frame was done). */
  wake: number[];
  /** From the end of the last band to the frame seen done. */
  tail: number;
  /** Bands the calling thread ran. */
  mine: number;
  bands: number;
}

class TimedPool {
  readonly frames: FrameTimes[] = [];
  private readonly piscina: Piscina;
  private readonly runners = new Map<string, RunFunction>();
  /** Tasks of earlier frames still out (bands, join): their timelines are read when they return. */
  private late: Promise<unknown>[] = [];

  constructor(
    private readonly memory: WebAssembly.Memory,
    readonly workers: number,
    private readonly variant: Variant,
  ) {
    this.piscina = new Piscina({
      filename: new URL('./timeline-worker.js', import.meta.url).href,
      minThreads: workers, maxThreads: workers, concurrentTasksPerWorker: 1, idleTimeout: Infinity, atomics: 'sync',
      workerData: { memory },
    });
  }

  async run(module: WebAssembly.Module, digest: string, args: number, rows: number, bandRows: number): Promise<{ tasks: number; bands: number }> {
    const bands = Math.ceil(rows / bandRows);
    const control = new Int32Array(new SharedArrayBuffer(8));
    const times = new Float64Array(new SharedArrayBuffer(8 * 3 * this.workers)).fill(NaN);
    const post = now();
    const runs: Promise<{ bands: number }>[] = [];
    for (let i = 0; i < this.workers; i++) runs.push(this.piscina.run({ module, digest, control, args, rows, bandRows, times, index: i } satisfies TimedTask));
    let mine = 0;
    let myEnd = NaN;
    if (this.variant === 'join') {
      let run = this.runners.get(digest);
      if (!run) this.runners.set(digest, (run = instantiate(module, this.memory)));
      for (;;) {
        const b = Atomics.add(control, 0, 1);
        if (b >= bands) break;
        const r0 = b * bandRows;
        run(args, r0, Math.min(rows, r0 + bandRows));
        mine++;
      }
      Atomics.add(control, 1, mine);
      myEnd = now();
    }
    if (this.variant === 'all') await Promise.all(runs);
    else {
      // Done when the bands are: each returning task may be the one that ran the last.
      let left = runs.length;
      await new Promise<void>((resolve) => {
        if (Atomics.load(control, 1) === bands) resolve();
        for (const r of runs)
          void r.then(() => {
            left--;
            if (Atomics.load(control, 1) === bands || left === 0) resolve();
          });
      });
      this.late.push(Promise.all(runs));
    }
    const done = now();
    const ends = [myEnd];
    const wake: number[] = [];
    for (let i = 0; i < this.workers; i++) {
      wake.push(times[3 * i] - post);
      if (times[3 * i + 2] > 0) ends.push(times[3 * i + 1]);
    }
    const lastEnd = Math.max(...ends.filter((e) => !Number.isNaN(e)));
    this.frames.push({ total: done - post, wake, tail: done - lastEnd, mine, bands });
    return { tasks: this.workers, bands };
  }

  async destroy(): Promise<void> {
    await Promise.all(this.late);
    await this.piscina.destroy();
  }
}

const [rounds, size, pipeline, workers, frames, ...variants] = process.argv.slice(2);
const kind = (v: string) => (/^bell(-s\d+)?(-n\d+)?$/.test(v) ? 'bell' : v) as Variant;
if (!isPipelineName(pipeline) || !variants.length || !variants.every((v) => VARIANTS.includes(kind(v))))
  throw new Error(`usage: timeline.js ROUNDS SIZE PIPELINE WORKERS FRAMES ${VARIANTS.join('|')}...`);
await loadCompiler();

interface Figures { total: number[]; fast: number[]; wake0: number[]; wake1: number[]; late: number[]; tail: number[]; mine: number[]; cpu: number[] }
const results: Record<string, Figures> = Object.fromEntries(variants.map((v) => [v, { total: [], fast: [], wake0: [], wake1: [], late: [], tail: [], mine: [], cpu: [] }]));
const startLoad = loadavg()[0].toFixed(1);

async function measure(name: string): Promise<void> {
  const variant = kind(name);
  const spin = /^bell(?:-s(\d+))?(?:-n(\d+))?$/.exec(name);
  const memory = new FieldMemory();
  const pool =
    variant === 'main' ? undefined
    : variant === 'bell' ? new EvalPool(memory.memory, { workers: Number(workers), ...(spin?.[1] ? { spinMicros: Number(spin[1]) } : {}), ...(spin?.[2] ? { spinners: Number(spin[2]) } : {}) })
    : new TimedPool(memory.memory, Number(workers), variant);
  const engine = new Engine(benchScene(pipeline as 'P1', Number(size)), { memory, cacheFrames: false, poolThreshold: 0, ...(pool ? { pool: pool as unknown as EvalPool } : {}) });
  try {
    if (pool instanceof EvalPool) await pool.started(); // not the threads' start (~130-300 ms)
    for (let i = 0; i < 20; i++) await engine.evaluate({ time: 0.5 });
    if (pool instanceof TimedPool) pool.frames.splice(0);
    const times: number[] = [];
    const cpu = process.cpuUsage();
    for (let i = 0; i < Number(frames); i++) {
      const s = now();
      await engine.evaluate({ time: 0.5 });
      times.push(now() - s);
    }
    const used = process.cpuUsage(cpu);
    const r = results[name];
    r.total.push(median(times));
    // The tenth fastest frame in a hundred: what a frame takes when the cores are free (under load).
    r.fast.push([...times].sort((a, b) => a - b)[Math.floor(times.length / 10)]);
    r.cpu.push((used.user + used.system) / 1000 / Number(frames));
    if (pool instanceof TimedPool) {
      const f = pool.frames;
      const sorted = (i: number) => f.map((x) => [...x.wake].sort((a, b) => (Number.isNaN(a) ? 1 : Number.isNaN(b) ? -1 : a - b))[i]);
      r.wake0.push(median(sorted(0)));
      // The second task may start only after the frame is done (bands, join): counted apart.
      const second = sorted(1).filter((x) => x !== undefined && !Number.isNaN(x));
      if (Number(workers) > 1) r.wake1.push(second.length ? median(second) : NaN);
      r.late.push(1 - second.length / f.length);
      r.tail.push(median(f.map((x) => x.tail)));
      r.mine.push(median(f.map((x) => x.mine / x.bands)));
    }
  } finally {
    engine.dispose();
    await pool?.destroy();
  }
}

for (let r = 0; r < Number(rounds); r++) for (const v of r % 2 ? [...variants].reverse() : variants) await measure(v);

const f3 = (xs: number[]) => (xs.length && !xs.some(Number.isNaN) ? `${Math.min(...xs).toFixed(3)} / ${median(xs).toFixed(3)} / ${Math.max(...xs).toFixed(3)}` : '-');
console.log(`${pipeline} ${size} x ${size}, ${workers} workers, ${rounds} rounds of ${frames} frames, load average ${startLoad} -> ${loadavg()[0].toFixed(1)}; per round the median frame, then min / median / max over rounds (ms)`);
for (const v of variants) {
  const r = results[v];
  console.log(`${v.padEnd(9)} frame ${f3(r.total)}  p10 ${f3(r.fast)}  cpu ${f3(r.cpu)}  first task starts ${f3(r.wake0)}  second ${f3(r.wake1)} (after the frame: ${f3(r.late)})  last band to done ${f3(r.tail)}  caller's share ${f3(r.mine)}`);
}
