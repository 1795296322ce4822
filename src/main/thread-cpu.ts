// One thread's own CPU time and priority (Linux), for the background optimiser (optimiser.ts): its
// compile thread runs at a lower priority, so the frames after an edit keep the cores, and its
// budget counts the CPU that thread ran, not the wall time it waited for a core. Elsewhere (no
// /proc) neither is known: the thread keeps its priority and the budget is wall time.

import { readFileSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The calling thread's id in the kernel (Linux: /proc/thread-self is `PID/task/TID`), or undefined. */
export function kernelThreadId(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Lower the calling thread's priority to `nice` (0-19; higher runs less when cores are busy).
 * Linux's setpriority takes a thread id for one thread (os.setPriority passes it through), so
 * the process's other threads keep theirs. Whether it was done.
 */
export function niceThisThread(nice: number): boolean {
  const tid = kernelThreadId();
  if (tid === undefined) return false;
  try {
    setPriority(tid, nice);
    return true;
  } catch {
    return false; // not allowed here: the thread runs at the process's priority
  }
}

/** Milliseconds of CPU thread `tid` of this process has run (its schedstat, in ns), or undefined. */
export function threadCpuMs(tid: number): number | undefined {
  try {
    const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ')[0]);
    return Number.isFinite(ns) ? ns / 1e6 : undefined;
  } catch {
    return undefined; // no schedstat (or the thread has ended)
  }
}

/** The nice value of thread `tid` of this process (for tests), or undefined. */
export function threadNice(tid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    // Fields after the command's closing parenthesis: state is field 3, nice field 19.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  } catch {
    return undefined;
  }
}
