// Experiments on the pool's dispatch (issue 19): several engine configurations and the C reference
// measured in interleaved rounds (the order reversed every other round), each against the first
// variant named, in the same round (c1, C on one thread, is the steadiest under load: with more
// threads than free cores, OpenMP's spinning barrier collapses on small frames).
//
//   node dist/bench/experiments/dispatch.js ROUNDS SIZE PIPELINE VARIANT...
//
// Variants: c1, c2 (the C reference on 1 or 2 threads); main (the engine on the calling thread, no
// pool); pool1, pool2 (1 or 2 workers, default bands); pool2-b16 (bands of 16 rows); pool1-whole
// (one band of every row: the dispatch's round trip plus the arithmetic); a suffix -sN has the
// workers spin N microseconds after a run before they sleep (src/workers/band-loop.ts; default 100).

import { loadavg } from 'node:os';
import { EngineRun } from '../run.js';
import { runsAt, spread, type Spread } from '../rounds.js';
import { buildReference, runReference } from '../reference/build.js';
import { isPipelineName, median } from '../reference/measurement.js';
import { loadCompiler } from '../../src/main/modules.js';

interface Figure {
  /** Median wall time of a run. */
  ms: number;
  /** CPU time of the whole process (every thread) per run, ms: what a run costs, waiting for a core aside. */
  cpu?: number;
}

async function figure(variant: string, pipeline: 'P1' | 'P2' | 'P3' | 'P4', size: number, runs: number, binary: string): Promise<Figure> {
  const c = /^c(\d+)$/.exec(variant);
  if (c) return { ms: (await runReference(binary, pipeline, size, size, runs, Number(c[1]))).median_ms };
  const m = /^(main|pool(\d+))(?:-b(\d+)|-(whole))?(?:-s(\d+))?$/.exec(variant);
  if (!m) throw new Error(`unknown variant ${variant}`);
  const bandRows = m[4] ? size : m[3] ? Number(m[3]) : undefined;
  const spin = m[5] === undefined ? {} : { spinMicros: Number(m[5]) };
  const run = await EngineRun.start(pipeline, size, m[2] ? Number(m[2]) : 1, { ...(m[1] === 'main' ? { pool: undefined } : {}), ...(bandRows ? { bandRows } : {}) }, spin);
  try {
    const cpu = process.cpuUsage();
    for (let r = 0; r < runs; r++) await run.time();
    const used = process.cpuUsage(cpu);
    return { ms: run.measurement().median_ms, cpu: (used.user + used.system) / 1000 / runs };
  } finally {
    await run.close();
  }
}

const [rounds, size, pipeline, ...variants] = process.argv.slice(2);
if (!isPipelineName(pipeline) || !variants.length) throw new Error('usage: dispatch.js ROUNDS SIZE PIPELINE VARIANT...');
await loadCompiler();
const build = await buildReference();
if ('skipped' in build) throw new Error(build.skipped);
const runs = runsAt(5, Number(size));
const times: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v, []]));
const cpus: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v, []]));
const vsC: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v, []]));
const start = loadavg()[0].toFixed(1);
for (let r = 0; r < Number(rounds); r++) {
  const order = r % 2 ? [...variants].reverse() : variants;
  const round: Record<string, Figure> = {};
  for (const v of order) round[v] = await figure(v, pipeline, Number(size), runs, build.binary);
  for (const v of variants) {
    times[v].push(round[v].ms);
    if (round[v].cpu !== undefined) cpus[v].push(round[v].cpu!);
    vsC[v].push(round[variants[0]].ms / round[v].ms);
  }
}
const f = (s: Spread) => `${s.min.toFixed(2)} / ${s.median.toFixed(2)} / ${s.max.toFixed(2)}`;
console.log(`${pipeline} ${size} x ${size}, ${rounds} rounds of ${runs} runs, load average ${start} -> ${loadavg()[0].toFixed(1)}`);
for (const v of variants) {
  console.log(`${v.padEnd(15)} median ms ${median(times[v]).toFixed(3).padStart(9)}   speed vs ${variants[0]} min / median / max  ${f(spread(vsC[v]))}${cpus[v].length ? `   CPU ms per run ${f(spread(cpus[v]))}` : ''}`);
}
