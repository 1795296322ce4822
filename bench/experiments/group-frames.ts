// Experiment (issue 17): each group's milliseconds in a corpus scene's frames, per tier, on a pool of 2.
//   node dist/bench/experiments/group-frames.js SCENE TIER [FRAMES]
import { loadavg } from 'node:os';
import { corpus, loadCorpusScene } from '../compile.js';
import { compileFunction } from '../../src/codegen/compile.js';
import type { Tier } from '../../src/codegen/plan.js';
import { Engine } from '../../src/main/engine.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { FieldMemory } from '../../src/main/memory.js';
import { loadCompiler, seedModule } from '../../src/main/modules.js';
import { EvalPool } from '../../src/workers/pool.js';

const [name, tier = 'fast', frames = '6', workers = '2'] = process.argv.slice(2);
await loadCompiler();
const c = corpus().find((x) => x.name === name)!;
const scene = loadCorpusScene(c);
for (const g of sceneGroups(scene, [], true)) seedModule(g.ir, new WebAssembly.Module(compileFunction(g.ir, { tier: tier as Tier })), tier as Tier);
const memory = new FieldMemory();
const pool = Number(workers) > 0 ? new EvalPool(memory.memory, { workers: Number(workers) }) : undefined;
const engine = new Engine(scene, { memory, pool, prepared: true, tier: tier as Tier, cacheFrames: false });
for (let i = 0; i < Number(frames); i++) {
  const c0 = process.cpuUsage();
  const r = await engine.evaluate({ time: 0.5 + i });
  const u = process.cpuUsage(c0);
  console.log(r.timings.map((t) => `${t.node} ${t.millis.toFixed(1)}`).join('  '), ` cpu ${((u.user + u.system) / 1000).toFixed(1)}`);
}
engine.dispose();
await pool?.destroy();
console.log(`load ${loadavg()[0].toFixed(1)}`);
