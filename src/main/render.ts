// `entelechy render`: one frame, or a range of frames for pipelines, written as PNGs.

import cliProgress from 'cli-progress';
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { Scene } from '../ir/check/scene.js';
import type { PngTask } from '../workers/png-worker.js';
import { EvalPool, workerExecArgv } from '../workers/pool.js';
import { Engine, EvaluationError, type Backend } from './engine.js';
import { FieldMemory } from './memory.js';
import { fieldToRgba, savePng } from './image.js';

export class RenderError extends Error {
  override name = 'RenderError';
  constructor(
    message: string,
    readonly frame?: number,
    readonly node?: string,
  ) {
    super(message);
  }
}

export interface RenderOptions {
  output: string;
  /** The PNG path; with frames, a pattern such as out/%04d.png. */
  file: string;
  time: number;
  frames?: { first: number; last: number };
  fps: number;
  workers: number;
  backend: Backend;
  fuse: boolean;
  json: boolean;
  /** Show a progress bar (on a terminal). */
  progress: boolean;
}

/** `A:B` (inclusive) or `N` (one frame). */
export function parseFrames(text: string): { first: number; last: number } {
  const m = /^\s*(\d+)\s*(?::\s*(\d+))?\s*$/.exec(text);
  if (!m) throw new RenderError(`--frames takes FIRST:LAST (inclusive), e.g. 0:99; got \`${text}\``);
  const first = Number(m[1]);
  const last = m[2] === undefined ? first : Number(m[2]);
  if (last < first) throw new RenderError(`--frames ${text}: the last frame comes before the first`);
  if (last - first >= 1e6) throw new RenderError(`--frames ${text}: more than a million frames`);
  return { first, last };
}

/** Put a frame number into a pattern: `%d`, `%04d`. */
export function frameFile(pattern: string, frame: number): string {
  return pattern.replace(/%(0?)(\d*)d/, (_, zero: string, width: string) => String(frame).padStart(Number(width || 0), zero ? '0' : ' '));
}

export async function render(scene: Scene, options: RenderOptions): Promise<void> {
  const { frames } = options;
  if (frames && !/%0?\d*d/.test(options.file))
    throw new RenderError(`-o ${options.file}: with --frames, name the files with a frame number pattern, e.g. -o out/%04d.png`);
  const workers = Math.max(1, Math.min(options.workers, 256));
  const memory = new FieldMemory();
  const pool = options.backend === 'jit' && workers > 1 ? new EvalPool(memory.memory, { workers }) : undefined;
  let run: Engine;
  try {
    run = new Engine(scene, { backend: options.backend, fuse: options.fuse, memory, pool });
  } catch (e) {
    await pool?.destroy();
    throw e;
  }
  const out = (line: object) => options.json && process.stdout.write(JSON.stringify(line) + '\n');
  const stateful = scene.nodes.some((n) => n.kernel.ports.some((p) => p.kind === 'state'));
  const first = frames?.first ?? 0;
  const last = frames?.last ?? 0;
  // State evolves frame by frame: a stateful scene runs from frame 0 even when writing from later.
  const start = frames && stateful ? 0 : first;
  const bar = options.progress && frames ? new cliProgress.SingleBar({ format: 'rendering [{bar}] {value}/{total} frames | {eta_formatted} left', hideCursor: true }, cliProgress.Presets.shades_classic) : undefined;
  bar?.start(last - first + 1, 0);
  const started = performance.now();
  let written = 0;
  let pixels = 0;
  // A range of frames encodes its PNGs on threads of their own, in order, while the engine
  // evaluates the next frames: encoding, not evaluation, bounds most frame ranges.
  const encoder = frames ? new Piscina({ filename: new URL('../workers/png-worker.js', import.meta.url).href, maxThreads: workers, execArgv: workerExecArgv() }) : undefined;
  const pending: { frame: number; file: string; t0: number; pixels: number; saved: Promise<number> }[] = [];
  const finish = async (p: (typeof pending)[number]) => {
    try {
      await p.saved;
    } catch (e) {
      const message = (e as Error).message;
      throw new RenderError(frames ? `frame ${p.frame}: ${message}` : message, p.frame);
    }
    written++;
    pixels += p.pixels;
    const millis = Math.round((performance.now() - p.t0) * 1000) / 1000;
    out({ frame: p.frame, file: p.file, millis });
    bar?.increment();
    return millis;
  };
  const drain = async () => {
    while (pending.length) await finish(pending.shift()!);
  };
  try {
    for (let frame = start; frame <= last; frame++) {
      const t0 = performance.now();
      const time = frames ? options.time + frame / options.fps : options.time;
      try {
        await run.evaluate({ time });
      } catch (e) {
        await drain(); // the frames before this one are written and reported first
        if (e instanceof EvaluationError) throw new RenderError(`frame ${frame}: ${e.message}`, frame, e.node);
        throw e;
      }
      if (frame < first) continue;
      const field = run.outputField(options.output)!;
      const rgba = fieldToRgba(run.memory, field, options.output);
      const file = frames ? frameFile(options.file, frame) : options.file;
      const { width, height } = field;
      if (encoder) {
        const task: PngTask = { file, width, height, rgba };
        const saved = encoder.run(task, { transferList: [rgba.buffer as ArrayBuffer] }) as Promise<number>;
        saved.catch(() => {}); // awaited in order below; a later frame's failure may come first
        pending.push({ frame, file, t0, pixels: width * height, saved });
        // Frames in flight: a few per thread, within about 1 GiB of pixels.
        const most = Math.max(1, Math.min(2 * workers, Math.floor(2 ** 30 / (width * height * 4))));
        while (pending.length >= most) await finish(pending.shift()!);
        continue;
      }
      const millis = await finish({ frame, file, t0, pixels: width * height, saved: Promise.resolve().then(() => savePng(file, width, height, rgba)) });
      if (!options.json)
        process.stderr.write(`wrote ${file} (${width} x ${height}, output \`${options.output}\`, ${millis.toFixed(1)} ms, ${run.compileMillis.toFixed(0)} ms compiling, ${pool ? pool.workers : 1} worker${pool && pool.workers > 1 ? 's' : ''})\n`);
    }
    await drain();
    const millis = performance.now() - started;
    out({ done: true, frames: written, millis: Math.round(millis), compile_ms: Math.round(run.compileMillis), workers: pool?.workers ?? 1, events: run.events });
    bar?.stop();
    if (frames && !options.json) process.stderr.write(`wrote ${written} frames to ${options.file} in ${(millis / 1000).toFixed(2)} s (${(pixels / millis / 1000).toFixed(1)} Mpix/s with encoding)\n`);
  } catch (e) {
    bar?.stop();
    if (e instanceof RenderError) out({ error: e.message, frame: e.frame, node: e.node });
    throw e;
  } finally {
    run.dispose();
    await Promise.all([pool?.destroy(), encoder?.destroy()]);
  }
}

export const defaultWorkers = () => availableParallelism();
