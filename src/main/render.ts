// `entelechy render`: one frame, or a range of frames for pipelines, written as PNGs or as a
// video (video.ts).

import { defaultMemoryBudget } from './budget.js';
import cliProgress from 'cli-progress';
import { availableParallelism } from 'node:os';
import type { Scene } from '../ir/check/scene.js';
import { PngThreads } from '../workers/png-threads.js';
import { EvalPool } from '../workers/pool.js';
import { Engine, type Backend } from './engine.js';
import { EvaluationError, frameFailure } from './evaluation-error.js';
import { POOL_THRESHOLD } from './group-runs.js';
import { sceneGroups } from './scene-groups.js';
import { compileHere, prepareModules, type ModuleCompiler, type Tier } from './modules.js';
import { compilerAhead } from './compile-ahead.js';
import { FieldMemory, MemoryLimitError } from './memory.js';
import { fieldRgbaRows, fieldToRgba, savePng } from './image.js';
import { pngOnPool, savePngOnPool } from './field-png.js';
import { isCompleteNpy, isNpyFile, npyShape, saveNpy } from './npy-file.js';
import { zSlice, type Field } from './field.js';
import type { Pixels } from './png.js';
import { isVideoFile, requireFfmpeg, VideoFile } from './video.js';
import { InputFeed, type InputOption } from './input-feed.js';
import { InputImageError } from './image-input.js';
import { markPrinted, UserError } from './user-error.js';
import { isCompletePng, shardFrames, type Shard } from './shard.js';
import { mark } from './timeline.js';
import { Cancelled, interruptedBySignals, throwIfCancelled } from './cancel.js';
import { sweepLeftBehind } from './files.js';
import { frameFile, framePatternCount, replaceFramePatterns } from './frame-pattern.js';

export class RenderError extends UserError {
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
  /** The PNG path; with frames, a pattern such as out/%04d.png; or a video (.mp4, .webm, .gif); or NumPy arrays (.npy). */
  file: string;
  /** Of a 3-D output, the z-slice a picture shows (a .npy holds every slice). */
  z?: number;
  /** Params to start from (--param, checked). */
  params?: { name: string; value: number[] }[];
  /** Images read into the scene's inputs (--input). */
  inputs?: InputOption[];
  /** A video's constant rate factor (video.ts checks it). */
  crf?: number;
  time: number;
  frames?: { first: number; last: number };
  fps: number;
  workers: number;
  /** Bytes of fields the render may hold (budget.ts; default an eighth of the machine's memory). */
  memory?: number;
  /** Render in tiles of this size (--tile); without it, in tiles only when the fields do not fit `memory`. */
  tile?: [number, number];
  backend: Backend;
  fuse: boolean;
  json: boolean;
  /** Show a progress bar (on a terminal). */
  progress: boolean;
  /** Render only this shard's share of the frames (shard.ts). */
  shard?: Shard;
  /** Skip frames whose file is already a whole PNG of the output's size (a re-run resumes). */
  resume?: boolean;
}

/** `A:B` (inclusive) or `N` (one frame). */
export function parseFrames(text: string): { first: number; last: number } {
  const m = /^\s*(\d+)\s*(?::\s*(\d+))?\s*$/.exec(text);
  if (!m) throw new RenderError(`--frames takes FIRST:LAST (inclusive), frames numbered from 0, e.g. 0:99; got \`${text}\``);
  const first = Number(m[1]);
  const last = m[2] === undefined ? first : Number(m[2]);
  if (last < first) throw new RenderError(`--frames ${text}: the last frame comes before the first`);
  if (last - first >= 1e6) throw new RenderError(`--frames ${text}: more than a million frames`);
  return { first, last };
}

/**
 * Refuse an -o that does not fit what is rendered: --frames of pictures need one frame number
 * pattern; one picture or a video none (each of these wrote a file named with a literal `%d`).
 */
export function checkOutputFile(file: string, frames: boolean): void {
  const video = isVideoFile(file);
  const patterns = framePatternCount(file);
  if (frames && !video && patterns === 0)
    throw new RenderError(`-o ${file}: with --frames, name the files with a frame number pattern, e.g. -o out/%04d.png, or a video, e.g. -o out.mp4`);
  if (patterns > 1 && frames && !video) throw new RenderError(`-o ${file} has ${patterns} frame number patterns: give one, e.g. -o out/%04d.png`);
  if (patterns && video) throw new RenderError(`-o ${file}: a video is one file: name it without a frame number pattern, e.g. -o ${replaceFramePatterns(file, () => '')}`);
  if (patterns && !frames) throw new RenderError(`-o ${file} names numbered files, but this renders one frame: add --frames FIRST:LAST, or name one file, e.g. -o ${replaceFramePatterns(file, () => 'frame')}`);
}

export async function render(scene: Scene, options: RenderOptions): Promise<void> {
  const { frames } = options;
  const video = isVideoFile(options.file);
  checkOutputFile(options.file, Boolean(frames));
  if (video) requireFfmpeg();
  // What renders of these files killed outright left (their PNGs' temporary files; a video's: VideoWriter).
  if (!video) sweepLeftBehind(options.file, 'tmp');
  const workers = Math.max(1, Math.min(options.workers, 256));
  const memory = new FieldMemory(options.memory ?? defaultMemoryBudget());
  let cachedModules = 0;
  // Always a pool, as a session has: kernel code that is not provably short runs on its threads,
  // where Ctrl-C or SIGTERM stops it at once (on this thread a frame held the signal back until it
  // ended: a runaway loop ran on for minutes). A scene too small for the pool to take any of its
  // domains starts the threads only when a frame needs them.
  const large = scene.nodes.some((n) => n.domain.reduce((a, b) => a * b, 1) >= POOL_THRESHOLD);
  const pool = options.backend === 'jit' ? new EvalPool(memory.memory, { workers, lazy: !(large && workers > 1) }) : undefined;
  let run: Engine;
  let feed: InputFeed;
  try {
    // Modules from the disk cache where they are: a render of a scene seen before loads no compiler.
    const t0 = performance.now();
    const tier = renderTier(scene, frames);
    const modules = options.backend === 'jit' ? await prepareModules(sceneGroups(scene, [], options.fuse).map((g) => g.ir), renderCompiler(), undefined, tier) : { compiled: 0, read: 0 };
    const preparing = performance.now() - t0;
    mark('modules compiled');
    cachedModules = modules.read;
    // Whole if the fields fit, else (or with --tile) in tiles of the output (tiles/render-tiled.ts).
    let whole: string | undefined;
    if (!options.tile && scene.outputs.find((o) => o.name === options.output)) {
      try {
        run = new Engine(scene, { backend: options.backend, fuse: options.fuse, memory, pool, prepared: options.backend === 'jit' });
      } catch (e) {
        if (!(e instanceof MemoryLimitError)) throw e;
        whole = e.message;
      }
    }
    if (!run!) {
      // A .npy and a 3-D output's slice are made from the fields whole: tiles cover 2-D pictures
      // (they were refused as "tiles cover 2-D pictures" where the fields did not fit, unasked).
      const wholeOnly = isNpyFile(options.file) ? `-o ${options.file}: a .npy is written from the fields whole` : outputSize(scene, options.output).length === 3 ? `output \`${options.output}\` is 3-D, rendered whole` : undefined;
      if (wholeOnly) throw new RenderError(options.tile ? `${wholeOnly}, not in tiles: leave --tile out` : `${wholeOnly}, and ${whole!.replace('give the session more memory', 'give the render more memory')}`);
      const reason = options.tile ? `--tile ${options.tile.join('x')}` : `too large whole: ${whole!.replace(/\. Use a smaller size.*$/, '')}`;
      const { renderTiled } = await import('./tiles/render-tiled.js');
      // A shard's frames only (a re-run renders them again: tiled renders do not resume yet).
      const own = frames && options.shard ? { ...options, frames: shardFrames(frames, options.shard) } : options;
      return await renderTiled(scene, own, { memory, pool, reason, cachedModules, compileMillis: preparing });
    }
    run.compileMillis += preparing;
    for (const { name, value } of options.params ?? []) run.params.set(name, value);
    feed = new InputFeed(run, options.inputs ?? [], frames?.last ?? 0);
  } catch (e) {
    await pool?.destroy();
    throw e;
  } finally {
    if (!run! && pool) await pool.destroy(); // a tiled render has returned
  }
  const out = (line: object) => options.json && process.stdout.write(JSON.stringify(line) + '\n');
  const stateful = scene.nodes.some((n) => n.kernel.ports.some((p) => p.kind === 'state'));
  const range = frames && options.shard ? shardFrames(frames, options.shard) : frames;
  const first = range?.first ?? 0;
  const last = range?.last ?? 0;
  // Frames already written whole are skipped; a stateful scene still runs them for its state.
  const npy = isNpyFile(options.file);
  const picture = (whole: Field) => (options.z === undefined ? whole : zSlice(whole, options.z));
  const { width, height } = picture(run.outputField(options.output)!);
  const writtenWhole = (file: string) => (npy ? isCompleteNpy(file, run.outputField(options.output)!) : isCompletePng(file, width, height));
  const done = new Set<number>();
  if (frames && options.resume) for (let f = first; f <= last; f++) if (writtenWhole(frameFile(options.file, f))) done.add(f);
  let end = last;
  while (end >= first && done.has(end)) end--;
  // State evolves frame by frame: a stateful scene runs from frame 0 even when writing from later.
  const start = frames && stateful ? 0 : first;
  // On stderr with --json too (distributed.md says so): stdout holds only the frame lines.
  if (options.shard && stateful && start < first && end >= first)
    process.stderr.write(`note: the scene has state, made frame by frame: shard ${options.shard.index}/${options.shard.count} runs frames ${start}-${first - 1} too, to write ${first}-${last}\n`);
  const bar = options.progress && frames ? new cliProgress.SingleBar({ format: 'rendering [{bar}] {value}/{total} frames | {eta_formatted} left', hideCursor: true }, cliProgress.Presets.shades_classic) : undefined;
  bar?.start(Math.max(0, last - first + 1), 0);
  const started = performance.now();
  const reported = (w: FrameFile & { millis: number }) => {
    out({ frame: w.frame, file: w.file, millis: w.millis });
    bar?.increment();
  };
  const writer = video ? new VideoWriter(options, reported) : new FrameWriter(frames ? workers : 0, reported);
  // Ctrl-C or SIGTERM stops the render: the frame at work stops (on the pool at once, on this
  // thread when it ends) and its file is not written; the frames written before it stay whole.
  const stop = interruptedBySignals();
  const stopped = (e: Cancelled, frame: number) =>
    new RenderError(writer instanceof VideoWriter
      ? `${e.message}: stopped at frame ${frame}; the video \`${options.file}\` was not written (a video is kept only whole)`
      : `${e.message}: stopped at frame ${frame}; its file was not written${writer.written ? ` (the ${writer.written > 1 ? `${writer.written} frames` : 'frame'} before it ${writer.written > 1 ? 'were' : 'was'})` : ''}`, frame);
  try {
    // Nothing left to write: nothing to evaluate either, not even a stateful scene's lead-in.
    const evaluateTo = end >= first ? end : start - 1;
    for (let frame = start; frame <= evaluateTo; frame++) {
      const file = frames && !video ? frameFile(options.file, frame) : options.file;
      if (done.has(frame)) {
        await writer.drain(); // reported in order
        out({ frame, file, skipped: true });
        bar?.increment();
        if (!stateful) continue;
      }
      const t0 = performance.now();
      const time = frames ? options.time + frame / options.fps : options.time;
      try {
        // A signal is seen only when the event loop turns, which a frame on this thread does not.
        await new Promise((resolve) => setImmediate(resolve));
        throwIfCancelled(stop.signal);
        await feed.fill(frame);
        // `frame` is the frame's number in the render, however the range is split (shards, farm).
        run.frame = frame;
        mark(`frame ${frame} begins`);
        await run.evaluate({ time }, stop.signal);
        mark(`frame ${frame} evaluated`);
      } catch (e) {
        await writer.drain(); // the frames before this one are written and reported first
        if (e instanceof Cancelled) throw stopped(e, frame);
        if (e instanceof EvaluationError) throw new RenderError(frameFailure(scene, frame, e), frame, e.node);
        if (e instanceof InputImageError) throw new RenderError(frames ? `frame ${frame}: ${e.message}` : e.message, frame);
        throw e;
      }
      if (frame < first || done.has(frame)) continue;
      const field = npy ? run.outputField(options.output)! : picture(run.outputField(options.output)!);
      const f = { frame, file, t0, width: field.width, height: field.height };
      // A range of frames hands each frame's pixels to a thread; one frame is encoded from the
      // field, strip by strip (the field stays as it is until the write is done: drain below),
      // a large one on the pool's threads (field-png.ts).
      try {
        if (npy && writer instanceof FrameWriter) await writer.save(f, () => saveNpy(file, run.memory, field, stop.signal));
        else if (!frames && !video && pool && pngOnPool(field) && writer instanceof FrameWriter) await writer.save(f, () => savePngOnPool(pool, file, field, options.output, stop.signal));
        else await writer.write(f, frames || video ? fieldToRgba(run.memory, field, options.output) : fieldRgbaRows(run.memory, field, options.output), stop.signal);
      } catch (e) {
        if (e instanceof Cancelled) throw stopped(e, frame);
        throw e;
      }
    }
    await writer.drain();
    mark('frames written');
    for (let frame = end + 1; frame <= last; frame++) {
      out({ frame, file: frameFile(options.file, frame), skipped: true });
      bar?.increment();
    }
    try {
      await writer.complete(stop.signal);
    } catch (e) {
      if (e instanceof Cancelled) throw stopped(e, end);
      throw e;
    }
    const millis = performance.now() - started;
    out({ done: true, frames: writer.written, ...(done.size ? { skipped: done.size } : {}), ...(options.shard ? { shard: { ...options.shard, first, last } } : {}), ...(writer instanceof VideoWriter ? { video: writer.describe() } : {}), millis: Math.round(millis), compile_ms: Math.round(run.compileMillis), cached_modules: cachedModules, workers: workersUsed(pool), events: run.events });
    bar?.stop();
    if (writer instanceof VideoWriter && writer.padded && !options.json) process.stderr.write(`note: ${writer.padded}\n`);
    if (frames && !options.json) process.stderr.write(`wrote ${writer.written} frame${writer.written === 1 ? '' : 's'} to ${options.file}${done.size ? ` (${done.size} already there skipped)` : ''} in ${(millis / 1000).toFixed(2)} s (${rate(writer.pixels / millis / 1000)} Mpix/s with encoding)\n`);
    else if (!options.json) {
      const field = run.outputField(options.output)!;
      const extents = npy ? npyShape(field).join(' x ') : `${width} x ${height}${options.z === undefined ? '' : `, z-slice ${options.z} of ${field.depth}`}`;
      process.stderr.write(`wrote ${options.file} (${extents}, output \`${options.output}\`, ${millis.toFixed(1)} ms, ${run.compileMillis.toFixed(0)} ms compiling, ${workerCount(pool)})\n`);
    }
  } catch (e) {
    bar?.stop();
    await writer.abort(options.file);
    if (e instanceof RenderError && options.json) {
      out({ error: { message: e.message, frame: e.frame, node: e.node } });
      markPrinted(e);
    }
    throw e;
  } finally {
    stop.dispose();
    run.dispose();
    await Promise.all([pool?.destroy(), writer.close()]);
  }
}

/** The compile worker started with the process (compile-ahead.ts), which loaded binaryen meanwhile; else this thread. */
function renderCompiler(): ModuleCompiler {
  const worker = compilerAhead();
  if (!worker) return compileHere;
  return async (irs, tier) => {
    await worker.ready;
    mark('compiler loaded');
    return worker.compile(irs, tier);
  };
}

/** One frame of at most this many elements (all nodes together, ~5800 x 5800 of one node) renders on the fast tier. */
export const FAST_RENDER_ELEMENTS = 1 << 25;

/**
 * The tier a render compiles, to finish the whole job sooner (docs/architecture.md, Tiers). One
 * frame of at most FAST_RENDER_ELEMENTS elements: the fast tier. The optimised compile costs
 * 0.5-1.2 s of CPU on P2-P4, and the first frame on an optimised module runs little faster than
 * on a fast one (V8 starts a module on its baseline code and optimises it meanwhile): at 4096 x
 * 4096, compile and frame took 0.7-0.9 s of CPU on the fast tier against 1.2-1.8 s on the
 * optimised one (P2-P4), and only at 8192 x 8192 did the optimised tier win (P4, whose
 * interleaved loop gains most: 2.8 s against 3.1 s). A range of frames or a larger frame: the
 * optimised tier, whose frames repay its compile. An optimised module in the disk cache is used
 * either way (prepareModules).
 */
export function renderTier(scene: Scene, frames?: { first: number; last: number }): Tier {
  if (frames && frames.last > frames.first) return 'optimised';
  const elements = scene.nodes.reduce((n, node) => n + node.domain.reduce((a, b) => a * b, 1), 0);
  return elements <= FAST_RENDER_ELEMENTS ? 'fast' : 'optimised';
}

/**
 * An engine for a scene, its modules from the disk cache where they are (a scene rendered before
 * loads no compiler), the others compiled here first. Its compileMillis counts both.
 */
export async function openEngine(scene: Scene, options: { backend: Backend; fuse: boolean; memory: FieldMemory; pool?: EvalPool; cacheFrames?: boolean }): Promise<{ engine: Engine; read: number }> {
  const t0 = performance.now();
  const modules = options.backend === 'jit' ? await prepareModules(sceneGroups(scene, [], options.fuse).map((g) => g.ir)) : { compiled: 0, read: 0 };
  const preparing = performance.now() - t0;
  const engine = new Engine(scene, { ...options, prepared: options.backend === 'jit' });
  engine.compileMillis += preparing;
  return { engine, read: modules.read };
}

/** The size of an output's field: its node's domain. */
export function outputSize(scene: Scene, output: string): number[] {
  const o = scene.outputs.find((x) => x.name === output);
  return scene.nodes.find((n) => n.name === o?.node)?.domain ?? [];
}

export interface FrameFile {
  frame: number;
  file: string;
  /** When the frame's evaluation began (performance.now()). */
  t0: number;
  width: number;
  height: number;
}

/**
 * Writes the frames' PNGs and reports each once written, in frame order. With threads (a range of
 * frames), each PNG is encoded and written on a thread of its own while the engine evaluates the
 * next frames: encoding, not evaluation, bounds most frame ranges. At most two frames per thread,
 * and about 1 GiB of pixels, are in flight.
 */
class FrameWriter {
  written = 0;
  pixels = 0;
  private readonly encoder?: PngThreads;
  /** Frames being written, in order; `ok` once the file is whole (reported when every frame before it is). */
  private readonly pending: { f: FrameFile; saved: Promise<number>; ok?: boolean }[] = [];

  constructor(
    threads: number,
    private readonly reported: (w: FrameFile & { millis: number }) => void,
  ) {
    if (threads > 0) this.encoder = new PngThreads(threads);
  }

  /**
   * Write one frame; waits while too many are in flight. On threads its pixels are moved (not
   * copied) to one; without, they may be rows made as they are encoded (done when this returns).
   */
  async write(f: FrameFile, pixels: Pixels, signal?: AbortSignal): Promise<void> {
    if (!this.encoder) return this.save(f, () => savePng(f.file, f.width, f.height, pixels, signal));
    if (typeof pixels === 'function') throw new Error('internal: frames written on threads need their pixels copied out');
    this.enqueue(f, this.encoder.save({ file: f.file, width: f.width, height: f.height, rgba: pixels }));
    const most = Math.max(1, Math.min(2 * this.encoder.threads, Math.floor(2 ** 30 / (f.width * f.height * 4))));
    while (this.pending.length >= most) await this.finishFirst();
  }

  /**
   * A frame being written: reported as soon as its file is whole and the frames before it are
   * reported. (They were reported only when the queue was full or drained: a range's lines came
   * all at the end, with millis to then.)
   */
  private enqueue(f: FrameFile, saved: Promise<number>): void {
    const entry: (typeof this.pending)[number] = { f, saved };
    this.pending.push(entry);
    saved.then(
      () => {
        entry.ok = true;
        this.reportReady();
      },
      () => {}, // thrown in order by finishFirst; a later frame's failure may come first
    );
  }

  /** Report the frames at the head of the queue whose files are whole. */
  private reportReady(): void {
    while (this.pending[0]?.ok) {
      const { f } = this.pending.shift()!;
      this.written++;
      this.pixels += f.width * f.height;
      this.reported({ ...f, millis: Math.round((performance.now() - f.t0) * 1000) / 1000 });
    }
  }

  /** Write one frame by `save` (which returns the file's size), not on the writer's threads; done when this returns. */
  async save(f: FrameFile, save: () => Promise<number>): Promise<void> {
    this.enqueue(f, Promise.resolve().then(save));
    return this.drain();
  }

  /** Wait for every frame in flight, reporting each in order. */
  async drain(): Promise<void> {
    while (this.pending.length) await this.finishFirst();
  }

  /** Every frame is its own file, written whole when reported: nothing to finish. */
  async complete(_signal?: AbortSignal): Promise<void> {}

  /**
   * The render failed or was stopped: the frames still being written on threads are dropped (the
   * threads end), and their temporary files removed: a stopped render leaves no partial file.
   */
  async abort(pattern: string): Promise<void> {
    if (!this.pending.length) return;
    this.pending.length = 0;
    await this.encoder?.close();
    sweepLeftBehind(pattern, 'tmp', true);
  }

  async close(): Promise<void> {
    await this.encoder?.close();
  }

  /** Wait for the first frame in flight: reported (with any whole ones after it), or its failure thrown. */
  private async finishFirst(): Promise<void> {
    const { f, saved } = this.pending[0]!;
    try {
      await saved;
    } catch (e) {
      if (e instanceof Cancelled) throw e; // stopped: render.ts says where
      const message = (e as Error).message;
      throw new RenderError(this.encoder ? `frame ${f.frame}: ${message}` : message, f.frame);
    }
    this.reportReady();
  }
}

/**
 * Writes the frames into one video: each frame's pixels go down ffmpeg's pipe in order and are
 * reported once handed over; the video is whole once finished (renamed into place), and an
 * aborted render leaves none.
 */
export class VideoWriter {
  written = 0;
  pixels = 0;
  /** What was done to fit an odd size to the format, if anything. */
  padded?: string;
  private video?: VideoFile;
  private size = [0, 0];

  constructor(
    private readonly options: RenderOptions,
    private readonly reported: (w: FrameFile & { millis: number }) => void,
  ) {}

  async write(f: FrameFile, pixels: Pixels, signal?: AbortSignal): Promise<void> {
    if (typeof pixels === 'function') throw new Error('internal: a video takes whole frames');
    throwIfCancelled(signal);
    if (!this.video) {
      this.video = new VideoFile(f.file, { width: f.width, height: f.height, fps: this.options.fps, crf: this.options.crf });
      if (this.video.width !== f.width || this.video.height !== f.height)
        this.padded = `${f.width} x ${f.height} has an odd side, and ${f.file}'s 4:2:0 colour needs even ones: the video is ${this.video.width} x ${this.video.height}, the last ${f.width % 2 ? 'column' : 'row'}${f.width % 2 && f.height % 2 ? ' and row' : ''} repeated (give an even --size to avoid it)`;
      this.size = [f.width, f.height];
    } else if (f.width !== this.size[0] || f.height !== this.size[1]) {
      throw new RenderError(`frame ${f.frame}: the output is ${f.width} x ${f.height}, but the video's frames are ${this.size.join(' x ')}: a video's frames keep one size`, f.frame);
    }
    await this.video.write(pixels).catch(async (e) => Promise.reject((await interruptedMeanwhile(signal)) ?? new RenderError((e as Error).message, f.frame)));
    this.written++;
    this.pixels += f.width * f.height;
    this.reported({ ...f, millis: Math.round((performance.now() - f.t0) * 1000) / 1000 });
  }

  async drain(): Promise<void> {}

  async complete(signal?: AbortSignal): Promise<void> {
    await this.video?.close().catch(async (e) => Promise.reject((await interruptedMeanwhile(signal)) ?? new RenderError((e as Error).message)));
  }

  async abort(): Promise<void> {
    await this.video?.abort();
  }

  async close(): Promise<void> {}

  describe(): object {
    return { file: this.options.file, width: this.video?.width, height: this.video?.height, fps: this.options.fps, ...(this.padded ? { padded: true } : {}) };
  }
}

export const defaultWorkers = () => availableParallelism();

/**
 * The interruption that ended ffmpeg, if one did: ffmpeg shares the terminal's process group, so
 * Ctrl-C ends it too, and its exit can be seen before this process's own SIGINT is. Its failure
 * said "ffmpeg could not write" for a render the user stopped. Asked only once ffmpeg has failed.
 */
async function interruptedMeanwhile(signal: AbortSignal | undefined, waitMs = 200): Promise<Cancelled | undefined> {
  if (!signal) return undefined;
  if (!signal.aborted) await new Promise<void>((done) => {
    const timer = setTimeout(done, waitMs);
    signal.addEventListener('abort', () => (clearTimeout(timer), done()), { once: true });
  });
  return signal.aborted && signal.reason instanceof Cancelled ? signal.reason : undefined;
}

/** The threads that ran a render's frames: its pool's once started, else this one. */
export function workersUsed(pool: EvalPool | undefined): number {
  return Math.max(1, pool?.used ?? 0);
}

/** workersUsed, in words. */
function workerCount(pool: EvalPool | undefined): string {
  const n = workersUsed(pool);
  return `${n} worker${n > 1 ? 's' : ''}`;
}

/** Mpix/s in words: two significant digits below 10 (small frames said 0.0). */
function rate(mpix: number): string {
  return mpix >= 10 ? mpix.toFixed(0) : mpix >= 0.01 ? mpix.toPrecision(2) : mpix.toExponential(1);
}
