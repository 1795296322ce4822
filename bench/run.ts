// `entelechy bench`: the four pipelines of PIPELINES.md on the engine (1 worker and all
// workers), in plain JavaScript, in C and in Halide, side by side in one run, with ratios.

import { availableParallelism, cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from '../src/main/session.js';
import { loadScene, type Scene } from '../src/ir/check/scene.js';
import { Engine, type EngineOptions } from '../src/main/engine.js';
import { loadCompiler } from '../src/main/modules.js';
import { readField } from '../src/main/field.js';
import { FieldMemory } from '../src/main/memory.js';
import { EvalPool, type PoolOptions } from '../src/workers/pool.js';
import { runJs } from './js/pipelines.js';
import { buildReference, runReference } from './reference/build.js';
import { buildHalide, runHalide } from './reference/halide/build.js';
import { median, mpixPerSecond, P3_STEPS, type Measurement, type PipelineName } from './reference/measurement.js';
import { dispatch } from '../src/protocol/dispatcher.js';

const SCENES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'scenes');

export interface BenchOptions {
  size: number;
  pipelines: PipelineName[];
  runs: number;
  workers: number;
  c: boolean;
  js: boolean;
  /** Halide 14's JIT (bench/reference/halide), when libhalide14-0-dev is installed. */
  halide: boolean;
  /** Print one JSON object per measurement instead of a table. */
  json: boolean;
}

export interface Extra {
  measurement: 'compile' | 'frame_overhead' | 'edit_to_published';
  pipeline: PipelineName;
  width: number;
  height: number;
  median_ms: number;
  samples: number;
  note?: string;
}

export function benchScene(pipeline: PipelineName, size: number): Scene {
  const file = `${pipeline.toLowerCase()}.esn`;
  const scene = loadScene(file, { read: (p) => readFileSync(join(SCENES, p), 'utf8'), size: [size, size] });
  if (scene.diagnostics.length) throw new Error(`bench scene ${file}: ${scene.diagnostics[0].message}`);
  return scene;
}

/** Sum of the output's floats, channels interleaved per element, as the references sum them. */
function checksum(engine: Engine, output: string): number {
  const planes = readField(engine.memory, engine.outputField(output)!);
  let sum = 0;
  const n = planes[0].length;
  for (let i = 0; i < n; i++) for (const p of planes) sum += p[i];
  return sum;
}

/** How long at least the engine runs a pipeline before it is timed, ms. */
const WARM_MS = 300;

/** The engine on one pipeline with a pool of `workers` threads, warmed up, timing runs. */
export class EngineRun {
  readonly times: number[] = [];

  private constructor(
    private readonly pipeline: PipelineName,
    private readonly size: number,
    private readonly engine: Engine,
    private readonly pool: EvalPool,
    private readonly compile_ms: number,
    private readonly checksum: number,
  ) {}

  /** `tuning`: engine options an experiment varies (bench/experiments), e.g. bandRows. */
  static async start(pipeline: PipelineName, size: number, workers: number, tuning: Partial<EngineOptions> = {}, poolTuning: Pick<PoolOptions, 'spinMicros' | 'idleMillis'> = {}): Promise<EngineRun> {
    const scene = benchScene(pipeline, size);
    const memory = new FieldMemory();
    const pool = new EvalPool(memory.memory, { workers, ...poolTuning });
    const t0 = performance.now();
    const engine = new Engine(scene, { memory, pool, poolThreshold: 0, cacheFrames: false, ...tuning });
    const compile_ms = performance.now() - t0;
    try {
      await pool.started(); // the threads' start is not the pipeline's time
      if (pipeline === 'P3') await engine.evaluate({ time: 0.5 }); // the seeding frame
      await EngineRun.one(engine, pipeline); // the warm-up (P3: seed + P3_STEPS steps, what the references checksum)
      const sum = checksum(engine, scene.outputs[0].name);
      // More warm-up, WARM_MS at least: a pool's fresh threads ran their first ~100 life steps at
      // 1024 x 1024 1.2-1.8x slower than later ones (their first JIT work), and a figure of 120
      // steps timed right after 11 measured that, not the pipeline.
      for (const warm = performance.now() + WARM_MS; performance.now() < warm; ) await EngineRun.one(engine, pipeline);
      return new EngineRun(pipeline, size, engine, pool, compile_ms, sum);
    } catch (e) {
      engine.dispose();
      await pool.destroy();
      throw e;
    }
  }

  private static async one(engine: Engine, pipeline: PipelineName): Promise<void> {
    for (let s = 0; s < (pipeline === 'P3' ? P3_STEPS : 1); s++) await engine.evaluate({ time: 0.5 });
  }

  /** One timed run. */
  async time(): Promise<void> {
    const s = performance.now();
    await EngineRun.one(this.engine, this.pipeline);
    this.times.push(performance.now() - s);
  }

  measurement(): Measurement {
    const median_ms = median(this.times);
    return {
      pipeline: this.pipeline, width: this.size, height: this.size, system: 'entelechy', workers: this.pool.workers, runs: this.times,
      median_ms, mpix_s: mpixPerSecond(this.pipeline, this.size, this.size, median_ms), checksum: this.checksum, compile_ms: this.compile_ms,
    };
  }

  async close(): Promise<void> {
    this.engine.dispose();
    await this.pool.destroy();
  }
}

/**
 * Time the engine on one pipeline with pools of each of `workers` threads, their runs
 * alternating: a shared machine's load drifts, and alike for all of them, the ratios hold.
 */
export async function measureEngines(pipeline: PipelineName, size: number, runs: number, workers: number[]): Promise<Measurement[]> {
  const engines: EngineRun[] = [];
  try {
    for (const w of workers) engines.push(await EngineRun.start(pipeline, size, w));
    for (let r = 0; r < runs; r++) for (const e of engines) await e.time();
    return engines.map((e) => e.measurement());
  } finally {
    for (const e of engines) await e.close();
  }
}

/** The median time of a 256 x 256 P1 frame through the whole engine (no encoding). */
async function frameOverhead(workers: number): Promise<Extra> {
  const scene = benchScene('P1', 256);
  const memory = new FieldMemory();
  const pool = new EvalPool(memory.memory, { workers });
  const engine = new Engine(scene, { memory, pool });
  try {
    const times: number[] = [];
    for (let i = 0; i < 250; i++) {
      const s = performance.now();
      await engine.evaluate({ time: i * 0.01 });
      if (i >= 50) times.push(performance.now() - s);
    }
    const placement = (await engine.evaluate({ time: -1 })).placements[0];
    return {
      measurement: 'frame_overhead', pipeline: 'P1', width: 256, height: 256, median_ms: median(times), samples: times.length,
      note: placement.workers > 1 ? `${placement.workers} workers` : 'small frames run on the calling thread (cheaper than a pool dispatch)',
    };
  } finally {
    engine.dispose();
    await pool.destroy();
  }
}

/**
 * Compile latency of each scene (parse, check, lower, codegen, optimise, instantiate): warm. The
 * scene is loaded at 64 x 64: modules do not depend on the size, and allocating and clearing
 * 4096 x 4096 fields is not compiling.
 */
function compileLatency(pipeline: PipelineName): Extra {
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const s = performance.now();
    const scene = loadScene('p.esn', { read: () => readFileSync(join(SCENES, `${pipeline.toLowerCase()}.esn`), 'utf8'), size: [64, 64] });
    const engine = new Engine(scene, { cacheModules: false });
    engine.dispose();
    times.push(performance.now() - s);
  }
  return { measurement: 'compile', pipeline, width: 0, height: 0, median_ms: median(times.slice(1)), samples: times.length - 1 };
}

/** Edit-to-published: a one-kernel compose through a session with a warm compile worker. */
async function editToPublished(): Promise<Extra> {
  const dir = mkdtempSync(join(tmpdir(), 'entelechy-bench-'));
  const text = readFileSync(join(SCENES, 'p1.esn'), 'utf8').replace(/4096 x 4096/g, '256 x 256');
  writeFileSync(join(dir, 'scene.esn'), text);
  const session = await Session.open(join(dir, 'scene.esn'), { workers: 1, cacheDir: null });
  try {
    const kernel = /kernel bench\.rings@1 \{[\s\S]*?\n\}/.exec(text)![0];
    const times: number[] = [];
    for (let i = 0; i < 23; i++) {
      const edited = kernel.replace('0.8 * v', `${(0.5 + i / 100).toFixed(2)} * v`);
      const s = performance.now();
      const answer = JSON.parse(await dispatch(session, JSON.stringify({ op: 'compose', edits: [{ kernel: 'bench.rings@1', text: edited }] })));
      if (!answer.ok) throw new Error(`bench: compose failed: ${answer.error?.message}`);
      if (i >= 3) times.push(performance.now() - s);
    }
    return {
      measurement: 'edit_to_published', pipeline: 'P1', width: 256, height: 256, median_ms: median(times), samples: times.length,
      note: 'compose of one kernel: parse, check, compile on the warm compile worker, write, swap',
    };
  } finally {
    await session.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function machine(): string {
  const c = cpus();
  return `${c.length} x ${c[0]?.model ?? 'cpu'}, Node ${process.version}`;
}

export async function bench(options: BenchOptions): Promise<{ measurements: Measurement[]; extras: Extra[] }> {
  await loadCompiler();
  const measurements: Measurement[] = [];
  const extras: Extra[] = [];
  const emit = (m: object) => options.json && process.stdout.write(JSON.stringify(m) + '\n');
  const say = (s: string) => !options.json && process.stderr.write(s + '\n');
  say(`entelechy bench: ${options.pipelines.join(', ')} at ${options.size} x ${options.size}, ${options.runs} run${options.runs === 1 ? '' : 's'}, ${machine()}`);
  if (options.workers > availableParallelism()) say(`note: ${options.workers} workers on ${availableParallelism()} cores: the parallel figures share cores (and so do C's and Halide's threads)`);
  const build = options.c ? await buildReference() : { skipped: 'disabled with --no-c' };
  if ('skipped' in build) say(`C reference skipped: ${build.skipped}`);
  const halide = options.halide ? await buildHalide() : { skipped: 'disabled with --no-halide' };
  if ('skipped' in halide && options.halide) say(`Halide skipped: ${halide.skipped}`);
  // Interrupted: what was measured is told, not lost (the --json lines are out already).
  const interrupted = (signal: NodeJS.Signals) => {
    const message = `interrupted (${signal}): ${measurements.length ? `the figures above are those measured (${[...new Set(measurements.map((m) => m.pipeline))].join(', ')})` : 'nothing was measured yet'}`;
    if (options.json) process.stdout.write(JSON.stringify({ error: { message } }) + '\n');
    else {
      if (measurements.length) process.stdout.write(table(measurements, extras, options) + '\n');
      process.stderr.write(`entelechy: ${message}\n`);
    }
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    return await measureAll();
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }

  async function measureAll() {
    for (const p of options.pipelines) {
      const add = (m: Measurement) => {
        measurements.push(m);
        emit({ ...m, compile_ms: m.compile_ms ?? 0, runs: undefined, runs_ms: m.runs.map((r) => Math.round(r * 1000) / 1000) });
      };
      const counts = options.workers > 1 ? [1, options.workers] : [1];
      say(`${p}: engine on ${counts.join(' and ')} worker${options.workers > 1 ? 's' : ''}, runs alternating...`);
      for (const m of await measureEngines(p, options.size, options.runs, counts)) add(m);
      if (options.js) {
        say(`${p}: plain JavaScript...`);
        add(runJs(p, options.size, options.size, options.runs));
      }
      if (!('skipped' in build)) {
        say(`${p}: C reference on ${options.workers} threads...`);
        add(await runReference(build.binary, p, options.size, options.size, options.runs, options.workers));
      }
      if (!('skipped' in halide)) {
        say(`${p}: Halide on ${options.workers} threads (JIT-compiled first)...`);
        add(await runHalide(halide.binary, p, options.size, options.size, options.runs, options.workers));
      }
      const c = compileLatency(p);
      extras.push(c);
      emit(c);
    }
    const overhead = await frameOverhead(options.workers);
    extras.push(overhead);
    emit(overhead);
    const edit = await editToPublished();
    extras.push(edit);
    emit(edit);
    if (!options.json) process.stdout.write(table(measurements, extras, options) + '\n');
    return { measurements, extras };
  }
}

/** How far another system's checksum may be from the engine's, relative (f32 against f64, -ffast-math). */
const CHECKSUM_TOLERANCE = 1e-5;

export function table(ms: Measurement[], extras: Extra[], options: BenchOptions): string {
  const rows: string[][] = [['pipeline', 'system', 'workers', 'Mpix/s', 'median ms', 'vs C', 'vs Halide', 'vs JS', 'vs 1 worker', 'checksum']];
  const disagree: string[] = [];
  for (const p of options.pipelines) {
    const of = (system: string, workers?: number) => ms.find((m) => m.pipeline === p && m.system === system && (workers === undefined || m.workers === workers));
    const c = of('c');
    const js = of('js');
    const hl = of('halide');
    const one = of('entelechy', 1);
    for (const m of ms.filter((x) => x.pipeline === p)) {
      const ratio = (other?: Measurement) => (other && m !== other ? `${(m.mpix_s / other.mpix_s).toFixed(2)}x` : '');
      rows.push([p, m.system, String(m.workers), m.mpix_s.toFixed(1), m.median_ms.toFixed(2), ratio(c), ratio(hl), ratio(js), m.system === 'entelechy' ? ratio(one) : '', m.checksum.toPrecision(9)]);
      const off = one && m.system !== 'entelechy' ? Math.abs(m.checksum - one.checksum) / Math.max(Math.abs(one.checksum), 1e-30) : 0;
      if (off > CHECKSUM_TOLERANCE) disagree.push(`${p} ${m.system}: checksum ${m.checksum.toPrecision(9)} is ${(off * 100).toPrecision(2)} % from the engine's ${one!.checksum.toPrecision(9)}, past ${CHECKSUM_TOLERANCE} relative: its ratios compare different work${p === 'P4' ? ' (a few of P4\'s escape counts at the set\'s edge differ under C\'s -ffast-math, which fuses multiply-adds; at small sizes a few pixels weigh a lot)' : ''}`);
    }
  }
  const width = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((cell, i) => cell.padEnd(width[i])).join('  '));
  lines.splice(1, 0, width.map((w) => '-'.repeat(w)).join('  '));
  lines.push('');
  for (const d of disagree) lines.push(`note: ${d}`);
  if (disagree.length) lines.push('');
  for (const e of extras) lines.push(`${e.measurement} ${e.pipeline}${e.width ? ` ${e.width}x${e.height}${e.width !== options.size ? ' (its own size, whatever --size)' : ''}` : ''}: ${e.median_ms.toFixed(3)} ms median of ${e.samples}${e.note ? ` (${e.note})` : ''}`);
  return lines.join('\n');
}

export const defaultBenchWorkers = () => availableParallelism();
