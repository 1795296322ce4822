// P3's life steps with another build's module against this build's, in one process on the
// calling thread, alternating batches (issue 19): the code alone, under the same load. The other
// build's compiler (its dist, e.g. main's at the base commit) compiles module A; this build's, B.
// Each engine runs its module over its own memory. Per batch: CPU ms per step of the process
// (one thread runs: its CPU is the module's) and wall ms; per round B / A.
//
//   node dist/bench/experiments/p3-ab.js OTHER_DIST SIZE STEPS ROUNDS
//
// OTHER_DIST: the other build's dist folder (holding src/codegen/compile.js).

import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchScene } from '../run.js';
import { compileFunction } from '../../src/codegen/compile.js';
import { Engine } from '../../src/main/engine.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { readField } from '../../src/main/field.js';
import { FieldMemory } from '../../src/main/memory.js';
import { irDigest, loadCompiler, seedModule } from '../../src/main/modules.js';

const [other, size, steps, rounds] = [process.argv[2], ...process.argv.slice(3).map(Number)] as [string, number, number, number];
if (!other || !(size > 0 && steps > 0 && rounds > 0)) throw new Error('usage: p3-ab.js OTHER_DIST SIZE STEPS ROUNDS');
const otherCompile = ((await import(pathToFileURL(join(resolve(other), 'src/codegen/compile.js')).href)) as { compileFunction: typeof compileFunction }).compileFunction;
await loadCompiler();
const scene = benchScene('P3', size);
const [group] = sceneGroups(scene, [], true);

/** An engine on the calling thread running `bytes` for P3's group. */
function engineWith(bytes: Uint8Array<ArrayBuffer>): Engine {
  seedModule(irDigest(group.ir), new WebAssembly.Module(bytes));
  return new Engine(scene, { memory: new FieldMemory(), poolThreshold: 0, prepared: true, cacheFrames: false });
}
const engines = { A: engineWith(otherCompile(group.ir, { tier: 'optimised' })), B: engineWith(compileFunction(group.ir, { tier: 'optimised' })) };
const step = (e: Engine) => e.evaluate({ time: 0.5 });
const checksums: Record<string, number> = {};
for (const [name, e] of Object.entries(engines)) {
  for (let i = 0; i < 11; i++) await step(e);
  const [cells] = readField(e.memory, e.outputField(scene.outputs[0].name)!);
  checksums[name] = cells.reduce((a, b) => a + b, 0);
  for (const warm = performance.now() + 300; performance.now() < warm; ) await step(e);
}
const cpu: Record<'A' | 'B', number[]> = { A: [], B: [] };
const wall: Record<'A' | 'B', number[]> = { A: [], B: [] };
const load0 = loadavg()[0];
for (let r = 0; r < rounds; r++) {
  for (const name of (r % 2 ? ['B', 'A'] : ['A', 'B']) as ('A' | 'B')[]) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) await step(engines[name]);
    const used = process.cpuUsage(c0);
    wall[name].push((performance.now() - t0) / steps);
    cpu[name].push((used.user + used.system) / 1000 / steps);
  }
}
const spread = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0].toFixed(3)} / ${s[s.length >> 1].toFixed(3)} / ${s[s.length - 1].toFixed(3)}`;
};
console.log(`P3 ${size} x ${size}, ${steps} steps per batch, ${rounds} rounds, load ${load0.toFixed(2)} -> ${loadavg()[0].toFixed(2)}; checksums A ${checksums.A}, B ${checksums.B}`);
console.log(`cpu ms per step   A ${spread(cpu.A)}   B ${spread(cpu.B)}   B / A ${spread(cpu.B.map((b, i) => b / cpu.A[i]))}`);
console.log(`wall ms per step  A ${spread(wall.A)}   B ${spread(wall.B)}   B / A ${spread(wall.B.map((b, i) => b / wall.A[i]))}`);
for (const e of Object.values(engines)) e.dispose();
