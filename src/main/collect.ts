// Returning a dropped WebAssembly.Memory to the system. Its pages go back only when the object is
// garbage-collected, and V8 does not count a shared memory's pages as heap pressure: an idle
// server could hold gigabytes of a memory nothing references for as long as it runs. So when a
// world moves out of a large memory (commit.ts), a full collection is asked for.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | null | undefined;

/** V8's `gc`, exposed at run time (a process started without --expose-gc has none); null if that fails. */
function collector(): (() => void) | null {
  if (gc !== undefined) return gc;
  try {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  } catch {
    gc = null; // the memory then goes at the next collection V8 makes of its own
  }
  return gc;
}

/**
 * Collect garbage once the caller's references are gone (a macrotask later, outside its closures),
 * and again a second and five seconds later: a thread that held the memory may end, or a promise
 * that referenced it settle, after the first collection (seen on a loaded machine).
 */
export function collectSoon(): void {
  for (const ms of [0, 1000, 5000]) setTimeout(() => collector()?.(), ms).unref();
}
