// `entelechy render` in tiles: when the fields do not fit the memory budget whole, or --tile asks.
// Each frame's rows go to its PNG as each row of tiles is done (png-file.ts): the picture is never
// held whole, and the file takes its name only when complete.

import cliProgress from 'cli-progress';
import type { Scene } from '../../ir/check/scene.js';
import type { EvalPool } from '../../workers/pool.js';
import { markPrinted } from '../user-error.js';
import { Cancelled, interruptedBySignals } from '../cancel.js';
import type { Backend } from '../engine.js';
import { EvaluationError, frameFailure } from '../evaluation-error.js';
import { InputImageError } from '../image-input.js';
import { InputFeed } from '../input-feed.js';
import type { FieldMemory } from '../memory.js';
import { PngFile, PngWriteError } from '../png-file.js';
import { RenderError, workersUsed, type RenderOptions } from '../render.js';
import { frameFile } from '../frame-pattern.js';
import { TileError, TiledRenderer } from './renderer.js';

/** The least time between two --json progress lines of a tiled render. */
const PROGRESS_EVERY_MS = 250;

/** `--tile WxH`: the tile's width and height. */
export function parseTile(text: string): [number, number] | { problem: string } {
  const m = /^\s*(\d+)\s*x\s*(\d+)\s*$/i.exec(text);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) return { problem: `--tile takes WIDTHxHEIGHT in pixels, each at least 1, e.g. --tile 4096x1024; got \`${text}\`` };
  return [Number(m[1]), Number(m[2])];
}

export interface TiledContext {
  memory: FieldMemory;
  pool?: EvalPool;
  /** Why the render is in tiles (the whole render's memory error), for --json and the summary. */
  reason: string;
  cachedModules: number;
  compileMillis: number;
}

export async function renderTiled(scene: Scene, options: RenderOptions & { backend: Backend }, ctx: TiledContext): Promise<void> {
  const { frames } = options;
  if (/\.(mp4|webm|gif)$/i.test(options.file)) throw new RenderError(`-o ${options.file}: this render is in tiles (${ctx.reason}), and a video takes whole frames: write PNGs (-o out/%04d.png), or a smaller --size`);
  const out = (line: object) => options.json && process.stdout.write(JSON.stringify(line) + '\n');
  let renderer: TiledRenderer;
  try {
    renderer = new TiledRenderer(scene, { output: options.output, memory: ctx.memory, pool: ctx.pool, prepared: options.backend === 'jit', backend: options.backend, fuse: options.fuse });
  } catch (e) {
    if (e instanceof TileError) throw new RenderError(e.message);
    throw e;
  }
  const started = performance.now();
  let png: PngFile | undefined;
  let bar: cliProgress.SingleBar | undefined;
  // Ctrl-C or SIGTERM stops the render between tiles; the frame's temporary file is removed.
  const stop = interruptedBySignals();
  try {
    for (const { name, value } of options.params ?? []) renderer.params.set(name, value);
    const [tw, th] = renderer.tileSize(options.tile);
    const tiles = Math.ceil(renderer.width / tw) * Math.ceil(renderer.height / th);
    const feed = new InputFeed(renderer, options.inputs ?? [], frames?.last ?? 0);
    const stateful = renderer.plan.whole.some((w) => w?.kind === 'state');
    const first = frames?.first ?? 0;
    const last = frames?.last ?? 0;
    // State evolves frame by frame: a stateful scene runs from frame 0 even when writing from later.
    const start = frames && stateful ? 0 : first;
    if (options.progress) {
      bar = new cliProgress.SingleBar({ format: `rendering in ${tw} x ${th} tiles [{bar}] {value}/{total} rows | {eta_formatted} left`, hideCursor: true }, cliProgress.Presets.shades_classic);
      bar.start((last - first + 1) * renderer.height, 0);
    }
    let written = 0;
    // --json: a line now and then within a frame (a tile row done), so that a pipeline tells a long frame from a hang.
    let lastProgress = performance.now();
    const progress = (frame: number, rows: number) => {
      if (!options.json || performance.now() - lastProgress < PROGRESS_EVERY_MS) return;
      lastProgress = performance.now();
      out({ progress: { frame, rows, of: renderer.height } });
    };
    for (let frame = start; frame <= last; frame++) {
      const t0 = performance.now();
      const time = frames ? options.time + frame / options.fps : options.time;
      const file = frames ? frameFile(options.file, frame) : options.file;
      png = frame >= first ? await PngFile.create(file, renderer.width, renderer.height) : undefined;
      try {
        await feed.fill(frame);
        // `frame` is the frame's number in the render, as the whole render has it (render.ts).
        renderer.frame = frame;
        await renderer.render(
          tw,
          th,
          { time },
          async (rgba) => {
            if (!png) return;
            await png.rows(rgba);
            bar?.increment(rgba.length / (renderer.width * 4));
            progress(frame, png.given);
          },
          undefined,
          stop.signal,
        );
      } catch (e) {
        if (e instanceof Cancelled) throw new RenderError(`${e.message}: stopped at frame ${frame}; its file was not written${written ? ` (the ${written} frames before it were)` : ''}`, frame);
        if (e instanceof EvaluationError) throw new RenderError(frameFailure(scene, frame, e), frame, e.node);
        if (e instanceof InputImageError) throw new RenderError(frames ? `frame ${frame}: ${e.message}` : e.message, frame);
        throw e;
      }
      if (!png) continue;
      await png.finish();
      png = undefined;
      written++;
      out({ frame, file, millis: Math.round((performance.now() - t0) * 1000) / 1000 });
    }
    bar?.stop();
    const millis = performance.now() - started;
    const whole = renderer.plan.whole.flatMap((w, gi) => (w && renderer.plan.needed[gi] ? [renderer.groups[gi].nodes.map((n) => n.name).join('+')] : []));
    out({ done: true, frames: written, millis: Math.round(millis), compile_ms: Math.round(ctx.compileMillis), cached_modules: ctx.cachedModules, workers: workersUsed(ctx.pool), tiles: { width: tw, height: th, count: tiles, whole, reason: ctx.reason } });
    if (!options.json) {
      const what = frames ? `${written} frames to ${options.file}` : `${options.file} (${renderer.width} x ${renderer.height}, output \`${options.output}\`)`;
      process.stderr.write(`wrote ${what} in ${tiles} tile${tiles === 1 ? '' : 's'} of ${tw} x ${th} (${ctx.reason}), ${(millis / 1000).toFixed(2)} s${whole.length ? `; computed whole: ${whole.join(', ')}` : ''}\n`);
    }
  } catch (e) {
    bar?.stop();
    await png?.abort();
    const err = e instanceof PngWriteError || e instanceof TileError ? new RenderError(e.message) : e;
    if (err instanceof RenderError && options.json) {
      out({ error: { message: err.message, frame: err.frame, node: err.node } });
      markPrinted(err);
    }
    throw err;
  } finally {
    stop.dispose();
    renderer.dispose();
  }
}
