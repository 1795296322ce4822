// P3's life steps through the engine, wall ms per step, for comparing two builds' code (issue 19):
// run it from each build's dist in turn, A B A B, in one shell loop. The module is compiled here by
// that build's compiler (optimised tier); WORKERS 0 runs the bands on the calling thread.
//
//   node dist/bench/experiments/p3-steps.js SIZE STEPS BATCHES [WORKERS]
//
// Prints one JSON line: the min and median batch (ms per step), the checksum of the cells after
// the seed and 10 steps (equal builds agree), the load average.

import { loadavg } from 'node:os';
import { benchScene } from '../run.js';
import { compileFunction } from '../../src/codegen/compile.js';
import { Engine } from '../../src/main/engine.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { FieldMemory } from '../../src/main/memory.js';
import { readField } from '../../src/main/field.js';
import { loadCompiler, seedModule } from '../../src/main/modules.js';
import { EvalPool } from '../../src/workers/pool.js';

const [size, steps, batches, workers = 0] = process.argv.slice(2).map(Number);
if (!(size > 0 && steps > 0 && batches > 0)) throw new Error('usage: p3-steps.js SIZE STEPS BATCHES [WORKERS]');
await loadCompiler();
const scene = benchScene('P3', size);
for (const g of sceneGroups(scene, [], true)) seedModule(g.ir, new WebAssembly.Module(compileFunction(g.ir, { tier: 'optimised' })));
const memory = new FieldMemory();
const pool = workers > 0 ? new EvalPool(memory.memory, { workers }) : undefined;
const engine = new Engine(scene, { memory, pool, poolThreshold: 0, prepared: true, cacheFrames: false });
try {
  await pool?.started();
  const step = () => engine.evaluate({ time: 0.5 });
  for (let i = 0; i < 11; i++) await step();
  const [cells] = readField(engine.memory, engine.outputField(scene.outputs[0].name)!);
  let checksum = 0;
  for (let i = 0; i < cells.length; i++) checksum += cells[i];
  for (const warm = performance.now() + 300; performance.now() < warm; ) await step();
  const times: number[] = [];
  for (let b = 0; b < batches; b++) {
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) await step();
    times.push((performance.now() - t0) / steps);
  }
  times.sort((a, b) => a - b);
  const ms = (t: number) => Math.round(t * 1000) / 1000;
  console.log(JSON.stringify({ size, workers, min: ms(times[0]), median: ms(times[times.length >> 1]), checksum, load: loadavg()[0] }));
} finally {
  engine.dispose();
  await pool?.destroy();
}
