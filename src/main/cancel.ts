// Cancelling evaluations: a `cancel` request, a request's `deadline`, the connection that asked
// closing, or a change swapping the world all abort the signal an evaluation runs under. The
// engine stops at the next group (a pool run at once: its workers are ended and replaced) and
// commits nothing, so state, clock and frame counter stay as they were before the frame.

import { constants as osConstants } from 'node:os';

/** Why an evaluation stopped. */
export type CancelReason = 'cancel' | 'deadline' | 'closed' | 'changed';

/** An evaluation stopped before it finished: the reason an AbortSignal is aborted with. */
export class Cancelled extends Error {
  override name = 'Cancelled';
  constructor(
    readonly reason: CancelReason,
    message: string,
    /** The node whose migration it stopped, when it stopped one (carry.ts). */
    readonly node?: string,
  ) {
    super(message);
  }

  /** Frames of a several-frame evaluation that ran and were kept before it stopped (runFrames). */
  framesKept?: { ran: number; of: number };
}

/** Milliseconds a change started in the background (a saved edit the Player's watcher saw) may take before it is abandoned. */
export const BACKGROUND_DEADLINE_MS = 60_000;

/**
 * A signal aborted by `signal` or, after `ms` milliseconds, by a deadline: a background change
 * bounded by the session's own deadline. Call `done` when the work ends (it stops the timer).
 */
export function withDeadline(ms: number, signal?: AbortSignal): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Cancelled('deadline', `the session's deadline for a background change, ${ms} ms, passed`)), ms);
  const forward = () => controller.abort(signal!.reason);
  if (signal?.aborted) forward();
  else signal?.addEventListener('abort', forward, { once: true });
  return {
    signal: controller.signal,
    done: () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forward);
    },
  };
}

/** Throw the signal's reason (a Cancelled) when it is aborted. */
export function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw cancelledBy(signal);
}

/** The Cancelled a signal was aborted with (another reason is wrapped as a plain cancel). */
export function cancelledBy(signal: AbortSignal): Cancelled {
  const r: unknown = signal.reason;
  return r instanceof Cancelled ? r : new Cancelled('cancel', 'the evaluation was cancelled');
}

/** Resolve or reject as `work` does, or reject with the signal's Cancelled once it aborts first. */
export function untilCancelled<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(cancelledBy(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelledBy(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** What is wrong with a request's `deadline` (milliseconds), or undefined when it is fine or absent. */
export function deadlineProblem(deadline: unknown, op = 'the request'): string | undefined {
  if (deadline === undefined) return undefined;
  // Told as the request's (a compose or restore with a bad deadline was told of "the evaluation").
  if (typeof deadline !== 'number' || !(deadline > 0) || deadline > 2 ** 31 - 1)
    return `\`deadline\` is the milliseconds ${op} may take, a number above 0 (at most ${2 ** 31 - 1}); got ${JSON.stringify(deadline)}`;
  return undefined;
}

/** One request's evaluation that `cancel` can reach: who asked, and how to stop it. */
interface Running {
  connection: number;
  request: unknown;
  controller: AbortController;
}

/**
 * The evaluations requests are running, so that `cancel` finds them. Each gets its own signal,
 * aborted by a cancel of its connection, by its deadline, or by its connection closing.
 */
export class Evaluations {
  private readonly running = new Set<Running>();

  get size(): number {
    return this.running.size;
  }

  /**
   * Start one; call `done` when it has answered (it stops the deadline's timer). `waited`: the
   * milliseconds since the request arrived, which its deadline counts (a request behind a long one
   * of its own connection waited past its deadline, and only then began counting).
   */
  start(options: { connection: number; request: unknown; deadline?: number; closed?: AbortSignal; waited?: number }): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    const entry: Running = { connection: options.connection, request: options.request, controller };
    this.running.add(entry);
    let timer: NodeJS.Timeout | undefined;
    const waited = Math.max(0, options.waited ?? 0);
    const passed = () => controller.abort(new Cancelled('deadline', `its deadline of ${options.deadline} ms passed${waited >= 1 ? ` (${Math.round(waited)} ms of it waiting for the requests before it on its connection)` : ''}`));
    if (options.deadline !== undefined) {
      if (waited >= options.deadline) passed();
      else timer = setTimeout(passed, options.deadline - waited);
    }
    const onClosed = () => controller.abort(new Cancelled('closed', 'the connection that asked for it closed (a pipe of requests that ends closes it: end the requests with {"op":"quit"} to have every one answered whole)'));
    if (options.closed?.aborted) onClosed();
    else options.closed?.addEventListener('abort', onClosed, { once: true });
    return {
      signal: controller.signal,
      done: () => {
        clearTimeout(timer);
        options.closed?.removeEventListener('abort', onClosed);
        this.running.delete(entry);
      },
    };
  }

  /** Whether an evaluation (of request id `request`, when given) runs on a connection other than `connection`. */
  runsElsewhere(connection: number, request?: unknown): boolean {
    for (const r of this.running) if (r.connection !== connection && (request === undefined || r.request === request)) return true;
    return false;
  }

  /** Stop a connection's evaluations: it went away (reason `closed`, `why` saying how); returns how many. */
  closeConnection(connection: number, why: string): number {
    let n = 0;
    for (const r of this.running) {
      if (r.connection !== connection || r.controller.signal.aborted) continue;
      r.controller.abort(new Cancelled('closed', why));
      n++;
    }
    return n;
  }

  /** Stop every evaluation: the session is closing, and no frame of it will end. */
  closeAll(): void {
    for (const r of this.running) r.controller.abort(new Cancelled('closed', 'the session was closed'));
  }

  /** Cancel a connection's evaluations (only the one of request id `request`, when given); returns how many. */
  cancel(connection: number, request?: unknown): number {
    let n = 0;
    for (const r of this.running) {
      if (r.connection !== connection || (request !== undefined && r.request !== request)) continue;
      if (!r.controller.signal.aborted) n++;
      r.controller.abort(new Cancelled('cancel', request === undefined ? 'a `cancel` request of its connection' : `a \`cancel\` request for request ${JSON.stringify(request)}`));
    }
    return n;
  }
}

/**
 * The signals that ask a command to stop: Ctrl-C, a scheduler's SIGTERM, and SIGHUP (the terminal
 * or the ssh session closed: it ended a render where it stood, its temporary file left behind).
 */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** The stop signal a command heard, if one: it then exits 128 + its number, as a shell expects. */
let heard: NodeJS.Signals | undefined;

/** Call `stop` at the first of STOP_SIGNALS (once); returns what hands them back. */
export function onStopSignals(stop: (signal: NodeJS.Signals) => void): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    heard ??= signal;
    stop(signal);
  };
  for (const s of STOP_SIGNALS) process.once(s, onSignal);
  return () => {
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
  };
}

/** The exit status of a command that failed: 128 + the signal's number when a stop signal stopped it (130 for Ctrl-C, 143 for SIGTERM), else 1. */
export function failureStatus(): number {
  return heard ? 128 + osConstants.signals[heard] : 1;
}

/**
 * A signal that SIGINT (Ctrl-C), SIGTERM (a scheduler) or SIGHUP aborts with the Cancelled `interrupted
 * (SIGINT)`, instead of ending the process where it stands: a render stops between its steps and
 * removes what it had not finished (render.ts, tiles/render-tiled.ts). `dispose` hands the signals
 * back.
 */
export function interruptedBySignals(): { signal: AbortSignal; dispose(): void } {
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => stop.abort(new Cancelled('cancel', `interrupted (${signal})`));
  // The reader of stdout went away (`render --json | head -1`): what SIGPIPE is to a C program.
  const onPipe = (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') stop.abort(new Cancelled('cancel', 'interrupted (stdout was closed)'));
  };
  const handBack = onStopSignals(onSignal);
  process.stdout.on('error', onPipe);
  return {
    signal: stop.signal,
    dispose: () => {
      handBack();
      process.stdout.off('error', onPipe);
    },
  };
}
