// Piscina emits 'error' for a thread's failure outside any task (a message after its task settled,
// a thread dying between runs). With no listener Node ends the process, and the coordinator's
// session with it; the failed thread is replaced by piscina, so a line on stderr is the right end.

import type { Piscina } from 'piscina';

export function logThreadErrors<P extends Piscina>(piscina: P, what: string): P {
  roomForThreads(piscina.maxThreads);
  piscina.on('error', (e: unknown) => {
    process.stderr.write(`entelechy: one of the ${what} threads failed outside a run (it is replaced): ${e instanceof Error ? e.message : String(e)}\n`);
  });
  return piscina;
}

/**
 * Each thread's stdout and stderr are piped into this process's, a listener on each: `--workers 16`
 * printed Node's MaxListenersExceededWarning ("possible memory leak") on every render.
 */
function roomForThreads(threads: number): void {
  for (const stream of [process.stdout, process.stderr]) stream.setMaxListeners(stream.getMaxListeners() + threads);
}
