// The evaluation pool's piscina worker: runs row bands of compiled modules over the shared memory
// in a long-lived loop (band-loop.ts), and a frame's PNG strips when asked. Instances are cached
// by digest: a module is instantiated once per worker.

import { workerData } from 'piscina';
import { bandLoop, type LoopTask } from './band-loop.js';
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
  // One JavaScript frame more between the loop and the module: where V8's unaligned 16-byte SIMD
  // spill slots fall against cache lines follows the stack's depth (bench/RESULTS.md), and with
  // bands.ts's frame P4 on one worker ran 4-6 % slower than before it; with this one, 1-1.5 %.
  const module_ = run;
  return (args, r0, r1) => module_(args, r0, r1);
}

/** Serve runs of bands until idle (band-loop.ts): the pool's one long task per worker. */
export function loop(task: LoopTask): 'idle' | 'yield' {
  return bandLoop(task, runner);
}

/** A frame's PNG strips, from the shared memory (field-png.ts), loaded when first asked for. */
let png: typeof import('../main/field-png.js') | undefined;
export async function pngStrips(task: FieldStripTask): Promise<DeflatedStrip[]> {
  png ??= await import('../main/field-png.js');
  return png.fieldStrips(memory, task);
}

markLoaded(workerData.loaded);
