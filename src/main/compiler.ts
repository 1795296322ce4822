// The coordinator's side of the compile worker: parse and check stay here (they take
// milliseconds and give the Scene the session keeps); codegen and binaryen's optimiser, which take
// most of the time, run on the worker, and binaryen is never loaded on the coordinator. Modules
// come back with their bytes, for prepareModules to seed the engine's module cache and the disk's.

import { wrap, type Remote } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { Worker } from 'node:worker_threads';
import type { CompileApi } from '../workers/compile-worker.js';
import { WORKER_EXEC_ARGV } from '../workers/exec-argv.js';
import type { Warmth } from './warm-up.js';
import type { IrFunction } from '../ir/ir.js';
import type { ModuleCompiler } from './modules.js';

export class CompileWorker {
  private readonly worker: Worker;
  private readonly api: Remote<CompileApi>;
  /** Resolves once binaryen has loaded on the worker (~1 s, paid at start-up). */
  readonly ready: Promise<true>;

  /** What JSON.stringify shows. Without it, it would ask the worker's proxy for a `toJSON` (comlink forwards any name), and the worker's failed answer ended the process. */
  toJSON(): object {
    return { compileWorker: this.worker.threadId };
  }

  /**
   * `nice`: the thread's priority, lowered before binaryen loads (the background optimiser's:
   * thread-cpu.ts); by default it runs at the process's.
   */
  constructor(options: { nice?: number } = {}) {
    this.worker = new Worker(new URL('../workers/compile-worker.js', import.meta.url), { execArgv: [...WORKER_EXEC_ARGV], workerData: { nice: options.nice } });
    this.worker.unref();
    this.api = wrap<CompileApi>(nodeEndpoint(this.worker as never));
    this.ready = this.api.ping();
  }

  private tid?: Promise<number | undefined>;

  /** The worker thread's id in the kernel, once loaded (thread-cpu.ts reads its CPU time), or undefined where unknown; asked once. */
  thread(): Promise<number | undefined> {
    this.tid ??= this.ready.then(() => this.api.thread()).then((tid) => tid ?? undefined);
    return this.tid;
  }

  /** Have the worker warm its compiler up with these functions while idle (warm-up.ts); the first call only. */
  warm(irs: IrFunction[]): void {
    void this.api.warm(irs).catch(() => undefined); // a worker ended meanwhile: nothing to warm
  }

  /** The worker's warm-up so far (null before one was asked for). */
  warmth(): Promise<Warmth | null> {
    return this.api.warmth();
  }

  /** Compile on the worker: what prepareModules (modules.ts) takes as its compiler. */
  readonly compile: ModuleCompiler = (irs, tier) => this.api.compile(irs, tier);

  async close(): Promise<void> {
    // Ending the thread while binaryen's module (which awaits at its top level) still loads can
    // crash Node 20 outright (src/workers/loaded.ts): wait for it to load, for at most a minute
    // (the load is ~0.4 s of CPU, but took over 10 s on a 2-core machine at load 17).
    await Promise.race([this.ready.catch(() => undefined), new Promise((r) => setTimeout(r, 60_000).unref())]);
    await this.worker.terminate();
  }
}
