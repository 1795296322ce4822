// The evaluation pool's piscina worker: runs row bands of a compiled module over the shared memory.
//
// Each task is one worker's share of one run: it claims bands from the run's Atomics counter until
// none are left (or another task of the run failed), so the tasks balance themselves. Instances
// are cached by digest: a module is instantiated once per worker.

import { workerData } from 'piscina';
import type { BandTask, BandResult } from './pool.js';
import { CTL } from './pool.js';
import { markLoaded } from './loaded.js';
import type { FieldStripTask } from '../main/field-png.js';
import type { DeflatedStrip } from '../main/png.js';

type Run = (args: number, r0: number, r1: number) => void;

const memory: WebAssembly.Memory = workerData.memory;
/** Instances by digest, least recently used first. */
const cache = new Map<string, Run>();
const CACHE_LIMIT = 64;

function runner(module: WebAssembly.Module, digest: string): Run {
  let run = cache.get(digest);
  if (run) {
    cache.delete(digest);
  } else {
    const instance = new WebAssembly.Instance(module, { env: { memory } });
    run = instance.exports.run as Run;
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  }
  cache.set(digest, run);
  return run;
}

export default function evalBands(task: BandTask): BandResult {
  const { control, slot, args, first, rows, bandRows } = task;
  const next = slot * CTL.words + CTL.next;
  const abort = slot * CTL.words + CTL.abort;
  const bands = Math.ceil(rows / bandRows);
  let done = 0;
  try {
    const run = runner(task.module, task.digest);
    for (;;) {
      if (Atomics.load(control, abort) !== 0) break;
      const b = Atomics.add(control, next, 1);
      if (b >= bands) break;
      const r0 = b * bandRows;
      run(args, first + r0, first + Math.min(rows, r0 + bandRows));
      done++;
    }
    return { bands: done };
  } catch (e) {
    // Stop the run's other tasks claiming further bands; the pool reads the trap word.
    Atomics.store(control, abort, 1);
    return {
      bands: done,
      error: e instanceof Error ? e.message : String(e),
      wasmTrap: e instanceof WebAssembly.RuntimeError,
    };
  }
}

/** A frame's PNG strips, from the shared memory (field-png.ts), loaded when first asked for. */
let png: typeof import('../main/field-png.js') | undefined;
export async function pngStrips(task: FieldStripTask): Promise<DeflatedStrip[]> {
  png ??= await import('../main/field-png.js');
  return png.fieldStrips(memory, task);
}

markLoaded(workerData.loaded);
