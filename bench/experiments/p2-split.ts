// P2's CPU time per frame on the calling thread, the whole pipeline or rings alone (the same
// scene with rings as its output, so the blur does not run): where P2's time goes (issue 19,
// bench/RESULTS.md). CPU time, not wall time: load disturbs it less.
//
//   node dist/bench/experiments/p2-split.js SIZE whole|rings FRAMES
//
// Prints the lowest and the median CPU ms per frame of 7 batches of FRAMES after 10 of warm-up.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadScene } from '../../src/ir/check/scene.js';
import { Engine } from '../../src/main/engine.js';
import { loadCompiler } from '../../src/main/modules.js';

const [size, which, frames] = process.argv.slice(2);
if (!(Number(size) > 0) || (which !== 'whole' && which !== 'rings') || !(Number(frames) > 0)) {
  throw new Error('usage: p2-split.js SIZE whole|rings FRAMES');
}
const file = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bench', 'scenes', 'p2.esn');
let text = readFileSync(file, 'utf8');
if (which === 'rings') text = text.replace('output result <- blur.result;', 'output result <- rings.result;');
const scene = loadScene('p2.esn', { read: () => text, size: [Number(size), Number(size)] });
if (scene.diagnostics.length) throw new Error(`p2.esn: ${scene.diagnostics[0].message}`);
await loadCompiler();
const engine = new Engine(scene, { cacheFrames: false });
try {
  for (let i = 0; i < 10; i++) await engine.evaluate({ time: 0.5 });
  const batches: number[] = [];
  for (let b = 0; b < 7; b++) {
    const start = process.cpuUsage();
    for (let i = 0; i < Number(frames); i++) await engine.evaluate({ time: 0.5 });
    const used = process.cpuUsage(start);
    batches.push((used.user + used.system) / 1000 / Number(frames));
  }
  batches.sort((a, b) => a - b);
  console.log(JSON.stringify({ size: Number(size), which, cpu_ms_per_frame: { min: batches[0], median: batches[3] } }));
} finally {
  engine.dispose();
}
