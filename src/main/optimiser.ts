// The optimised tier, in the background (docs/architecture.md, Tiers). A change is made live with
// modules of the fast tier (compiled in milliseconds); then this compiles the optimised modules
// of the groups that run fast ones, on a compile worker of its own (so the next edit's fast
// compile never waits behind it), and has the session swap them in as a change of its own,
// between frames. Both tiers compute the same bits: the swap changes only timings.
//
// The compile starts once the change's first frame has run (or SETTLE_MS after the change, if no
// frame comes): on a machine of few cores it would otherwise take a core from that frame, the
// one that shows the edit (issue 17: edit to frame). It starts a turn of the event loop after that
// frame, once its answer is out (settled()).
//
// Its thread runs at nice OPTIMISE_NICE: on 2 cores, at the process's priority it took half a core
// from the frames after an edit (the ray marcher's next frame 81 ms against 56), at 19 the next
// frame of inline went 31-44 -> 20 ms. A compile past the budget (default 2 s of its thread's CPU,
// or 10 times that in wall time: a thread of low priority waits on a busy machine, and is not
// charged for it; optimise-budget.ts) is abandoned: its worker is ended (binaryen cannot be
// interrupted otherwise), the fast tier keeps running, and an event says so; those groups are not
// tried again in this session.

import type { IrFunction } from '../ir/ir.js';
import { CompileWorker } from './compiler.js';
import { hasModule, prepareModules } from './modules.js';
import { literalsOf } from '../ir/literals.js';
import { DEFAULT_OPTIMISE_BUDGET_MS, watchBudget } from './optimise-budget.js';
import { threadCpuMs } from './thread-cpu.js';
import type { World, WorldEvent } from './world.js';

export { DEFAULT_OPTIMISE_BUDGET_MS };

/** What the optimiser needs of the session. */
export interface OptimiserSite {
  readonly world: World;
  readonly cacheDir: string | null;
  /** Swap the world's modules for the optimised ones now in the cache (a change: commit.ts). */
  swapTiers(): Promise<void>;
  /** Tell an event (the session's pending list: `sync`, and the Player as it happens). */
  tell(event: WorldEvent): void;
  /** Resolves when the next frame ends (or is refused). */
  frameEnded(): Promise<void>;
}

/** The compile thread's priority (nice): below the frames' threads, so they keep the cores while it runs. */
export const OPTIMISE_NICE = 10;

/** How long after a change the optimised compile starts when no frame runs meanwhile. */
export const SETTLE_MS = 250;

export class BackgroundOptimiser {
  private worker?: CompileWorker;
  /** The compile running now, if any: one at a time. */
  private running?: Promise<void>;
  /** Asked again while one ran: look again when it ends. */
  private again = false;
  /** Digests whose optimised compile went past the budget: not tried again. */
  private readonly abandoned = new Set<string>();
  private closed = false;
  /** Optimised compiles begun (one per group): tests see when the optimiser starts. */
  started = 0;
  /** Compiles handed to a worker: the optimised ones and each change's forms (tests see when the first hand-over comes). */
  begun = 0;

  constructor(
    private readonly site: OptimiserSite,
    readonly budgetMs = DEFAULT_OPTIMISE_BUDGET_MS,
  ) {}

  /**
   * Look at the running world once its next frame has run: optimise the groups that run the fast
   * tier (call after every change).
   */
  schedule(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.settled().then(() => {
      const groups = this.site.world.engine.groupTiers();
      const todo = groups.filter((g) => g.tier === 'fast' && !this.abandoned.has(g.digest));
      if (this.closed) return;
      if (todo.length) return this.optimise(todo);
      // A world on optimised modules only (opened from the disk cache, where forms are not kept):
      // its forms still, so that its first literal edit compiles nothing either.
      return this.compileForms(groups);
    }).finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.schedule();
      }
    });
  }

  /**
   * The change's first frame ended, or SETTLE_MS passed without one; then one turn of the event
   * loop more, so that the frame's answer goes out first: the compile begins by handing the IR to
   * the worker, a structured clone on this thread (1.3-1.6 ms for the inline corpus scene) that
   * otherwise ran between the frame's end and its answer.
   */
  private settled(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const later = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SETTLE_MS);
      timer.unref();
    });
    return Promise.race([this.site.frameEnded(), later])
      .finally(() => clearTimeout(timer))
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  }

  /** Resolves when nothing is compiling (tests and the benchmark wait for the swap). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Optimise each group in turn (each within the budget), then swap in what was done. */
  private async optimise(groups: { nodes: string[]; ir: IrFunction; digest: string }[]): Promise<void> {
    await this.compileForms(groups);
    const done: { nodes: string[]; digest: string }[] = [];
    let compile_ms = 0;
    for (const g of groups) {
      if (this.closed) return;
      const ms = await this.compileOne(g);
      if (ms === undefined) continue;
      done.push(g);
      compile_ms += ms;
    }
    if (this.closed || !done.length) return;
    compile_ms = Math.round(compile_ms);
    // The world may have changed meanwhile: swap only where it still runs a fast module now optimised.
    const optimised = new Set(done.map((g) => g.digest));
    if (!this.site.world.engine.groupTiers().some((g) => g.tier === 'fast' && optimised.has(g.digest))) return;
    try {
      await this.site.swapTiers();
    } catch (e) {
      // Nothing escapes a background task: the fast tier keeps running, and the event says why.
      if (!this.closed) this.site.tell({ kind: 'optimise_abandoned', nodes: done.flatMap((g) => g.nodes), message: `the optimised modules of ${done.flatMap((g) => g.nodes).join(', ')} were not swapped in; the fast tier keeps running: ${(e as Error)?.message ?? e}` });
      return;
    }
    const now = this.site.world.engine.groupTiers().filter((g) => optimised.has(g.digest) && g.tier === 'optimised');
    if (now.length) this.site.tell({ kind: 'optimised', nodes: now.flatMap((g) => g.nodes), compile_ms, revision: this.site.world.revision });
  }

  /**
   * The fast modules of the groups' forms with their literals as data (src/ir/literals.ts), into
   * the memory cache: an edit that changes only literals then runs on one at once, compiling
   * nothing (a fast compile of the ray marcher: 13-16 ms of its edit). First, as they are cheap
   * (a fast compile each) and a run of literal edits wants them soon. A failure costs only that:
   * the next literal edit compiles, as any edit does.
   */
  private async compileForms(groups: { ir: IrFunction }[]): Promise<void> {
    // A function without literals is its own form: its module is the one it runs.
    const forms = groups.map((g) => literalsOf(g.ir).ir).filter((form, i) => form !== groups[i].ir && !hasModule(form, 'fast'));
    if (!forms.length || this.closed) return;
    this.begun++;
    this.worker ??= new CompileWorker({ nice: OPTIMISE_NICE });
    await prepareModules(forms, this.worker.compile, null, 'fast').catch(() => undefined);
  }

  /** The optimised module of one group into the cache, within the budget: its milliseconds, or undefined (and told). */
  private async compileOne(g: { nodes: string[]; ir: IrFunction; digest: string }): Promise<number | undefined> {
    this.started++;
    this.begun++;
    this.worker ??= new CompileWorker({ nice: OPTIMISE_NICE });
    const worker = this.worker;
    const tid = await worker.thread().catch(() => undefined);
    if (this.closed) return undefined;
    const started = performance.now();
    const budget = watchBudget(this.budgetMs, () => (tid === undefined ? undefined : threadCpuMs(tid)));
    const what = g.nodes.join(' + ');
    try {
      const result = await Promise.race([prepareModules([g.ir], worker.compile, this.site.cacheDir, 'optimised').then(() => 'done' as const), budget.past]);
      if (result === 'done') return performance.now() - started;
      this.worker = undefined;
      void worker.close();
      const cpu = result.cpu_ms === undefined ? '' : ` with ${Math.round(result.cpu_ms)} ms of CPU`;
      if (!this.closed)
        this.site.tell({
          kind: 'optimise_abandoned', nodes: g.nodes, budget_ms: this.budgetMs,
          message: result.why === 'cpu'
            ? `the optimised compile of ${what} took more than ${this.budgetMs} ms of CPU and was abandoned; the fast tier keeps running it (same results, slower frames)`
            : `the optimised compile of ${what} ran ${Math.round(result.wall_ms)} ms${cpu} without finishing (the machine is busy, or the budget of ${this.budgetMs} ms is small) and was abandoned; the fast tier keeps running it (same results, slower frames)`,
        });
    } catch (e) {
      if (!this.closed) this.site.tell({ kind: 'optimise_abandoned', nodes: g.nodes, message: `the optimised compile of ${what} failed; the fast tier keeps running it: ${(e as Error)?.message ?? e}` });
    } finally {
      budget.stop();
    }
    this.abandoned.add(g.digest);
    return undefined;
  }

  /** Stop: a compile running is abandoned with its worker (nothing is swapped after this). */
  async close(): Promise<void> {
    this.closed = true;
    await this.worker?.close();
  }
}

/**
 * The `published` events of a change with the tier each kernel now runs (`fast` if any group
 * holding one of its nodes does) and the milliseconds its modules took to prepare.
 */
export function withTiers(events: WorldEvent[], world: Pick<World, 'engine' | 'scene'>, compile_ms: number): WorldEvent[] {
  const tiers = world.engine.groupTiers();
  if (!tiers.length) return events;
  return events.map((e) => {
    if (e.kind !== 'published' || typeof e.kernel !== 'string') return e;
    const nodes = new Set(world.scene.nodes.filter((n) => n.kernel.id === e.kernel).map((n) => n.name));
    const groups = tiers.filter((g) => g.nodes.some((n) => nodes.has(n)));
    if (!groups.length) return e;
    return { ...e, tier: groups.some((g) => g.tier === 'fast') ? 'fast' : 'optimised', compile_ms: Math.round(compile_ms) };
  });
}
