// A corpus scene's frame with another build's module against this build's, in one process on the
// calling thread, alternating batches (issue 17: did the frame after an edit get slower since a
// base commit?). As p3-ab.ts does for P3: the other build's compiler (its dist) compiles module A,
// this build's B, each engine over its own memory; CPU ms per frame of the process, and B / A per
// round. The frames' checksums must be equal.
//
//   node dist/bench/experiments/corpus-ab.js OTHER_DIST SCENE TIER FRAMES ROUNDS

import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { corpus, loadCorpusScene } from '../corpus-scenes.js';
import { compileFunction } from '../../src/codegen/compile.js';
import type { Tier } from '../../src/codegen/plan.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { loadCompiler } from '../../src/main/modules.js';
import { alternate, engineWith, ratio, spread } from './ab-engines.js';

const [other, name, tier, frames, rounds] = [process.argv[2], process.argv[3], process.argv[4] as Tier, Number(process.argv[5]), Number(process.argv[6])];
const c = corpus().find((x) => x.name === name);
if (!other || !c || !['fast', 'optimised'].includes(tier) || !(frames > 0 && rounds > 0)) throw new Error('usage: corpus-ab.js OTHER_DIST SCENE fast|optimised FRAMES ROUNDS');
const otherCompile = ((await import(pathToFileURL(join(resolve(other), 'src/codegen/compile.js')).href)) as { compileFunction: typeof compileFunction }).compileFunction;
await loadCompiler();
const scene = loadCorpusScene(c);
const groups = sceneGroups(scene, [], true);
if (groups.length !== 1) throw new Error(`${name} runs ${groups.length} groups; this compares scenes of one group`);
const [group] = groups;

const bytes = { A: otherCompile(group.ir, { tier }), B: compileFunction(group.ir, { tier }) };
const engines = { A: engineWith(scene, group, bytes.A, tier), B: engineWith(scene, group, bytes.B, tier) };
const { checksums, cpu, load } = await alternate(scene, engines, { steps: frames, rounds, warmSteps: 3 });
console.log(`${name} ${tier}: ${bytes.A.length} / ${bytes.B.length} bytes, load ${load[0].toFixed(1)} -> ${load[1].toFixed(1)}, checksums ${checksums.A === checksums.B ? 'equal' : `DIFFER (${checksums.A} / ${checksums.B})`}`);
console.log(`  cpu ms per frame  A ${spread(cpu.A, 2)}   B ${spread(cpu.B, 2)}   B / A ${ratio(cpu, 2)}`);
