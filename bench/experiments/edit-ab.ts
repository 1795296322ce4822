// Experiment (issue 17): edit to frame of two builds, A and B, alternately on the same machine —
// one process per build and round, the order flipped each round — and each measure's min / median /
// max over the rounds (bench/edit-frame.ts's editToFrame, the edits of `bench --compile`).
// A build is a checkout with its dist/ built (e.g. `git archive BASE | tar -x -C DIR`, node_modules
// linked, `npx tsc -p tsconfig.json`).
//
//   node dist/bench/experiments/edit-ab.js A_ROOT B_ROOT [SCENES] [EDITS] [ROUNDS] [literal|shape]
//
// AB_FLAGS_A and AB_FLAGS_B (V8 flags, set with v8.setFlagsFromString before anything runs: workers
// refuse V8 flags in execArgv) run a side with flags: the same build twice, once with
// `--always-sparkplug`, compares a flag.

import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import type { EditToFrame } from '../edit-frame.js';
import { median } from '../reference/measurement.js';
import { textTable } from '../table.js';

const [a, b, scenes = 'inline,noise,raymarch,straight,stencil,nested', edits = '7', rounds = '6', kind = 'literal'] = process.argv.slice(2);
if (!a || !b) throw new Error('usage: edit-ab.js A_ROOT B_ROOT [SCENES] [EDITS] [ROUNDS]');

/** One process of a build: its editToFrame of each scene, as JSON lines. */
function run(root: string, flags: string): EditToFrame[] {
  const at = (f: string) => pathToFileURL(join(root, 'dist', 'bench', f)).href;
  const script = `(await import('node:v8')).setFlagsFromString(${JSON.stringify(flags)});
const { editToFrame } = await import(${JSON.stringify(at('edit-frame.js'))});
const { corpus } = await import(${JSON.stringify(at('corpus-scenes.js'))});
for (const name of ${JSON.stringify(scenes.split(','))}) console.log(JSON.stringify(await editToFrame(corpus().find((c) => c.name === name), ${Number(edits)}, ${JSON.stringify(kind)})));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${root}: ${r.stderr}`);
  return r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

const measures: [string, keyof EditToFrame][] = [['edit to frame', 'median_ms'], ['compile', 'compile_ms'], ['commit', 'commit_ms'], ['frame', 'frame_ms'], ['next frame (fast)', 'fast_next_ms'], ['first (optimised)', 'optimised_first_ms']];
const got = { A: [] as EditToFrame[], B: [] as EditToFrame[] };
for (let r = 0; r < Number(rounds); r++) {
  for (const side of r % 2 ? (['B', 'A'] as const) : (['A', 'B'] as const)) {
    process.stderr.write(`round ${r + 1} ${side}, load ${loadavg()[0].toFixed(1)}\n`);
    got[side].push(...run(side === 'A' ? a : b, process.env[`AB_FLAGS_${side}`] ?? ''));
  }
}
const spread = (xs: number[]) => {
  const v = xs.filter((x) => typeof x === 'number' && !Number.isNaN(x));
  return v.length ? `${Math.min(...v).toFixed(1)} / ${median(v).toFixed(1)} / ${Math.max(...v).toFixed(1)}` : '-';
};
const rows = [['scene', 'measure', 'A min / median / max', 'B min / median / max']];
for (const scene of scenes.split(','))
  for (const [name, key] of measures) rows.push([scene, name, spread(got.A.filter((m) => m.scene === scene).map((m) => m[key] as number)), spread(got.B.filter((m) => m.scene === scene).map((m) => m[key] as number))]);
console.log(textTable(rows));
console.log(`load at the end ${loadavg()[0].toFixed(1)}`);
