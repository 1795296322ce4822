// The coordinator's side of the compile worker: parse and check stay here (they take
// milliseconds and give the Scene the session keeps); codegen and binaryen's optimiser, which take
// most of the time, run on the worker. Modules come back and seed the engine's module cache.

import { wrap, type Remote } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { Worker } from 'node:worker_threads';
import type { Scene } from '../ir/check/scene.js';
import type { IrFunction } from '../ir/ir.js';
import type { CompileApi } from '../workers/compile-worker.js';
import { sceneGroups } from './engine.js';
import { hasModule, irDigest, seedModule } from './modules.js';

export class CompileWorker {
  private readonly worker: Worker;
  private readonly api: Remote<CompileApi>;
  /** Resolves once binaryen has loaded on the worker (~1 s, paid at start-up). */
  readonly ready: Promise<true>;

  constructor() {
    this.worker = new Worker(new URL('../workers/compile-worker.js', import.meta.url), { execArgv: [] });
    this.worker.unref();
    this.api = wrap<CompileApi>(nodeEndpoint(this.worker as never));
    this.ready = this.api.ping();
  }

  /** Compile every group of the scene that the module cache does not hold yet. */
  async compileScene(scene: Scene, pins: string[] = [], fuse = true): Promise<number> {
    const irs = sceneGroups(scene, pins, fuse)
      .map((g) => g.ir)
      .filter((ir) => !hasModule(irDigest(ir)));
    if (!irs.length) return 0;
    const modules = await this.api.compile(irs);
    irs.forEach((ir, i) => seedModule(irDigest(ir), modules[i]));
    return irs.length;
  }

  /** Compile functions (e.g. a prepared kernel no node runs yet) into the module cache. */
  async compileIrs(irs: IrFunction[]): Promise<void> {
    const missing = irs.filter((ir) => !hasModule(irDigest(ir)));
    if (!missing.length) return;
    const modules = await this.api.compile(missing);
    missing.forEach((ir, i) => seedModule(irDigest(ir), modules[i]));
  }

  async close(): Promise<void> {
    // Ending the thread while binaryen's module (which awaits at its top level) still loads can
    // crash Node 20 outright (src/workers/loaded.ts): wait for it to load, for at most 10 s.
    await Promise.race([this.ready.catch(() => undefined), new Promise((r) => setTimeout(r, 10_000).unref())]);
    await this.worker.terminate();
  }
}
