// The evaluation pool: runs a compiled module's rows on worker threads over the shared memory.
//
// One run = one group of one frame. It becomes min(workers, bands) piscina tasks (piscina costs
// 25-50 us per task, so never one task per band); each task claims bands of `bandRows` rows from
// a shared Atomics counter until none are left, so a slow worker simply takes fewer bands.
// Results are bit-identical whatever the worker count and band size: every row is computed by
// the same code, exactly once.

import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { ARGS } from '../ir/ir.js';
import { loadedCounter, untilLoaded } from './loaded.js';

/** One run's control slot in the pool's control array (Int32 words). */
export const CTL = { words: 4, next: 0, abort: 1 } as const;

/** What the pool sends each task (cloned; the module, memory and control are shared, not copied). */
export interface BandTask {
  module: WebAssembly.Module;
  digest: string;
  control: Int32Array;
  slot: number;
  args: number;
  /** Rows [first, first + rows). */
  first: number;
  rows: number;
  bandRows: number;
}

export interface BandResult {
  /** Bands this task computed. */
  bands: number;
  error?: string;
  /** The error was a WebAssembly trap (the trap word may name the node). */
  wasmTrap?: boolean;
}

/** A run trapped on fuel: `trap` is the node index the module wrote into the trap word. */
export class PoolTrap extends Error {
  constructor(
    readonly trap: number,
    message = `trapped in node #${trap}`,
  ) {
    super(message);
    this.name = 'PoolTrap';
  }
}

/** Slots per control buffer; more buffers are made if more runs are in flight at once. */
const SLOTS = 64;
export const DEFAULT_BAND_ROWS = 32;

/** Flags that install module hooks (a test runner's TypeScript loader...): the worker needs none. */
const HOOK_FLAGS = ['--import', '--loader', '--experimental-loader', '--require', '-r'];

/**
 * The parent's execArgv without module hooks. Workers inherit the parent's flags by default, and
 * under a loader such as tap's each worker takes seconds to start; the worker is plain JS.
 */
export function workerExecArgv(argv: readonly string[] = process.execArgv): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (HOOK_FLAGS.includes(a)) {
      i++; // the flag's value is the next argument
      continue;
    }
    if (HOOK_FLAGS.some((f) => a.startsWith(`${f}=`))) continue;
    out.push(a);
  }
  return out;
}

export class EvalPool {
  readonly workers: number;
  private made?: Piscina;
  /** Free control slots: each a buffer and a slot in it. */
  private free: { control: Int32Array; slot: number }[] = [];
  private destroyed = false;
  /** Workers that finished loading (loaded.ts). */
  private readonly loaded = loadedCounter();

  /** Workers ended by a cancelled run: they counted themselves in `loaded` too. */
  private ended = 0;
  /** Each thread's exit, watched from the run it first served: a cancelled run waits for its workers to be gone. */
  private readonly exits = new Map<Worker, Promise<void>>();
  private readonly execArgv: string[];
  /** How an idle piscina worker waits for its next task (bench/experiments/dispatch.ts compares them). */
  private readonly atomics: 'sync' | 'async' | 'disabled';

  /** `lazy`: start the threads at the first run (a session with --workers 1 may never need its one). */
  constructor(
    private readonly memory: WebAssembly.Memory,
    options: { workers?: number; execArgv?: string[]; lazy?: boolean; atomics?: 'sync' | 'async' | 'disabled' } = {},
  ) {
    this.workers = Math.max(1, Math.floor(options.workers ?? os.availableParallelism()));
    this.execArgv = options.execArgv ?? workerExecArgv();
    this.atomics = options.atomics ?? 'sync';
    if (!options.lazy) void this.piscina;
  }

  private get piscina(): Piscina {
    this.made ??= new Piscina({
      filename: new URL('./eval-worker.js', import.meta.url).href,
      minThreads: this.workers,
      maxThreads: this.workers,
      concurrentTasksPerWorker: 1,
      idleTimeout: Infinity,
      atomics: this.atomics,
      workerData: { memory: this.memory, loaded: this.loaded },
      execArgv: this.execArgv,
    });
    return this.made;
  }

  /** Tasks queued or running in piscina (for leak checks). */
  get pending(): number {
    return (this.made?.queueSize ?? 0) + this.inFlight;
  }
  private inFlight = 0;

  /** Threads running now (replacements of ended ones included). */
  get threads(): number {
    return this.made?.threads.length ?? 0;
  }

  /**
   * Run rows [first, first + rows) of `module` (which imports the shared memory and exports
   * `run(args, r0, r1)`). Resolves once every task has finished; rejects once, with the first
   * error: a PoolTrap if the module wrote a node index into the trap word (args + 12; the caller
   * sets it to -1 beforehand), otherwise an Error with the worker's message.
   *
   * When `signal` aborts, the workers running the run's tasks are ended (piscina starts others in
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
  ): Promise<{ tasks: number; bands: number }> {
    if (this.destroyed) throw new Error('the evaluation pool was destroyed');
    if (signal?.aborted) throw signal.reason;
    bandRows = Math.max(1, Math.floor(bandRows));
    const bands = rows > 0 ? Math.ceil(rows / bandRows) : 0;
    if (bands === 0) return { tasks: 0, bands: 0 };
    const tasks = Math.min(this.workers, bands);
    const { control, slot } = this.acquire();
    Atomics.store(control, slot * CTL.words + CTL.next, 0);
    Atomics.store(control, slot * CTL.words + CTL.abort, 0);
    const task: BandTask = { module, digest, control, slot, args, first, rows, bandRows };
    this.inFlight += tasks;
    let settled: PromiseSettledResult<BandResult>[];
    const piscina = this.piscina;
    this.watchExits(piscina);
    try {
      const runs: Promise<BandResult>[] = [];
      for (let i = 0; i < tasks; i++) runs.push(piscina.run(task, signal ? { signal } : {}));
      // Wait for every task, failed or not, so no worker still touches the args or fields
      // when the caller moves on.
      settled = await Promise.allSettled(runs);
      if (signal?.aborted) {
        // piscina rejects an aborted task at once and ends its worker after: wait until the
        // ended workers have exited, so none still writes into the fields.
        Atomics.store(control, slot * CTL.words + CTL.abort, 1);
        await this.endedExited(piscina);
        throw signal.reason;
      }
    } finally {
      this.inFlight -= tasks;
      this.free.push({ control, slot });
    }
    let done = 0;
    let error: string | undefined;
    let wasmTrap = false;
    for (const s of settled) {
      if (s.status === 'rejected') {
        error ??= s.reason instanceof Error ? s.reason.message : String(s.reason);
        continue;
      }
      done += s.value.bands;
      if (s.value.error !== undefined && error === undefined) {
        error = s.value.error;
        wasmTrap = !!s.value.wasmTrap;
      }
    }
    if (error !== undefined) {
      const trap = wasmTrap ? new Int32Array(this.memory.buffer, args + ARGS.trap, 1)[0] : -1;
      if (trap >= 0) throw new PoolTrap(trap, error);
      throw new Error(error);
    }
    if (done !== bands) throw new Error(`evaluation pool: ${done} of ${bands} bands computed`);
    return { tasks, bands };
  }

  /**
   * Run one task of another kind on a worker: the named export of eval-worker.ts (a frame's PNG
   * strips, field-png.ts), given `task` and the shared memory.
   */
  async call<T>(name: string, task: object): Promise<T> {
    if (this.destroyed) throw new Error('the evaluation pool was destroyed');
    this.inFlight++;
    try {
      return (await this.piscina.run(task, { name })) as T;
    } finally {
      this.inFlight--;
    }
  }

  private acquire(): { control: Int32Array; slot: number } {
    const s = this.free.pop();
    if (s) return s;
    const control = new Int32Array(new SharedArrayBuffer(SLOTS * CTL.words * 4));
    for (let i = SLOTS - 1; i > 0; i--) this.free.push({ control, slot: i });
    return { control, slot: 0 };
  }

  private watchExits(piscina: Piscina): void {
    for (const w of piscina.threads) if (!this.exits.has(w)) this.exits.set(w, new Promise<void>((r) => w.once('exit', () => r())));
  }

  /** Wait for the exit of every watched thread piscina no longer holds (ended by an abort). */
  private async endedExited(piscina: Piscina): Promise<void> {
    const live = new Set(piscina.threads);
    for (const [w, exited] of this.exits) {
      if (live.has(w)) continue;
      await exited;
      this.exits.delete(w);
      this.ended++;
    }
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    const piscina = this.made;
    if (!piscina) return;
    await untilLoaded(this.loaded, () => piscina.threads.length + this.ended);
    await piscina.destroy();
  }
}
