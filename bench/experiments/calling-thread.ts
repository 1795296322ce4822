// A pipeline's frames on the calling thread, its modules from a disk cache (so the process does
// not load the compiler when they are there): for comparing two builds by what load disturbs
// least (issue 19, bench/RESULTS.md). Run it from each build's dist, alternating the builds.
//
//   node dist/bench/experiments/calling-thread.js CACHE_DIR PIPELINE SIZE FRAMES [--cpu]
//
// Without --cpu it runs FRAMES frames and stops: under `valgrind --tool=cachegrind`, the
// difference of two frame counts' instructions is what those frames cost. With --cpu it prints
// the CPU time per frame (every thread of the process) of 10 batches after 30 frames of warm-up:
// the lowest and the median batch.

import { benchScene } from '../run.js';
import { Engine } from '../../src/main/engine.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { prepareModules } from '../../src/main/modules.js';
import { isPipelineName } from '../reference/measurement.js';

const [dir, pipeline, size, frames, mode] = process.argv.slice(2);
if (!dir || !isPipelineName(pipeline) || !(Number(frames) > 0)) throw new Error('usage: calling-thread.js CACHE_DIR PIPELINE SIZE FRAMES [--cpu]');
const scene = benchScene(pipeline, Number(size));
await prepareModules(sceneGroups(scene, [], true).map((g) => g.ir), undefined, dir);
const engine = new Engine(scene, { prepared: true, cacheFrames: false });
try {
  if (mode !== '--cpu') {
    for (let i = 0; i < Number(frames); i++) await engine.evaluate({ time: 0.5 });
  } else {
    for (let i = 0; i < 30; i++) await engine.evaluate({ time: 0.5 });
    const per = Math.max(1, Math.floor(Number(frames) / 10));
    const batches: number[] = [];
    for (let b = 0; b < 10; b++) {
      const start = process.cpuUsage();
      for (let i = 0; i < per; i++) await engine.evaluate({ time: 0.5 });
      const used = process.cpuUsage(start);
      batches.push((used.user + used.system) / 1000 / per);
    }
    batches.sort((a, b) => a - b);
    console.log(JSON.stringify({ pipeline, size: Number(size), cpu_ms_per_frame: { min: batches[0], median: batches[5] } }));
  }
} finally {
  engine.dispose();
}
