// Dry runs against real changes (issue 21): for each example, a `compose` with `"dry_run": true`
// and `"evaluate": {frames: 1}` against the same compose made for real followed by one `evaluate`,
// and a thumbnail's cost against the frame it shows (rings at 256 x 256: `evaluate` with and
// without `"thumbnail": 128`).
//
//   npx tsc -p tsconfig.json && node dist/bench/dry-run.js [--rounds 5] [--examples rings,life,blur]
//
// Rounds are interleaved (a dry run, then the real change, then again), so the host's drift touches
// both alike; each figure is the median of the rounds with their range. The change is the scene's
// own text with a comment added (a new document version: a new world, the modules cached), so what
// is timed is the change's path, not compiling. In process, through dispatch, one worker.

import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from '../src/main/session.js';
import { dispatch } from '../src/protocol/dispatcher.js';
import { ROOT } from '../test/helpers.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const rounds = Number(arg('rounds', '5'));
const examples = arg('examples', 'rings,life,blur,castle').split(',');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const figure = (xs: number[]) => `${median(xs).toFixed(1)} ms (${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)})`;

async function timed(f: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

async function example(name: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `entelechy-bench-dry-${name}-`));
  cpSync(join(ROOT, 'examples', name), dir, { recursive: true });
  const s = await Session.open(join(dir, 'scene.esn'), { workers: 1 });
  const ask = async (req: object) => {
    const a = JSON.parse(await dispatch(s, JSON.stringify(req)));
    if (a.error) throw new Error(`${name}: ${a.error.message}`);
    return a.ok;
  };
  try {
    const text = readFileSync(join(dir, 'scene.esn'), 'utf8');
    await ask({ op: 'evaluate' });
    const dry: number[] = [];
    const real: number[] = [];
    for (let r = 0; r < rounds; r++) {
      dry.push(await timed(() => ask({ op: 'compose', text: `${text}\n// dry ${r}\n`, dry_run: true, evaluate: { frames: 1 } })));
      real.push(await timed(async () => {
        await ask({ op: 'compose', text: `${text}\n// real ${r}\n` });
        await ask({ op: 'evaluate' });
      }));
    }
    console.log(`${name}: dry run + 1 frame ${figure(dry)}; compose + evaluate ${figure(real)}; ratio ${(median(dry) / median(real)).toFixed(2)}`);
    if (name !== 'rings') return;
    const plain: number[] = [];
    const thumbs: number[] = [];
    for (let r = 0; r < rounds * 4; r++) {
      plain.push(await timed(() => ask({ op: 'evaluate', time: r })));
      thumbs.push(await timed(() => ask({ op: 'evaluate', time: r, thumbnail: 128 })));
    }
    const cost = median(thumbs) - median(plain);
    console.log(`rings 256 x 256: evaluate ${figure(plain)}; with thumbnail 128 ${figure(thumbs)}; the thumbnail ${cost.toFixed(2)} ms, ${((100 * cost) / median(plain)).toFixed(0)} % of the frame`);
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(', ')}; ${rounds} rounds`);
for (const name of examples) await example(name);
