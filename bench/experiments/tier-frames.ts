// Experiment (issue 17, edit to frame): the frames a corpus scene's modules run, per tier, on a
// pool of 2 workers: the first frame after the modules are made (what an edit shows; V8 starts a
// module in its baseline code) and the warm frames after it, in wall and process CPU time (every
// thread: the pool's, and V8's background compiles). Variants are run in interleaved rounds.
//
//   [WORKERS=N] node dist/bench/experiments/tier-frames.js ROUNDS SCENE[,SCENE] VARIANT...
//
// Variants: fast, optimised (the tiers as they are); fast:PASS,PASS (the fast tier, then those
// binaryen passes); fast+i2 (the fast tier, two vectors per step where interleave.ts would);
// fast+tf (the module compiled by TurboFan at once: turbofan.ts); fast+form (the function's form,
// its literals as data, as a literal edit runs: src/ir/literals.ts); any of them then /bN (bands of N
// rows, against the engine's DEFAULT_BAND_ROWS).

import { loadavg } from 'node:os';
import { corpus, loadCorpusScene } from '../compile.js';
import { compileFunction } from '../../src/codegen/compile.js';
import { optimisedModule } from './turbofan.js';
import type { Tier } from '../../src/codegen/plan.js';
import { Engine } from '../../src/main/engine.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { FieldMemory } from '../../src/main/memory.js';
import { loadCompiler, seedModule } from '../../src/main/modules.js';
import { EvalPool } from '../../src/workers/pool.js';
import { median } from '../reference/measurement.js';
import { literalsOf } from '../../src/ir/literals.js';

interface Sample {
  compile: number;
  compileCpu: number;
  first: number;
  firstCpu: number;
  warm: number;
  warmCpu: number;
}

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

let nudge = 0;

async function once(name: string, variant: string, pool: EvalPool, memory: FieldMemory): Promise<Sample> {
  const c = corpus().find((x) => x.name === name)!;
  const scene = loadCorpusScene(c);
  const [spec, bandSpec] = variant.split('/b');
  const bandRows = bandSpec ? Number(bandSpec) : undefined;
  const [tierSpec, passList] = spec.split(':');
  const eager = tierSpec.endsWith('+tf');
  // +form: the function's form compiled (its literals as data: src/ir/literals.ts), as a literal edit runs it.
  const form = tierSpec.includes('+form');
  const [tierName, vectors] = tierSpec.replace(/\+tf$/, '').replace('+form', '').split('+i');
  const tier = tierName as Tier;
  const interleave = vectors ? Number(vectors) : undefined;
  const passes = passList ? passList.split(',') : undefined;
  // A fresh module every time (its own bytes and digest), as an edit makes: the IR's fuel nudged
  // (V8 shares the compiled code of modules with the same bytes).
  nudge++;
  for (const k of scene.kernels.values()) (k.ir as { fuel: number }).fuel += nudge;
  const groups = sceneGroups(scene, [], true);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  for (const g of groups) {
    const bytes = compileFunction(form ? literalsOf(g.ir).ir : g.ir, { tier, passes, interleave });
    seedModule(g.ir, eager ? optimisedModule(bytes) : new WebAssembly.Module(bytes), tier);
  }
  const compile = performance.now() - t0;
  const compileCpu = cpuMs(process.cpuUsage(cpu0));
  const engine = new Engine(scene, { memory, pool, prepared: true, tier, cacheFrames: false, bandRows });
  try {
    let c0 = process.cpuUsage();
    let w0 = performance.now();
    await engine.evaluate({ time: 0.5 });
    const first = performance.now() - w0;
    const firstCpu = cpuMs(process.cpuUsage(c0));
    const warms: number[] = [];
    const warmCpus: number[] = [];
    for (let i = 0; i < 5; i++) {
      c0 = process.cpuUsage();
      w0 = performance.now();
      await engine.evaluate({ time: 1.5 + i });
      warms.push(performance.now() - w0);
      warmCpus.push(cpuMs(process.cpuUsage(c0)));
    }
    return { compile, compileCpu, first, firstCpu, warm: median(warms), warmCpu: median(warmCpus) };
  } finally {
    engine.dispose();
  }
}

async function main() {
  const [roundsArg, scenesArg, ...variants] = process.argv.slice(2);
  const rounds = Number(roundsArg);
  await loadCompiler();
  const memory = new FieldMemory();
  const pool = new EvalPool(memory.memory, { workers: Number(process.env.WORKERS ?? 2) });
  const load0 = loadavg()[0];
  try {
    for (const name of scenesArg.split(',')) {
      const samples = new Map<string, Sample[]>(variants.map((v) => [v, []]));
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 ? [...variants].reverse() : variants;
        for (const v of order) samples.get(v)!.push(await once(name, v, pool, memory));
      }
      for (const v of variants) {
        const s = samples.get(v)!;
        const m = (k: keyof Sample) => median(s.map((x) => x[k])).toFixed(1);
        console.log(`${name.padEnd(10)} ${v.padEnd(14)} compile ${m('compile').padStart(7)} (cpu ${m('compileCpu').padStart(7)})  first ${m('first').padStart(7)} (cpu ${m('firstCpu').padStart(7)})  warm ${m('warm').padStart(7)} (cpu ${m('warmCpu').padStart(7)})`);
      }
    }
  } finally {
    await pool.destroy();
  }
  console.log(`load average ${load0.toFixed(1)} -> ${loadavg()[0].toFixed(1)}`);
}

await main();
