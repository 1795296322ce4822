// Dry runs against real changes (issue 21): for every example, a `compose` with `"dry_run": true`
// and `"evaluate": {frames: 1}` against the same compose made for real followed by one `evaluate`;
// and a thumbnail's cost against the frame it shows (rings at 256 x 256: `evaluate` with and
// without `"thumbnail": 128`, and the thumbnail's parts timed alone: the output's RGBA read from
// the field, made smaller, and encoded as a PNG).
//
//   npx tsc -p tsconfig.json && node dist/bench/dry-run.js [--rounds 5] [--examples rings,life,...]
//
// Rounds are interleaved: every example's session is open at once, and each round runs, example
// after example, a dry run then the real change, so the host's drift touches all alike; each
// figure is the median of the rounds with their range. The change is the scene's own text with a
// comment added (a new document version: a new world, the modules cached), so what is timed is
// the change's path, not compiling. In process, through dispatch, one worker per session. Each is
// timed on the wall and by the process's CPU time (user + system, the pool's threads included),
// which a loaded machine disturbs less.

import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { decodePng } from '../src/main/image.js';
import { resizeRgba } from '../src/main/image-input.js';
import { encodePng } from '../src/main/png.js';
import { boxReduce } from '../src/main/thumbnail.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { outputField, readRgba } from '../src/main/world-fields.js';
import { ROOT } from '../test/helpers.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const rounds = Number(arg('rounds', '5'));
const examples = arg('examples', readdirSync(join(ROOT, 'examples')).sort().join(',')).split(',');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => (x < 1 ? x.toFixed(3) : x.toFixed(1));
const figure = (xs: number[]) => `${ms(median(xs))} ms (${ms(Math.min(...xs))}-${ms(Math.max(...xs))})`;

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

/** Wall and CPU (the whole process's, user + system) of one call, in ms. */
async function measured(f: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  return perCall(1, f);
}

/** Wall and CPU (the whole process's, user + system) per call of `f`, over `n` calls. */
async function perCall(n: number, f: () => Promise<unknown> | unknown): Promise<{ wall: number; cpu: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await f();
  const wall = (performance.now() - t0) / n;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 / n };
}

type Ask = (req: object) => Promise<any>;

async function open(name: string): Promise<{ name: string; session: Session; ask: Ask; text: string; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), `entelechy-bench-dry-${name}-`));
  cpSync(join(ROOT, 'examples', name), dir, { recursive: true });
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  const ask: Ask = async (req) => {
    const a = JSON.parse(await dispatch(s, JSON.stringify(req)));
    if (a.error) throw new Error(`${name}: ${a.error.message}`);
    return a.ok;
  };
  await ask({ op: 'evaluate' });
  return { name, session: s, ask, text: readFileSync(join(dir, 'scene.esn'), 'utf8'), close: async () => { await s.close(); rmSync(dir, { recursive: true, force: true }); } };
}

console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(', ')}; ${rounds} rounds`);
const sessions = [];
for (const name of examples) sessions.push(await open(name));
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

  const rings = sessions.find((s) => s.name === 'rings');
  if (rings) {
    // End to end: evaluate with and without a thumbnail, interleaved, at a new time each (no cached frame).
    const plain: number[] = [];
    const thumbs: number[] = [];
    for (let r = 0; r < rounds * 4; r++) {
      plain.push(await timed(() => rings.ask({ op: 'evaluate', time: 2 * r })));
      thumbs.push(await timed(() => rings.ask({ op: 'evaluate', time: 2 * r + 1, thumbnail: 128 })));
    }
    const cost = median(thumbs) - median(plain);
    console.log(`\nrings 256 x 256: evaluate ${figure(plain)}; with thumbnail 128 ${figure(thumbs)}; the difference ${ms(cost)} ms, ${((100 * cost) / median(plain)).toFixed(0)} % of the frame`);

    // The thumbnail's parts alone, on rings' picture: per call, 50 calls a round, rounds interleaved.
    const { width, height, rgba } = decodePng(Buffer.from((await rings.ask({ op: 'read' })).data, 'base64'));
    const small = boxReduce(rgba, width, height, 2);
    const parts = {
      'the output\'s RGBA, 256 x 256 (sRGB mapping)': () => rings.session.read((w) => readRgba(w, outputField(w, 'result')!, 'result')),
      'sharp resize 256 -> 128 (before)': () => resizeRgba(rgba, { width, height }, { width: 128, height: 128 }),
      'box filter 256 -> 128 (now)': () => boxReduce(rgba, width, height, 2),
      'PNG of 128 x 128 (png.ts)': () => encodePng(128, 128, small),
    };
    const wall = new Map<string, number[]>(Object.keys(parts).map((k) => [k, []]));
    const cpu = new Map<string, number[]>(Object.keys(parts).map((k) => [k, []]));
    for (let r = 0; r < rounds * 2; r++)
      for (const [k, f] of Object.entries(parts)) {
        const x = await perCall(50, f);
        wall.get(k)!.push(x.wall);
        cpu.get(k)!.push(x.cpu);
      }
    console.log('\n| part | wall per call | CPU per call |\n|---|---|---|');
    for (const k of Object.keys(parts)) console.log(`| ${k} | ${figure(wall.get(k)!)} | ${figure(cpu.get(k)!)} |`);
  }
} finally {
  for (const s of sessions) await s.close();
  console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(', ')} at the end`);
}
