// P3's optimised module as text, to edit by hand and run against the original in one process
// (issue 19): what a change to life's loop would buy in the engine before codegen makes it
// (an address shared, loads moved, the loop's body removed: the step's floor).
//
//   node dist/bench/experiments/p3-wat.js dump SIZE FILE.wat
//   node dist/bench/experiments/p3-wat.js ab A.wat B.wat SIZE STEPS ROUNDS
//
// `dump` writes this build's optimised module for P3's group (binaryen's text after -O3, the
// optimise pass's dump: life's step loop is `$interior1`).
// `ab` assembles both texts as they are (no optimisation: the edit is what runs), each with the
// IR's section and TurboFan's hints as codegen adds them, runs each on the calling thread over its
// own memory in alternating batches (the order reversing each round, as p3-ab), and prints the
// cells' checksums after the seed and 10 steps (an edit that changes the results shows here) and
// CPU ms per step, min / median / max, with B / A per round.

import binaryen from 'binaryen';
import { readFileSync, writeFileSync } from 'node:fs';
import { benchScene } from '../run.js';
import { compileFunction } from '../../src/codegen/compile.js';
import { dumpTo } from '../../src/ir/dump.js';
import { META_SECTION } from '../../src/codegen/instantiate.js';
import { withCompileHints } from '../../src/codegen/turbofan.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { loadCompiler } from '../../src/main/modules.js';
import { alternate, engineWith, ratio, spread } from './ab-engines.js';

const [mode, ...rest] = process.argv.slice(2);
const usage = 'usage: p3-wat.js dump SIZE FILE.wat | ab A.wat B.wat SIZE STEPS ROUNDS';
await loadCompiler();

function p3Group(size: number) {
  const scene = benchScene('P3', size);
  return { scene, group: sceneGroups(scene, [], true)[0] };
}

if (mode === 'dump') {
  const [size, file] = [Number(rest[0]), rest[1]];
  if (!(size > 0) || !file) throw new Error(usage);
  // The optimise pass's own dump: its text keeps binaryen's names (the loops' labels).
  let text = '';
  dumpTo(['optimise'], (_pass, t) => (text = t));
  compileFunction(p3Group(size).group.ir, { tier: 'optimised' });
  dumpTo(undefined);
  writeFileSync(file, text);
} else if (mode === 'ab') {
  const [a, b] = rest;
  const [size, steps, rounds] = rest.slice(2).map(Number);
  if (!a || !b || !(size > 0 && steps > 0 && rounds > 0)) throw new Error(usage);
  const { scene, group } = p3Group(size);
  const meta = WebAssembly.Module.customSections(new WebAssembly.Module(compileFunction(group.ir, { tier: 'optimised' })), META_SECTION)[0];
  const assemble = (file: string): Uint8Array<ArrayBuffer> => {
    const m = binaryen.parseText(readFileSync(file, 'utf8'));
    try {
      m.setFeatures(binaryen.Features.All);
      if (!m.validate()) throw new Error(`${file} does not validate`);
      m.addCustomSection(META_SECTION, new Uint8Array(meta));
      return withCompileHints(m.emitBinary() as Uint8Array<ArrayBuffer>);
    } finally {
      m.dispose();
    }
  };
  const engines = { A: engineWith(scene, group, assemble(a)), B: engineWith(scene, group, assemble(b)) };
  const { checksums, cpu, load } = await alternate(scene, engines, { steps, rounds, warmSteps: 11, warmMs: 300 });
  console.log(`P3 ${size} x ${size}, ${steps} steps per batch, ${rounds} rounds, load ${load[0].toFixed(2)} -> ${load[1].toFixed(2)}; checksums A ${checksums.A}, B ${checksums.B}`);
  console.log(`cpu ms per step   A ${spread(cpu.A)}   B ${spread(cpu.B)}   B / A ${ratio(cpu)}`);
  for (const e of Object.values(engines)) e.dispose();
} else {
  throw new Error(usage);
}
