// Experiment (issue 17): a corpus scene's frames on the calling thread, its modules of one tier
// compiled ahead into a folder (so the timed process does not load the compiler): for counting a
// frame's instructions with cachegrind (the difference of two frame counts), or its CPU time.
//
//   node dist/bench/experiments/corpus-frames.js compile DIR SCENE TIER
//   node dist/bench/experiments/corpus-frames.js run DIR SCENE TIER FRAMES [--cpu]

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { corpus, loadCorpusScene } from '../corpus-scenes.js';
import type { Tier } from '../../src/codegen/plan.js';
import { Engine } from '../../src/main/engine.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { seedModule } from '../../src/main/modules.js';

const [mode, dir, name, tier, frames, cpu] = process.argv.slice(2);
// A corpus scene's name, or the path of a scene of one's own (a variant, for comparison).
const c = corpus().find((x) => x.name === name) ?? (name?.endsWith('.esn') ? { name: basename(name, '.esn'), path: resolve(name) } : undefined);
// TIER: fast or optimised, optionally with options: fast+O3 (binaryen's -O3), optimised+i1 (one vector per step), fast+i4 (four).
const [tierName, extra] = (tier ?? '').split('+');
if (!c || (tierName !== 'fast' && tierName !== 'optimised')) throw new Error('usage: corpus-frames.js compile|run DIR SCENE fast|optimised[+O3|+i1] [FRAMES] [--cpu]');
const options = { tier: tierName as Tier, ...(extra === 'O3' ? { optimize: true } : extra?.startsWith('i') ? { interleave: Number(extra.slice(1)) } : {}) };
const scene = loadCorpusScene(c);
const groups = sceneGroups(scene, [], true);
const file = (i: number) => join(dir, `${c.name}.${tier}.${i}.wasm`);
if (mode === 'compile') {
  const { compileFunction } = await import('../../src/codegen/compile.js');
  mkdirSync(dir, { recursive: true });
  groups.forEach((g, i) => writeFileSync(file(i), compileFunction(g.ir, options)));
} else {
  groups.forEach((g, i) => seedModule(g.ir, new WebAssembly.Module(readFileSync(file(i))), tierName as Tier));
  const engine = new Engine(scene, { prepared: true, tier: tierName as Tier, cacheFrames: false });
  const n = Number(frames);
  if (cpu !== '--cpu') {
    for (let i = 0; i < n; i++) await engine.evaluate({ time: 0.5 });
  } else {
    await engine.evaluate({ time: 0.5 });
    const c0 = process.cpuUsage();
    for (let i = 0; i < n; i++) await engine.evaluate({ time: 0.5 });
    const u = process.cpuUsage(c0);
    console.log(`${c.name} ${tier} cpu ms per frame ${((u.user + u.system) / 1000 / n).toFixed(1)}`);
  }
  engine.dispose();
}
