// P3's life steps with another build's module against this build's, in one process on the
// calling thread, alternating batches (issue 19): the code alone, under the same load. The other
// build's compiler (its dist, e.g. main's at the base commit) compiles module A; this build's, B.
// Each engine runs its module over its own memory. Per batch: CPU ms per step of the process
// (one thread runs: its CPU is the module's) and wall ms; per round B / A.
//
//   node dist/bench/experiments/p3-ab.js OTHER_DIST SIZE STEPS ROUNDS
//
// OTHER_DIST: the other build's dist folder (holding src/codegen/compile.js).

import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchScene } from '../run.js';
import { compileFunction } from '../../src/codegen/compile.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { loadCompiler } from '../../src/main/modules.js';
import { alternate, engineWith, ratio, spread } from './ab-engines.js';

const [other, size, steps, rounds] = [process.argv[2], ...process.argv.slice(3).map(Number)] as [string, number, number, number];
if (!other || !(size > 0 && steps > 0 && rounds > 0)) throw new Error('usage: p3-ab.js OTHER_DIST SIZE STEPS ROUNDS');
const otherCompile = ((await import(pathToFileURL(join(resolve(other), 'src/codegen/compile.js')).href)) as { compileFunction: typeof compileFunction }).compileFunction;
await loadCompiler();
const scene = benchScene('P3', size);
const [group] = sceneGroups(scene, [], true);

const engines = { A: engineWith(scene, group, otherCompile(group.ir, { tier: 'optimised' })), B: engineWith(scene, group, compileFunction(group.ir, { tier: 'optimised' })) };
const { checksums, cpu, wall, load } = await alternate(scene, engines, { steps, rounds, warmSteps: 11, warmMs: 300 });
console.log(`P3 ${size} x ${size}, ${steps} steps per batch, ${rounds} rounds, load ${load[0].toFixed(2)} -> ${load[1].toFixed(2)}; checksums A ${checksums.A}, B ${checksums.B}`);
console.log(`cpu ms per step   A ${spread(cpu.A)}   B ${spread(cpu.B)}   B / A ${ratio(cpu)}`);
console.log(`wall ms per step  A ${spread(wall.A)}   B ${spread(wall.B)}   B / A ${ratio(wall)}`);
for (const e of Object.values(engines)) e.dispose();
