// Warming V8's code up while the session is idle (issue 17: an edit's latency). V8 first runs our
// JavaScript (and binaryen's glue) on baseline code and optimises a function only once it has run
// a while, so a young session paid for warming it on its first edits:
//
// - the compile worker compiled an edit's fast tier in 15-60 ms against 5-10 ms once warm
//   (bench/RESULTS.md, "The compile worker warmed with the session's own scene");
// - the coordinator parsed, checked and lowered the inline corpus scene in 17-25 ms against
//   2-5 ms once warm ("The coordinator warmed too").
//
// So each of them repeats its part of an edit on the session's own scene a few times while it has
// nothing else to do, and throws the result away: the code paths an edit of that scene takes are
// the ones warmed. The worker compiles the scene's groups at the fast tier (compile-worker.ts); the
// coordinator parses and checks its documents and groups the result (session.ts).
//
// Requests go first: each step is one macrotask (a request that arrives waits for at most that
// one), none starts until there was no request for IDLE_MS, and the warm-up stops after WARM_RUNS
// steps or WARM_MS of its own time, whichever comes first (on a busy machine every step takes
// longer: it then does fewer). Its first error ends it: a warm-up that fails costs nothing but
// itself.
//
// Frames go first too: a step starts only when the process was quiet over the IDLE_MS before it
// (`busyGauge`). Run back to back, the worker's warm-up took a core from the first frames after
// opening: the first 10 frames of noise took 767-822 ms against 377-419 without it. With frames
// running non-stop (a Player), it waits, and the edits warm the code. The two warm-ups also wait
// for each other: each sees the other's steps as a busy process.

/** Idle time before each step: requests in a burst are not interleaved with it. */
export const IDLE_MS = 30;
/**
 * Steps in all (items round-robin). 24 made noise's and inline's compiles as fast as 20-25 edits
 * did, but not raymarch's (two groups, 12 compiles each): 72 cut its edit's compile 21-25 -> 13-16 ms
 * (bench/RESULTS.md, "The coordinator warmed too").
 */
export const WARM_RUNS = 72;
/** Wall time spent in steps, at most (milliseconds). */
export const WARM_MS = 2000;

/** Past this share of a core over the gap measured, the process is running frames: the warm-up waits. */
export const BUSY_CORES = 0.25;

/**
 * A warm-up's `busy`: whether the process (every thread) used more than BUSY_CORES since it was
 * last asked. One per warm-up: two warm-ups of one thread (two sessions) asking one gauge would
 * each measure only the gap since the other asked.
 */
export function busyGauge(): () => boolean {
  let since = { at: performance.now(), cpu: process.cpuUsage() };
  return () => {
    const now = { at: performance.now(), cpu: process.cpuUsage() };
    const used = (now.cpu.user - since.cpu.user + now.cpu.system - since.cpu.system) / 1000;
    const busy = used > (now.at - since.at) * BUSY_CORES;
    since = now;
    return busy;
  };
}

/** What a warm-up did so far. */
export interface Warmth {
  /** Steps run. */
  runs: number;
  /** Milliseconds spent in them. */
  millis: number;
  done: boolean;
  error?: string;
}

/** What a warm-up is told: when the thread last worked for a request, whether the process is busy, when to stop. */
export interface WarmUpOptions {
  /** When the thread last worked for a request (`performance.now()` while one is at work). */
  lastRequest: () => number;
  /** Whether the process was busy since it was last asked (a busyGauge()). */
  busy?: () => boolean;
  /** Ends the warm-up before its next step (the session closed). */
  signal?: AbortSignal;
  limits?: { runs: number; millis: number };
}

/**
 * Warm code up in the background: `run` each of `items` round-robin, one step at a time, while the
 * thread and the process are idle (see the top of this file). Returns its progress, updated as it
 * goes.
 */
export function warmUp<T>(items: T[], run: (item: T) => void, options: WarmUpOptions): Warmth {
  const { lastRequest, busy = () => false, signal, limits = { runs: WARM_RUNS, millis: WARM_MS } } = options;
  const warmth: Warmth = { runs: 0, millis: 0, done: !items.length };
  const step = () => {
    if (signal?.aborted) {
      warmth.done = true;
      return;
    }
    const idle = performance.now() - lastRequest();
    // `busy` is asked every time: it measures the process since it was last asked.
    if (busy() || idle < IDLE_MS) {
      later(step);
      return;
    }
    const start = performance.now();
    try {
      run(items[warmth.runs % items.length]);
    } catch (e) {
      warmth.error = (e as Error)?.message ?? String(e);
      warmth.done = true;
      return;
    }
    warmth.millis += performance.now() - start;
    warmth.runs++;
    if (warmth.runs >= limits.runs || warmth.millis >= limits.millis) warmth.done = true;
    else {
      busy(); // from now: the next step judges the gap after this step, not the step
      later(step);
    }
  };
  if (!warmth.done) {
    busy();
    later(step);
  }
  return warmth;
}

/** The next step, IDLE_MS from now; it keeps no process alive. */
function later(step: () => void): void {
  setTimeout(step, IDLE_MS).unref();
}

/** Requests at work on a thread, and when the last one ended: what a warm-up's `lastRequest` reads. */
export class Activity {
  private working = 0;
  private ended = -Infinity;

  /** Count `work` as a request at work until it settles. */
  track<T>(work: Promise<T>): Promise<T> {
    this.working++;
    return work.finally(() => {
      this.working--;
      this.ended = performance.now();
    });
  }

  /** `performance.now()` while a request is at work, else when the last one ended. */
  readonly lastRequest = (): number => (this.working ? performance.now() : this.ended);
}
