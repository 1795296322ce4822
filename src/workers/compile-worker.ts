// The compile worker: binaryen codegen and optimisation off the coordinator, so frames go on and
// other connections are answered while an edit compiles. Reached through comlink.
//
// The background optimiser's worker starts with `nice` (workerData): the thread lowers its own
// priority before it loads binaryen, so that load and every optimised compile yield the cores to
// the frames (thread-cpu.ts). The compiler is imported after that, hence dynamically.
//
// A session's worker is asked to warm up with the session's scene (main/warm-up.ts), so that the
// session's first edits do not pay for warming V8's code of the compiler.

import { expose } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { parentPort, workerData } from 'node:worker_threads';
import type { IrFunction } from '../ir/ir.js';
import type { Tier } from '../codegen/plan.js';
import type { CompiledModule } from '../main/modules.js';
import { kernelThreadId, niceThisThread } from '../main/thread-cpu.js';
import { busyGauge, warmUp, type Warmth } from '../main/warm-up.js';

const nice = (workerData as { nice?: number } | undefined)?.nice;
if (nice) niceThisThread(nice);
const { compileFunction } = await import('../codegen/index.js');

// ENTELECHY_TEST_STALL_OPTIMISED_MS=N: each optimised compile first waits N ms using no CPU, as a
// thread starved of a core does (test/tiers.test.ts: the budget counts CPU, not waiting).
const stall = Number(process.env.ENTELECHY_TEST_STALL_OPTIMISED_MS) || 0;
// ENTELECHY_TEST_WARMUP_FAIL=1: the warm-up's compiles throw (test/warm-up.test.ts: harmless).
const warmCompile = process.env.ENTELECHY_TEST_WARMUP_FAIL
  ? () => {
      throw new Error('the warm-up failed (ENTELECHY_TEST_WARMUP_FAIL)');
    }
  : (ir: IrFunction) => void compileFunction(ir, { tier: 'fast' });

/** When the last request was answered: the warm-up waits for the worker to be idle. */
let lastRequest = -Infinity;
let warmth: Warmth | undefined;

const api = {
  /** Compile each function to a WebAssembly module (modules pass between threads without copies) and its bytes. */
  compile(irs: IrFunction[], tier: Tier): CompiledModule[] {
    try {
      if (stall && tier === 'optimised') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, stall);
      return irs.map((ir) => {
        const bytes = compileFunction(ir, { tier }) as Uint8Array<ArrayBuffer>;
        return { module: new WebAssembly.Module(bytes), bytes };
      });
    } finally {
      lastRequest = performance.now();
    }
  },
  /** Warm the compiler up with these functions while idle (main/warm-up.ts); once per worker, later calls are ignored. */
  warm(irs: IrFunction[]): void {
    warmth ??= warmUp(irs, warmCompile, { lastRequest: () => lastRequest, busy: busyGauge() });
  },
  /** The warm-up's progress, null before one was asked for (tests and the benchmark). */
  warmth(): Warmth | null {
    return warmth ? { ...warmth } : null;
  },
  ping(): true {
    return true;
  },
  /** This thread's id in the kernel, whose CPU time the coordinator reads (thread-cpu.ts); null where unknown. */
  thread(): number | null {
    return kernelThreadId() ?? null;
  },
};

export type CompileApi = typeof api;

expose(api, nodeEndpoint(parentPort!));
