// Frames of a corpus scene as the clock advances, in a session with its optimised tier in: per
// frame the evaluate's wall time and the CPU time of the process (every thread), the medians
// printed as JSON. For comparing builds under load (issue 17's reuse: bench/RESULTS.md); run it
// from each build's dist, alternating the builds.
//
//   node dist/bench/experiments/clock-frames.js SCENE [FRAMES]     (SCENE: a corpus scene of one document)

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from '../../src/main/session.js';
import { dispatch } from '../../src/protocol/dispatcher.js';
import { corpus } from '../compile.js';
import { median } from '../reference/measurement.js';

const [name, count = '20'] = process.argv.slice(2);
const load0 = loadavg()[0];
const dir = mkdtempSync(join(tmpdir(), 'entelechy-clock-frames-'));
const scene = corpus().find((c) => c.name === name);
if (!scene) throw new Error(`no corpus scene \`${name}\`; the scenes: ${corpus().map((c) => c.name).join(', ')}`);
writeFileSync(join(dir, 'scene.esn'), readFileSync(scene.path, 'utf8'));
const s = await Session.open(join(dir, 'scene.esn'), { workers: 2, cacheDir: null });
try {
  const ask = async (req: object): Promise<{ [k: string]: any }> => {
    const answer = JSON.parse(await dispatch(s, JSON.stringify(req)));
    if (!answer.ok) throw new Error(answer.error.message);
    return answer.ok;
  };
  let time = 0.5;
  await ask({ op: 'evaluate', time });
  await s.optimiser?.idle();
  for (let i = 0; i < 3; i++) await ask({ op: 'evaluate', time: (time += 1 / 60) });
  const wall: number[] = [];
  const cpu: number[] = [];
  let ran: string[] = [];
  for (let i = 0; i < Number(count); i++) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    ran = (await ask({ op: 'evaluate', time: (time += 1 / 60) })).executed;
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  const r = (n: number) => Math.round(n * 100) / 100;
  console.log(JSON.stringify({ scene: name, frames: wall.length, ran, wall_ms: r(median(wall)), cpu_ms: r(median(cpu)), cpu_min: r(Math.min(...cpu)), cpu_max: r(Math.max(...cpu)), load: [load0, loadavg()[0]] }));
} finally {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
}
