// Ending a worker thread while it still loads its modules can crash Node 20 with a fatal error
// (in v8::Module::IsGraphAsync; seen in CI when a render failed at once, under load). So a pool's
// workers count themselves in shared memory once loaded, and the pool waits for them before it
// ends them.

/** A count, in shared memory, of a pool's workers that finished loading (pass it in workerData). */
export function loadedCounter(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4));
}

/**
 * Called by a worker module at its end: counts the worker once the module's evaluation has
 * returned (a microtask runs only after it), not while its last statement runs.
 */
export function markLoaded(counter: Int32Array | undefined): void {
  if (counter) queueMicrotask(() => Atomics.add(counter, 0, 1));
}

/** Wait until `threads()` workers have counted themselves, for at most `ms`. */
export async function untilLoaded(counter: Int32Array, threads: () => number, ms = 10_000): Promise<void> {
  const until = performance.now() + ms;
  while (Atomics.load(counter, 0) < threads() && performance.now() < until) await new Promise((r) => setTimeout(r, 5));
}
