// Experiment (issue 17, an edit's compile): a young compile worker with and without its warm-up
// (src/workers/compile-warmup.ts), in one process, alternately (cold, warm, warm, cold, ...). Each
// round starts a fresh worker, compiles the scene's groups as a session's opening does, waits GAP
// ms (the first frame), then compiles each edit's changed groups as bench --compile's edits do
// (a literal nudged), GAP ms apart, timing each compile's round trip from this thread.
//
//   node dist/bench/experiments/compile-warmup.js [SCENE,...] [EDITS] [ROUNDS] [GAP_MS]

import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadavg } from 'node:os';
import { editedKernel } from '../edit-frame.js';
import { corpus, loadCorpusScene } from '../corpus-scenes.js';
import { median } from '../reference/measurement.js';
import { loadScene } from '../../src/ir/check/scene.js';
import { sceneGroups } from '../../src/main/scene-groups.js';
import { irDigest } from '../../src/main/modules.js';
import { CompileWorker } from '../../src/main/compiler.js';
import type { IrFunction } from '../../src/ir/ir.js';

const names = (process.argv[2] ?? 'inline,noise,straight').split(',');
const edits = Number(process.argv[3] ?? 7);
const rounds = Number(process.argv[4] ?? 6);
const gap = Number(process.argv[5] ?? 300);

/** The scene's groups at 256 x 256, and each edit's groups that differ from them. */
function scene(name: string): { open: IrFunction[]; edits: IrFunction[][] } {
  const c = corpus().find((x) => x.name === name);
  if (!c) throw new Error(`no corpus scene ${name}`);
  const source = loadCorpusScene(c);
  const file = (p: string) => readFileSync(join(dirname(c.path), p), 'utf8').replace(/4096 x 4096/g, '256 x 256');
  const groups = (read: (p: string) => string) => sceneGroups(loadScene(basename(c.path), { read }), [], true).map((g) => g.ir);
  const open = groups(file);
  const known = new Set(open.map(irDigest));
  const changed = Array.from({ length: edits }, (_, i) => {
    const edit = editedKernel(source, i)!;
    const kernel = source.kernels.get(edit.id)!;
    const doc = source.documents.find((d) => d.path === kernel.path)!;
    const text = doc.text.slice(0, kernel.statement.span.start) + edit.text + doc.text.slice(kernel.statement.span.end);
    return groups((p) => (p === doc.path ? text : file(p))).filter((ir) => !known.has(irDigest(ir)));
  });
  return { open, edits: changed };
}

async function run(s: { open: IrFunction[]; edits: IrFunction[][] }, warm: boolean): Promise<{ open: number; edits: number[]; rounds: number }> {
  const worker = new CompileWorker({ warm });
  try {
    await worker.ready;
    let t = performance.now();
    await worker.compile(s.open, 'fast');
    const open = performance.now() - t;
    const times: number[] = [];
    for (const irs of s.edits) {
      await sleep(gap);
      t = performance.now();
      await worker.compile(irs, 'fast');
      times.push(performance.now() - t);
    }
    return { open, edits: times, rounds: (await worker.warmth())?.rounds ?? 0 };
  } finally {
    await worker.close();
  }
}

const spread = (xs: number[]) => `${Math.min(...xs).toFixed(1)} / ${median(xs).toFixed(1)} / ${Math.max(...xs).toFixed(1)}`;
console.log(`${rounds} rounds, ${edits} edits ${gap} ms apart, load ${loadavg()[0].toFixed(1)}; ms min / median / max over rounds`);
for (const name of names) {
  const s = scene(name);
  const got = { cold: [] as Awaited<ReturnType<typeof run>>[], warm: [] as Awaited<ReturnType<typeof run>>[] };
  for (let r = 0; r < rounds; r++) for (const warm of r % 2 ? [true, false] : [false, true]) got[warm ? 'warm' : 'cold'].push(await run(s, warm));
  for (const side of ['cold', 'warm'] as const) {
    const rs = got[side];
    console.log(`${name} ${side}: open ${spread(rs.map((r) => r.open))}; edit median ${spread(rs.map((r) => median(r.edits)))}; edit 1 ${spread(rs.map((r) => r.edits[0]))}; warm-up rounds ${rs.map((r) => r.rounds).join(',')}`);
  }
}
console.log(`load at the end ${loadavg()[0].toFixed(1)}`);
