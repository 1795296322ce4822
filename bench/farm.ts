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
// Beside the frames per second, the CPU each process spent per frame (from /proc/PID/stat): on one
// machine the submitter and redis-server share the cores with the workers, which a farm of other
// machines would not; the CPU figures show how much of the gap that is.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

/** CPU milliseconds (user + system, every thread) a live process has spent, from /proc/PID/stat. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime: fields 14 and 15, in ticks of 1/100 s
}

/** One render's own millis (its --json summary) and the CPU its process spent in all, its output removed afterwards. */
async function timed(args: string[]): Promise<{ millis: number; cpu: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'entelechy-bench-farm-'));
  const p: Proc = entelechy(['render', ...args, '--json', '-o', join(dir, '%04d.png')]);
  // Read at the summary line, while the process still exists.
  const cpu = await p.line((l) => l.done).then(() => cpuMs(p.child.pid!), () => NaN);
  const { code } = await p.exited;
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`render ${args.join(' ')} failed:\n${p.stderr}`);
  return { millis: p.lines.at(-1).millis, cpu };
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
  /** CPU ms per frame: the local render's process; with 1 farm worker, the worker, the submitter and redis-server. */
  const cpu = { local: [] as number[], worker: [] as number[], submitter: [] as number[], redis: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    for (const c of configs) {
      if (c === 'local') {
        const run = await timed(base);
        fps.get(c)!.push((frames * 1000) / run.millis);
        cpu.local.push(run.cpu / frames);
        perJob.local.push((await timed(tiny)).millis / frames);
        continue;
      }
      while (workers.length < c) workers.push(await startWorker(redis.url, ['--workers', String(availableParallelism()), ...(concurrency ? ['--concurrency', concurrency] : [])]));
      while (workers.length > c) await stopWorker(workers.pop()!);
      const before = { worker: cpuMs(workers[0]!.child.pid!), redis: cpuMs(redis.pid) };
      const run = await timed([...base, '--farm', redis.url]);
      fps.get(c)!.push((frames * 1000) / run.millis);
      if (c === 1) {
        cpu.worker.push((cpuMs(workers[0]!.child.pid!) - before.worker) / frames);
        cpu.redis.push((cpuMs(redis.pid) - before.redis) / frames);
        cpu.submitter.push(run.cpu / frames);
        perJob.farm.push((await timed([...tiny, '--farm', redis.url])).millis / frames);
      }
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
  const ms = (xs: number[]) => `${median(xs).toFixed(1)} ms (${spread(xs)})`;
  console.log(`CPU per frame: local render ${ms(cpu.local)} (its start and compile included); with 1 farm worker: the worker ${ms(cpu.worker)}, the submitter ${ms(cpu.submitter)} (its start included), redis-server ${ms(cpu.redis)}`);
  const frameMs = 1000 / local;
  console.log(`a ${size} frame takes ${frameMs.toFixed(1)} ms locally: the overhead is ${((median(overhead) / frameMs) * 100).toFixed(1)} % of it`);
} finally {
  await Promise.all(workers.map(stopWorker));
  await redis.stop();
}
