// `entelechy render SCENE --frames A:B --farm redis://...`: the frames as BullMQ jobs for the farm
// workers, each PNG written here as its job completes.
//
// The jobs carry the scene's documents, so the workers need no shared filesystem. Progress comes
// from the queue's events (QueueEvents). What BullMQ cannot know is handled here:
// - a Redis that restarted without its data forgets the jobs: when the connection is back, the
//   frames not yet written are added again (a job id names its frame, so a job that survived is
//   not added twice);
// - a submitter that goes away: on SIGINT/SIGTERM it removes its jobs; killed outright, its key
//   stops being renewed and workers drop its jobs unrendered (jobs.ts).

import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { writeProblem } from '../main/png-file.js';
import { adlerCombine, bandsOf, pngHead, pngTail } from './bands.js';
import { Queue, QueueEvents } from 'bullmq';
import cliProgress from 'cli-progress';
import type { Scene } from '../ir/check/scene.js';
import { writeFileAtomic } from '../main/files.js';
import { markPrinted } from '../main/user-error.js';
import { frameFile, outputSize, RenderError, type RenderOptions } from '../main/render.js';
import { isCompletePng } from '../main/shard.js';
import { aliveKey, connect, FarmError, frameOfJob, jobId, QUEUE, resultKey, type FrameJob, type FrameResult, type JobDocument } from './jobs.js';

/**
 * One picture written from its bands as they come back, in order: the bands after a missing one
 * wait (held encoded) until it comes. A temporary file beside it, renamed into place when whole.
 */
class PictureFile {
  private next = 0;
  private readonly waiting = new Map<number, Buffer>();
  private sums = { a: 1, b: 0 };

  private constructor(
    private readonly file: string,
    private readonly tmp: string,
    private readonly handle: FileHandle,
    private readonly count: number,
  ) {}

  static async create(file: string, width: number, height: number, count: number): Promise<PictureFile> {
    const tmp = join(dirname(file) || '.', `.${basename(file)}.${process.pid}.tmp`);
    try {
      mkdirSync(dirname(file) || '.', { recursive: true });
      const handle = await open(tmp, 'w');
      await handle.write(pngHead(width, height));
      return new PictureFile(file, tmp, handle, count);
    } catch (e) {
      throw new RenderError(writeProblem(file, e));
    }
  }

  /** A band's result: its sums (a, b, length as 32-bit words), then its IDAT chunks. */
  async band(index: number, result: Buffer): Promise<void> {
    this.waiting.set(index, result);
    for (let r; (r = this.waiting.get(this.next)); this.next++) {
      this.waiting.delete(this.next);
      this.sums = adlerCombine(this.sums, { a: r.readUInt32BE(0), b: r.readUInt32BE(4), length: r.readUInt32BE(8) });
      await this.write(r.subarray(12));
    }
  }

  async finish(): Promise<void> {
    if (this.next !== this.count) throw new RenderError(`internal: ${this.next} of ${this.count} bands written`);
    await this.write(pngTail(this.sums));
    await this.handle.close();
    await rename(this.tmp, this.file);
  }

  async abort(): Promise<void> {
    await this.handle.close().catch(() => {});
    await rm(this.tmp, { force: true });
  }

  private async write(bytes: Buffer): Promise<void> {
    try {
      await this.handle.write(bytes);
    } catch (e) {
      throw new RenderError(writeProblem(this.file, e));
    }
  }
}

export interface FarmOptions {
  /** The Redis URL. */
  farm: string;
  /** The size the scene was loaded with (--size), for the workers to load it the same way. */
  size?: number[];
}

/** How long the submitter's key outlives its last renewal (renewed every third of it). */
const ALIVE_MS = Number(process.env.ENTELECHY_FARM_ALIVE_MS) || 15_000;
/** Attempts of a frame that fails for a reason other than the scene (a worker's disk, its memory). */
const ATTEMPTS = 3;

export async function farmRender(scene: Scene, options: RenderOptions & FarmOptions): Promise<void> {
  const frames = options.frames;
  if (frames && !/%0?\d*d/.test(options.file)) throw new RenderError(`-o ${options.file}: the farm writes one PNG per frame: name them with a frame number pattern, e.g. -o out/%04d.png`);
  if (options.inputs?.length) throw new RenderError('--farm cannot send --input images to the workers yet: render scenes with inputs locally');
  const state = scene.nodes.find((n) => n.kernel.ports.some((p) => p.kind === 'state'));
  if (state)
    throw new RenderError(`node \`${state.name}\` has state, made frame by frame: its frames cannot be rendered apart on a farm; render the scene on one machine (without --farm)`);

  const out = (line: object) => options.json && process.stdout.write(JSON.stringify(line) + '\n');
  const [width, height] = outputSize(scene, options.output);
  // The jobs' units: frames, or without --frames the bands of one picture (bands.ts).
  const todo = new Set<number>();
  const skipped: number[] = [];
  const bands = frames ? [] : bandsOf(width, height);
  if (frames) {
    for (let f = frames.first; f <= frames.last; f++) {
      if (options.resume && isCompletePng(frameFile(options.file, f), width, height)) skipped.push(f);
      else todo.add(f);
    }
  } else {
    bands.forEach((_, i) => todo.add(i));
  }
  for (const frame of skipped) out({ frame, file: frameFile(options.file, frame), skipped: true });
  const units = frames ? 'frames' : 'bands';
  let picture: PictureFile | undefined;

  const render = randomBytes(6).toString('hex');
  const documents: JobDocument[] = scene.documents.map((d) => ({ path: d.path, text: d.text, digest: sha256(d.text) }));
  const base: Omit<FrameJob, 'frame' | 'time'> = {
    render, entry: scene.entry, documents, size: options.size, params: options.params ?? [], output: options.output, backend: options.backend, fuse: options.fuse,
    scene: sha256(JSON.stringify([scene.entry, documents.map((d) => [d.path, d.digest]), options.size, options.output, options.backend, options.fuse])),
  };
  const job = (unit: number) => ({
    name: frames ? 'frame' : 'band',
    data: (frames ? { ...base, frame: unit, time: options.time + unit / options.fps } : { ...base, frame: 0, time: options.time, band: { ...bands[unit], tile: options.tile } }) satisfies FrameJob,
    opts: { jobId: jobId(render, unit), attempts: ATTEMPTS, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true, removeOnFail: true },
  });

  const connection = await connect(options.farm);
  const queue = new Queue<FrameJob, FrameResult>(QUEUE, { connection });
  // Events from now on (Redis's clock, as stream ids are), so none of this render's is missed.
  const [seconds, micros] = await connection.time();
  const eventsConnection = connection.duplicate({ maxRetriesPerRequest: null });
  const events = new QueueEvents(QUEUE, { connection: eventsConnection, lastEventId: `${Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)}-0` });
  // Lost connections are retried (ioredis): their errors are no news.
  eventsConnection.on('error', () => {});
  events.on('error', () => {});
  queue.on('error', () => {});
  const keepAlive = () => connection.set(aliveKey(render), '1', 'PX', ALIVE_MS);
  const bar = options.progress ? new cliProgress.SingleBar({ format: 'rendering on the farm [{bar}] {value}/{total} ${units} | {eta_formatted} left', hideCursor: true }, cliProgress.Presets.shades_classic) : undefined;
  bar?.start(frames ? frames.last - frames.first + 1 : bands.length, skipped.length);
  const started = performance.now();
  let written = 0;
  let pixels = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopSignal: (() => void) | undefined;
  let ready = false;
  const onReady = () => {
    // Back after a lost connection: Redis may have restarted empty.
    if (ready) void keepAlive().then(() => queue.addBulk([...todo].map(job))).catch(() => {});
    ready = true;
  };

  try {
    if (!frames) picture = await PictureFile.create(options.file, width, height, bands.length);
    await events.waitUntilReady();
    await keepAlive();
    timer = setInterval(() => void keepAlive().catch(() => {}), ALIVE_MS / 3);
    connection.on('ready', onReady);
    onReady();
    let ended = false;
    await new Promise<void>((resolve, reject) => {
      if (todo.size === 0) return resolve();
      let chain = Promise.resolve();
      // Results are taken one at a time, in the order they complete.
      events.on('completed', ({ jobId: id }) => {
        const frame = frameOfJob(render, id);
        if (frame === undefined || !todo.has(frame)) return;
        chain = chain.then(async () => {
          if (ended || !todo.has(frame)) return; // written already, or the render failed
          const png = await connection.getBuffer(resultKey(id));
          if (ended) return;
          if (!png) return void (await queue.add(job(frame).name, job(frame).data, job(frame).opts)); // lost with a restarted Redis
          const millis = Math.round((performance.now() - started) * 1000) / 1000;
          if (picture) {
            await picture.band(frame, png);
            out({ band: frame, rows: [bands[frame].y0, bands[frame].y1], millis });
          } else {
            const file = frameFile(options.file, frame);
            try {
              mkdirSync(dirname(file) || '.', { recursive: true });
              writeFileAtomic(file, png);
            } catch (e) {
              throw new RenderError(`cannot write \`${file}\`: ${(e as Error).message}`, frame);
            }
            written++;
            pixels += width * height;
            out({ frame, file, millis });
          }
          await connection.del(resultKey(id));
          todo.delete(frame);
          bar?.increment();
          if (todo.size === 0) resolve();
        }).catch(reject);
      });
      events.on('failed', ({ jobId: id, failedReason }) => {
        const frame = frameOfJob(render, id);
        if (frame === undefined || !todo.has(frame)) return;
        if (picture) reject(new RenderError(`${failedReason} (rows ${bands[frame].y0}-${bands[frame].y1 - 1})`));
        else reject(new RenderError(failedReason.includes(`frame ${frame}: `) ? failedReason : `frame ${frame}: ${failedReason}`, frame));
      });
      events.on('stalled', ({ jobId: id }) => {
        const frame = frameOfJob(render, id);
        if (frame !== undefined && todo.has(frame)) out({ [picture ? 'band' : 'frame']: frame, stalled: true });
      });
      // Interrupted: the jobs go with it (finally, below).
      stopSignal = () => reject(new RenderError('interrupted: the render\'s jobs were removed from the farm'));
      process.once('SIGINT', stopSignal);
      process.once('SIGTERM', stopSignal);
      out({ submitted: render, [units]: todo.size, queue: QUEUE });
      void queue.addBulk([...todo].map(job)).catch(reject);
    }).finally(() => (ended = true));
    await picture?.finish();
    const millis = performance.now() - started;
    bar?.stop();
    if (picture) {
      out({ done: true, file: options.file, width, height, bands: bands.length, farm: { render }, millis: Math.round(millis) });
      if (!options.json) process.stderr.write(`wrote ${options.file} (${width} x ${height}, in ${bands.length} bands from the farm) in ${(millis / 1000).toFixed(2)} s\n`);
      return;
    }
    out({ done: true, frames: written, ...(skipped.length ? { skipped: skipped.length } : {}), farm: { render }, millis: Math.round(millis) });
    if (!options.json) process.stderr.write(`wrote ${written} frames to ${options.file} from the farm${skipped.length ? ` (${skipped.length} already there skipped)` : ''} in ${(millis / 1000).toFixed(2)} s (${(pixels / millis / 1000).toFixed(1)} Mpix/s)\n`);
  } catch (e) {
    bar?.stop();
    await picture?.abort();
    if (e instanceof RenderError && options.json) {
      out({ error: { message: e.message, frame: e.frame } });
      markPrinted(e);
    }
    throw e;
  } finally {
    clearInterval(timer);
    if (stopSignal) {
      process.off('SIGINT', stopSignal);
      process.off('SIGTERM', stopSignal);
    }
    connection.off('ready', onReady);
    // Frames not written: their jobs are removed (a job a worker holds cannot be; without the
    // render's key it is dropped if it runs again, and its result expires).
    await Promise.all([...todo].map((f) => queue.remove(jobId(render, f)).catch(() => 0)));
    await connection.del(aliveKey(render)).catch(() => 0);
    await events.close();
    await queue.close();
    eventsConnection.disconnect();
    connection.disconnect();
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export { FarmError };
