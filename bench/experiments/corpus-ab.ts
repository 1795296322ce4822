// A corpus scene's frame with another build's module against this build's, in one process on the
// calling thread, alternating batches (issue 17: did the frame after an edit get slower since a
// base commit?). As p3-ab.ts does for P3: the other build's compiler (its dist) compiles module A,
// this build's B, each engine over its own memory; CPU ms per frame of the process, and B / A per
// round. The frames' checksums must be equal.
//
//   node dist/bench/experiments/corpus-ab.js OTHER_DIST SCENE TIER FRAMES ROUNDS

import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { corpus, loadCorpusScene } from '../corpus-scenes.js';
import { compileFunction } from '../../src/codegen/compile.js';
import type { Tier } from '../../src/codegen/plan.js';
import { Engine } from '../../src/main/engine.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { readField } from '../../src/main/field.js';
import { FieldMemory } from '../../src/main/memory.js';
import { irDigest, loadCompiler, seedModule } from '../../src/main/modules.js';

const [other, name, tier, frames, rounds] = [process.argv[2], process.argv[3], process.argv[4] as Tier, Number(process.argv[5]), Number(process.argv[6])];
const c = corpus().find((x) => x.name === name);
if (!other || !c || !['fast', 'optimised'].includes(tier) || !(frames > 0 && rounds > 0)) throw new Error('usage: corpus-ab.js OTHER_DIST SCENE fast|optimised FRAMES ROUNDS');
const otherCompile = ((await import(pathToFileURL(join(resolve(other), 'src/codegen/compile.js')).href)) as { compileFunction: typeof compileFunction }).compileFunction;
await loadCompiler();
const scene = loadCorpusScene(c);
const groups = sceneGroups(scene, [], true);
if (groups.length !== 1) throw new Error(`${name} runs ${groups.length} groups; this compares scenes of one group`);
const [group] = groups;

/** An engine on the calling thread (no pool) running `bytes` for the scene's group. */
function engineWith(bytes: Uint8Array<ArrayBuffer>): Engine {
  seedModule(irDigest(group.ir), new WebAssembly.Module(bytes), tier);
  return new Engine(scene, { memory: new FieldMemory(), prepared: true, cacheFrames: false, tier });
}
const bytes = { A: otherCompile(group.ir, { tier }), B: compileFunction(group.ir, { tier }) };
const engines = { A: engineWith(bytes.A), B: engineWith(bytes.B) };
const frame = (e: Engine) => e.evaluate({ time: 0.5 });
const sums: Record<string, number> = {};
for (const [k, e] of Object.entries(engines)) {
  for (let i = 0; i < 3; i++) await frame(e);
  const [values] = readField(e.memory, e.outputField(scene.outputs[0].name)!);
  sums[k] = values.reduce((a, b) => a + b, 0);
}
const cpu: Record<'A' | 'B', number[]> = { A: [], B: [] };
const load0 = loadavg()[0];
for (let r = 0; r < rounds; r++) {
  for (const k of (r % 2 ? ['B', 'A'] : ['A', 'B']) as ('A' | 'B')[]) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < frames; i++) await frame(engines[k]);
    const used = process.cpuUsage(c0);
    cpu[k].push((used.user + used.system) / 1000 / frames);
  }
}
const spread = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0].toFixed(2)} / ${s[s.length >> 1].toFixed(2)} / ${s[s.length - 1].toFixed(2)}`;
};
console.log(`${name} ${tier}: ${bytes.A.length} / ${bytes.B.length} bytes, load ${load0.toFixed(1)} -> ${loadavg()[0].toFixed(1)}, checksums ${sums.A === sums.B ? 'equal' : `DIFFER (${sums.A} / ${sums.B})`}`);
console.log(`  cpu ms per frame  A ${spread(cpu.A)}   B ${spread(cpu.B)}   B / A ${spread(cpu.B.map((b, i) => b / cpu.A[i]))}`);
for (const e of Object.values(engines)) e.dispose();
