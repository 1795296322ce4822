// Experiment (issue 17, the edit's own cost): the CPU of each stage of one edit, run one after
// the other on this thread for a corpus scene edited as bench/edit-frame.ts edits it: what the
// coordinator does (check, fuse, digest, the IR's copy to the compile worker) and what the
// worker does (codegen with binaryen's emit, V8's compile of the module). Each edit nudges a
// literal no run here used before, so no cache (ours, V8's) serves it.
//
//   node dist/bench/experiments/edit-cpu.js [SCENE,...] [EDITS]

import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { editedKernel } from '../edit-frame.js';
import { corpus, loadCorpusScene } from '../corpus-scenes.js';
import { median } from '../reference/measurement.js';
import { loadScene } from '../../src/ir/check/scene.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { irDigest } from '../../src/main/modules.js';
import { compileFunction } from '../../src/codegen/index.js';

const names = (process.argv[2] ?? 'inline,noise,raymarch').split(',');
const edits = Number(process.argv[3] ?? 15);

for (const name of names) {
  const c = corpus().find((x) => x.name === name)!;
  const source = loadCorpusScene(c);
  const stages = new Map<string, number[]>();
  const add = (k: string, ms: number) => stages.set(k, [...(stages.get(k) ?? []), ms]);
  for (let i = 0; i < edits; i++) {
    const edit = editedKernel(source, 700 + i)!;
    const kernel = source.kernels.get(edit.id)!;
    const doc = source.documents.find((d) => d.path === kernel.path)!;
    const text = doc.text.slice(0, kernel.statement.span.start) + edit.text + doc.text.slice(kernel.statement.span.end);
    const read = (p: string) => (p === doc.path ? text : readFileSync(join(dirname(c.path), p), 'utf8').replace(/4096 x 4096/g, '256 x 256'));
    let t = performance.now();
    const lap = (k: string) => {
      const n = performance.now();
      add(k, n - t);
      t = n;
    };
    const scene = loadScene(basename(c.path), { read });
    lap('check (parse, check, lower)');
    const groups = sceneGroups(scene, [], true);
    lap('fuse');
    for (const g of groups) irDigest(g.ir);
    lap('digest');
    const copies = groups.map((g) => structuredClone(g.ir));
    lap('structured clone of the IR (both sides)');
    const bytes = copies.map((ir) => compileFunction(ir, { tier: 'fast' }));
    lap('codegen fast (worker)');
    for (const b of bytes) new WebAssembly.Module(b);
    lap('new WebAssembly.Module (worker)');
  }
  console.log(`\n${name}: ${edits} edits, ms median (min-max), the first 3 left out (warm-up)`);
  for (const [k, v] of stages) {
    const w = v.slice(3);
    console.log(`  ${k.padEnd(42)} ${median(w).toFixed(2).padStart(7)}  (${Math.min(...w).toFixed(2)}-${Math.max(...w).toFixed(2)})`);
  }
}
