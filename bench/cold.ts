// `entelechy bench --cold`: the first frame of `entelechy render` from process start, with the
// module cache off (ENTELECHY_CACHE_DIR=off: every module compiled), per example and corpus
// scene (issue 17's target: at most 1.5 s). Each run is a process of its own; it is timed from
// its spawn to its first frame written (the `--json` line), and its stages are read from
// ENTELECHY_TIMELINE's lines (src/main/timeline.ts), wall and CPU. On a shared machine the wall
// time follows the load (the load average is reported); CPU time is what the render itself costs.
// The compile worker starts with the process (src/main/compile-ahead.ts) and loads binaryen while
// the command line and the scene load: `binaryen wait` is how long the render then still waited
// for it, and the CPU of the stages before it includes the worker's.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { corpus } from './compile.js';
import { median } from './reference/measurement.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ColdFrame {
  measurement: 'cold_first_frame';
  scene: string;
  /** Spawn to the first frame's `--json` line: median and range over the runs. */
  median_ms: number;
  min_ms: number;
  max_ms: number;
  /** CPU time of the process (all its threads) when its first frame was written, median. */
  cpu_ms: number;
  /** Each stage's end (timeline.ts), median over the runs: wall and CPU since process start. */
  stages: { stage: string; wall_ms: number; cpu_ms: number }[];
  runs: number;
  /** The 1-minute load average before the first run and after the last. */
  load: [number, number];
}

interface ColdRun {
  ms: number;
  stages: { stage: string; wall_ms: number; cpu_ms: number }[];
}

/** One cold render of a scene, timed from spawn to its first frame. */
function coldRun(scene: string, dir: string): Promise<ColdRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let first: number | undefined;
    let out = '';
    let err = '';
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'entelechy.js'), 'render', scene, '-o', join(dir, 'cold.png'), '--json'], {
      env: { ...process.env, ENTELECHY_CACHE_DIR: 'off', ENTELECHY_TIMELINE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d) => {
      out += d;
      if (first === undefined && /"frame":/.test(out)) first = performance.now() - started;
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 || first === undefined) return reject(new Error(`render ${scene}: exit status ${code}: ${err.trim()}`));
      const stages = [...err.matchAll(/^timeline (.+): ([\d.]+) ms, cpu ([\d.]+) ms$/gm)].map((m) => ({ stage: m[1], wall_ms: Number(m[2]), cpu_ms: Number(m[3]) }));
      resolve({ ms: first, stages });
    });
  });
}

/** The cold first frame of each scene named (default: every example and corpus scene). */
export async function benchCold(options: { scenes?: string[]; runs: number; json: boolean }): Promise<ColdFrame[]> {
  const chosen = corpus().filter((c) => !options.scenes || options.scenes.includes(c.name));
  const dir = mkdtempSync(join(tmpdir(), 'entelechy-bench-cold-'));
  const out: ColdFrame[] = [];
  try {
    for (const c of chosen) {
      if (!options.json) process.stderr.write(`${c.name}: ${options.runs} cold renders...\n`);
      const before = loadavg()[0];
      const runs: ColdRun[] = [];
      for (let i = 0; i < options.runs; i++) runs.push(await coldRun(c.path, dir));
      const names = runs[0].stages.map((s) => s.stage);
      const stages = names.map((stage) => {
        const of = runs.map((r) => r.stages.find((s) => s.stage === stage)).filter((s) => s !== undefined);
        return { stage, wall_ms: median(of.map((s) => s.wall_ms)), cpu_ms: median(of.map((s) => s.cpu_ms)) };
      });
      const firstFrame = stages.find((s) => /^frame \d+ evaluated$/.test(s.stage));
      const m: ColdFrame = {
        measurement: 'cold_first_frame', scene: c.name, median_ms: median(runs.map((r) => r.ms)), min_ms: Math.min(...runs.map((r) => r.ms)), max_ms: Math.max(...runs.map((r) => r.ms)),
        cpu_ms: stages.find((s) => s.stage === 'frames written')?.cpu_ms ?? firstFrame?.cpu_ms ?? NaN, stages, runs: runs.length, load: [before, loadavg()[0]],
      };
      out.push(m);
      if (options.json) process.stdout.write(JSON.stringify(m) + '\n');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (!options.json) process.stdout.write(coldTable(out) + '\n');
  return out;
}

/** The stages as columns: how long each took (wall, then CPU), medians; then spawn to first frame. */
export function coldTable(ms: ColdFrame[]): string {
  const f = (n: number) => n.toFixed(0);
  const short: Record<string, string> = {
    'node started': 'node', 'command line imported': 'cli import', 'render imported': 'render import', 'scene parsed and checked': 'parse+check',
    'compile worker started': 'worker start', 'compiler loaded': 'binaryen wait', 'modules compiled': 'compile', 'frame 0 begins': 'engine', 'frames written': 'encode+write',
  };
  const stageNames = [...new Set(ms.flatMap((m) => m.stages.map((s) => s.stage)))].map((s) => (/^frame \d+ evaluated$/.test(s) ? 'frame 0 evaluated' : s));
  const order = ['node started', 'compile worker started', 'command line imported', 'render imported', 'scene parsed and checked', 'compiler loaded', 'modules compiled', 'frame 0 begins', 'frame 0 evaluated', 'frames written'].filter((s) => stageNames.includes(s));
  const rows = [['scene', ...order.map((s) => `${short[s] ?? 'evaluate'} ms (cpu)`), 'first frame ms median (min-max)', 'cpu ms', 'load']];
  for (const m of ms) {
    let wall = 0;
    let cpu = 0;
    const cells = order.map((name) => {
      const s = m.stages.find((x) => (/^frame \d+ evaluated$/.test(x.stage) ? 'frame 0 evaluated' : x.stage) === name);
      if (!s) return '-';
      // A stage's own time: from the previous stage's end (the first: from process start).
      const cell = `${f(s.wall_ms - wall)} (${f(s.cpu_ms - cpu)})`;
      wall = s.wall_ms;
      cpu = s.cpu_ms;
      return cell;
    });
    rows.push([m.scene, ...cells, `${f(m.median_ms)} (${f(m.min_ms)}-${f(m.max_ms)})`, f(m.cpu_ms), `${m.load[0].toFixed(1)}-${m.load[1].toFixed(1)}`]);
  }
  const width = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((cell, i) => cell.padEnd(width[i])).join('  '));
  lines.splice(1, 0, width.map((w) => '-'.repeat(w)).join('  '));
  return lines.join('\n');
}
