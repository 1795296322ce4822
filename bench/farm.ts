// The render farm against a plain local render, on this machine: frames per second of a 240-frame
// render at 1024 x 1024 locally and with 1, 2 and 3 farm workers, and the farm's overhead per job
// (the same render of 8 x 8 frames, where a frame's own work is next to nothing).
//
//   npx tsc -p tsconfig.json && node dist/bench/farm.js [--rounds 3] [--frames 240] [--scene examples/rings/scene.esn]
//     [--counts 1,2,3] [--concurrency N]
//
// Runs are interleaved (local, 1, 2, 3 workers, then again), so the host's drift touches each
// alike; every figure is the median of the rounds with their range. Times are the renders' own
// (--json's summary millis: from the first frame submitted or evaluated to the last written),
// with the workers started and their scene compiled beforehand. Needs redis-server.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { entelechy, RedisServer, startWorker, stopWorker, type Proc } from '../test/farm-processes.js';
import { ROOT } from '../test/helpers.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const rounds = Number(arg('rounds', '3'));
const frames = Number(arg('frames', '240'));
const scene = arg('scene', 'examples/rings/scene.esn');
const size = arg('size', '1024x1024');
/** Jobs each worker holds at once (--concurrency; without it, the worker's default), and which worker counts to run. */
const concurrency = arg('concurrency', '');
const counts = arg('counts', '1,2,3').split(',').map(Number);

/** One render's own millis (its --json summary), its output removed afterwards. */
async function timed(args: string[]): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'entelechy-bench-farm-'));
  const p: Proc = entelechy(['render', ...args, '--json', '-o', join(dir, '%04d.png')]);
  const { code } = await p.exited;
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`render ${args.join(' ')} failed:\n${p.stderr}`);
  return p.lines.at(-1).millis;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const spread = (xs: number[]) => `${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)}`;

console.log(`load average at the start: ${loadavg().map((l) => l.toFixed(1)).join(', ')}`);
const redis = await RedisServer.start();
const workers: Proc[] = [];
try {
  const base = [scene, '--size', size, '--frames', `0:${frames - 1}`];
  const tiny = [scene, '--size', '8x8', '--frames', `0:${frames - 1}`];
  // Warm the module cache (the workers and the local render read it).
  spawnSync(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'render', scene, '--size', size, '-o', join(tmpdir(), 'entelechy-bench-warm.png')], { cwd: ROOT });
  const configs: ('local' | number)[] = ['local', ...counts];
  const fps = new Map<'local' | number, number[]>(configs.map((c) => [c, []]));
  const perJob: { local: number[]; farm: number[] } = { local: [], farm: [] };
  for (let r = 0; r < rounds; r++) {
    for (const c of configs) {
      if (c === 'local') {
        fps.get(c)!.push((frames * 1000) / (await timed(base)));
        perJob.local.push((await timed(tiny)) / frames);
        continue;
      }
      while (workers.length < c) workers.push(await startWorker(redis.url, ['--workers', String(availableParallelism()), ...(concurrency ? ['--concurrency', concurrency] : [])]));
      while (workers.length > c) await stopWorker(workers.pop()!);
      fps.get(c)!.push((frames * 1000) / (await timed([...base, '--farm', redis.url])));
      if (c === 1) perJob.farm.push((await timed([...tiny, '--farm', redis.url])) / frames);
    }
    process.stderr.write(`round ${r + 1} of ${rounds} done\n`);
  }
  const local = median(fps.get('local')!);
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(', ')}`);
  console.log(`${frames} frames of ${scene} at ${size.replace('x', ' x ')}, ${rounds} interleaved rounds, ${availableParallelism()} cores, workers at --concurrency ${concurrency || 'default'}; frames per second, median (range):`);
  for (const c of configs) {
    const xs = fps.get(c)!;
    // The ratio paired within each round (the farm's run next to the local one), so that the
    // host's drift between rounds cancels: their median and range.
    const ratios = xs.map((x, r) => x / fps.get('local')![r]);
    console.log(`  ${c === 'local' ? 'local render       ' : `farm, ${c} worker${c > 1 ? 's' : ' '}     `} ${median(xs).toFixed(1)} fps (${spread(xs)})${c === 'local' ? '' : `  ${median(ratios).toFixed(2)}x local (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}, paired by round)`}`);
  }
  const overhead = perJob.farm.map((f, i) => f - perJob.local[i]);
  console.log(`per frame at 8 x 8: local ${median(perJob.local).toFixed(2)} ms (${spread(perJob.local)}), farm with 1 worker ${median(perJob.farm).toFixed(2)} ms (${spread(perJob.farm)}): overhead ${median(overhead).toFixed(2)} ms per job (${spread(overhead)})`);
  const frameMs = 1000 / local;
  console.log(`a ${size} frame takes ${frameMs.toFixed(1)} ms locally: the overhead is ${((median(overhead) / frameMs) * 100).toFixed(1)} % of it`);
} finally {
  await Promise.all(workers.map(stopWorker));
  await redis.stop();
}
