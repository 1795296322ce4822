// Dry runs against real changes (issue 21): for every example, a `compose` with `"dry_run": true`
// and `"evaluate": {frames: 1}` against the same compose made for real followed by one `evaluate`;
// and a thumbnail's cost against the frame it shows: every example at 256 x 256, its frame (an
// `evaluate` at a new time, so none is a cached repeat) against its 128 thumbnail made afresh
// (the field reduced and mapped in the frame slot, then the PNG), its parts (the pixels also with
// the JavaScript reduction, and a lower bound: the field merely read once), and `evaluate` with
// and without `"thumbnail": 128` end to end.
//
//   npx tsc -p tsconfig.json && node dist/bench/dry-run.js [--rounds 5] [--examples rings,life,...] [--part dry|thumbnails] [--native]
//
// --native: the thumbnails at each example's own sizes (castle and mandelbrot 320 x 240, life 128 x 128, ...).
//
// Rounds are interleaved: every example's session is open at once, and each round runs every
// measurement of every example in turn, so the host's drift touches all alike; each figure is the
// median of the rounds with their range. The dry run's change is the scene's own text with a
// comment added (a new document version: a new world, the modules cached), so what is timed is
// the change's path, not compiling. In process, through dispatch, one worker per session. Each is
// timed by the process's CPU time (user + system, the pool's threads included), which a loaded
// machine disturbs less than the wall; the dry runs on the wall too.

import { loadavg } from 'node:os';
import { encodePng } from '../src/main/png.js';
import { memoryPlanes, shrink, thumbnail, thumbnailPixels } from '../src/main/thumbnail.js';
import { outputField, readRgba } from '../src/main/world-fields.js';
import { outputThumbnailPixels } from '../src/main/thumbnail-cache.js';
import { fieldToRgba } from '../src/main/image.js';
import { simdOpaque } from '../src/main/linear-box-simd.js';
import { arg, openExamples, type ExampleSession } from './thumbnail-sessions.js';

const rounds = Number(arg('rounds', '5'));
const part = arg('part', 'all');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => (x < 1 ? x.toFixed(3) : x.toFixed(1));
const figure = (xs: number[]) => `${ms(median(xs))} ms (${ms(Math.min(...xs))}-${ms(Math.max(...xs))})`;

/** Wall and CPU (the whole process's, user + system) of one call, in ms. */
async function measured(f: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  return perCall(1, f);
}

/** Wall and CPU (the whole process's, user + system) per call of `f`, over `n` calls. */
async function perCall(n: number, f: (i: number) => Promise<unknown> | unknown): Promise<{ wall: number; cpu: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await f(i);
  const wall = (performance.now() - t0) / n;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 / n };
}

console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(', ')}; ${rounds} rounds`);
if (part !== 'thumbnails') await dryRuns(await openExamples(false));
if (part !== 'dry') await thumbnails(await openExamples(!process.argv.includes('--native')));
console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(', ')} at the end`);

async function dryRuns(sessions: ExampleSession[]): Promise<void> {
  const examples = sessions.map((e) => e.name);
  try {
    // Wall and CPU (the whole process's, the pool's threads included) of each, by example.
    const runs = new Map(examples.map((e) => [e, { dry: [] as number[], real: [] as number[], dryCpu: [] as number[], realCpu: [] as number[] }]));
    for (let r = 0; r < rounds; r++)
      for (const { name, ask, text } of sessions) {
        const run = runs.get(name)!;
        const dry = await measured(() => ask({ op: 'compose', text: `${text}\n// dry ${r}\n`, dry_run: true, evaluate: { frames: 1 } }));
        const real = await measured(async () => {
          await ask({ op: 'compose', text: `${text}\n// real ${r}\n` });
          await ask({ op: 'evaluate' });
        });
        run.dry.push(dry.wall);
        run.dryCpu.push(dry.cpu);
        run.real.push(real.wall);
        run.realCpu.push(real.cpu);
      }
    console.log('\n| example | dry run + 1 frame | compose + evaluate | ratio | CPU: dry run | CPU: compose + evaluate | CPU ratio |\n|---|---|---|---|---|---|---|');
    for (const name of examples) {
      const { dry, real, dryCpu, realCpu } = runs.get(name)!;
      console.log(`| ${name} | ${figure(dry)} | ${figure(real)} | ${(median(dry) / median(real)).toFixed(2)} | ${figure(dryCpu)} | ${figure(realCpu)} | ${(median(dryCpu) / median(realCpu)).toFixed(2)} |`);
    }
  } finally {
    for (const s of sessions) await s.close();
  }
}

/**
 * Each example at 256 x 256: its frame's CPU (`evaluate` at a new time each) against its 128
 * thumbnail's, made afresh as `evaluate` makes one (the cache bypassed): the pixels (the field
 * reduced on its linear values and mapped, in the frame slot) and the PNG; and `evaluate` with and
 * without `"thumbnail": 128`, end to end (a new time each, so the cache cannot serve it).
 */
async function thumbnails(sessions: ExampleSession[]): Promise<void> {
  const N = 10;
  const names = ['frame', 'pixels', 'jsPixels', 'readOnce', 'png', 'thumbnail', 'bytes', 'plain', 'with'] as const;
  const cpu = new Map(sessions.map((e) => [e.name, Object.fromEntries(names.map((k) => [k, [] as number[]])) as Record<(typeof names)[number], number[]>]));
  const sizes = new Map<string, string>();
  let clock = 0;
  try {
    for (let r = 0; r < rounds; r++)
      for (const e of sessions) {
        const c = cpu.get(e.name)!;
        const pixels = () => e.session.read((w) => outputThumbnailPixels(w, e.output, 128));
        const p = await pixels();
        sizes.set(e.name, `${p.width} x ${p.height}, ${((await thumbnail(p.rgba, p.width, p.height, 128)).data.length / 1024).toFixed(1)} KB base64`);
        c.frame.push((await perCall(N, () => e.ask({ op: 'evaluate', time: (clock += 0.01) }))).cpu);
        c.pixels.push((await perCall(N, pixels)).cpu);
        // The same pixels with linear-box.ts's JavaScript reduction (no memory given: no SIMD), in the same rounds.
        c.jsPixels.push((await perCall(N, () => e.session.read((w) => {
          const f = outputField(w, e.output)!;
          return thumbnailPixels(f.comps, memoryPlanes(w.engine.memory, f), f.width, f.height, 128, () => fieldToRgba(w.engine.memory, f, e.output));
        }))).cpu);
        // A lower bound for anything that reads the frame once on this thread: one SIMD compare of
        // every element of every shown component (the opacity check run over each plane).
        c.readOnce.push((await perCall(N, () => e.session.read((w) => {
          const f = outputField(w, e.output)!;
          if (f.width % 4 !== 0) return false;
          return memoryPlanes(w.engine.memory, f).slice(0, 4).map((plane) => simdOpaque(w.engine.memory, plane, f.width, f.height));
        }))).cpu);
        c.png.push((await perCall(N, () => thumbnail(p.rgba, p.width, p.height, 128))).cpu);
        c.thumbnail.push((await perCall(N, async () => {
          const q = await pixels();
          return thumbnail(q.rgba, q.width, q.height, 128);
        })).cpu);
        // The way before: the whole field mapped to bytes, the bytes averaged (sharp for a size no whole factor smaller), the PNG Sub-filtered.
        c.bytes.push((await perCall(N, async () => {
          const whole = await e.session.read((w) => {
            const f = outputField(w, e.output)!;
            return { width: f.width, height: f.height, rgba: readRgba(w, f, e.output) };
          });
          const small = await shrink(whole.rgba, whole, p);
          return encodePng(p.width, p.height, small, 'sub');
        })).cpu);
        c.plain.push((await perCall(N, () => e.ask({ op: 'evaluate', time: (clock += 0.01) }))).cpu);
        c.with.push((await perCall(N, () => e.ask({ op: 'evaluate', time: (clock += 0.01), thumbnail: 128 }))).cpu);
      }
    console.log(`\n| example${process.argv.includes('--native') ? '' : ' at 256 x 256'} | frame (CPU per evaluate) | thumbnail 128: pixels | pixels, JavaScript reduction | reading the field once (SIMD) | PNG | the whole thumbnail | % of the frame | goal (< 5 %) | before: bytes averaged, Sub | evaluate + thumbnail - evaluate, end to end | thumbnail |\n|---|---|---|---|---|---|---|---|---|---|---|---|`);
    for (const e of sessions) {
      const c = cpu.get(e.name)!;
      const share = (100 * median(c.thumbnail)) / median(c.frame);
      console.log(`| ${e.name} | ${figure(c.frame)} | ${figure(c.pixels)} | ${figure(c.jsPixels)} | ${figure(c.readOnce)} | ${figure(c.png)} | ${figure(c.thumbnail)} | ${share.toFixed(share < 10 ? 1 : 0)} % | ${share < 5 ? 'met' : '**not met**'} | ${figure(c.bytes)} | ${ms(median(c.with) - median(c.plain))} ms | ${sizes.get(e.name)} |`);
    }
  } finally {
    for (const s of sessions) await s.close();
  }
}
