// One thing at a time, in the order asked: the session's changes take turns, and so do its frames
// (the frame slot: frames, reads of the world, the swap of a change). session.ts holds one of each.

import { Cancelled, throwIfCancelled, untilCancelled } from './cancel.js';

/** Work run one at a time, in the order asked; a failure does not stop the next. */
export class Turns {
  private tail: Promise<unknown> = Promise.resolve();

  /** Run `f` after everything asked before it. */
  take<T>(f: () => Promise<T>): Promise<T> {
    const run = this.tail.then(f, f);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Resolves once everything asked so far has ended. */
  settled(): Promise<unknown> {
    return this.tail;
  }
}

/**
 * The frame slot: turns whose work runs under a signal that the asker's `signal` aborts, and so
 * does `interrupt` (a change that swaps the world while a frame runs); an asker cancelled while it
 * waits is answered at once and its work never runs.
 */
export class FrameSlot extends Turns {
  private running?: AbortController;
  private endWaiters: (() => void)[] = [];

  run<T>(f: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return untilCancelled(
      this.take(async () => {
        throwIfCancelled(signal);
        const controller = new AbortController();
        const forward = () => controller.abort(signal!.reason);
        signal?.addEventListener('abort', forward, { once: true });
        this.running = controller;
        try {
          return await f(controller.signal);
        } finally {
          signal?.removeEventListener('abort', forward);
          if (this.running === controller) this.running = undefined;
        }
      }),
      signal,
    );
  }

  /** Stop the work running now; it commits nothing. */
  interrupt(why: string): void {
    this.running?.abort(new Cancelled('changed', why));
  }

  /** Resolves when the next frame ends (`frameEnded`), whether it ran, failed or was refused. */
  nextFrameEnd(): Promise<void> {
    return new Promise((resolve) => this.endWaiters.push(resolve));
  }

  /** A frame ended: tell those waiting for it. */
  frameEnded(): void {
    for (const resolve of this.endWaiters.splice(0)) resolve();
  }
}
