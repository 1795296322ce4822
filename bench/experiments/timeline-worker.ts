// The worker of bench/experiments/timeline.ts: src/workers/eval-worker.ts's band loop, writing
// when its task started and ended (CLOCK_MONOTONIC, the same clock in every thread) and how many
// bands it ran into the run's shared timeline.

import { workerData } from 'piscina';

type Run = (args: number, r0: number, r1: number) => void;

export interface TimedTask {
  module: WebAssembly.Module;
  digest: string;
  control: Int32Array;
  args: number;
  rows: number;
  bandRows: number;
  /** [start ms, end ms, bands] per task, at 3 * index. */
  times: Float64Array;
  index: number;
}

const memory: WebAssembly.Memory = workerData.memory;
const cache = new Map<string, Run>();

const now = () => Number(process.hrtime.bigint()) / 1e6;

export default function timedBands(task: TimedTask): { bands: number } {
  const start = now();
  let run = cache.get(task.digest);
  if (!run) {
    run = new WebAssembly.Instance(task.module, { env: { memory } }).exports.run as Run;
    cache.set(task.digest, run);
  }
  const bands = Math.ceil(task.rows / task.bandRows);
  let done = 0;
  for (;;) {
    const b = Atomics.add(task.control, 0, 1);
    if (b >= bands) break;
    const r0 = b * task.bandRows;
    run(task.args, r0, Math.min(task.rows, r0 + task.bandRows));
    done++;
  }
  Atomics.add(task.control, 1, done);
  task.times[3 * task.index] = start;
  task.times[3 * task.index + 1] = now();
  task.times[3 * task.index + 2] = done;
  return { bands: done };
}
